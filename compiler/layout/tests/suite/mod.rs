mod pycute;
pub mod rng;

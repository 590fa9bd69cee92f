//! The interpreter's tests: numerics against independent definitions, and kernels written in the IR's text
//! form, run, and checked for their outputs or their errors.

mod kernels;
mod numeric;
mod races;
mod robust;

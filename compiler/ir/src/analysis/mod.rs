//! Analyses of valid IR that passes consume (through [`crate::passes::Analyses`]) and tests print.

pub mod deps;
pub mod flow;
pub mod landing;
pub mod protocol;
pub mod proxy;
pub mod range;
pub mod stages;
pub mod uniformity;

//! The integration tests of cutec-lower: the examples lowered, and what the lowering refuses.

mod bounds;
mod fp8;
mod hopper;
mod lower;
mod map;
mod roles;

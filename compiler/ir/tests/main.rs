//! The integration tests of cutec-ir.

mod bounds;
mod hopper;
mod lower;
mod passes;
mod printer;
mod roles;
mod text;
mod validator;

//! The integration tests of cutec-ir.

mod passes;
mod printer;
mod protocol;
mod range;
mod text;
mod uniformity;
mod validator;

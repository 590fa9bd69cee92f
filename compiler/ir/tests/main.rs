//! The integration tests of cutec-ir.

mod passes;
mod printer;
mod text;
mod uniformity;
mod validator;

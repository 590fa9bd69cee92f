//! The integration tests of cutec-ir.

mod lower;
mod passes;
mod printer;
mod text;
mod validator;

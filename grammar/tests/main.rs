//! The grammar's integration tests, in one binary: lexer edge cases, precedence, the generics rule, error
//! recovery, the examples and the standard library, printers, and a no-panic mutation loop.

mod common;
mod examples;
mod generics;
mod lexer;
mod precedence;
mod recovery;
mod robustness;
mod roles;
mod ui;

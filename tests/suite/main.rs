//! The cross-crate test suite: one test binary (each binary links LLVM statically, so there is only one).

mod book;
mod codegen;
mod examples;
mod mutation;
mod ui;

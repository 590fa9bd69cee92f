//! The cross-crate test suite: one test binary (each binary links LLVM statically, so there is only one).

mod book;
mod codegen;
mod examples;
mod fill_ptx;
mod interp;
mod mutation;
mod mutation_collectives;
mod mutation_run;
mod mutation_schedule;
mod schedule;
mod ui;

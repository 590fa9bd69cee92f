//! The integration tests of cutec-codegen, in one binary because each test binary links LLVM statically.

mod common;
mod defined_arith;
mod examples;
mod hand_built;
mod options;
mod ptxas_report;

mod book;
mod cpp;
mod divergences;
mod eval_tests;
mod examples;
mod print_parse;
mod properties;
mod pycute;
pub mod rng;

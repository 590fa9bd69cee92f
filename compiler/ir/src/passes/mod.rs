//! The pass pipeline: small named passes over a [`Module`], listed in one place ([`pipeline`]).
//!
//! Every pass takes a valid module and leaves a valid module. [`run_pipeline`] validates before the first pass
//! and after the last (and after every pass with [`PipelineOptions::verify_each`]), calls a hook after each pass
//! (`--dump-after PASS`), and returns the final validator analysis that back ends consume.

pub mod compact;
mod cse;
mod dce;
mod fold;
mod forward;
mod unroll;

use crate::module::Module;
use crate::valid::{self, KernelError, ModuleInfo};

/// A transformation of the IR.
pub trait Pass: Sync {
    /// The name `--dump-after` and `--print-passes` use: lowercase words joined by `-`.
    fn name(&self) -> &'static str;
    /// One line: what the pass does.
    fn description(&self) -> &'static str;
    fn run(&self, module: &mut Module);
}

/// The passes, in the order they run.
pub fn pipeline() -> Vec<&'static dyn Pass> {
    vec![
        &unroll::Unroll,
        &forward::ForwardVars,
        &fold::FoldConstants,
        &cse::CommonSubexpressions,
        &dce::DeadCode,
        &compact::Compact,
    ]
}

/// Finds a pass of the pipeline by name.
pub fn find_pass(name: &str) -> Option<&'static dyn Pass> {
    pipeline().into_iter().find(|p| p.name() == name)
}

/// `--print-passes`: one line per pass, `name: description`.
pub fn describe_pipeline() -> String {
    pipeline().iter().map(|p| format!("{}: {}\n", p.name(), p.description())).collect()
}

/// What `--dump-after` hooks into: called with a pass's name and the module it left.
pub type AfterPass<'a> = &'a mut dyn FnMut(&str, &Module);

#[derive(Default)]
pub struct PipelineOptions<'a> {
    /// Validate after every pass, not only at both ends (catches a broken pass where it breaks).
    pub verify_each: bool,
    /// Called after each pass with its name and the module (`--dump-after`).
    pub after_pass: Option<AfterPass<'a>>,
}

/// Runs the pipeline over `module`; gives the validator's analysis of the result.
pub fn run_pipeline(module: &mut Module, mut options: PipelineOptions<'_>) -> Result<ModuleInfo, KernelError> {
    valid::validate(module)?;
    for pass in pipeline() {
        pass.run(module);
        if options.verify_each {
            valid::validate(module)?;
        }
        if let Some(hook) = options.after_pass.as_mut() {
            hook(pass.name(), module);
        }
    }
    valid::validate(module)
}

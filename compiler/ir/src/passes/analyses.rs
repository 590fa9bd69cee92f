//! Analyses passes receive: computed on demand, cached until a pass changes the module.

use crate::analysis::deps::DepGraph;
use crate::module::Module;
use crate::stmt::{Block, Stmt};
use crate::valid::{self, KernelError, ModuleInfo};
use std::collections::HashMap;

/// Where a loop is: its kernel (index in the module) and the path to it from the kernel body, one
/// `(statement index, block index)` step per nested block, then the loop's statement index.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct LoopRef {
    pub kernel: usize,
    pub path: Vec<(usize, usize)>,
    pub stmt: usize,
}

impl LoopRef {
    /// The loop statement, if the reference points to one.
    pub fn resolve<'m>(&self, module: &'m Module) -> Option<&'m Stmt> {
        let mut block: &Block = &module.kernels.get(self.kernel)?.body;
        for &(s, b) in &self.path {
            block = block.stmts().get(s)?.blocks().nth(b)?;
        }
        block.stmts().get(self.stmt).filter(|s| s.is_loop())
    }
}

/// The analyses of one module.
#[derive(Default)]
pub struct Analyses {
    info: Option<ModuleInfo>,
    deps: HashMap<LoopRef, DepGraph>,
    /// What the checking passes could not prove but accept (kept across passes; [`run_pipeline`] returns them).
    ///
    /// [`run_pipeline`]: super::run_pipeline
    warnings: Vec<cutec_diagnostics::Diagnostic>,
}

impl Analyses {
    /// The validator's analysis (types of every expression...); fails if the module is invalid.
    pub fn info(&mut self, module: &Module) -> Result<&ModuleInfo, KernelError> {
        if self.info.is_none() {
            self.info = Some(valid::validate(module)?);
        }
        Ok(self.info.get_or_insert_with(ModuleInfo::default))
    }

    /// The dependency graph of a loop's body (`None` if `at` is not a loop).
    pub fn deps(&mut self, module: &Module, at: &LoopRef) -> Option<&DepGraph> {
        if !self.deps.contains_key(at) {
            let kernel = module.kernels.get(at.kernel)?;
            let graph = DepGraph::of_loop(kernel, at.resolve(module)?)?;
            self.deps.insert(at.clone(), graph);
        }
        self.deps.get(at)
    }

    /// A warning for the user (a check that could not prove what it accepts).
    pub fn warn(&mut self, d: cutec_diagnostics::Diagnostic) {
        self.warnings.push(d);
    }

    /// The warnings so far, taken.
    pub fn take_warnings(&mut self) -> Vec<cutec_diagnostics::Diagnostic> {
        std::mem::take(&mut self.warnings)
    }

    /// Forgets everything the module determines (not the warnings): the module changed.
    pub fn invalidate(&mut self) {
        self.info = None;
        self.deps.clear();
    }
}

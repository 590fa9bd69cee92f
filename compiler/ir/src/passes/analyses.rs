//! Analyses passes receive: computed on demand, cached, and kept across the passes that declare them preserved
//! ([`Pass::preserves`](super::Pass::preserves), as MLIR's `PreservedAnalyses`).

use crate::analysis::deps::DepGraph;
use crate::analysis::range::{RangeState, Ranges};
use crate::analysis::uniformity::Uniformity;
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

/// Which analyses a pass keeps valid: those of a module it does not change, or whose change it says leaves them
/// true.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Preserved(u8);

impl Preserved {
    /// The pass changes the module: every analysis is recomputed after it.
    pub const NONE: Preserved = Preserved(0);
    /// The validator's analysis (types of every expression).
    pub const INFO: Preserved = Preserved(1);
    /// The dependency graphs of loops.
    pub const DEPS: Preserved = Preserved(2);
    /// The uniformity of each kernel's values.
    pub const UNIFORMITY: Preserved = Preserved(4);
    /// The ranges of each kernel's integers.
    pub const RANGES: Preserved = Preserved(8);
    /// The pass changes nothing (a check).
    pub const ALL: Preserved = Preserved(15);

    pub const fn union(self, other: Preserved) -> Preserved {
        Preserved(self.0 | other.0)
    }
    pub const fn contains(self, other: Preserved) -> bool {
        self.0 & other.0 == other.0
    }
}

/// The analyses of one module.
#[derive(Default)]
pub struct Analyses {
    info: Option<ModuleInfo>,
    deps: HashMap<LoopRef, DepGraph>,
    /// Per kernel (index in the module).
    uniformity: HashMap<usize, Uniformity>,
    ranges: HashMap<usize, RangeState>,
    /// How many times each analysis was computed, for the tests of preservation.
    computed: Computed,
    /// What the checking passes could not prove but accept (kept across passes; [`run_pipeline`] returns them).
    ///
    /// [`run_pipeline`]: super::run_pipeline
    warnings: Vec<cutec_diagnostics::Diagnostic>,
}

/// How many times [`Analyses`] computed each analysis (a cached one is not counted again).
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub struct Computed {
    pub info: u32,
    pub uniformity: u32,
    pub ranges: u32,
}

impl Analyses {
    /// The validator's analysis (types of every expression...); fails if the module is invalid.
    pub fn info(&mut self, module: &Module) -> Result<&ModuleInfo, KernelError> {
        if self.info.is_none() {
            self.info = Some(valid::validate(module)?);
            self.computed.info += 1;
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

    /// The uniformity of the values of kernel `k` (index in the module); `None` if there is no such kernel.
    pub fn uniformity(&mut self, module: &Module, k: usize) -> Option<&Uniformity> {
        let kernel = module.kernels.get(k)?;
        let computed = &mut self.computed.uniformity;
        Some(self.uniformity.entry(k).or_insert_with(|| {
            *computed += 1;
            Uniformity::of(kernel)
        }))
    }

    /// The ranges of the integers of kernel `k` (index in the module), kept for the next pass that asks while the
    /// kernel does not change; `None` if there is no such kernel; fails if the module is invalid.
    pub fn ranges<'a>(&'a mut self, module: &'a Module, k: usize) -> Result<Option<Ranges<'a>>, KernelError> {
        self.info(module)?;
        let (Some(kernel), Some(info)) = (module.kernels.get(k), self.info.as_ref().and_then(|i| i.kernels.get(k)))
        else {
            return Ok(None);
        };
        if !self.ranges.contains_key(&k) {
            self.computed.ranges += 1;
        }
        let state = self.ranges.entry(k).or_default();
        Ok(Some(Ranges::kept(kernel, info, state)))
    }

    /// How many times each analysis was computed so far.
    pub fn computed(&self) -> Computed {
        self.computed
    }

    /// A warning for the user (a check that could not prove what it accepts).
    pub fn warn(&mut self, d: cutec_diagnostics::Diagnostic) {
        self.warnings.push(d);
    }

    /// The warnings so far, taken.
    pub fn take_warnings(&mut self) -> Vec<cutec_diagnostics::Diagnostic> {
        std::mem::take(&mut self.warnings)
    }

    /// Forgets what a pass that preserves only `kept` may have made untrue (not the warnings).
    pub fn invalidate(&mut self, kept: Preserved) {
        if !kept.contains(Preserved::INFO) {
            self.info = None;
        }
        if !kept.contains(Preserved::DEPS) {
            self.deps.clear();
        }
        if !kept.contains(Preserved::UNIFORMITY) {
            self.uniformity.clear();
        }
        // The ranges read the validator's types: they go with them.
        if !kept.contains(Preserved::RANGES) || !kept.contains(Preserved::INFO) {
            self.ranges.clear();
        }
    }
}

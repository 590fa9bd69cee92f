//! The scheduling passes, not implemented yet: they reject what they will implement, so that an attribute the
//! program asks for is never dropped without a word (E0306 at the loop or the kernel).
//!
//! - `pipeline-loops` will software-pipeline `for` loops marked `pipelined(stages = S)` over their dependency
//!   graph ([`Analyses::deps`]): TMA copies `S - 1` iterations ahead into a ring of shared-memory stages, each
//!   with a full and an empty mbarrier.
//! - `specialize-warps` will split `warp_specialized` kernels into a producer warpgroup and consumer warpgroups
//!   ([`Stmt::Warpgroup`] regions with their register budgets).

use super::{Analyses, LoopRef, Pass, PassError, PassErrorKind};
use crate::module::Module;
use crate::stmt::{Block, Stmt};

pub struct PipelineLoops;

impl Pass for PipelineLoops {
    fn name(&self) -> &'static str {
        "pipeline-loops"
    }
    fn description(&self) -> &'static str {
        "software-pipeline loops marked pipelined(stages = S) (not implemented yet: rejects them)"
    }
    fn run(&self, module: &mut Module, analyses: &mut Analyses) -> Result<(), PassError> {
        for (k, kernel) in module.kernels.iter().enumerate() {
            let mut found = None;
            find_pipelined(&kernel.body, &mut Vec::new(), &mut found);
            let Some((path, stmt, stages)) = found else { continue };
            let at = LoopRef { kernel: k, path, stmt };
            let loc = located(&kernel.body, &at).unwrap_or(kernel.loc);
            // The graph the pipeliner will schedule: say what it would work with.
            let note = match analyses.deps(module, &at) {
                Some(g) => format!(
                    "the loop body has {} statements, {} dependences of which {} are loop-carried; \
                     remove `pipelined` for now",
                    g.node_count(),
                    g.edge_count(),
                    g.loop_carried_count()
                ),
                None => "remove `pipelined` for now".to_string(),
            };
            return Err(PassError {
                pass: self.name(),
                kernel: kernel.name.clone(),
                loc,
                kind: PassErrorKind::NotImplemented { what: format!("`pipelined(stages = {stages})`"), note },
            });
        }
        Ok(())
    }
    fn preserves_all(&self) -> bool {
        true
    }
}

/// A loop found: the path to its block, its index there, its stages.
type Found = Option<(Vec<(usize, usize)>, usize, u32)>;

/// The first `for` loop with `stages`, in program order.
fn find_pipelined(block: &Block, path: &mut Vec<(usize, usize)>, found: &mut Found) {
    for (i, s) in block.stmts().iter().enumerate() {
        if found.is_some() {
            return;
        }
        if let Stmt::For { stages: Some(stages), .. } = s {
            *found = Some((path.clone(), i, *stages));
            return;
        }
        for (b, inner) in s.blocks().enumerate() {
            path.push((i, b));
            find_pipelined(inner, path, found);
            path.pop();
        }
    }
}

/// The location of the statement `at` points to.
fn located(body: &Block, at: &LoopRef) -> Option<crate::Loc> {
    let mut block = body;
    for &(s, b) in &at.path {
        block = block.stmts().get(s)?.blocks().nth(b)?;
    }
    block.iter().nth(at.stmt).map(|(_, loc)| loc)
}

pub struct SpecializeWarps;

impl Pass for SpecializeWarps {
    fn name(&self) -> &'static str {
        "specialize-warps"
    }
    fn description(&self) -> &'static str {
        "split warp_specialized kernels into producer and consumer warpgroups (not implemented yet: rejects them)"
    }
    fn run(&self, module: &mut Module, _: &mut Analyses) -> Result<(), PassError> {
        match module.kernels.iter().find(|k| k.warp_specialized) {
            Some(k) => Err(PassError {
                pass: self.name(),
                kernel: k.name.clone(),
                loc: k.loc,
                kind: PassErrorKind::NotImplemented {
                    what: "`warp_specialized`".to_string(),
                    note: "remove `warp_specialized` for now: the kernel then runs every warp on the same code"
                        .to_string(),
                },
            }),
            None => Ok(()),
        }
    }
    fn preserves_all(&self) -> bool {
        true
    }
}

//! `check-collectives`: the proof, on the IR the other passes leave, that every warp, warpgroup and CTA collective
//! instruction is executed by whole groups ([`crate::analysis::uniformity`]). It changes nothing; what it cannot
//! prove is E0312 at the instruction, with the condition, bounds or jump that splits the group. It runs last, so
//! what a pass generates is held to the same rule as what the program says.

use super::{Analyses, Pass, PassError, PassErrorKind, Preserved};
use crate::analysis::uniformity;
use crate::module::Module;

pub struct CheckCollectives;

impl Pass for CheckCollectives {
    fn name(&self) -> &'static str {
        "check-collectives"
    }
    fn description(&self) -> &'static str {
        "prove that warp, warpgroup and CTA collectives are executed by whole groups (changes nothing)"
    }
    fn run(&self, module: &mut Module, analyses: &mut Analyses) -> Result<(), PassError> {
        for (i, kernel) in module.kernels.iter().enumerate() {
            let Some(u) = analyses.uniformity(module, i) else { continue };
            if let Some(d) = uniformity::check_with(kernel, u).into_iter().next() {
                return Err(PassError::at(self.name(), kernel, d.loc, PassErrorKind::Divergent(Box::new(d))));
            }
        }
        Ok(())
    }
    fn preserves(&self) -> Preserved {
        Preserved::ALL
    }
}

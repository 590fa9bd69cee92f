//! `dce`: removes the definitions nothing uses, when their [effects](crate::effects) allow it.
//!
//! An emitted expression has no effects but reading a variable, so it goes when unused. An operation goes when
//! its result is unused and its effects are [removable](crate::Effects::removable): a load, or a warp shuffle
//! (no lane uses it, so it vanishes from every lane at once); a TMA copy, a store or an mbarrier arrival never
//! does. The walk goes backwards through the body, so a chain of dead definitions dies in one pass: users come
//! after their operands.

use super::{Analyses, Pass, PassError};
use crate::arena::Handle;
use crate::effects;
use crate::expr::Expr;
use crate::module::{Kernel, Module};
use crate::stmt::Block;

pub struct DeadCode;

impl Pass for DeadCode {
    fn name(&self) -> &'static str {
        "dce"
    }
    fn description(&self) -> &'static str {
        "remove unused definitions whose effects allow it"
    }
    fn run(&self, module: &mut Module, _: &mut Analyses) -> Result<(), PassError> {
        for k in &mut module.kernels {
            let mut uses = vec![0u32; k.exprs.len()];
            k.body.visit(&mut |s| s.for_each_use(&k.exprs, |h| bump(&mut uses, h)));
            let body = std::mem::take(&mut k.body);
            k.body = sweep(k, body, &mut uses);
        }
        Ok(())
    }
}

fn bump(uses: &mut [u32], h: Handle<Expr>) {
    if let Some(u) = uses.get_mut(h.index()) {
        *u += 1;
    }
}

fn unused(uses: &[u32], h: Handle<Expr>) -> bool {
    uses.get(h.index()).copied().unwrap_or(1) == 0
}

fn sweep(k: &Kernel, block: Block, uses: &mut [u32]) -> Block {
    let (stmts, locs) = block.into_parts();
    let mut kept = Vec::with_capacity(stmts.len());
    for (mut stmt, loc) in stmts.into_iter().zip(locs).rev() {
        // Only a definition may go (an emitted expression or an operation's result), when unused and its effects
        // allow it.
        let dead = stmt.defines().is_some_and(|d| unused(uses, d)) && effects::stmt(k, &stmt).removable();
        if dead {
            stmt.for_each_use(&k.exprs, |op| {
                if let Some(u) = uses.get_mut(op.index()) {
                    *u = u.saturating_sub(1);
                }
            });
            continue;
        }
        // Nested blocks backwards too (a `while` body before its header).
        for b in stmt.blocks_mut().rev() {
            *b = sweep(k, std::mem::take(b), uses);
        }
        kept.push((stmt, loc));
    }
    let (stmts, locs): (Vec<_>, Vec<_>) = kept.into_iter().rev().unzip();
    Block::from_parts(stmts, locs)
}

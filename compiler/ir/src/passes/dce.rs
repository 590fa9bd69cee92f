//! `dce`: removes the emission of expressions nothing uses.
//!
//! Every expression kind in v0 may be dropped when unused: none writes memory, and a warp shuffle that no lane
//! uses can vanish from every lane at once. (Expressions with effects, such as atomics, will be statements.)
//! The walk goes backwards through the body, so a chain of dead expressions dies in one pass: users come after
//! their operands.

use super::Pass;
use crate::arena::Handle;
use crate::expr::Expr;
use crate::module::{Kernel, Module};
use crate::stmt::{Block, Stmt};

pub struct DeadCode;

impl Pass for DeadCode {
    fn name(&self) -> &'static str {
        "dce"
    }
    fn description(&self) -> &'static str {
        "remove unused expressions"
    }
    fn run(&self, module: &mut Module) {
        for k in &mut module.kernels {
            let mut uses = vec![0u32; k.exprs.len()];
            count_uses(k, &k.body, &mut uses);
            let body = std::mem::take(&mut k.body);
            k.body = sweep(k, body, &mut uses);
        }
    }
}

fn count_uses(k: &Kernel, block: &Block, uses: &mut [u32]) {
    for stmt in block.stmts() {
        let count = |h: Handle<Expr>| {
            if let Some(u) = uses.get_mut(h.index()) {
                *u += 1;
            }
        };
        match stmt {
            // An emission is a definition: count the uses its expression makes.
            Stmt::Emit(h) => {
                if let Some(e) = k.exprs.get(*h) {
                    e.for_each_operand(count);
                }
            }
            Stmt::If { accept, reject, .. } => {
                stmt.for_each_operand(count);
                count_uses(k, accept, uses);
                count_uses(k, reject, uses);
            }
            Stmt::For { body, .. } => {
                stmt.for_each_operand(count);
                count_uses(k, body, uses);
            }
            _ => stmt.for_each_operand(count),
        }
    }
}

fn sweep(k: &Kernel, block: Block, uses: &mut [u32]) -> Block {
    let (stmts, locs) = block.into_parts();
    let mut kept = Vec::with_capacity(stmts.len());
    for (stmt, loc) in stmts.into_iter().zip(locs).rev() {
        let stmt = match stmt {
            Stmt::Emit(h) if uses.get(h.index()).copied().unwrap_or(1) == 0 => {
                if let Some(e) = k.exprs.get(h) {
                    e.for_each_operand(|op| {
                        if let Some(u) = uses.get_mut(op.index()) {
                            *u = u.saturating_sub(1);
                        }
                    });
                }
                continue;
            }
            Stmt::If { cond, accept, reject } => {
                let accept = sweep(k, accept, uses);
                let reject = sweep(k, reject, uses);
                Stmt::If { cond, accept, reject }
            }
            Stmt::For { var, start, end, step, unroll, body } => {
                Stmt::For { var, start, end, step, unroll, body: sweep(k, body, uses) }
            }
            other => other,
        };
        kept.push((stmt, loc));
    }
    let (stmts, locs): (Vec<_>, Vec<_>) = kept.into_iter().rev().unzip();
    Block::from_parts(stmts, locs)
}

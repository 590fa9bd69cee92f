//! Exits of some threads before or around a pipelined loop, which `pipeline-loops` refuses before it writes a
//! ring: thread 0 issues every copy of a ring and lane 0 of each consumer warp releases its stages, so a thread
//! that leaves early may be the one the others wait for. What is refused (E0324, at the exit):
//!
//! - a `return` that the threads of the block may disagree on (under a condition not proved the same in every
//!   thread), anywhere before the end of a pipelined loop in program order;
//! - such a `break` or `continue` out of a loop that holds a pipelined loop.
//!
//! Exits inside the pipelined loop's own body are the `check-schedule` hazard's (E0346), which the pass refuses
//! where it takes the loop's copies. Exits every thread takes together (`if block_idx.x >= n { return; }`) leave
//! no thread behind and are kept.

use super::{Kernel, Refusal, refuse};
use crate::arena::{Handle, Loc};
use crate::expr::Expr;
use crate::passes::PassError;
use crate::stmt::{Block, Stmt};
use std::collections::HashSet;

/// E0324 for the first exit of some threads that may strand a ring (see the module documentation).
pub(super) fn check(pass: &'static str, k: &Kernel, uniform: &HashSet<Handle<Expr>>) -> Result<(), PassError> {
    let mut pending = None;
    match walk(&k.body, uniform, false, &mut pending) {
        Some((at, what)) => Err(refuse(pass, k, at, Refusal::EarlyExit { what })),
        None => Ok(()),
    }
}

/// Whether a statement's condition or bounds may differ between the threads of the block.
fn splits(s: &Stmt, uniform: &HashSet<Handle<Expr>>) -> bool {
    match s {
        Stmt::If { cond, .. } | Stmt::While { cond, .. } => !uniform.contains(cond),
        Stmt::For { start, end, .. } => !uniform.contains(start) || !uniform.contains(end),
        _ => false,
    }
}

fn holds_pipelined(s: &Stmt) -> bool {
    let mut found = false;
    for b in s.blocks() {
        b.visit(&mut |x| found |= matches!(x, Stmt::For { stages: Some(_), .. }));
    }
    found
}

/// The offending exit: `pending` is the first `return` of some threads seen so far, reported when a pipelined
/// loop follows it.
fn walk(
    block: &Block,
    uniform: &HashSet<Handle<Expr>>,
    split: bool,
    pending: &mut Option<Loc>,
) -> Option<(Loc, &'static str)> {
    for (s, at) in block.iter() {
        match s {
            Stmt::Return if split => {
                pending.get_or_insert(at);
            }
            Stmt::For { stages: Some(_), .. } => {
                if let Some(r) = *pending {
                    return Some((r, "a `return`"));
                }
            }
            Stmt::For { body, .. } | Stmt::While { body, .. } if holds_pipelined(s) => {
                if let Some(j) = jump(body, uniform, split || splits(s, uniform)) {
                    return Some((j, "a `break` or `continue`"));
                }
            }
            _ => {}
        }
        let inner = split || splits(s, uniform);
        for b in s.blocks() {
            if let Some(found) = walk(b, uniform, inner, pending) {
                return Some(found);
            }
        }
    }
    None
}

/// A `break` or `continue` of the loop whose body is `block` (not of a loop nested in it) under a condition the
/// threads may disagree on.
fn jump(block: &Block, uniform: &HashSet<Handle<Expr>>, split: bool) -> Option<Loc> {
    for (s, at) in block.iter() {
        match s {
            Stmt::Break | Stmt::Continue if split => return Some(at),
            Stmt::For { .. } | Stmt::While { .. } => continue,
            _ => {}
        }
        let inner = split || splits(s, uniform);
        for b in s.blocks() {
            if let Some(j) = jump(b, uniform, inner) {
                return Some(j);
            }
        }
    }
    None
}

//! `unroll`: replaces `for` loops marked [`Unroll::Full`] whose bounds are literals by one copy of the body per
//! iteration, the induction variable replaced by a literal in each copy.
//!
//! Why in the IR and not only in LLVM: register arrays (`Local` allocations) stay in registers only when every
//! access has a constant offset, and that must not depend on LLVM's unrolling heuristics or on the `-O` level.
//!
//! Loops it leaves alone (the back end may still unroll them): bounds that are not literals, a `break` or
//! `continue` of the loop itself, or more than [`MAX_TRIPS`] iterations or [`MAX_STMTS`] statements unrolled.

use super::Pass;
use crate::arena::Handle;
use crate::expr::{Expr, Literal};
use crate::module::{Kernel, Module, Var};
use crate::stmt::{Block, Stmt, Unroll as UnrollHint};
use crate::types::{Scalar, Type};
use std::collections::HashMap;

pub struct Unroll;

/// The largest trip count unrolled.
pub const MAX_TRIPS: i64 = 1024;
/// The largest number of statements (counting nested ones) an unrolled loop may produce.
pub const MAX_STMTS: usize = 1 << 16;

impl Pass for Unroll {
    fn name(&self) -> &'static str {
        "unroll"
    }
    fn description(&self) -> &'static str {
        "unroll loops marked unroll(full) with literal bounds, making their induction variable a literal"
    }
    fn run(&self, module: &mut Module) {
        for k in &mut module.kernels {
            let body = std::mem::take(&mut k.body);
            k.body = unroll_block(k, body);
            // Copies were appended to the arena: renumber in program order, so later passes that replace an
            // expression by an earlier equal one (`cse`) keep operands before their users.
            super::compact::compact(k);
        }
    }
}

fn unroll_block(k: &mut Kernel, block: Block) -> Block {
    let (stmts, locs) = block.into_parts();
    let mut out = Block::new();
    for (stmt, loc) in stmts.into_iter().zip(locs) {
        match stmt {
            Stmt::If { cond, accept, reject } => {
                let accept = unroll_block(k, accept);
                let reject = unroll_block(k, reject);
                out.push(Stmt::If { cond, accept, reject }, loc);
            }
            Stmt::For { var, start, end, step, unroll, body } => {
                let body = unroll_block(k, body);
                match trip_range(k, unroll, start, end, step, &body) {
                    Some((first, trips)) => {
                        for t in 0..trips {
                            let value = first + t * step;
                            let mut map = HashMap::new();
                            clone_into(k, &body, var, value, &mut map, &mut out);
                        }
                    }
                    None => out.push(Stmt::For { var, start, end, step, unroll, body }, loc),
                }
            }
            other => out.push(other, loc),
        }
    }
    out
}

/// The first value and trip count of a loop this pass unrolls.
fn trip_range(
    k: &Kernel,
    unroll: UnrollHint,
    start: Handle<Expr>,
    end: Handle<Expr>,
    step: i64,
    body: &Block,
) -> Option<(i64, i64)> {
    if unroll != UnrollHint::Full || step <= 0 || jumps_out(body) {
        return None;
    }
    let lit = |h| match k.exprs.get(h) {
        Some(Expr::Literal(l)) => l.as_int(),
        _ => None,
    };
    let (s, e) = (lit(start)?, lit(end)?);
    // Checked: literal bounds may be anything, and the last value `s + (trips - 1) * step` must not overflow.
    let trips = if e > s { e.checked_sub(s)?.checked_add(step - 1)? / step } else { 0 };
    s.checked_add(trips.checked_mul(step)?)?;
    let size = count_stmts(body).saturating_mul(trips as usize);
    (trips <= MAX_TRIPS && size <= MAX_STMTS).then_some((s, trips))
}

/// Whether the block has a `break` or `continue` that belongs to the loop whose body it is.
fn jumps_out(block: &Block) -> bool {
    block.stmts().iter().any(|s| match s {
        Stmt::Break | Stmt::Continue => true,
        Stmt::If { accept, reject, .. } => jumps_out(accept) || jumps_out(reject),
        _ => false, // a nested `for` owns its own jumps
    })
}

fn count_stmts(block: &Block) -> usize {
    block
        .stmts()
        .iter()
        .map(|s| match s {
            Stmt::If { accept, reject, .. } => 1 + count_stmts(accept) + count_stmts(reject),
            Stmt::For { body, .. } => 1 + count_stmts(body),
            _ => 1,
        })
        .sum()
}

/// Appends a copy of `block` to `out`, with reads of `var` replaced by the literal `value`. `map` takes the
/// body's expressions to their copies; operands defined outside the body keep their handles.
fn clone_into(
    k: &mut Kernel,
    block: &Block,
    var: Handle<Var>,
    value: i64,
    map: &mut HashMap<Handle<Expr>, Handle<Expr>>,
    out: &mut Block,
) {
    for (stmt, loc) in block.iter() {
        let m = |map: &HashMap<_, _>, h: Handle<Expr>| map.get(&h).copied().unwrap_or(h);
        let stmt = match *stmt {
            Stmt::Emit(h) => {
                let Some(e) = k.exprs.get(h) else { continue };
                let eloc = k.exprs.loc(h);
                if *e == Expr::ReadVar(var) {
                    let ty = k.vars.get(var).map_or(Type::I32, |v| v.ty);
                    let scalar = ty.scalar().unwrap_or(Scalar::I32);
                    let lit = k.exprs.append(Expr::Literal(Literal::Int { value, ty: scalar }), eloc);
                    map.insert(h, lit);
                    continue;
                }
                let mut e = e.clone();
                e.map_operands(|op| m(map, op));
                let new = k.exprs.append(e, eloc);
                map.insert(h, new);
                Stmt::Emit(new)
            }
            Stmt::WriteVar { var, value } => Stmt::WriteVar { var, value: m(map, value) },
            Stmt::Store { ptr, value, align } => Stmt::Store { ptr: m(map, ptr), value: m(map, value), align },
            Stmt::If { cond, ref accept, ref reject } => {
                let cond = m(map, cond);
                let mut a = Block::new();
                clone_into(k, accept, var, value, map, &mut a);
                let mut r = Block::new();
                clone_into(k, reject, var, value, map, &mut r);
                Stmt::If { cond, accept: a, reject: r }
            }
            Stmt::For { var: inner, start, end, step, unroll, ref body } => {
                let (start, end) = (m(map, start), m(map, end));
                let mut b = Block::new();
                clone_into(k, body, var, value, map, &mut b);
                Stmt::For { var: inner, start, end, step, unroll, body: b }
            }
            ref other => other.clone(),
        };
        out.push(stmt, loc);
    }
}

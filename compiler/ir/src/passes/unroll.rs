//! `unroll`: replaces `for` loops marked [`Unroll::Full`] whose bounds are literals by one copy of the body per
//! iteration, the induction variable replaced by a literal in each copy. A loop marked `unroll(N)`
//! ([`Unroll::Count`]) whose literal trip count is at most N is unrolled the same way; other `unroll(N)` loops
//! are left to the back end (`llvm.loop.unroll.count`).
//!
//! Why in the IR and not only in LLVM: register arrays (`Local` allocations) stay in registers only when every
//! access has a constant offset, and that must not depend on LLVM's unrolling heuristics or on the `-O` level.
//!
//! Loops it leaves alone (the back end may still unroll them): bounds that are not literals, or a `break` or
//! `continue` of the loop itself.
//!
//! **The budget.** A kernel may have at most [`MAX_STMTS`] statements (nested ones count) after unrolling, so
//! that no input makes the back end run for minutes: a loop marked `unroll` whose copies would make more is an
//! error naming the loop (E0320), whether this pass or the back end would unroll it (an `unroll(N)` loop with
//! bounds known only at run time makes N copies in the back end), and so is a kernel over the budget (E0321). Sizes are counted after the inner loops are unrolled, so nested loops multiply.

use super::{Analyses, Pass, PassError, PassErrorKind};
use crate::arena::{Handle, Loc};
use crate::expr::{Expr, Literal};
use crate::hash::FxMap;
use crate::module::{Kernel, Module, Var};
use crate::stmt::{Block, Stmt, Unroll as UnrollHint};
use crate::types::{Scalar, Type};
use crate::visit::{ForLoop, Out, Rewrite};
use std::convert::Infallible;

pub struct Unroll;

/// The most statements (counting nested ones) a kernel may have after unrolling: twice the largest example
/// (`gemm_simt`, 14,053 after unrolling), and what the back end compiles in a few seconds on a loaded 2-core
/// machine. LLVM's time grows faster than the statements of one huge basic block (its load/store vectorizer and
/// instruction selection); the slowest shape found is a chain of dependent multiply-adds of loads,
/// `acc = acc * x[i] + y[i]` in a loop marked `unroll` (10 statements a trip). Measured with
/// `cutec build --timings FILE` (release binary, the default -O3 to PTX; `cutec build` does not run ptxas unless
/// asked for a cubin), load average about 3: 65,000 statements took 10.0 s (9.0 s in PTX emission) under the
/// former budget of 65,536; 32,750 (the largest accepted) take 2.4 to 5.5 s; 16,000 take 0.6 s. A 8,192-element
/// scalar tile copy (32,766 statements) takes 3.5 s.
pub const MAX_STMTS: usize = 1 << 15;

impl Pass for Unroll {
    fn name(&self) -> &'static str {
        "unroll"
    }
    fn description(&self) -> &'static str {
        "unroll loops marked unroll(full) with literal bounds, making their induction variable a literal"
    }
    fn run(&self, module: &mut Module, _: &mut Analyses) -> Result<(), PassError> {
        for k in &mut module.kernels {
            let body = std::mem::take(&mut k.body);
            let error = |k: &Kernel, loc: Loc, kind| PassError::at("unroll", k, loc, kind);
            let unrolled = Unroller { k: &mut *k }.block(body);
            k.body = unrolled.map_err(|(loc, kind)| error(k, loc, kind))?;
            let stmts = unrolled_size(k, &k.body);
            if stmts > MAX_STMTS as u64 {
                return Err(error(k, k.loc, PassErrorKind::KernelTooLarge { stmts }));
            }
            // Copies were appended to the arena: renumber in program order, so later passes that replace an
            // expression by an earlier equal one (`cse`) keep operands before their users.
            super::compact::compact(k);
        }
        Ok(())
    }
}

/// Why a block cannot be unrolled: the location of the loop over the budget and the error.
type Refusal = (Loc, PassErrorKind);

/// Unrolls the loops of the blocks it rewrites, inner loops first.
struct Unroller<'k> {
    k: &'k mut Kernel,
}

impl Rewrite for Unroller<'_> {
    type Error = Refusal;

    fn for_(&mut self, f: ForLoop, mut out: Out<'_>) -> Result<(), Refusal> {
        let body = self.block(f.body)?;
        match trip_range(self.k, f.unroll, f.start, f.end, f.step, &body, out.loc())? {
            Some((first, trips)) if f.stages.is_none() => {
                // One map for every copy, emptied between them: it keeps the capacity one copy needed.
                let mut map = FxMap::default();
                for t in 0..trips {
                    map.clear();
                    let mut copy = BodyCopy { k: self.k, var: f.var, value: first + t * f.step, map: &mut map };
                    let Ok(stmts) = copy.block(body.clone());
                    out.append(stmts);
                }
            }
            _ => out.push(ForLoop { body, ..f }.into()),
        }
        Ok(())
    }
}

/// The first value and trip count of a loop this pass unrolls; an error when the copies the hint asks for (made
/// here or by the back end) are over the budget.
fn trip_range(
    k: &Kernel,
    unroll: UnrollHint,
    start: Handle<Expr>,
    end: Handle<Expr>,
    step: i64,
    body: &Block,
    loc: Loc,
) -> Result<Option<(i64, i64)>, Refusal> {
    let known = trips_and_copies(k, unroll, start, end, step);
    let copies = known.map_or_else(|| run_time_copies(unroll), |(_, _, c)| c);
    // An empty body still costs a copy per iteration to make.
    let body_size = unrolled_size(k, body).max(1);
    if copies.saturating_mul(body_size) > MAX_STMTS as u64 {
        return Err((loc, PassErrorKind::UnrollTooLarge { copies, body: body_size }));
    }
    let Some((first, trips, copies)) = known else { return Ok(None) };
    Ok((trips as u64 == copies && !jumps_out(body)).then_some((first, trips)))
}

/// Whether the block has a `break` or `continue` that belongs to the loop whose body it is (a nested loop owns
/// its own jumps).
fn jumps_out(block: &Block) -> bool {
    block
        .stmts()
        .iter()
        .any(|s| matches!(s, Stmt::Break | Stmt::Continue) || (!s.is_loop() && s.blocks().any(jumps_out)))
}

/// The statements of `block` once every loop marked `unroll` with literal bounds is unrolled, here or by the
/// back end (a loop with a `break` is left to the back end, which may still unroll it fully).
fn unrolled_size(k: &Kernel, block: &Block) -> u64 {
    let mut size = 0u64;
    for stmt in block.stmts() {
        let inner = stmt.blocks().map(|b| unrolled_size(k, b)).fold(0u64, u64::saturating_add);
        let copies = if let Stmt::For { start, end, step, unroll, .. } = *stmt {
            copies(k, unroll, start, end, step).unwrap_or_else(|| run_time_copies(unroll))
        } else {
            1
        };
        size = size.saturating_add(1).saturating_add(inner.saturating_mul(copies));
    }
    size
}

/// The iteration count of a loop with literal bounds, and how many copies of its body its hint asks for.
fn trips_and_copies(
    k: &Kernel,
    unroll: UnrollHint,
    start: Handle<Expr>,
    end: Handle<Expr>,
    step: i64,
) -> Option<(i64, i64, u64)> {
    let limit = match unroll {
        UnrollHint::Full => i64::MAX,
        UnrollHint::Count(n) => i64::from(n),
        UnrollHint::Auto | UnrollHint::Disable => return None,
    };
    if step <= 0 {
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
    Some((s, trips, trips.min(limit) as u64))
}

/// The copies of the body the back end makes of a loop whose bounds are known only at run time: `unroll(N)`
/// becomes `llvm.loop.unroll.count N` (N copies and a remainder loop, whatever the trip count), which must be
/// within the budget like the copies this pass makes; `unroll` (full) of an unknown trip count is not unrolled.
fn run_time_copies(unroll: UnrollHint) -> u64 {
    match unroll {
        UnrollHint::Count(n) => u64::from(n),
        UnrollHint::Full | UnrollHint::Auto | UnrollHint::Disable => 1,
    }
}

fn copies(k: &Kernel, unroll: UnrollHint, start: Handle<Expr>, end: Handle<Expr>, step: i64) -> Option<u64> {
    trips_and_copies(k, unroll, start, end, step).map(|(_, _, c)| c)
}

/// A copy of a loop body for one iteration: reads of `var` become the literal `value`. `map` takes the body's
/// expressions to their copies; operands defined outside the body keep their handles.
struct BodyCopy<'k> {
    k: &'k mut Kernel,
    var: Handle<Var>,
    value: i64,
    map: &'k mut FxMap<Handle<Expr>, Handle<Expr>>,
}

impl Rewrite for BodyCopy<'_> {
    type Error = Infallible;

    fn operand(&mut self, h: Handle<Expr>) -> Handle<Expr> {
        self.map.get(&h).copied().unwrap_or(h)
    }

    /// Each copy defines a result of its own.
    fn result(&mut self, r: Handle<Expr>) -> Handle<Expr> {
        let Some(e) = self.k.exprs.get(r).cloned() else { return r };
        let new = self.k.exprs.append(e, self.k.exprs.loc(r));
        self.map.insert(r, new);
        new
    }

    fn emit(&mut self, h: Handle<Expr>, mut out: Out<'_>) -> Result<(), Infallible> {
        let Some(e) = self.k.exprs.get(h) else { return Ok(()) };
        let eloc = self.k.exprs.loc(h);
        if *e == Expr::ReadVar(self.var) {
            let ty = self.k.vars.get(self.var).map_or(Type::I32, |v| v.ty);
            let scalar = ty.scalar().unwrap_or(Scalar::I32);
            let lit = self.k.exprs.append(Expr::Literal(Literal::Int { value: self.value, ty: scalar }), eloc);
            self.map.insert(h, lit);
            return Ok(());
        }
        let mut e = e.clone();
        e.map_operands(|op| self.map.get(&op).copied().unwrap_or(op));
        let new = self.k.exprs.append(e, eloc);
        self.map.insert(h, new);
        out.push(Stmt::Emit(new));
        Ok(())
    }
}

//! The tensor-core work of a kernel, counted as its body is lowered: the manifest's `flops`, from which
//! `cutec run --bench` reports TFLOP/s. Each `gemm` issues, per warpgroup that runs it, `2 * 64 * N * K`
//! floating-point operations (one multiply-add per element of its 64 x N x K product); it runs once per iteration
//! of the loops around it and once per CTA (per tile of a `persistent` kernel). The count is a formula over the
//! dims when every loop around a `gemm` runs a number of times the dims give (`0..ceil_div(K, BK)`), no `gemm`
//! sits under a condition, and nothing leaves a loop or the kernel early; otherwise the kernel has no count
//! (rather than a wrong one). Tiles at the edges count whole: they run whole on the tensor cores.

use super::Lower;
use cutec_ir::{Expr, Handle};
use cutec_sema::{SymInt, SymOp};

/// What is known so far of a kernel's tensor-core work.
#[derive(Clone, Debug, Default)]
pub(crate) struct Count {
    /// The work of one CTA (or tile), summed over the `gemm`s lowered so far; `None` before the first.
    per_cta: Option<SymInt>,
    /// Some `gemm` ran a number of times the count cannot say, or control may leave early.
    unknown: bool,
    /// The trip counts of the loops being lowered, outermost first (`None`: not a formula of the dims).
    loops: Vec<Option<SymInt>>,
    /// How many conditions (`if`) the statement being lowered is under.
    conditions: u32,
}

impl Count {
    /// The formula of one launch's work: `grid` CTAs (or tiles) times the work of each.
    pub(crate) fn of_launch(&self, grid: &[SymInt]) -> Option<SymInt> {
        if self.unknown {
            return None;
        }
        let per_cta = self.per_cta.clone()?;
        Some(grid.iter().fold(per_cta, |acc, g| SymInt::op(SymOp::Mul, g.clone(), acc)))
    }

    pub(crate) fn enter_condition(&mut self) {
        self.conditions += 1;
    }

    pub(crate) fn leave_condition(&mut self) {
        self.conditions = self.conditions.saturating_sub(1);
    }

    /// A loop running `trips` times (`None`: a number the dims do not give).
    pub(crate) fn enter_loop(&mut self, trips: Option<SymInt>) {
        self.loops.push(trips);
    }

    pub(crate) fn leave_loop(&mut self) {
        self.loops.pop();
    }

    /// Control may leave a loop or the kernel early (`break`, `continue`, `return`): work after it may not run.
    pub(crate) fn early_exit(&mut self) {
        self.unknown = true;
    }

    /// A `gemm` issuing `flops` each time it runs, here.
    fn add(&mut self, flops: i64) {
        if self.conditions > 0 || self.loops.iter().any(Option::is_none) {
            self.unknown = true;
            return;
        }
        let times =
            self.loops.iter().flatten().fold(SymInt::Const(flops), |acc, t| SymInt::op(SymOp::Mul, acc, t.clone()));
        self.per_cta = Some(match self.per_cta.take() {
            Some(sum) => SymInt::op(SymOp::Add, sum, times),
            None => times,
        });
    }
}

impl Lower<'_> {
    /// Counts a `gemm` of `steps` k-steps of `m64nNkK`, run by `warpgroups` warpgroups of each CTA.
    pub(crate) fn count_mma(&mut self, n: u32, k: u32, steps: usize, warpgroups: u32) {
        let per_warpgroup = 2 * 64 * i64::from(n) * i64::from(k) * steps as i64;
        self.flops.add(per_warpgroup * i64::from(warpgroups));
    }

    /// The trip count of `for _ in lo..hi` (step 1) as a formula of the dims, `max(hi - lo, 0)`, when both are.
    pub(crate) fn trip_count(&self, lo: Handle<Expr>, hi: Handle<Expr>) -> Option<SymInt> {
        let (lo, hi) = (self.dims_formula(lo, 0)?, self.dims_formula(hi, 0)?);
        let span = if lo == SymInt::Const(0) { hi } else { SymInt::op(SymOp::Sub, hi, lo) };
        Some(SymInt::op(SymOp::Max, span, SymInt::Const(0)))
    }

    /// An integer IR value as a formula of the dynamic dims and constants, where it is one.
    fn dims_formula(&self, h: Handle<Expr>, depth: u32) -> Option<SymInt> {
        if depth > 32 {
            return None;
        }
        if let Some(name) = self.dim_name(h) {
            return Some(SymInt::dim(name.to_owned()));
        }
        match self.b.kernel().exprs.get(h)? {
            Expr::Literal(l) => l.as_int().map(SymInt::Const),
            Expr::Convert { value, to } if to.is_int() => self.dims_formula(*value, depth + 1),
            &Expr::Binary { op, lhs, rhs } => {
                let op = super::prove::sym_op(op)?;
                Some(SymInt::op(op, self.dims_formula(lhs, depth + 1)?, self.dims_formula(rhs, depth + 1)?))
            }
            &Expr::Math { fun: fun @ (cutec_ir::MathFn::Min | cutec_ir::MathFn::Max), arg, arg1: Some(b), .. } => {
                let op = if fun == cutec_ir::MathFn::Min { SymOp::Min } else { SymOp::Max };
                Some(SymInt::op(op, self.dims_formula(arg, depth + 1)?, self.dims_formula(b, depth + 1)?))
            }
            _ => None,
        }
    }
}

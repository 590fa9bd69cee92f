//! Value ranges: for every integer expression, an interval that contains each value it can take in the threads
//! that execute a given region of the kernel. The operand rules of the Hopper instructions (`check-operands`:
//! mbarrier counts, named-barrier ids, multicast masks) and the bounds of register-array indices are proved
//! with it.
//!
//! # The facts
//!
//! An [`Interval`] `[lo, hi]` of mathematical integers (`i128`, so that no bound computation overflows). Every
//! value of the expression, as the machine computes it (wrapping at its width), lies in it. The sources:
//!
//! - literals: themselves; `tid.d`: the block's extent along `d` when the launch fixes it (`0..1024`
//!   otherwise), narrowed inside a warpgroup region to the role's warpgroups (`tid.x` in
//!   `128 first .. 128 (first + count)`); `ntid.d`: the block's extent; `laneid`: `0..32`;
//!   `cluster_ctarank`: `0..` the cluster's size; `ctaid` and `nctaid`: non-negative;
//! - parameters, loads and every other operation's result: anything their type holds;
//! - a variable: the union of every value written to it (a `for`'s induction variable takes its bounds: `start`
//!   up to `end - 1`), found as a fixed point; a variable whose range still grows after a few rounds (a counter)
//!   gets its type's whole range.
//!
//! Arithmetic follows the interval rules (corners for `*` and `/` by a divisor of one sign, the divisor's
//! magnitude for `%`, masks for `&`); a result that may leave its type's range (and so wrap) is the whole range.
//! The analysis is flow-insensitive within a region: conditions do not narrow (an `if x < 16` does not make `x`
//! smaller inside), which keeps it simple and sound; what it cannot prove is refused by its users, never
//! assumed.

use std::collections::HashMap;

use crate::arena::Handle;
use crate::expr::{BinaryOp, CompareOp, Dim, Expr, MathFn, SpecialReg, UnaryOp};
use crate::module::{Kernel, Var};
use crate::stmt::{Role, Stmt};
use crate::types::{Scalar, Type};
use crate::valid::KernelInfo;

/// The closed interval `lo..=hi` (empty when `lo > hi`: no value, e.g. a variable never written).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub struct Interval {
    pub lo: i128,
    pub hi: i128,
}

impl Interval {
    pub const EMPTY: Interval = Interval { lo: 1, hi: 0 };

    pub fn new(lo: i128, hi: i128) -> Interval {
        Interval { lo, hi }
    }
    pub fn exact(v: i128) -> Interval {
        Interval { lo: v, hi: v }
    }
    /// Every value of an integer type (`i1` as 0 and 1); nothing for other types.
    pub fn of_type(ty: Type) -> Interval {
        match ty {
            Type::Scalar(s) => Interval::of_scalar(s),
            Type::Vector { .. } | Type::Ptr(_) => Interval::EMPTY,
        }
    }
    fn of_scalar(s: Scalar) -> Interval {
        match s {
            Scalar::I1 => Interval::new(0, 1),
            Scalar::I32 => Interval::new(i32::MIN.into(), i32::MAX.into()),
            Scalar::I64 => Interval::new(i64::MIN.into(), i64::MAX.into()),
            Scalar::F16 | Scalar::BF16 | Scalar::F32 | Scalar::F64 | Scalar::E4M3 | Scalar::E5M2 => Interval::EMPTY,
        }
    }
    pub fn is_empty(self) -> bool {
        self.lo > self.hi
    }
    /// The single value, if there is exactly one.
    pub fn as_exact(self) -> Option<i128> {
        (self.lo == self.hi).then_some(self.lo)
    }
    /// Whether every value of `self` lies in `other` (an empty interval lies in anything).
    pub fn within(self, other: Interval) -> bool {
        self.is_empty() || (other.lo <= self.lo && self.hi <= other.hi)
    }
    /// Whether no value of `self` lies in `other`.
    pub fn disjoint(self, other: Interval) -> bool {
        self.is_empty() || other.is_empty() || self.hi < other.lo || other.hi < self.lo
    }
    /// The smallest interval holding both.
    pub fn join(self, other: Interval) -> Interval {
        if self.is_empty() {
            return other;
        }
        if other.is_empty() {
            return self;
        }
        Interval::new(self.lo.min(other.lo), self.hi.max(other.hi))
    }
    pub fn meet(self, other: Interval) -> Interval {
        Interval::new(self.lo.max(other.lo), self.hi.min(other.hi))
    }
    fn corners(a: Interval, b: Interval, f: impl Fn(i128, i128) -> i128) -> Interval {
        let c = [f(a.lo, b.lo), f(a.lo, b.hi), f(a.hi, b.lo), f(a.hi, b.hi)];
        Interval::new(c.iter().copied().min().unwrap_or(0), c.iter().copied().max().unwrap_or(0))
    }
}

impl std::fmt::Display for Interval {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.is_empty(), self.as_exact()) {
            (true, _) => write!(f, "no value"),
            (false, Some(v)) => write!(f, "{v}"),
            (false, None) => write!(f, "{}..={}", self.lo, self.hi),
        }
    }
}

/// The threads that execute a region: the range of their `tid` along each dimension.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub struct Region {
    pub tid: [Interval; 3],
}

/// The ranges of a kernel's integer expressions, per region.
pub struct Ranges<'k> {
    kernel: &'k Kernel,
    info: &'k KernelInfo,
    state: State<'k>,
}

/// What [`Ranges`] has computed of a kernel: the variables' fixed point and the regions asked for so far. The
/// pass pipeline's `Analyses` keeps it between the passes that do not change the kernel.
#[derive(Default)]
pub struct RangeState {
    /// Whether `vars` is the fixed point (computed on first use).
    solved: bool,
    vars: HashMap<Handle<Var>, Interval>,
    /// The ranges of every expression in a region, computed once per region asked for.
    regions: HashMap<Region, Vec<Interval>>,
}

/// A [`RangeState`] of one analysis, or kept by its caller.
enum State<'k> {
    Own(RangeState),
    Kept(&'k mut RangeState),
}

impl std::ops::Deref for State<'_> {
    type Target = RangeState;
    fn deref(&self) -> &RangeState {
        match self {
            State::Own(s) => s,
            State::Kept(s) => s,
        }
    }
}

impl std::ops::DerefMut for State<'_> {
    fn deref_mut(&mut self) -> &mut RangeState {
        match self {
            State::Own(s) => s,
            State::Kept(s) => s,
        }
    }
}

/// How many times a variable's range may grow before it is widened to its type's range.
const WIDEN_AFTER: u32 = 3;
/// Rounds of the variables' fixed point before every variable is given its type's whole range (a chain of
/// copies between variables written in reverse order converges one link per round).
const MAX_ROUNDS: u32 = 16;

impl<'k> Ranges<'k> {
    /// The analysis of `kernel` (`info`: the validator's types of its expressions).
    pub fn new(kernel: &'k Kernel, info: &'k KernelInfo) -> Ranges<'k> {
        Ranges::with_state(kernel, info, State::Own(RangeState::default()))
    }

    /// The analysis of `kernel` that starts from, and adds to, what `state` holds: `state` must be of this
    /// kernel as it is now (the pipeline's `Analyses` drops it when a pass changes the kernel).
    pub fn kept(kernel: &'k Kernel, info: &'k KernelInfo, state: &'k mut RangeState) -> Ranges<'k> {
        Ranges::with_state(kernel, info, State::Kept(state))
    }

    fn with_state(kernel: &'k Kernel, info: &'k KernelInfo, state: State<'k>) -> Ranges<'k> {
        let mut ranges = Ranges { kernel, info, state };
        if !ranges.state.solved {
            ranges.solve_vars();
            ranges.state.solved = true;
        }
        ranges
    }

    /// The validator's analysis of the kernel, which the ranges read types from.
    pub fn info(&self) -> &'k KernelInfo {
        self.info
    }

    /// The threads of the whole CTA.
    pub fn cta(&self) -> Region {
        let extent = |d: usize| match self.kernel.block_size {
            Some(b) => Interval::new(0, i128::from(b[d]) - 1),
            None => Interval::new(0, 1023),
        };
        Region { tid: [extent(0), extent(1), extent(2)] }
    }

    /// The threads of `outer` that run a warpgroup region of `role` (warpgroup `w` is threads `128 w ..
    /// 128 w + 127` along `x`).
    pub fn role(&self, outer: Region, role: &Role) -> Region {
        let first = 128 * i128::from(role.first);
        let end = first + 128 * i128::from(role.count);
        let mut r = outer;
        r.tid[0] = r.tid[0].meet(Interval::new(first, end - 1));
        r
    }

    /// The range of `e` in `region`.
    pub fn of(&mut self, region: Region, e: Handle<Expr>) -> Interval {
        if !self.state.regions.contains_key(&region) {
            let all = self.compute(region);
            self.state.regions.insert(region, all);
        }
        self.state.regions.get(&region).and_then(|all| all.get(e.index()).copied()).unwrap_or(Interval::EMPTY)
    }

    /// The ranges of every expression in `region`, in arena order (operands are earlier expressions).
    fn compute(&self, region: Region) -> Vec<Interval> {
        let mut out: Vec<Interval> = Vec::with_capacity(self.kernel.exprs.len());
        for (h, e) in self.kernel.exprs.iter() {
            let r = self.eval(region, h, e, &out);
            out.push(r);
        }
        out
    }

    fn ty(&self, h: Handle<Expr>) -> Type {
        self.info.ty(h)
    }

    /// The range of `e` (handle `h`) from its operands' ranges `done`.
    fn eval(&self, region: Region, h: Handle<Expr>, e: &Expr, done: &[Interval]) -> Interval {
        let ty = self.ty(h);
        let full = Interval::of_type(ty);
        let of = |x: Handle<Expr>| done.get(x.index()).copied().unwrap_or(Interval::EMPTY);
        let r = match *e {
            // A literal is its value.
            Expr::Literal(l) => {
                return match l {
                    crate::expr::Literal::Bool(b) => Interval::exact(i128::from(b)),
                    crate::expr::Literal::Int { value, .. } => Interval::exact(value.into()),
                    crate::expr::Literal::Float { .. } => Interval::EMPTY,
                };
            }
            Expr::Special(s) => self.special(region, s),
            Expr::ReadVar(v) => self.state.vars.get(&v).copied().filter(|r| !r.is_empty()).unwrap_or(full),
            Expr::Unary { op: UnaryOp::Neg, value } => {
                let a = of(value);
                Interval::new(-a.hi, -a.lo)
            }
            Expr::Unary { op: UnaryOp::Not, value } if ty == Type::I1 => {
                let a = of(value);
                Interval::new(1 - a.hi, 1 - a.lo)
            }
            Expr::Unary { op: UnaryOp::Not, value } => {
                // !x = -x - 1
                let a = of(value);
                Interval::new(-a.hi - 1, -a.lo - 1)
            }
            Expr::Binary { op, lhs, rhs } => binary(op, of(lhs), of(rhs), ty),
            Expr::Compare { op, lhs, rhs } => compare(op, of(lhs), of(rhs)),
            Expr::Select { cond, accept, reject } => match of(cond).as_exact() {
                Some(1) => of(accept),
                Some(0) => of(reject),
                _ => of(accept).join(of(reject)),
            },
            Expr::Convert { value, .. } => {
                let from = self.ty(value);
                if matches!(from, Type::Scalar(Scalar::I1 | Scalar::I32 | Scalar::I64)) { of(value) } else { full }
            }
            Expr::Math { fun: MathFn::Min, arg, arg1: Some(b), .. } => {
                let (a, b) = (of(arg), of(b));
                Interval::new(a.lo.min(b.lo), a.hi.min(b.hi))
            }
            Expr::Math { fun: MathFn::Max, arg, arg1: Some(b), .. } => {
                let (a, b) = (of(arg), of(b));
                Interval::new(a.lo.max(b.lo), a.hi.max(b.hi))
            }
            Expr::Math { fun: MathFn::Abs, arg, .. } => {
                let a = of(arg);
                let m = a.lo.abs().max(a.hi.abs());
                if a.lo >= 0 {
                    a
                } else if a.hi <= 0 {
                    Interval::new(-a.hi, -a.lo)
                } else {
                    Interval::new(0, m)
                }
            }
            Expr::Param(_)
            | Expr::AllocPtr(_)
            | Expr::Math { .. }
            | Expr::Offset { .. }
            | Expr::OpResult(_)
            | Expr::Extract { .. }
            | Expr::Compose { .. }
            | Expr::MapShared { .. } => full,
        };
        // A value that may leave its type's range wraps: it can be anything of the type.
        if full.is_empty() {
            Interval::EMPTY
        } else if r.within(full) {
            r
        } else {
            full
        }
    }

    fn special(&self, region: Region, s: SpecialReg) -> Interval {
        let dim = |d: Dim| match d {
            Dim::X => 0,
            Dim::Y => 1,
            Dim::Z => 2,
        };
        let non_negative = Interval::new(0, i32::MAX.into());
        match s {
            SpecialReg::ThreadIdx(d) => region.tid[dim(d)],
            SpecialReg::BlockDim(d) => match self.kernel.block_size {
                Some(b) => Interval::exact(b[dim(d)].into()),
                None => Interval::new(1, 1024),
            },
            SpecialReg::BlockIdx(_) => non_negative,
            SpecialReg::GridDim(_) => Interval::new(1, i32::MAX.into()),
            SpecialReg::LaneId => Interval::new(0, 31),
            SpecialReg::ClusterCtaRank => {
                let size = self.kernel.cluster.map_or(1, |c| c.iter().map(|&n| i128::from(n)).product::<i128>());
                Interval::new(0, size.max(1) - 1)
            }
        }
    }

    /// The range of every variable: the union of what is written to it, in the region of each write, as a
    /// fixed point (a range that keeps growing is widened to the variable's type).
    fn solve_vars(&mut self) {
        let mut grown: HashMap<Handle<Var>, u32> = HashMap::new();
        let mut converged = false;
        for _ in 0..MAX_ROUNDS {
            self.state.regions.clear();
            let mut writes: Vec<(Handle<Var>, Interval)> = Vec::new();
            let cta = self.cta();
            self.collect_writes(&self.kernel.body, cta, &mut writes);
            let mut changed = false;
            for (v, r) in writes {
                let old = self.state.vars.get(&v).copied().unwrap_or(Interval::EMPTY);
                let new = old.join(r);
                if new != old {
                    let n = grown.entry(v).or_insert(0);
                    *n += 1;
                    let widened = match self.kernel.vars.get(v) {
                        Some(var) if *n > WIDEN_AFTER => Interval::of_type(var.ty),
                        _ => new,
                    };
                    self.state.vars.insert(v, widened);
                    changed = true;
                }
            }
            if !changed {
                converged = true;
                break;
            }
        }
        if !converged {
            for (v, var) in self.kernel.vars.iter() {
                self.state.vars.insert(v, Interval::of_type(var.ty));
            }
        }
        self.state.regions.clear();
    }

    /// The ranges written to variables in `block` (in `region`), by `var = value` and by `for` loops.
    fn collect_writes(&mut self, block: &crate::stmt::Block, region: Region, out: &mut Vec<(Handle<Var>, Interval)>) {
        for stmt in block.stmts() {
            match stmt {
                Stmt::WriteVar { var, value } => {
                    let r = self.of(region, *value);
                    out.push((*var, r));
                }
                Stmt::For { var, start, end, body, .. } => {
                    let (s, e) = (self.of(region, *start), self.of(region, *end));
                    // The body sees start, start + step, ... below end; none of them if the loop runs no
                    // iteration (then only the start value counts, for a read after the loop).
                    let r = if s.is_empty() || e.is_empty() { s } else { Interval::new(s.lo, s.hi.max(e.hi - 1)) };
                    out.push((*var, r));
                    self.collect_writes(body, region, out);
                }
                Stmt::Roles(regions) => {
                    for r in regions {
                        let inner = self.role(region, &r.role);
                        self.collect_writes(&r.body, inner, out);
                    }
                }
                other => {
                    for b in other.blocks() {
                        self.collect_writes(b, region, out);
                    }
                }
            }
        }
    }
}

/// The interval of `a op b` in mathematical integers (the caller widens what leaves the type).
fn binary(op: BinaryOp, a: Interval, b: Interval, ty: Type) -> Interval {
    if a.is_empty() || b.is_empty() {
        return Interval::EMPTY;
    }
    let full = Interval::of_type(ty);
    let bits = match ty {
        Type::Scalar(Scalar::I1) => 1,
        Type::Scalar(Scalar::I32) => 32,
        _ => 64,
    };
    match op {
        BinaryOp::Add => Interval::new(a.lo + b.lo, a.hi + b.hi),
        BinaryOp::Sub => Interval::new(a.lo - b.hi, a.hi - b.lo),
        BinaryOp::Mul => Interval::corners(a, b, |x, y| x.saturating_mul(y)),
        // Signed division truncates toward zero; with a divisor of one sign the quotient is monotone in each
        // operand, so the extremes are at the corners. A divisor that may be zero: anything.
        BinaryOp::Div if b.lo > 0 || b.hi < 0 => Interval::corners(a, b, |x, y| x / y),
        // The remainder has the dividend's sign and a magnitude below the divisor's.
        BinaryOp::Rem if b.lo > 0 || b.hi < 0 => {
            let m = b.lo.abs().max(b.hi.abs()) - 1;
            let min_div = b.lo.abs().min(b.hi.abs());
            if a.lo >= 0 && a.hi < min_div {
                a
            } else if a.lo >= 0 {
                Interval::new(0, a.hi.min(m))
            } else if a.hi <= 0 {
                Interval::new(a.lo.max(-m), 0)
            } else {
                Interval::new(a.lo.max(-m), a.hi.min(m))
            }
        }
        BinaryOp::And if ty == Type::I1 => Interval::new(a.lo.min(b.lo), a.hi.min(b.hi)),
        BinaryOp::Or if ty == Type::I1 => Interval::new(a.lo.max(b.lo), a.hi.max(b.hi)),
        // With a non-negative operand the result is non-negative and at most that operand.
        BinaryOp::And if a.lo >= 0 && b.lo >= 0 => Interval::new(0, a.hi.min(b.hi)),
        BinaryOp::And if a.lo >= 0 => Interval::new(0, a.hi),
        BinaryOp::And if b.lo >= 0 => Interval::new(0, b.hi),
        BinaryOp::Or | BinaryOp::Xor if a.lo >= 0 && b.lo >= 0 => Interval::new(0, all_ones_above(a.hi.max(b.hi))),
        BinaryOp::Shl if b.lo >= 0 && b.hi < bits => {
            Interval::corners(a, b, |x, k| x.checked_shl(k as u32).unwrap_or(i128::MAX))
        }
        BinaryOp::Shr if b.lo >= 0 && b.hi < bits => Interval::corners(a, b, |x, k| x >> k),
        BinaryOp::Div
        | BinaryOp::Rem
        | BinaryOp::And
        | BinaryOp::Or
        | BinaryOp::Xor
        | BinaryOp::Shl
        | BinaryOp::Shr => full,
    }
}

/// The smallest `2^k - 1` at least `v` (for `v >= 0`): a bound of `x | y` and `x ^ y` for operands up to `v`.
fn all_ones_above(v: i128) -> i128 {
    let mut m: i128 = 0;
    while m < v {
        m = m * 2 + 1;
    }
    m
}

fn compare(op: CompareOp, a: Interval, b: Interval) -> Interval {
    if a.is_empty() || b.is_empty() {
        return Interval::new(0, 1);
    }
    let (always, never) = match op {
        CompareOp::Lt => (a.hi < b.lo, a.lo >= b.hi),
        CompareOp::Le => (a.hi <= b.lo, a.lo > b.hi),
        CompareOp::Gt => (a.lo > b.hi, a.hi <= b.lo),
        CompareOp::Ge => (a.lo >= b.hi, a.hi < b.lo),
        CompareOp::Eq => (a.as_exact().is_some() && a == b, a.disjoint(b)),
        CompareOp::Ne => (a.disjoint(b), a.as_exact().is_some() && a == b),
    };
    match (always, never) {
        (true, _) => Interval::exact(1),
        (_, true) => Interval::exact(0),
        _ => Interval::new(0, 1),
    }
}

//! Proofs that a coordinate stays inside an extent, so that its access needs no predicate.
//!
//! A coordinate (a [`SymInt`] over IR values and dynamic dimensions) is turned into a linear form over *atoms*:
//! dynamic dimensions (divided by what the kernel requires of them: under `static_assert(M % 128 == 0)` the atom is
//! `M/128` and `M` is `128 * (M/128)`), IR values that are not sums or multiples of others (`thread_idx.x`, a
//! loop variable, `x % 32`), and anything else as an opaque term. An atom has a range where the kernel says so:
//! `thread_idx.x < block.x`, `block_idx.x < grid.x` (the launch clause, itself a linear form), `i < end` for a
//! loop variable, `x % c < c`. `c < E` is proven when `E - 1 - max(c)` is a sum of non-negative terms, `c >= 0`
//! when `min(c)` is. Nothing is proven about what the form cannot express: the access is then predicated.

use super::Lower;
use cutec_ir::{BinaryOp, CompareOp, Expr, Handle, MathFn, SpecialReg};
use cutec_sema::{SymInt, SymOp};

/// How deep bounds are expanded (an atom's bound mentions other atoms, whose bounds are expanded in turn).
const MAX_DEPTH: u32 = 6;

#[derive(Clone, Debug, PartialEq)]
enum Atom {
    /// A dynamic dimension divided by its required divisor (`M/128`, or `M` itself when nothing is required).
    Dim(String),
    /// An IR value that is neither a sum nor a multiple of others.
    Value(Handle<Expr>),
    /// A `for` variable (every read of it in its body is the same value).
    LoopVar(Handle<cutec_ir::Var>),
    /// A variable read in an epoch (`Lower::epoch`): reads in the same epoch are the same value.
    VarRead(Handle<cutec_ir::Var>, u32),
    /// An operation the form cannot open (`x % 32`, `x / 3` of an inexact quotient).
    Opaque(SymInt),
}

/// `konst + Σ coef * atom`.
#[derive(Clone, Debug, PartialEq, Default)]
pub(crate) struct Linear {
    konst: i64,
    terms: Vec<(Atom, i64)>,
}

impl Linear {
    fn constant(c: i64) -> Linear {
        Linear { konst: c, terms: Vec::new() }
    }
    fn atom(a: Atom, coef: i64) -> Linear {
        Linear { konst: 0, terms: vec![(a, coef)] }
    }
    fn add(mut self, other: &Linear, sign: i64) -> Option<Linear> {
        self.konst = self.konst.checked_add(other.konst.checked_mul(sign)?)?;
        for (a, c) in &other.terms {
            let c = c.checked_mul(sign)?;
            match self.terms.iter_mut().find(|(b, _)| b == a) {
                Some((_, d)) => *d = d.checked_add(c)?,
                None => self.terms.push((a.clone(), c)),
            }
        }
        self.terms.retain(|(_, c)| *c != 0);
        Some(self)
    }
    fn scale(mut self, k: i64) -> Option<Linear> {
        self.konst = self.konst.checked_mul(k)?;
        for (_, c) in &mut self.terms {
            *c = c.checked_mul(k)?;
        }
        self.terms.retain(|(_, c)| *c != 0);
        Some(self)
    }
}

impl Lower<'_> {
    /// Whether `0 <= c` holds for every run of the kernel.
    pub(crate) fn proves_nonneg(&self, c: &SymInt) -> bool {
        self.linear(c, 0).and_then(|l| self.extreme(&l, false, 0)).is_some_and(|l| self.nonneg(&l, 0))
    }

    /// The name of the dynamic dimension whose kernel parameter `h` is, if it is one.
    pub(crate) fn dim_name(&self, h: Handle<Expr>) -> Option<&str> {
        let i = self.dims.iter().position(|d| *d == h)?;
        self.kernel_info.dyn_dims.get(i).map(|d| d.name.as_str())
    }

    /// The smallest and largest values of `c` over every run of the kernel, when both are constants.
    pub(crate) fn constant_range(&self, c: &SymInt) -> Option<(i64, i64)> {
        let l = self.linear(c, 0)?;
        let (lo, hi) = (self.extreme(&l, false, 0)?, self.extreme(&l, true, 0)?);
        (lo.terms.is_empty() && hi.terms.is_empty()).then_some((lo.konst, hi.konst))
    }

    /// Whether `c < extent` holds wherever the lowering is: for every run of the kernel, or under the
    /// conditions of the enclosing `if`s.
    pub(crate) fn proves_below(&self, c: &SymInt, extent: &SymInt) -> bool {
        let (Some(c), Some(e)) = (self.linear(c, 0), self.linear(extent, 0)) else { return false };
        // d = extent - 1 - c must not be negative.
        let Some(d) = e.add(&Linear::constant(1), -1).and_then(|d| d.add(&c, -1)) else { return false };
        if self.extreme(&d, false, 0).is_some_and(|m| self.nonneg(&m, 0)) {
            return true;
        }
        // Under `a < b` (`a <= b - 1`): d - (b - 1 - a) not negative proves d not negative.
        self.facts.iter().any(|&(a, b, strict)| {
            let slack =
                SymInt::op(SymOp::Sub, SymInt::op(SymOp::Sub, leaf(b), leaf(a)), SymInt::Const(i64::from(strict)));
            self.linear(&slack, 0)
                .and_then(|s| d.clone().add(&s, -1))
                .and_then(|r| self.extreme(&r, false, 0))
                .is_some_and(|m| self.nonneg(&m, 0))
        })
    }

    /// Records what the condition `c` (an `i1`) says where it holds: its comparisons `a < b`, `a <= b` (and
    /// `>`, `>=` turned around), through `&&`.
    pub(crate) fn learn(&mut self, c: Handle<Expr>) {
        let mut stack = vec![c];
        while let Some(h) = stack.pop() {
            match self.b.kernel().exprs.get(h) {
                // Only integer comparisons: `f < 10.0` says nothing about the integers the form works with.
                Some(&Expr::Compare { lhs, .. }) if !self.is_int(lhs) => {}
                Some(&Expr::Compare { op, lhs, rhs }) => match op {
                    CompareOp::Lt => self.facts.push((lhs, rhs, true)),
                    CompareOp::Le => self.facts.push((lhs, rhs, false)),
                    CompareOp::Gt => self.facts.push((rhs, lhs, true)),
                    CompareOp::Ge => self.facts.push((rhs, lhs, false)),
                    CompareOp::Eq | CompareOp::Ne => {}
                },
                Some(&Expr::Binary { op: BinaryOp::And, lhs, rhs }) => stack.extend([lhs, rhs]),
                _ => {}
            }
        }
    }

    /// The linear form of a symbolic integer, where it has one.
    fn linear(&self, s: &SymInt, depth: u32) -> Option<Linear> {
        if depth > 4 * MAX_DEPTH {
            return None;
        }
        let opaque = || Some(Linear::atom(Atom::Opaque(s.clone()), 1));
        match s {
            SymInt::Const(c) => Some(Linear::constant(*c)),
            SymInt::Dim(name) => {
                let d = self.required_divisor(name);
                Some(Linear::atom(Atom::Dim(name.clone()), d))
            }
            SymInt::Value { id, .. } => self.linear_ir(Handle::from_value_id(*id)?, depth + 1),
            SymInt::Op(op, a, b) => {
                let (x, y) = (self.linear(a, depth + 1)?, self.linear(b, depth + 1)?);
                match op {
                    SymOp::Add => x.add(&y, 1),
                    SymOp::Sub => x.add(&y, -1),
                    SymOp::Mul if y.terms.is_empty() => x.scale(y.konst),
                    SymOp::Mul if x.terms.is_empty() => y.scale(x.konst),
                    SymOp::Div if y.terms.is_empty() => self.exact_div(&x, y.konst).or_else(opaque),
                    SymOp::CeilDiv if y.terms.is_empty() => {
                        let top = x.add(&Linear::constant(y.konst.checked_sub(1)?), 1)?;
                        self.exact_div(&top, y.konst).or_else(opaque)
                    }
                    _ => opaque(),
                }
            }
            SymInt::Generic(_) | SymInt::Param { .. } => None,
        }
    }

    /// The linear form of an IR value: sums and constant multiples are opened, anything else is an atom.
    fn linear_ir(&self, h: Handle<Expr>, depth: u32) -> Option<Linear> {
        let atom = || Some(Linear::atom(Atom::Value(h), 1));
        if let Some(name) = self.dim_name(h) {
            return self.linear(&SymInt::dim(name.to_owned()), depth + 1);
        }
        match self.b.kernel().exprs.get(h)? {
            Expr::Literal(l) => l.as_int().map(Linear::constant),
            // A conversion between integer types keeps the value (indices are far from the limits of `i32`).
            Expr::Convert { value, to } if to.is_int() && self.is_int(*value) => self.linear_ir(*value, depth + 1),
            Expr::ReadVar(v) if self.loop_ranges.contains_key(v) => Some(Linear::atom(Atom::LoopVar(*v), 1)),
            Expr::ReadVar(v) => match self.read_epochs.get(&(h.index() as u32)) {
                Some(&epoch) => Some(Linear::atom(Atom::VarRead(*v, epoch), 1)),
                None => atom(),
            },
            Expr::Binary { op, lhs, rhs } => {
                // A remainder is an atom, whose range `range_of` knows.
                let op = match sym_op(*op) {
                    Some(op @ (SymOp::Add | SymOp::Sub | SymOp::Mul | SymOp::Div)) => op,
                    _ => return atom(),
                };
                let l = self.linear(&SymInt::op(op, leaf(*lhs), leaf(*rhs)), depth + 1)?;
                // An inexact quotient stays this value (whose range `range_of` knows).
                if l.terms.iter().any(|(a, _)| matches!(a, Atom::Opaque(_))) { atom() } else { Some(l) }
            }
            _ => atom(),
        }
    }

    /// `x / d` when every coefficient of `x` is a multiple of `d > 0` and `x` is not negative (so truncation is
    /// floor, and the constant part divides with floor).
    fn exact_div(&self, x: &Linear, d: i64) -> Option<Linear> {
        if d <= 0 || !x.terms.iter().all(|(_, c)| c % d == 0) || !self.nonneg(x, 0) {
            return None;
        }
        let terms = x.terms.iter().map(|(a, c)| (a.clone(), c / d)).collect();
        Some(Linear { konst: x.konst.div_euclid(d), terms })
    }

    /// The largest (`max`) or smallest value of `l` over the atoms' ranges, as a linear form over the atoms
    /// without a range (dimensions): exact for those.
    fn extreme(&self, l: &Linear, max: bool, depth: u32) -> Option<Linear> {
        let mut out = Linear::constant(l.konst);
        for (a, c) in &l.terms {
            // A positive coefficient takes the atom's bound in the same direction.
            let up = (*c > 0) == max;
            // Dimensions are the free symbols of the bounds: kept, so that they cancel between the two sides.
            let (lo, hi) = if matches!(a, Atom::Dim(_)) { (None, None) } else { self.range_of(a, depth) };
            let bound = match if up { hi } else { lo } {
                Some(b) if depth < MAX_DEPTH => self.extreme(&b, up, depth + 1)?,
                _ => Linear::atom(a.clone(), 1),
            };
            out = out.add(&bound.scale(*c)?, 1)?;
        }
        Some(out)
    }

    /// Whether `l` cannot be negative: non-negative multiples of atoms that cannot be negative, and a constant
    /// that their constant lower bounds make up for (`N - 1` where the launch needs `N >= 1`).
    fn nonneg(&self, l: &Linear, depth: u32) -> bool {
        let mut floor = l.konst;
        for (a, c) in &l.terms {
            if *c < 0 || depth >= MAX_DEPTH {
                return false;
            }
            let Some(lo) = self.range_of(a, depth).0 else { return false };
            if !self.nonneg(&lo, depth + 1) {
                return false;
            }
            // The atom is at least `lo`, itself at least 0 (and exactly its constant when it has no terms).
            let at_least = if lo.terms.is_empty() { lo.konst } else { 0 };
            let Some(f) = c.checked_mul(at_least).and_then(|x| floor.checked_add(x)) else { return false };
            floor = f;
        }
        floor >= 0
    }

    /// Whether every launch the runtime accepts has the dynamic dimension `name` at least 1: a factor
    /// `ceil_div(name, c)` (or `name`) of a grid extent, which the runtime requires to be at least 1.
    fn positive_dim(&self, name: &str) -> bool {
        fn forces(s: &SymInt, name: &str) -> bool {
            match s {
                SymInt::Dim(d) => d == name,
                SymInt::Op(SymOp::Mul, a, b) => match (a.as_const(), b.as_const()) {
                    (Some(k), _) if k > 0 => forces(b, name),
                    (_, Some(k)) if k > 0 => forces(a, name),
                    _ => forces(a, name) || forces(b, name),
                },
                SymInt::Op(SymOp::CeilDiv, x, c) => c.as_const().is_some_and(|c| c > 0) && forces(x, name),
                _ => false,
            }
        }
        self.kernel_info.launch.as_ref().is_some_and(|l| l.grid.iter().any(|g| forces(g, name)))
    }

    /// What is known of an atom: a lower and an upper bound (inclusive), as linear forms.
    fn range_of(&self, a: &Atom, depth: u32) -> (Option<Linear>, Option<Linear>) {
        let zero = || Some(Linear::constant(0));
        match a {
            // Extents are read from shapes, which are not negative (the runtime checks its arguments).
            // Extents are not negative (the runtime checks its arguments); one that a grid extent is made of is
            // at least 1.
            // (The atom is `name / d` for the divisor `d` the kernel requires: at least 1 as well.)
            Atom::Dim(name) if self.shape_dims.contains(name) => {
                (Some(Linear::constant(i64::from(self.positive_dim(name)))), None)
            }
            Atom::Dim(_) => (None, None),
            Atom::Value(h) => self.range_of_value(*h, depth),
            Atom::LoopVar(v) => match self.loop_ranges.get(v) {
                Some(&(lo, hi)) => {
                    let lo = self.linear_ir(lo, depth + 1);
                    let hi = self.linear_ir(hi, depth + 1).and_then(|h| h.add(&Linear::constant(1), -1));
                    (lo, hi)
                }
                None => (None, None),
            },
            Atom::Opaque(SymInt::Op(SymOp::Rem, x, m)) => match (self.linear(x, depth + 1), m.as_const()) {
                (Some(x), Some(m)) if m > 0 && self.nonneg(&x, depth + 1) => (zero(), Some(Linear::constant(m - 1))),
                _ => (None, None),
            },
            Atom::Opaque(SymInt::Op(SymOp::Div, x, d)) => match (self.linear(x, depth + 1), d.as_const()) {
                (Some(x), Some(d)) if d > 0 && self.nonneg(&x, depth + 1) => {
                    // floor(x / d) <= max(x) / d when that is a constant.
                    let hi = self.extreme(&x, true, depth + 1).filter(|h| h.terms.is_empty());
                    (zero(), hi.map(|h| Linear::constant(h.konst.div_euclid(d))))
                }
                _ => (None, None),
            },
            Atom::Opaque(_) | Atom::VarRead(..) => (None, None),
        }
    }

    fn range_of_value(&self, h: Handle<Expr>, depth: u32) -> (Option<Linear>, Option<Linear>) {
        let zero = || Some(Linear::constant(0));
        let Some(e) = self.b.kernel().exprs.get(h) else { return (None, None) };
        let launch = self.kernel_info.launch.as_ref();
        // In a persistent kernel's body a tile coordinate is in the launch clause's grid like `block_idx`.
        let tile;
        let e = match self.tile_dim(h) {
            Some(d) => {
                tile = Expr::Special(SpecialReg::BlockIdx(d));
                &tile
            }
            None => e,
        };
        match e {
            Expr::Special(SpecialReg::ThreadIdx(d)) => {
                let hi = self.b.kernel().block_size.map(|b| Linear::constant(i64::from(b[d.index()]) - 1));
                (zero(), hi)
            }
            Expr::Special(SpecialReg::BlockIdx(d)) => {
                let grid = launch.map(|l| l.grid.get(d.index()).cloned().unwrap_or(SymInt::Const(1)));
                let hi = grid.and_then(|g| self.linear(&g, depth + 1)).and_then(|g| g.add(&Linear::constant(1), -1));
                (zero(), hi)
            }
            Expr::Special(SpecialReg::LaneId) => (zero(), Some(Linear::constant(31))),
            Expr::Special(SpecialReg::ClusterCtaRank) => {
                let size = self.b.kernel().cluster.map_or(16, |c| i64::from(c[0] * c[1] * c[2]));
                (zero(), Some(Linear::constant(size - 1)))
            }
            Expr::Special(_) => (Some(Linear::constant(1)), None),
            Expr::Binary { op: BinaryOp::Rem, lhs, rhs } => {
                let s =
                    SymInt::op(SymOp::Rem, leaf(*lhs), self.ir_const(*rhs).map_or_else(|| leaf(*rhs), SymInt::Const));
                self.range_of(&Atom::Opaque(s), depth)
            }
            // `x & m` with a constant `m >= 0` is in `0..=m`.
            Expr::Binary { op: BinaryOp::And, lhs, rhs } => match (self.ir_const(*lhs), self.ir_const(*rhs)) {
                (Some(m), _) | (_, Some(m)) if m >= 0 => (zero(), Some(Linear::constant(m))),
                _ => (None, None),
            },
            // `x ^ m` of a non-negative `x` and a constant `m >= 0` stays below the next power of two above both.
            Expr::Binary { op: BinaryOp::Xor, lhs, rhs } => match (self.ir_const(*lhs), self.ir_const(*rhs)) {
                (Some(m), None) | (None, Some(m)) if m >= 0 => {
                    let x = if self.ir_const(*lhs).is_some() { *rhs } else { *lhs };
                    match self.range_of_value(x, depth + 1) {
                        (Some(lo), Some(hi)) if self.nonneg(&lo, depth + 1) && hi.terms.is_empty() => {
                            let top = hi.konst.max(m).max(0) as u64;
                            let bound = (top + 1).next_power_of_two() as i64 - 1;
                            (zero(), Some(Linear::constant(bound)))
                        }
                        _ => (None, None),
                    }
                }
                _ => (None, None),
            },
            // `x >> k` of a non-negative `x` is `x / 2^k`.
            Expr::Binary { op: BinaryOp::Shr, lhs, rhs } => match self.ir_const(*rhs) {
                Some(k) if (0..31).contains(&k) => {
                    let s = SymInt::op(SymOp::Div, leaf(*lhs), SymInt::Const(1 << k));
                    self.range_of(&Atom::Opaque(s), depth)
                }
                _ => (None, None),
            },
            Expr::Binary { op: BinaryOp::Div, lhs, rhs } => match self.ir_const(*rhs) {
                Some(d) => {
                    let s = SymInt::op(SymOp::Div, leaf(*lhs), SymInt::Const(d));
                    self.range_of(&Atom::Opaque(s), depth)
                }
                None => (None, None),
            },
            // `min(a, b)` is at most either operand and `max(a, b)` at least either: that operand is the bound
            // (the one of dimensions and constants, like the `N - 1` of `min(col, N - 1)`, when one is). The other
            // side is bounded when both operands are: by 0 when both are non-negative, by the smaller (larger) of
            // two constant bounds.
            &Expr::Math { fun: fun @ (MathFn::Min | MathFn::Max), arg, arg1: Some(other), .. } if self.is_int(arg) => {
                let (Some(a), Some(b)) = (self.linear_ir(arg, depth + 1), self.linear_ir(other, depth + 1)) else {
                    return (None, None);
                };
                let fixed = |l: &Linear| l.terms.iter().all(|(t, _)| matches!(t, Atom::Dim(_)));
                let near = if fixed(&a) && !fixed(&b) { a.clone() } else { b.clone() };
                let min = fun == MathFn::Min;
                let far = match (self.extreme(&a, !min, depth + 1), self.extreme(&b, !min, depth + 1)) {
                    (Some(x), Some(y)) if x.terms.is_empty() && y.terms.is_empty() => {
                        let k = if min { x.konst.min(y.konst) } else { x.konst.max(y.konst) };
                        Some(Linear::constant(k))
                    }
                    (Some(x), Some(y)) if min && self.nonneg(&x, depth + 1) && self.nonneg(&y, depth + 1) => zero(),
                    _ => None,
                };
                if min { (far, Some(near)) } else { (Some(near), far) }
            }
            _ => (None, None),
        }
    }

    /// Reads a variable, remembering in which epoch.
    pub(crate) fn read_var(&mut self, var: Handle<cutec_ir::Var>) -> Handle<Expr> {
        let h = self.b.read(var);
        self.read_epochs.insert(h.index() as u32, self.epoch);
        h
    }

    /// Writes a variable: later reads are a new epoch.
    pub(crate) fn write_var(&mut self, var: Handle<cutec_ir::Var>, value: Handle<Expr>) {
        self.b.write(var, value);
        self.epoch += 1;
    }

    /// Whether an IR value is an integer (not a float, a boolean or a pointer).
    fn is_int(&self, h: Handle<Expr>) -> bool {
        self.b.ty(h).is_some_and(|t| t.is_int())
    }

    /// The value of an integer literal.
    pub(crate) fn ir_const(&self, h: Handle<Expr>) -> Option<i64> {
        match self.b.kernel().exprs.get(h)? {
            Expr::Literal(l) => l.as_int(),
            _ => None,
        }
    }

    /// The divisor the kernel requires of a dynamic dimension (`static_assert(M % d == 0)`), 1 if none.
    pub(crate) fn required_divisor(&self, dim: &str) -> i64 {
        self.kernel_info
            .requires
            .iter()
            .filter(|r| r.dim == dim)
            .fold(1, |acc, r| acc / SymInt::gcd(acc, r.multiple_of) * r.multiple_of)
    }
}

/// An IR value as a symbolic leaf (the form reads it back through the arena; its name is never printed).
pub(crate) fn leaf(h: Handle<Expr>) -> SymInt {
    SymInt::value(h.into(), String::new())
}

/// The symbolic operator of an integer IR operation with the same semantics (truncating `div` and `rem`).
pub(crate) fn sym_op(op: BinaryOp) -> Option<SymOp> {
    Some(match op {
        BinaryOp::Add => SymOp::Add,
        BinaryOp::Sub => SymOp::Sub,
        BinaryOp::Mul => SymOp::Mul,
        BinaryOp::Div => SymOp::Div,
        BinaryOp::Rem => SymOp::Rem,
        _ => return None,
    })
}

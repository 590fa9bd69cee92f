//! The stages of a ring: an access whose address is `stride * (i % S) + r` bytes into an allocation, with `i` a
//! loop's induction variable and `0 <= r`, `r + bytes <= stride` for every value `r` takes, stays inside stage
//! `i % S`. Two such accesses of the same ring (same allocation, variable, `S` and stride) in iterations `k` and
//! `k + d` touch the same bytes only when `d` is a multiple of `S`: the dependency graph's loop-carried edge
//! between them has distance `S`, not 1 ([`crate::analysis::deps`]).
//!
//! The proof is syntactic and interval-based: the address is an `offset` chain from an allocation; exactly one
//! index is the stage (`i % S` or `(i % S) * c` with literals `S > 1` and `c > 0`); every other index has an
//! interval from literals, thread indices (the block's extent when the launch fixes it), lanes, and `+ - * / %
//! & >>` by literals. Anything else (a variable's value, a load) has no interval, and the access is then not
//! known to stay in one stage: its edges keep distance 1.

use crate::arena::Handle;
use crate::expr::{BinaryOp, Expr, Literal, SpecialReg};
use crate::module::{Alloc, Kernel, Var};

/// The ring stage an access stays inside (see the module documentation).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Stage {
    pub alloc: Handle<Alloc>,
    pub var: Handle<Var>,
    pub modulus: i64,
    /// Bytes per stage.
    pub stride: i64,
}

/// The stage of `var` that an access at `ptr` of `bytes` bytes stays inside, when that is proved. `var` must
/// take non-negative values (the caller knows its loop's start).
pub fn stage_of(kernel: &Kernel, ptr: Handle<Expr>, bytes: u64, var: Handle<Var>) -> Option<Stage> {
    let mut terms = Vec::new();
    let mut h = ptr;
    let alloc = loop {
        match kernel.exprs.get(h)? {
            Expr::AllocPtr(a) => break *a,
            Expr::Offset { base, index, elem } if *base < h => {
                terms.push((*index, i128::from(elem.size_bytes())));
                h = *base;
            }
            _ => return None,
        }
    };
    let mut stage = None;
    let (mut lo, mut hi) = (0i128, 0i128);
    for (index, elem) in terms {
        if let Some((modulus, c)) = stage_index(kernel, index, var) {
            if stage.is_some() {
                return None;
            }
            stage = Some((modulus, c * elem));
            continue;
        }
        let (l, u) = interval(kernel, index, 0)?;
        lo += l * elem;
        hi += u * elem;
    }
    let (modulus, stride) = stage?;
    let fits = lo >= 0 && hi + i128::from(bytes) <= stride;
    let stride = i64::try_from(stride).ok()?;
    fits.then_some(Stage { alloc, var, modulus, stride })
}

fn literal(kernel: &Kernel, h: Handle<Expr>) -> Option<i128> {
    match kernel.exprs.get(h)? {
        Expr::Literal(Literal::Int { value, .. }) => Some(i128::from(*value)),
        _ => None,
    }
}

/// `(S, c)` when `index` is `var % S` (c = 1) or `(var % S) * c`, `S > 1` and `c > 0` literals.
fn stage_index(kernel: &Kernel, index: Handle<Expr>, var: Handle<Var>) -> Option<(i64, i128)> {
    let rem = |h: Handle<Expr>| match kernel.exprs.get(h)? {
        Expr::Binary { op: BinaryOp::Rem, lhs, rhs } if matches!(kernel.exprs.get(*lhs), Some(Expr::ReadVar(v)) if *v == var) => {
            literal(kernel, *rhs).filter(|&s| s > 1).and_then(|s| i64::try_from(s).ok())
        }
        _ => None,
    };
    if let Some(s) = rem(index) {
        return Some((s, 1));
    }
    match kernel.exprs.get(index)? {
        Expr::Binary { op: BinaryOp::Mul, lhs, rhs } => {
            let (s, c) = match (rem(*lhs), rem(*rhs)) {
                (Some(s), None) => (s, literal(kernel, *rhs)?),
                (None, Some(s)) => (s, literal(kernel, *lhs)?),
                _ => return None,
            };
            (c > 0).then_some((s, c))
        }
        _ => None,
    }
}

/// An interval holding every value of `h` as the machine computes it, for the few forms an address index takes
/// (see the module documentation); `None` when unknown or when a bound passes 2^31 (where 32-bit arithmetic
/// could wrap).
fn interval(kernel: &Kernel, h: Handle<Expr>, depth: u32) -> Option<(i128, i128)> {
    const LIMIT: i128 = 1 << 31;
    if depth > 32 {
        return None;
    }
    let of = |x: Handle<Expr>| interval(kernel, x, depth + 1);
    let r = match kernel.exprs.get(h)? {
        Expr::Literal(Literal::Int { value, .. }) => (i128::from(*value), i128::from(*value)),
        Expr::Special(SpecialReg::ThreadIdx(d)) => (0, i128::from(kernel.block_size?[d.index()]) - 1),
        Expr::Special(SpecialReg::LaneId) => (0, 31),
        Expr::Binary { op, lhs, rhs } => {
            let c = literal(kernel, *rhs);
            match op {
                BinaryOp::Add => {
                    let ((a, b), (x, y)) = (of(*lhs)?, of(*rhs)?);
                    (a + x, b + y)
                }
                BinaryOp::Sub => {
                    let ((a, b), (x, y)) = (of(*lhs)?, of(*rhs)?);
                    (a - y, b - x)
                }
                BinaryOp::Mul => {
                    let ((a, b), (x, y)) = (of(*lhs)?, of(*rhs)?);
                    let corners = [a * x, a * y, b * x, b * y];
                    (*corners.iter().min()?, *corners.iter().max()?)
                }
                // Of a non-negative value by a positive literal.
                BinaryOp::Div | BinaryOp::Rem | BinaryOp::Shr => {
                    let ((a, b), c) = (of(*lhs)?, c?);
                    if a < 0 || c <= 0 {
                        return None;
                    }
                    match op {
                        BinaryOp::Div => (a / c, b / c),
                        BinaryOp::Rem => (0, b.min(c - 1)),
                        _ if c < 31 => (a >> c, b >> c),
                        _ => return None,
                    }
                }
                // Any value masked by a non-negative literal.
                BinaryOp::And => {
                    let m = c.or_else(|| literal(kernel, *lhs)).filter(|&m| m >= 0)?;
                    (0, m)
                }
                _ => return None,
            }
        }
        _ => return None,
    };
    (r.0 > -LIMIT && r.1 < LIMIT).then_some(r)
}

/// Whether `h` is proved non-negative (a loop's start, so that `i % S` is a stage index).
pub fn nonnegative(kernel: &Kernel, h: Handle<Expr>) -> bool {
    interval(kernel, h, 0).is_some_and(|(lo, _)| lo >= 0)
}

//! The copies of a pipelined loop into one tile: a tile wider than a TMA box (an MN-major tile of B wider than
//! its swizzle's rows) is filled by several copies, one per box, each into its own slice; `pipeline-loops` accepts
//! them only where together they fill the tile exactly once.

use super::ring::{Copy, PASS};
use super::{Kernel, Refusal, refuse};
use crate::arena::Handle;
use crate::expr::{BinaryOp, Expr};
use crate::passes::PassError;

/// Where the copies into `tile` land: E0324 unless they fill it exactly. One copy fills its tile (the whole tile
/// `tma_load` makes, or with multicast its CTA's slice, the other CTAs copying the others); several copies of a
/// tile (its boxes) land at `index + c` for one index and constants `c`, on disjoint ranges of elements, and
/// with their multicast CTAs make up the tile's elements: no element is copied twice or left unfilled.
pub(super) fn slices_cover(k: &Kernel, copies: &[Copy], tile: Handle<crate::module::Alloc>) -> Result<(), PassError> {
    let mine: Vec<&Copy> = copies.iter().filter(|c| c.tile == tile).collect();
    let [first, ..] = mine.as_slice() else { return Ok(()) };
    let whole = |c: &Copy| matches!(k.exprs.get(c.dst), Some(Expr::AllocPtr(_)));
    if mine.len() == 1 {
        if whole(first) || first.multicast.is_some() {
            return Ok(());
        }
        return Err(refuse(PASS, k, first.loc, Refusal::CopyIntoPart));
    }
    let Some(alloc) = k.allocs.get(tile) else {
        return Err(super::internal(PASS, k, first.loc, "a copy into no allocation", "here"));
    };
    // Byte ranges from the common index: an offset counts elements of its own type.
    let mut ranges = Vec::new();
    for c in &mine {
        let (rest, at) = match k.exprs.get(c.dst) {
            Some(Expr::Offset { index, elem, .. }) => {
                let (rest, at) = split_constant(k, *index);
                (rest, at.saturating_mul(i64::from(elem.size_bytes())))
            }
            _ => (None, 0),
        };
        let bytes = match k.exprs.get(c.map) {
            Some(Expr::Param(p)) => k.tma_box_bytes(*p),
            _ => None,
        };
        let Some(bytes) = bytes else {
            return Err(super::internal(PASS, k, c.loc, "a copy whose box is not known", "here"));
        };
        ranges.push((rest, at, i64::try_from(bytes).unwrap_or(i64::MAX), c));
    }
    let fail = |c: &Copy, why: Refusal| Err(refuse(PASS, k, c.loc, why));
    ranges.sort_by_key(|r| r.1);
    for w in ranges.windows(2) {
        let ((rest0, at0, n0, _), (rest1, at1, _, c1)) = (&w[0], &w[1]);
        if rest0 != rest1 || c1.multicast.map(|m| m.1) != first.multicast.map(|m| m.1) {
            return fail(c1, Refusal::SlicesUnknown);
        }
        if at0.saturating_add(*n0) > *at1 {
            return fail(c1, Refusal::SlicesOverlap);
        }
    }
    let total = ranges.iter().fold(0i64, |t, r| t.saturating_add(r.2));
    let ctas = i64::from(first.multicast.map_or(1, |(_, n)| n));
    let filled = total.saturating_mul(ctas);
    let size = i64::try_from(alloc.size_bytes()).unwrap_or(i64::MAX);
    if filled != size {
        return fail(first, Refusal::SlicesFill { filled, size });
    }
    Ok(())
}

/// `index` as `rest + c` with `c` a constant: (`None`, c) for a literal, (`Some(x)`, c) for `x + c`, and
/// (`Some(index)`, 0) otherwise.
fn split_constant(k: &Kernel, index: Handle<Expr>) -> (Option<Handle<Expr>>, i64) {
    let literal = |x: Handle<Expr>| match k.exprs.get(x) {
        Some(Expr::Literal(crate::expr::Literal::Int { value, .. })) => Some(*value),
        _ => None,
    };
    if let Some(c) = literal(index) {
        return (None, c);
    }
    match k.exprs.get(index) {
        Some(Expr::Binary { op: BinaryOp::Add, lhs, rhs }) => match (literal(*lhs), literal(*rhs)) {
            (_, Some(c)) => (Some(*lhs), c),
            (Some(c), _) => (Some(*rhs), c),
            _ => (Some(index), 0),
        },
        _ => (Some(index), 0),
    }
}

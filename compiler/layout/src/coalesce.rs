//! `coalesce` and `filter`: simplify a layout without changing it as a function on its domain.

use crate::error::{Result, rank_mismatch};
use crate::eval::LayoutOp;
use crate::int_tuple::{Int, IntTuple, mul};
use crate::layout::Layout;

/// CuTe's `bw_coalesce`: walk the flat modes right to left, keeping a front mode `s0:d0`, and for each mode
/// `s1:d1`
///  * `s1 = _1`: skip it;
///  * the front is the single mode `_1:d0`: replace it by `s1:d1`;
///  * `s0:s1*d1` (all static): merge into `s1*s0:d1`;
///  * otherwise prepend `s1:d1`.
///
/// A lone static 1 left at the end gives `1:0`; a lone mode gives an integral layout.
fn bw_coalesce(shapes: &[Int], strides: &[Int], init: (Int, Int)) -> Result<Layout> {
    // `reversed` holds the result modes right to left: its last element is the front.
    let mut reversed = vec![init];
    for (s, d) in shapes.iter().zip(strides).rev() {
        if s.is(1) {
            continue;
        }
        let single = reversed.len() == 1;
        let (s0, d0) = reversed.last_mut().expect("never empty");
        if single && s0.is(1) {
            *s0 = s.clone();
            *d0 = d.clone();
        } else if let (Some(a), Some(b), Some(front_stride), true) =
            (s.static_value(), d.static_value(), d0.static_value(), s0.is_static())
            && a.checked_mul(b) == Some(front_stride)
        {
            *s0 = mul(LayoutOp::Coalesce, s, s0)?;
            *d0 = Int::Static(b);
        } else {
            reversed.push((s.clone(), d.clone()));
        }
    }
    if reversed.len() == 1 {
        let (s, d) = reversed.remove(0);
        return Ok(if s.is(1) { Layout::trivial() } else { Layout::from_parts(IntTuple::Int(s), IntTuple::Int(d)) });
    }
    let (shape, stride): (Vec<_>, Vec<_>) =
        reversed.into_iter().rev().map(|(s, d)| (IntTuple::Int(s), IntTuple::Int(d))).unzip();
    Ok(Layout::from_parts(IntTuple::Tuple(shape), IntTuple::Tuple(stride)))
}

/// `coalesce(L)`: merge adjacent modes `s0:d0, s1:s0*d0` into `s0*s1:d0` and drop static size-1 modes.
/// @post size(result) == size(L), depth(result) <= 1,
/// @post result(i) == L(i) for all 0 <= i < size(L).
pub fn coalesce(layout: &Layout) -> Result<Layout> {
    let (shapes, strides): (Vec<Int>, Vec<Int>) = layout.leaves().into_iter().unzip();
    match shapes.len() {
        0 => Ok(Layout::trivial()),
        n => bw_coalesce(&shapes[..n - 1], &strides[..n - 1], (shapes[n - 1].clone(), strides[n - 1].clone())),
    }
}

/// CuTe's `detail::coalesce_x`: like `coalesce`, but a trailing static size-1 mode is kept as size 2 so that
/// the function is also preserved outside the domain (composition reads the last stride there).
/// @post result(i) == L(i) for all i >= 0.
pub fn coalesce_x(layout: &Layout) -> Result<Layout> {
    let (shapes, strides): (Vec<Int>, Vec<Int>) = layout.leaves().into_iter().unzip();
    match shapes.len() {
        0 => Ok(Layout::trivial()),
        n => {
            let last = if shapes[n - 1].is(1) { Int::Static(2) } else { shapes[n - 1].clone() };
            bw_coalesce(&shapes[..n - 1], &strides[..n - 1], (last, strides[n - 1].clone()))
        }
    }
}

/// Apply `f` to the modes of `layout` named by a tuple `profile` (the rest are kept), or to the whole layout
/// when the profile is an integer: CuTe's by-mode pattern of `coalesce(L, profile)` and `filter(L, profile)`.
fn by_profile(
    op: LayoutOp,
    layout: &Layout,
    profile: &IntTuple,
    f: &dyn Fn(&Layout) -> Result<Layout>,
) -> Result<Layout> {
    match profile {
        IntTuple::Int(_) => f(layout),
        IntTuple::Tuple(p) => {
            if p.len() > layout.rank() {
                return Err(rank_mismatch(op, format!("profile {profile} has more modes than {layout}")));
            }
            let mut modes = layout.modes();
            for (m, q) in modes.iter_mut().zip(p) {
                *m = by_profile(op, m, q, f)?;
            }
            Ok(Layout::from_modes(modes))
        }
    }
}

/// `coalesce(L, profile)`: coalesce at the terminals of `profile`, keeping its profile
/// (`coalesce((2,(1,6)):(1,(6,2)), (1,1))` is `(2,6):(1,2)`).
pub fn coalesce_by(layout: &Layout, profile: &IntTuple) -> Result<Layout> {
    by_profile(LayoutOp::Coalesce, layout, profile, &coalesce)
}

/// `filter_zeros(L)`: the modes with a static 0 stride get size 1.
pub fn filter_zeros(layout: &Layout) -> Layout {
    let (shapes, strides): (Vec<Int>, Vec<Int>) =
        layout.leaves().into_iter().map(|(s, d)| if d.is(0) { (Int::Static(1), d) } else { (s, d) }).unzip();
    layout.with_leaves(shapes, strides)
}

/// `filter(L)`: remove the stride-0 and size-1 modes, then coalesce; `1:0` when nothing is left.
/// @post result is injective when L's non-zero modes are.
pub fn filter(layout: &Layout) -> Result<Layout> {
    coalesce(&filter_zeros(layout))
}

/// `filter(L, profile)`: filter at the terminals of `profile`.
pub fn filter_by(layout: &Layout, profile: &IntTuple) -> Result<Layout> {
    by_profile(LayoutOp::Filter, layout, profile, &filter)
}

//! Functional composition `A o B` and tilers.

use std::fmt;

use crate::coalesce::coalesce_x;
use crate::error::{Result, not_divisible, rank_mismatch};
use crate::eval::LayoutOp;
use crate::int_tuple::{self, Int, IntTuple, mul, shape_min};
use crate::layout::Layout;

/// CuTe's `Tiler`: a layout, an integer, a tuple of tilers (applied mode by mode), or `_` (keep the mode). A
/// shape used as a tiler is a tuple of integers: see [`Tiler::from_shape`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Tiler {
    Layout(Layout),
    /// An integer `n`: `composition(A, n)` takes the first `n` elements (`n:1`); the divides and products use
    /// `make_layout(n)`, which is `1:0` for a static 1 (CuTe's `is_integral<Tiler>` branches).
    Int(Int),
    Tuple(Vec<Tiler>),
    Underscore,
}

impl Tiler {
    /// The tiler of a shape: an integer is [`Tiler::Int`], a tuple is mode-wise.
    pub fn from_shape(shape: &IntTuple) -> Tiler {
        match shape {
            IntTuple::Int(n) => Tiler::Int(n.clone()),
            IntTuple::Tuple(v) => Tiler::Tuple(v.iter().map(Tiler::from_shape).collect()),
        }
    }

    /// The rank of the tiler: the number of modes of a tuple, 1 otherwise.
    pub fn rank(&self) -> usize {
        match self {
            Tiler::Tuple(v) => v.len(),
            _ => 1,
        }
    }
}

impl From<Layout> for Tiler {
    fn from(l: Layout) -> Tiler {
        Tiler::Layout(l)
    }
}

impl fmt::Display for Tiler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tiler::Layout(l) => write!(f, "{l}"),
            Tiler::Int(n) => write!(f, "{n}"),
            Tiler::Underscore => f.write_str("_"),
            Tiler::Tuple(v) => crate::int_tuple::write_tuple(f, v),
        }
    }
}

/// `composition(A, B)`: the layout `R = A o B` with `R(c) = A(B(c))`.
/// @post compatible(shape(B), shape(R)),
/// @post R(i) == A(B(i)) for all 0 <= i < size(B).
///
/// `A` is first coalesced (keeping its function outside its domain: `coalesce_x`), then `B` is distributed over
/// its modes (`A o (B0, B1) = (A o B0, A o B1)`), and each integral `s:d` of `B` walks the modes of `A` (CuTe's
/// `composition_impl`): the stride `d` is divided out of each shape of `A` with `ceil_div` (the stride
/// divisibility condition), and the first `s` elements of the strided `A` are kept (the shape divisibility
/// condition). Both conditions are checked for static integers, as CuTe checks them; the result is not
/// coalesced.
pub fn composition(a: &Layout, b: &Layout) -> Result<Layout> {
    let flat = coalesce_x(a)?;
    let shapes = flat.shape().flatten();
    // `static_from[i]`: whether the shapes from `i` to the second-to-last are all static and positive (see
    // `compose_impl`).
    let mut static_from = vec![true; shapes.len() + 1];
    for (i, s) in shapes.iter().enumerate().rev().skip(1) {
        static_from[i] = static_from[i + 1] && s.static_value().is_some_and(|v| v >= 1);
    }
    let lhs = Lhs { shapes, strides: flat.stride().flatten(), integral: !flat.shape().is_tuple(), static_from };
    compose_impl(&lhs, a, b.shape(), b.stride())
}

/// `composition(A, tiler)`: a tuple tiler composes mode by mode and keeps only the modes it names (CuTe drops
/// the modes of `A` that the tiler does not hit), `_` keeps the mode, a layout composes as a function.
pub fn composition_tiler(a: &Layout, tiler: &Tiler) -> Result<Layout> {
    match tiler {
        Tiler::Layout(b) => composition(a, b),
        Tiler::Int(n) => composition(a, &Layout::from_parts(IntTuple::Int(n.clone()), IntTuple::int(1))),
        Tiler::Underscore => Ok(a.clone()),
        Tiler::Tuple(ts) => {
            if ts.len() > a.rank() {
                return Err(rank_mismatch(LayoutOp::Composition, format!("tiler {tiler} has more modes than {a}")));
            }
            let modes = a.modes();
            Ok(Layout::from_modes(ts.iter().zip(modes).map(|(t, m)| composition_tiler(&m, t)).collect::<Result<_>>()?))
        }
    }
}

/// The coalesced left operand: its flat modes, and whether it is a single integral mode.
struct Lhs {
    shapes: Vec<Int>,
    strides: Vec<Int>,
    integral: bool,
    /// Per mode `i`: whether the shapes of modes `i..r-1` are all static and positive.
    static_from: Vec<bool>,
}

fn compose_impl(lhs: &Lhs, a: &Layout, rshape: &IntTuple, rstride: &IntTuple) -> Result<Layout> {
    const OP: LayoutOp = LayoutOp::Composition;
    let (s, d) = match (rshape, rstride) {
        (IntTuple::Tuple(ss), IntTuple::Tuple(ds)) => {
            // Right-distributivity of composition over concatenation.
            let modes = ss.iter().zip(ds).map(|(s, d)| compose_impl(lhs, a, s, d)).collect::<Result<_>>()?;
            return Ok(Layout::from_modes(modes));
        }
        (IntTuple::Int(s), IntTuple::Int(d)) => (s, d),
        _ => return Err(rank_mismatch(OP, format!("{rshape}:{rstride} is not congruent"))),
    };
    if d.is(0) {
        return Ok(Layout::from_parts(IntTuple::Int(s.clone()), IntTuple::Int(d.clone())));
    }
    if lhs.integral {
        let stride = mul(OP, d, &lhs.strides[0])?;
        return Ok(Layout::from_parts(IntTuple::Int(s.clone()), IntTuple::Int(stride)));
    }
    let r = lhs.shapes.len();
    let mut shapes = Vec::with_capacity(r);
    let mut strides = Vec::with_capacity(r);
    let mut rest_shape = s.clone();
    let mut rest_stride = d.clone();
    for (i, (curr_shape, curr_stride)) in lhs.shapes[..r - 1].iter().zip(&lhs.strides).enumerate() {
        // Once both rests are 1 and the shapes left are static (at least 1), every step keeps them 1, passes the
        // divisibility check and pushes nothing: stop. Without this, each of B's modes walked all of A's, and
        // composing two 20,000-mode layouts took 35 s.
        if rest_shape.is(1) && rest_stride.is(1) && lhs.static_from.get(i).copied().unwrap_or(false) {
            break;
        }
        check_stride_divisibility(&rest_stride, curr_shape, a)?;
        let abs_stride = int_tuple::abs(OP, &rest_stride)?;
        let next_shape = int_tuple::ceil_div(OP, curr_shape, &abs_stride)?;
        let sign = Int::Static(rest_stride.value().map_or(1, i64::signum));
        let next_stride = mul(OP, &int_tuple::ceil_div(OP, &abs_stride, curr_shape)?, &sign)?;
        if !next_shape.is(1) && !rest_shape.is(1) {
            let new_shape = shape_min(OP, &next_shape, &rest_shape)?;
            let what = || {
                format!("shape {rest_shape} and shape {new_shape} of {a} do not divide each other (shape divisibility)")
            };
            if let (Some(x), Some(y)) = (rest_shape.static_value(), new_shape.static_value())
                && (y == 0 || x % y != 0)
            {
                return Err(not_divisible(OP, what(), Some(x), Some(y)));
            }
            shapes.push(new_shape.clone());
            strides.push(mul(OP, &rest_stride, curr_stride)?);
            rest_shape = int_tuple::shape_div(OP, &rest_shape, &new_shape, &what)?;
        }
        rest_stride = next_stride;
    }
    let last = |rest_stride: &Int| mul(OP, rest_stride, &lhs.strides[r - 1]);
    if shapes.is_empty() {
        return Ok(Layout::from_parts(IntTuple::Int(rest_shape), IntTuple::Int(last(&rest_stride)?)));
    }
    if !rest_shape.is(1) {
        strides.push(last(&rest_stride)?);
        shapes.push(rest_shape);
    }
    let tuple = |v: Vec<Int>| IntTuple::Tuple(v.into_iter().map(IntTuple::Int).collect()).unwrap_single();
    Ok(Layout::from_parts(tuple(shapes), tuple(strides)))
}

/// CuTe's stride divisibility condition, checked where both are static: `d % s == 0 || d < s`.
fn check_stride_divisibility(d: &Int, s: &Int, a: &Layout) -> Result<()> {
    match (d.static_value(), s.static_value()) {
        (Some(x), Some(y)) if y != 0 && x % y != 0 && x >= y => Err(not_divisible(
            LayoutOp::Composition,
            format!("stride {d} and shape {s} of {a} do not divide each other (stride divisibility)"),
            Some(x),
            Some(y),
        )),
        _ => Ok(()),
    }
}

/// `make_layout(A, B)` as a rank-2 layout.
pub(crate) fn pair(a: Layout, b: Layout) -> Layout {
    Layout::from_modes(vec![a, b])
}

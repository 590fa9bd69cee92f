//! Functional composition `A o B` and tilers.

use std::fmt;

use crate::coalesce::coalesce_x;
use crate::error::{Result, rank_mismatch};
use crate::int_tuple::{self, Int, IntTuple, mul, shape_min};
use crate::layout::Layout;

/// CuTe's `Tiler`: a layout, a tuple of tilers (applied mode by mode), or `_` (keep the mode). A shape used as
/// a tiler is a tuple of `n:1` layouts: see [`Tiler::from_shape`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Tiler {
    Layout(Layout),
    Tuple(Vec<Tiler>),
    Underscore,
}

impl Tiler {
    /// The tiler of a shape: an integer `n` is the layout `n:1`, a tuple is mode-wise.
    pub fn from_shape(shape: &IntTuple) -> Tiler {
        match shape {
            IntTuple::Int(n) => Tiler::Layout(Layout::from_parts(IntTuple::Int(n.clone()), IntTuple::int(1))),
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
            Tiler::Underscore => f.write_str("_"),
            Tiler::Tuple(v) => crate::int_tuple::write_tuple(f, v),
        }
    }
}

/// `composition(A, B)`: the layout `R = A o B` with `R(c) = A(B(c))`.
/// @post compatible(shape(B), shape(R)),
/// @post R(i) == A(B(i)) for all 0 <= i < size(B).
///
/// `A` is first coalesced (keeping its function outside its domain), then `B` is distributed over its modes
/// (`A o (B0, B1) = (A o B0, A o B1)`), and each integral `s:d` of `B` is computed by dividing `d` out of the
/// shape of `A` (the stride divisibility condition) and keeping the first `s` elements (the shape
/// divisibility condition). Both conditions are checked, as CuTe checks them for static integers.
pub fn composition(a: &Layout, b: &Layout) -> Result<Layout> {
    let flat = coalesce_x(a)?;
    let lhs =
        Lhs { shapes: flat.shape().flatten(), strides: flat.stride().flatten(), integral: !flat.shape().is_tuple() };
    compose_impl(&lhs, a, b.shape(), b.stride())
}

/// `composition(A, tiler)`: a tuple tiler composes mode by mode and keeps only the modes it names (CuTe drops
/// the modes of `A` that the tiler does not hit), `_` keeps the mode, a layout composes as a function.
pub fn composition_tiler(a: &Layout, tiler: &Tiler) -> Result<Layout> {
    match tiler {
        Tiler::Layout(b) => composition(a, b),
        Tiler::Underscore => Ok(a.clone()),
        Tiler::Tuple(ts) => {
            if ts.len() > a.rank() {
                return Err(rank_mismatch("composition", format!("tiler {tiler} has more modes than {a}")));
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
}

fn compose_impl(lhs: &Lhs, a: &Layout, rshape: &IntTuple, rstride: &IntTuple) -> Result<Layout> {
    const OP: &str = "composition";
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
    // Divide the stride d out of the shape of A, from the left.
    let mut rest_stride = d.clone();
    let mut shape1 = Vec::with_capacity(r - 1);
    let mut stride1 = Vec::with_capacity(r - 1);
    for (si, di) in lhs.shapes[..r - 1].iter().zip(&lhs.strides) {
        let what =
            || format!("stride {rest_stride} and shape {si} of {a} do not divide each other (stride divisibility)");
        let new_shape = int_tuple::shape_div(OP, si, &rest_stride, &what)?;
        let what = || format!("shape {si} of {a} and {new_shape} do not divide each other");
        stride1.push(mul(OP, di, &int_tuple::shape_div(OP, si, &new_shape, &what)?)?);
        let what =
            || format!("stride {rest_stride} and shape {si} of {a} do not divide each other (stride divisibility)");
        rest_stride = int_tuple::shape_div(OP, &rest_stride, si, &what)?;
        shape1.push(new_shape);
    }
    // Keep the first s elements of the strided A, from the left.
    let mut rest_shape = s.clone();
    let mut shape2 = Vec::with_capacity(r - 1);
    for si in &shape1 {
        let asi = int_tuple::abs(OP, si)?;
        shape2.push(shape_min(OP, &asi, &rest_shape)?);
        let what =
            || format!("shape {rest_shape} and shape {asi} of {a} do not divide each other (shape divisibility)");
        rest_shape = int_tuple::shape_div(OP, &rest_shape, &asi, &what)?;
    }
    let last_stride = mul(OP, &rest_stride, &lhs.strides[r - 1])?;
    coalesce_modes(&shape2, &stride1, (rest_shape, last_stride))
}

/// The `bw_coalesce` that ends CuTe's `composition_impl`, shared through a small layout.
fn coalesce_modes(shapes: &[Int], strides: &[Int], last: (Int, Int)) -> Result<Layout> {
    let mut s: Vec<IntTuple> = shapes.iter().cloned().map(IntTuple::Int).collect();
    let mut d: Vec<IntTuple> = strides.iter().cloned().map(IntTuple::Int).collect();
    s.push(IntTuple::Int(last.0));
    d.push(IntTuple::Int(last.1));
    let merged = crate::coalesce::coalesce(&Layout::from_parts(IntTuple::Tuple(s), IntTuple::Tuple(d)))?;
    Ok(merged)
}

/// `make_layout(A, B)` as a rank-2 layout.
pub(crate) fn pair(a: Layout, b: Layout) -> Layout {
    Layout::from_modes(vec![a, b])
}

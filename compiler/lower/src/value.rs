//! The values the lowering computes for expressions: compile-time integers, run-time scalars, tuples, layouts
//! and tensor views.

use cutec_ir::{AddrSpace, Expr, Handle, Var};
use cutec_layout::int_tuple::SymInt;
use cutec_layout::{ComposedLayout, Layout, Swizzle};
use cutec_sema::{Builtin, Scalar};

/// The value of an expression during lowering.
#[derive(Clone, Debug)]
pub(crate) enum Value {
    /// A compile-time integer (CuTe's static integers: literals, const generics, sizes of static layouts).
    Const(i64),
    /// A run-time scalar: an IR expression and the language type it has.
    Scalar(Handle<Expr>, Scalar),
    Tuple(Vec<Value>),
    Wildcard,
    Layout(Layout),
    /// CuTe's `Swizzle<B, M, S>`.
    Swizzle(Swizzle),
    /// A swizzled layout `Sw o offset o L`.
    Composed(ComposedLayout),
    Tensor(TensorView),
    /// A wgmma atom or tiled MMA: what it is lives in its checker type.
    Mma,
    /// `thread_idx`, `block_idx`, `block_dim`, `grid_dim` before their `.x`.
    Dim3(Builtin),
    Unit,
}

/// What a `let`, `for` or parameter name is bound to.
#[derive(Clone, Debug)]
pub(crate) enum Binding {
    /// Boxed: a value (a tensor view) is large next to a variable.
    Value(Box<Value>),
    /// A `let mut` or a loop variable: read where it is used.
    Var(Handle<Var>, Scalar),
    /// Its initializer failed (already reported): uses fail silently.
    Poisoned,
}

/// The largest power of two (capped at 2^20) that divides a value whose known divisor is `div`
/// ([`Lower::divisor`](super::Lower::divisor); `i64::MAX` for zero).
pub(crate) fn pow2_part(div: i64) -> i64 {
    if div == i64::MAX || div == 0 { 1 << 20 } else { (1i64 << div.unsigned_abs().trailing_zeros().min(20)).max(1) }
}

/// A coordinate with run-time parts: what indexes a tensor.
#[derive(Clone, Debug)]
pub(crate) enum CoordV {
    Int(SymInt),
    Underscore,
    Tuple(Vec<CoordV>),
}

impl CoordV {
    pub fn has_underscore(&self) -> bool {
        match self {
            CoordV::Int(_) => false,
            CoordV::Underscore => true,
            CoordV::Tuple(v) => v.iter().any(CoordV::has_underscore),
        }
    }
    /// The coordinate for the layout algebra: run-time parts become dynamic integers.
    pub fn to_layout(&self) -> cutec_layout::Coord {
        match self {
            CoordV::Int(i) => cutec_layout::Coord::Int(cutec_layout::Int::from_sym(i.clone())),
            CoordV::Underscore => cutec_layout::Coord::Underscore,
            CoordV::Tuple(v) => cutec_layout::Coord::Tuple(v.iter().map(CoordV::to_layout).collect()),
        }
    }

    /// A coordinate computed by the layout algebra.
    pub fn from_layout(t: &cutec_layout::IntTuple) -> CoordV {
        match t {
            cutec_layout::IntTuple::Int(i) => CoordV::Int(i.sym()),
            cutec_layout::IntTuple::Tuple(v) => CoordV::Tuple(v.iter().map(CoordV::from_layout).collect()),
        }
    }

    /// The same shape of coordinate for the layout algebra, with every integer 0 (slicing only looks at where
    /// the `_` are; the offset is computed in IR).
    pub fn placeholder(&self) -> cutec_layout::Coord {
        match self {
            CoordV::Int(_) => cutec_layout::Coord::Int(cutec_layout::Int::Static(0)),
            CoordV::Underscore => cutec_layout::Coord::Underscore,
            CoordV::Tuple(v) => cutec_layout::Coord::Tuple(v.iter().map(CoordV::placeholder).collect()),
        }
    }
}

/// A tensor: element `coord` is element `swizzle(offset + layout(coord))` of `elem` from `base` in `space`
/// (CuTe's `Sw o offset o L`; without a swizzle, `offset + L(coord)`). Slicing and tiling move into `offset`.
#[derive(Clone, Debug)]
pub(crate) struct TensorView {
    pub base: Handle<Expr>,
    pub space: AddrSpace,
    pub elem: Scalar,
    pub layout: Layout,
    pub swizzle: Option<Swizzle>,
    /// The element offset: constants, dynamic dimensions and IR values ([`SymInt::Value`] leaves whose id is
    /// the expression handle).
    pub offset: SymInt,
    /// The alignment of `base` the code may assume, in bytes.
    pub base_align: u32,
    /// For kernel arguments: the declared parameter index (its required alignment grows with what is assumed).
    pub param: Option<usize>,
    /// Where the view's elements are in the kernel argument it views, for predicating accesses.
    pub bounds: super::bounds::Bounds,
    /// A view of `make_identity_tensor(shape)`, which has no storage: its element of index `i` (`offset +
    /// layout(coord)`) is the coordinate of `i` in `shape` (column-major), computed where it is read.
    pub identity: Option<cutec_layout::IntTuple>,
}

impl TensorView {
    /// The alignment in bytes of an element whose index (before the swizzle) has known divisor `div`.
    pub fn align_for(&self, div: i64, elem_bytes: u32) -> u32 {
        let mut elems = pow2_part(div);
        // A swizzle keeps the low `base` bits of the index: alignment beyond them is not known.
        if let Some(sw) = &self.swizzle {
            elems = elems.min(1i64 << sw.base().clamp(0, 20));
        }
        let bytes = (elems as u64).saturating_mul(elem_bytes as u64).min(1 << 20) as u32;
        bytes.min(self.base_align).max(1)
    }
}

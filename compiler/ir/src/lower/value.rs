//! The values the lowering computes for expressions: compile-time integers, run-time scalars, tuples, layouts
//! and tensor views.

use crate::{AddrSpace, Expr, Handle, Var};
use cutec_layout::Layout;
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
    Tensor(TensorView),
    /// `thread_idx`, `block_idx`, `block_dim`, `grid_dim` before their `.x`.
    Dim3(Builtin),
    Unit,
}

/// What a `let`, `for` or parameter name is bound to.
#[derive(Clone, Debug)]
pub(crate) enum Binding {
    Value(Value),
    /// A `let mut` or a loop variable: read where it is used.
    Var(Handle<Var>, Scalar),
    /// Its initializer failed (already reported): uses fail silently.
    Poisoned,
}

/// An integer index into a tensor's elements: a constant, or a run-time IR value known to be a multiple of
/// `div` (which is what proves vector accesses aligned).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Idx {
    Const(i64),
    Dyn { h: Handle<Expr>, div: i64 },
}

impl Idx {
    /// The largest power of two `p` (capped at 2^20) such that the index is a known multiple of `p`.
    pub fn pow2_divisor(self) -> i64 {
        let v = match self {
            Idx::Const(0) => return 1 << 20,
            Idx::Const(c) => c,
            Idx::Dyn { div, .. } => div,
        };
        if v == 0 { 1 << 20 } else { (1i64 << v.unsigned_abs().trailing_zeros().min(20)).max(1) }
    }
}

/// A coordinate with run-time parts: what indexes a tensor.
#[derive(Clone, Debug)]
pub(crate) enum CoordV {
    Int(Idx),
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

/// A tensor: `base + offset + layout(coord)` elements of `elem` in `space`.
#[derive(Clone, Debug)]
pub(crate) struct TensorView {
    pub base: Handle<Expr>,
    pub space: AddrSpace,
    pub elem: Scalar,
    pub layout: Layout,
    pub offset: Idx,
    /// The alignment of `base` the code may assume, in bytes.
    pub base_align: u32,
    /// For kernel arguments: the declared parameter index (its required alignment grows with what is assumed).
    pub param: Option<usize>,
}

impl TensorView {
    /// The alignment in bytes of the element at `offset + extra`.
    pub fn align_at(&self, extra: Idx, elem_bytes: u32) -> u32 {
        let div = match (self.offset, extra) {
            (Idx::Const(a), Idx::Const(b)) => Idx::Const(a + b).pow2_divisor(),
            (a, b) => a.pow2_divisor().min(b.pow2_divisor()),
        };
        let bytes = (div as u64).saturating_mul(elem_bytes as u64).min(1 << 20) as u32;
        bytes.min(self.base_align).max(1)
    }
}

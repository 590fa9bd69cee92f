//! The types the checker assigns to expressions and bindings, and the scalar promotion rules.
//!
//! Layouts are tracked symbolically and only as far as a literal says: a layout written `(M, 128):(128, 1)` keeps
//! its shape and stride as trees of [`SymInt`]s; the result of a layout operation (`coalesce`, `logical_divide`,
//! ...) keeps only its rank when that is obvious. The values of layouts whose inputs are known are folded by the
//! layout algebra into a separate table (`fold.rs`, [`crate::CheckedModule::folded`]); these types do not change.

use std::fmt;

/// A scalar type. `Int` is the 32-bit signed index integer that literals, loop variables and dimensions have.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub enum Scalar {
    Int,
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
    F16,
    BF16,
    E4M3,
    E5M2,
    F32,
    F64,
    Bool,
}

impl Scalar {
    pub const ALL: [Scalar; 16] = [
        Scalar::Int,
        Scalar::I8,
        Scalar::I16,
        Scalar::I32,
        Scalar::I64,
        Scalar::U8,
        Scalar::U16,
        Scalar::U32,
        Scalar::U64,
        Scalar::F16,
        Scalar::BF16,
        Scalar::E4M3,
        Scalar::E5M2,
        Scalar::F32,
        Scalar::F64,
        Scalar::Bool,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Scalar::Int => "int",
            Scalar::I8 => "i8",
            Scalar::I16 => "i16",
            Scalar::I32 => "i32",
            Scalar::I64 => "i64",
            Scalar::U8 => "u8",
            Scalar::U16 => "u16",
            Scalar::U32 => "u32",
            Scalar::U64 => "u64",
            Scalar::F16 => "f16",
            Scalar::BF16 => "bf16",
            Scalar::E4M3 => "e4m3",
            Scalar::E5M2 => "e5m2",
            Scalar::F32 => "f32",
            Scalar::F64 => "f64",
            Scalar::Bool => "bool",
        }
    }

    pub fn from_name(name: &str) -> Option<Scalar> {
        Scalar::ALL.into_iter().find(|s| s.name() == name)
    }

    pub fn is_integer(self) -> bool {
        matches!(
            self,
            Scalar::Int
                | Scalar::I8
                | Scalar::I16
                | Scalar::I32
                | Scalar::I64
                | Scalar::U8
                | Scalar::U16
                | Scalar::U32
                | Scalar::U64
        )
    }

    pub fn is_signed(self) -> bool {
        matches!(self, Scalar::Int | Scalar::I8 | Scalar::I16 | Scalar::I32 | Scalar::I64) || self.is_float()
    }

    pub fn is_float(self) -> bool {
        matches!(self, Scalar::F16 | Scalar::BF16 | Scalar::E4M3 | Scalar::E5M2 | Scalar::F32 | Scalar::F64)
    }

    /// The 8-bit floats are storage formats: they convert with `as` but take part in no arithmetic.
    pub fn is_fp8(self) -> bool {
        matches!(self, Scalar::E4M3 | Scalar::E5M2)
    }

    pub fn is_numeric(self) -> bool {
        self != Scalar::Bool
    }

    /// Size in bits (`bool` counts as 8, its storage size).
    pub fn bits(self) -> u32 {
        match self {
            Scalar::I8 | Scalar::U8 | Scalar::E4M3 | Scalar::E5M2 | Scalar::Bool => 8,
            Scalar::I16 | Scalar::U16 | Scalar::F16 | Scalar::BF16 => 16,
            Scalar::Int | Scalar::I32 | Scalar::U32 | Scalar::F32 => 32,
            Scalar::I64 | Scalar::U64 | Scalar::F64 => 64,
        }
    }
}

impl fmt::Display for Scalar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Where a tensor's elements live.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Space {
    Gmem,
    Smem,
    Rmem,
    /// Computed on the fly, not stored: the elements of `make_identity_tensor` (their own coordinates). Such a
    /// tensor can be read, sliced and partitioned but not written.
    Identity,
}

impl Space {
    /// The spaces a user can write.
    pub const WRITABLE: [Space; 3] = [Space::Gmem, Space::Smem, Space::Rmem];

    pub fn name(self) -> &'static str {
        match self {
            Space::Gmem => "gmem",
            Space::Smem => "smem",
            Space::Rmem => "rmem",
            Space::Identity => "identity",
        }
    }

    pub fn from_name(name: &str) -> Option<Space> {
        Space::WRITABLE.into_iter().find(|s| s.name() == name)
    }
}

/// The one symbolic integer of the compiler (`cutec-symint`): shape and stride entries of layout types and
/// launch dimensions are these.
pub use cutec_symint::{Op as SymOp, SymInt};

/// A (possibly nested) tuple of symbolic integers: a shape or a stride. The tree is `cutec-symint`'s, shared with
/// the layout algebra and the manifest (a layout type's tuple becomes the algebra's by a `map` of its leaves).
pub type IntTuple = cutec_symint::IntTuple<SymInt>;

/// Compact column-major strides for a shape: `(4,8)` gives `(1,4)`, `(M,N)` gives `(1,M)`.
pub fn compact_col_major(shape: &IntTuple) -> IntTuple {
    let mut acc = SymInt::Const(1);
    shape.map(|s| {
        let stride = acc.clone();
        acc = SymInt::op(SymOp::Mul, acc.clone(), s.clone());
        stride
    })
}

/// A layout as far as the checker knows it.
#[derive(Clone, PartialEq, Eq, Hash, Debug, Default)]
pub struct LayoutType {
    /// Number of top-level modes, when known.
    pub rank: Option<usize>,
    /// Shape and stride, when written as a literal (or derived trivially from one).
    pub value: Option<SymLayout>,
    /// Whether a swizzle is composed in (`composition(Swizzle<..>, L)`, `SW128_K<T>`).
    pub swizzled: bool,
}

impl LayoutType {
    pub fn of_rank(rank: Option<usize>) -> LayoutType {
        LayoutType { rank, value: None, swizzled: false }
    }
    pub fn known(value: SymLayout) -> LayoutType {
        LayoutType { rank: Some(value.shape.rank()), value: Some(value), swizzled: false }
    }
}

impl fmt::Display for LayoutType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.value, self.rank) {
            (Some(v), _) => write!(f, "{v}"),
            (None, Some(1)) => f.write_str("_"),
            (None, Some(r)) => write!(f, "({})", vec!["_"; r].join(",")),
            (None, None) => f.write_str("_"),
        }
    }
}

/// `shape:stride` with symbolic entries.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct SymLayout {
    pub shape: IntTuple,
    pub stride: IntTuple,
}

impl fmt::Display for SymLayout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.shape, self.stride)
    }
}

/// `Tensor<elem, layout, space>`.
#[derive(Clone, PartialEq, Debug)]
pub struct TensorType {
    /// A scalar, or for identity tensors a tuple of `int` coordinates.
    pub elem: Type,
    pub layout: LayoutType,
    pub space: Space,
}

/// `Swizzle<B, M, S>`; `None` where a parameter is a const generic without value.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct SwizzleType {
    pub bits: Option<i64>,
    pub base: Option<i64>,
    pub shift: Option<i64>,
}

/// `wgmma<M, N, K, A, B, C>`: one warpgroup MMA instruction shape and its operand types.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct MmaAtom {
    pub m: Option<i64>,
    pub n: Option<i64>,
    pub k: Option<i64>,
    pub a: Scalar,
    pub b: Scalar,
    pub c: Scalar,
}

/// `tiled_mma(atom, (x, y, z))`: the atom repeated over warpgroups.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct TiledMmaType {
    pub atom: MmaAtom,
    pub tiling: Vec<Option<i64>>,
}

/// The type of an expression or binding.
#[derive(Clone, PartialEq, Debug)]
pub enum Type {
    Scalar(Scalar),
    Tensor(Box<TensorType>),
    Layout(Box<LayoutType>),
    Swizzle(SwizzleType),
    /// A tuple value: an integer tuple `(BM, BK)`, a coordinate with wildcards `(block_idx.x, _)`.
    Tuple(Vec<Type>),
    /// An integer tuple whose entries are not tracked (what `shape(x)` and `stride(x)` return), with its rank if
    /// known.
    IntTuple(Option<usize>),
    /// `_`, valid only as an index, in a tiler or in a coordinate.
    Wildcard,
    /// `thread_idx`, `block_idx`, `block_dim`, `grid_dim`: fields `x`, `y`, `z`.
    Dim3,
    MmaAtom(MmaAtom),
    TiledMma(Box<TiledMmaType>),
    /// An element type written as a generic argument: the `bf16` of `SW128_K<bf16>`.
    DType(Scalar),
    /// A memory space written as a generic argument: the `smem` of `make_tensor<f32, smem>`.
    Space(Space),
    /// The callee of a call: a name that denotes a function (builtin or device function).
    Fn,
    /// What statements and calls without a result have.
    Unit,
    /// The type of an expression that had an error; it is compatible with everything so one mistake gives one
    /// diagnostic.
    Error,
}

impl Type {
    pub const INT: Type = Type::Scalar(Scalar::Int);
    pub const BOOL: Type = Type::Scalar(Scalar::Bool);
    pub const F32: Type = Type::Scalar(Scalar::F32);

    pub fn scalar(&self) -> Option<Scalar> {
        match self {
            Type::Scalar(s) => Some(*s),
            _ => None,
        }
    }
    pub fn is_error(&self) -> bool {
        matches!(self, Type::Error)
    }
    pub fn is_integer(&self) -> bool {
        self.scalar().is_some_and(Scalar::is_integer)
    }
    pub fn tensor(&self) -> Option<&TensorType> {
        match self {
            Type::Tensor(t) => Some(t),
            _ => None,
        }
    }
    /// An integer, or a (nested) tuple of integers: what a shape is.
    pub fn is_int_tuple(&self) -> bool {
        match self {
            Type::IntTuple(_) => true,
            Type::Tuple(v) => v.iter().all(|t| t.is_integer() || t.is_int_tuple() || t.is_error()),
            _ => false,
        }
    }
    /// Like [`Type::is_int_tuple`], but `_` may appear: what a coordinate or tiler is.
    pub fn is_coord_tuple(&self) -> bool {
        match self {
            Type::IntTuple(_) => true,
            Type::Tuple(v) => {
                v.iter().all(|t| t.is_integer() || matches!(t, Type::Wildcard | Type::Error) || t.is_coord_tuple())
            }
            _ => false,
        }
    }
    /// A tiler: an integer, a layout, or a tuple of tilers and `_` (CuTe's mode-wise tiler, such as
    /// `(make_layout(4, 2), 8)`: a layout for the first mode, the first 8 elements of the second).
    pub fn is_tiler(&self) -> bool {
        match self {
            Type::Layout(_) | Type::IntTuple(_) => true,
            Type::Tuple(v) => v.iter().all(|t| matches!(t, Type::Wildcard | Type::Error) || t.is_tiler()),
            t => t.is_integer(),
        }
    }
    /// How many `_` a coordinate holds, at any depth.
    pub fn wildcards(&self) -> usize {
        match self {
            Type::Wildcard => 1,
            Type::Tuple(v) => v.iter().map(Type::wildcards).sum(),
            _ => 0,
        }
    }
    /// The rank of a value that can serve as a layout, shape or tiler.
    pub fn rank(&self) -> Option<usize> {
        match self {
            Type::Scalar(s) if s.is_integer() => Some(1),
            Type::Tuple(v) => Some(v.len()),
            Type::IntTuple(r) => *r,
            Type::Layout(l) => l.rank,
            Type::Tensor(t) => t.layout.rank,
            _ => None,
        }
    }
    /// A short description for "expected X, found Y" messages.
    pub fn describe(&self) -> String {
        match self {
            Type::Tensor(_) => format!("tensor `{self}`"),
            Type::Layout(_) => format!("layout `{self}`"),
            Type::Unit => "`()` (nothing)".to_owned(),
            Type::Wildcard => "`_`".to_owned(),
            Type::DType(s) => format!("type `{s}`"),
            Type::Space(s) => format!("memory space `{}`", s.name()),
            Type::Fn => "a function".to_owned(),
            _ => format!("`{self}`"),
        }
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::Scalar(s) => write!(f, "{s}"),
            Type::Tensor(t) => write!(f, "Tensor<{}, {}, {}>", t.elem, t.layout, t.space.name()),
            Type::Layout(l) if l.swizzled => write!(f, "Layout<swizzled {l}>"),
            Type::Layout(l) => write!(f, "Layout<{l}>"),
            Type::Swizzle(s) => {
                let p = |v: Option<i64>| v.map_or("_".to_owned(), |v| v.to_string());
                write!(f, "Swizzle<{}, {}, {}>", p(s.bits), p(s.base), p(s.shift))
            }
            Type::Tuple(v) => {
                f.write_str("(")?;
                for (i, t) in v.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{t}")?;
                }
                if v.len() == 1 {
                    f.write_str(",")?;
                }
                f.write_str(")")
            }
            Type::IntTuple(Some(r)) => write!(f, "({})", vec!["int"; *r].join(", ")),
            Type::IntTuple(None) => f.write_str("(int, ...)"),
            Type::Wildcard => f.write_str("_"),
            Type::Dim3 => f.write_str("Dim3"),
            Type::MmaAtom(a) => {
                let p = |v: Option<i64>| v.map_or("_".to_owned(), |v| v.to_string());
                write!(f, "wgmma<{}, {}, {}, {}, {}, {}>", p(a.m), p(a.n), p(a.k), a.a, a.b, a.c)
            }
            Type::TiledMma(t) => write!(f, "TiledMma<{}>", Type::MmaAtom(t.atom)),
            Type::DType(s) => write!(f, "{s}"),
            Type::Space(s) => f.write_str(s.name()),
            Type::Fn => f.write_str("fn"),
            Type::Unit => f.write_str("()"),
            Type::Error => f.write_str("{error}"),
        }
    }
}

/// The result type of arithmetic between two scalars, or `None` if they do not mix without a cast.
///
/// Rules: equal types stay; an integer with a float gives the float; two floats give the wider, with
/// `f16`/`bf16` mixing to `f32`; two integers give the wider, `int` yielding to a sized type of the same width,
/// and equal widths of different signedness do not mix. `bool` and the fp8 types take part in no arithmetic.
pub fn promote(a: Scalar, b: Scalar) -> Option<Scalar> {
    if a == Scalar::Bool || b == Scalar::Bool || a.is_fp8() || b.is_fp8() {
        return None;
    }
    if a == b {
        return Some(a);
    }
    match (a.is_float(), b.is_float()) {
        (true, false) => Some(a),
        (false, true) => Some(b),
        (true, true) => Some(if a.bits() == b.bits() {
            Scalar::F32 // f16 with bf16: neither holds the other
        } else if a.bits() > b.bits() {
            a
        } else {
            b
        }),
        (false, false) => {
            if a == Scalar::Int || b == Scalar::Int {
                let other = if a == Scalar::Int { b } else { a };
                // `int` is i32: it yields to i32 and to wider types; it mixes with u32 as u32 would not be safe,
                // so only signed types or wider unsigned ones.
                if other.bits() > 32 || other == Scalar::I32 {
                    return Some(other);
                }
                return if other.bits() < 32 { Some(Scalar::Int) } else { None };
            }
            if a.bits() == b.bits() {
                None
            } else if a.bits() > b.bits() {
                Some(a)
            } else {
                Some(b)
            }
        }
    }
}

/// Whether a value of scalar type `from` may be used where `to` is expected without `as`: widening only.
pub fn scalar_coerces(from: Scalar, to: Scalar) -> bool {
    if from == to {
        return true;
    }
    if from == Scalar::Bool || to == Scalar::Bool || from.is_fp8() || to.is_fp8() {
        return false;
    }
    match (from.is_float(), to.is_float()) {
        // int -> float: the promotion of mixed arithmetic.
        (false, true) => true,
        (true, false) => false,
        (true, true) => to.bits() > from.bits(),
        (false, false) => {
            if from == Scalar::Int || to == Scalar::Int {
                // `int` and `i32` are the same width; an index converts to any 32- or 64-bit integer.
                let other = if from == Scalar::Int { to } else { from };
                return if from == Scalar::Int {
                    other.bits() >= 32
                } else {
                    other.bits() < 32 || other == Scalar::I32
                };
            }
            to.bits() > from.bits() && (to.is_signed() || !from.is_signed())
        }
    }
}

/// Whether a value of type `from` may be used where `to` is expected. Tensors must agree on element type and
/// memory space (their layouts are not compared: a device function is generic over them).
pub fn coerces(from: &Type, to: &Type) -> bool {
    match (from, to) {
        (Type::Error, _) | (_, Type::Error) => true,
        (Type::Scalar(a), Type::Scalar(b)) => scalar_coerces(*a, *b),
        (Type::Tensor(a), Type::Tensor(b)) => a.space == b.space && a.elem == b.elem,
        (Type::Layout(_), Type::Layout(_)) => true,
        (Type::Tuple(a), Type::Tuple(b)) => a.len() == b.len() && a.iter().zip(b).all(|(x, y)| coerces(x, y)),
        (Type::MmaAtom(a), Type::MmaAtom(b)) => a.a == b.a && a.b == b.b && a.c == b.c,
        (Type::TiledMma(a), Type::TiledMma(b)) => a.atom.a == b.atom.a && a.atom.c == b.atom.c,
        _ => from == to,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn promotion_follows_the_documented_rules() {
        use Scalar::*;
        assert_eq!(promote(Int, F32), Some(F32));
        assert_eq!(promote(BF16, F32), Some(F32));
        assert_eq!(promote(F16, BF16), Some(F32));
        assert_eq!(promote(F32, F64), Some(F64));
        assert_eq!(promote(Int, I64), Some(I64));
        assert_eq!(promote(Int, I32), Some(I32));
        assert_eq!(promote(Int, U32), None);
        assert_eq!(promote(I32, U32), None);
        assert_eq!(promote(U8, U32), Some(U32));
        assert_eq!(promote(E4M3, F32), None);
        assert_eq!(promote(Bool, Int), None);
    }

    #[test]
    fn coercion_only_widens() {
        use Scalar::*;
        assert!(scalar_coerces(Int, F32));
        assert!(scalar_coerces(BF16, F32));
        assert!(!scalar_coerces(F32, BF16));
        assert!(!scalar_coerces(F32, Int));
        assert!(scalar_coerces(Int, I64));
        assert!(!scalar_coerces(I64, Int));
        assert!(scalar_coerces(U8, Int));
        assert!(!scalar_coerces(U32, Int));
    }

    #[test]
    fn profiles_and_compact_strides() {
        let c = |v| IntTuple::Int(SymInt::Const(v));
        let shape = IntTuple::Tuple(vec![IntTuple::Tuple(vec![c(2), c(2)]), c(3)]);
        assert_eq!(shape.profile(), "((_,_),_)");
        assert_eq!(compact_col_major(&shape).to_string(), "((1,2),4)");
        assert!(!shape.congruent(&c(1)));
        assert_eq!(SymInt::op(SymOp::CeilDiv, SymInt::Const(7), SymInt::Const(2)), SymInt::Const(4));
    }
}

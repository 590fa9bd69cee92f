//! Expressions: the values of a kernel, each a node of the kernel's expression arena.
//!
//! Operands are handles to *earlier* expressions (a smaller index), so one walk over the arena in order sees every
//! operand before its users. Most expressions take effect where a [`Stmt::Emit`](crate::Stmt::Emit) names them;
//! the few [global](Expr::is_global) ones (literals, parameters, allocation addresses) are available everywhere
//! and never emitted; an [`Expr::OpResult`] is defined by the operation statement that names it.
//!
//! Expressions have no effects except reading a variable ([`Expr::ReadVar`]); whatever touches memory, involves
//! other threads or completes later is an [`Op`](crate::Op) statement (see [`crate::effects`]).

use crate::arena::Handle;
use crate::module::{Alloc, Var};
use crate::types::{Scalar, Type};

/// A constant. Integers are stored sign-extended in an `i64`, floats in an `f64` (which holds every `f32`, `f16`
/// and `bf16` value exactly). Two literals are equal when they are the same bits (so a NaN equals itself and
/// `-0.0` differs from `0.0`): literals are compared as code, not as numbers.
#[derive(Clone, Copy, Debug)]
pub enum Literal {
    Bool(bool),
    Int { value: i64, ty: Scalar },
    Float { value: f64, ty: Scalar },
}

impl Literal {
    fn key(self) -> (u8, u64, Scalar) {
        match self {
            Literal::Bool(b) => (0, b as u64, Scalar::I1),
            Literal::Int { value, ty } => (1, value as u64, ty),
            Literal::Float { value, ty } => (2, value.to_bits(), ty),
        }
    }
    pub fn i32(value: i32) -> Literal {
        Literal::Int { value: value as i64, ty: Scalar::I32 }
    }
    pub fn i64(value: i64) -> Literal {
        Literal::Int { value, ty: Scalar::I64 }
    }
    pub fn f32(value: f32) -> Literal {
        Literal::Float { value: value as f64, ty: Scalar::F32 }
    }
    pub fn ty(self) -> Type {
        match self {
            Literal::Bool(_) => Type::I1,
            Literal::Int { ty, .. } | Literal::Float { ty, .. } => Type::Scalar(ty),
        }
    }
    /// The integer value, for `i32`/`i64` literals.
    pub fn as_int(self) -> Option<i64> {
        match self {
            Literal::Int { value, .. } => Some(value),
            _ => None,
        }
    }
}

impl PartialEq for Literal {
    fn eq(&self, other: &Literal) -> bool {
        self.key() == other.key()
    }
}
impl Eq for Literal {}
impl std::hash::Hash for Literal {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.key().hash(state)
    }
}

/// A dimension of a special register.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Dim {
    X,
    Y,
    Z,
}

impl Dim {
    pub fn name(self) -> &'static str {
        match self {
            Dim::X => "x",
            Dim::Y => "y",
            Dim::Z => "z",
        }
    }
    pub fn index(self) -> usize {
        self as usize
    }
}

/// A PTX special register, read as an `i32` (PTX ISA §10, "Special Registers").
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum SpecialReg {
    /// `%tid`: the thread's index in its CTA.
    ThreadIdx(Dim),
    /// `%ctaid`: the CTA's index in the grid.
    BlockIdx(Dim),
    /// `%ntid`: the CTA's size.
    BlockDim(Dim),
    /// `%nctaid`: the grid's size.
    GridDim(Dim),
    /// `%laneid`: the thread's lane in its warp.
    LaneId,
    /// `%cluster_ctarank`: the CTA's rank in its cluster.
    ClusterCtaRank,
}

impl SpecialReg {
    pub fn name(self) -> String {
        match self {
            SpecialReg::ThreadIdx(d) => format!("tid.{}", d.name()),
            SpecialReg::BlockIdx(d) => format!("ctaid.{}", d.name()),
            SpecialReg::BlockDim(d) => format!("ntid.{}", d.name()),
            SpecialReg::GridDim(d) => format!("nctaid.{}", d.name()),
            SpecialReg::LaneId => "laneid".to_string(),
            SpecialReg::ClusterCtaRank => "cluster_ctarank".to_string(),
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum UnaryOp {
    /// Arithmetic negation.
    Neg,
    /// Bitwise complement of an integer, logical negation of an `i1`.
    Not,
}

/// Binary operators on two operands of the same scalar or vector type. Integer division, remainder and right
/// shift are **signed** (the language's `int` is signed); unsigned forms will be separate operators.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    /// Bitwise on integers, logical on `i1` (both operands are evaluated).
    And,
    Or,
    Xor,
    Shl,
    /// Arithmetic shift right.
    Shr,
}

/// Comparisons of two scalars of the same type, giving an `i1`: signed for integers; for floats, C's semantics
/// (with a NaN operand every comparison is false except `ne`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum CompareOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

/// Math functions. The transcendental ones are the fast hardware approximations (`ex2.approx`, `rsqrt.approx`,
/// `tanh.approx`), the precision CUDA's fast-math intrinsics give; `sqrt` is IEEE.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum MathFn {
    /// e^x, computed as `ex2.approx(x * log2(e))`.
    Exp,
    /// 2^x.
    Exp2,
    Sqrt,
    Rsqrt,
    Tanh,
    Abs,
    /// IEEE maxNum (a NaN operand yields the other one); two arguments.
    Max,
    Min,
    /// `a * b + c` with one rounding; three arguments.
    Fma,
}

impl MathFn {
    pub fn arity(self) -> usize {
        match self {
            MathFn::Max | MathFn::Min => 2,
            MathFn::Fma => 3,
            _ => 1,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            MathFn::Exp => "exp",
            MathFn::Exp2 => "exp2",
            MathFn::Sqrt => "sqrt",
            MathFn::Rsqrt => "rsqrt",
            MathFn::Tanh => "tanh",
            MathFn::Abs => "abs",
            MathFn::Max => "max",
            MathFn::Min => "min",
            MathFn::Fma => "fma",
        }
    }
}

/// How a warp shuffle picks the source lane (PTX ISA §9.7.9.6, `shfl.sync`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum ShuffleMode {
    /// From lane `laneid ^ lane`: butterfly reductions.
    Bfly,
    /// From lane `laneid + lane`, clamped to the warp.
    Down,
    /// From lane `laneid - lane`, clamped to the warp.
    Up,
    /// From lane `lane`.
    Idx,
}

impl ShuffleMode {
    pub fn name(self) -> &'static str {
        match self {
            ShuffleMode::Bfly => "bfly",
            ShuffleMode::Down => "down",
            ShuffleMode::Up => "up",
            ShuffleMode::Idx => "idx",
        }
    }
}

/// A value.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum Expr {
    /// Global.
    Literal(Literal),
    /// Global: the kernel parameter with this index.
    Param(u32),
    /// Global: the base address of a static allocation.
    AllocPtr(Handle<Alloc>),
    Special(SpecialReg),
    /// The value of a variable at the point of emission.
    ReadVar(Handle<Var>),
    Unary {
        op: UnaryOp,
        value: Handle<Expr>,
    },
    Binary {
        op: BinaryOp,
        lhs: Handle<Expr>,
        rhs: Handle<Expr>,
    },
    Compare {
        op: CompareOp,
        lhs: Handle<Expr>,
        rhs: Handle<Expr>,
    },
    /// `cond ? accept : reject`; both arms are evaluated.
    Select {
        cond: Handle<Expr>,
        accept: Handle<Expr>,
        reject: Handle<Expr>,
    },
    /// Numeric conversion, lane by lane: integer widths sign-extend or truncate, int<->float are signed, float
    /// narrowing rounds to nearest even (`f32 -> bf16` is `cvt.rn.bf16.f32`), `i1` widens to 0 or 1.
    Convert {
        value: Handle<Expr>,
        to: Scalar,
    },
    Math {
        fun: MathFn,
        arg: Handle<Expr>,
        arg1: Option<Handle<Expr>>,
        arg2: Option<Handle<Expr>>,
    },
    /// `base + index * size_of(elem)`: an address inside the same allocation. `index` is `i32` or `i64`
    /// (an `i32` index is sign-extended).
    Offset {
        base: Handle<Expr>,
        index: Handle<Expr>,
        elem: Type,
    },
    /// The value of type `ty` an operation statement produces ([`Stmt::Op`](crate::Stmt::Op) names it as its
    /// `result`): loads, shuffles and every other operation with effects are statements, so their position is
    /// explicit, and their results are SSA values like any other (naga's `CallResult`).
    OpResult(Type),
    /// Lane `lane` of a vector.
    Extract {
        vector: Handle<Expr>,
        lane: u32,
    },
    /// A vector of type `ty` from one scalar per lane.
    Compose {
        ty: Type,
        parts: Vec<Handle<Expr>>,
    },
    /// `mapa.shared::cluster`: the address of the shared-memory location `ptr` (a `ptr<shared>` of this CTA) in
    /// the CTA of rank `cta` of the cluster, a `ptr<shared_cluster>`. Pure: every CTA of a cluster lays out its
    /// shared memory the same way.
    MapShared {
        ptr: Handle<Expr>,
        cta: Handle<Expr>,
    },
}

impl Expr {
    /// Global expressions are available everywhere in the kernel and are never emitted.
    pub fn is_global(&self) -> bool {
        matches!(self, Expr::Literal(_) | Expr::Param(_) | Expr::AllocPtr(_))
    }

    /// Calls `f` on every operand, in order.
    pub fn for_each_operand(&self, mut f: impl FnMut(Handle<Expr>)) {
        match *self {
            Expr::Literal(_)
            | Expr::Param(_)
            | Expr::AllocPtr(_)
            | Expr::Special(_)
            | Expr::ReadVar(_)
            | Expr::OpResult(_) => {}
            Expr::Unary { value, .. } | Expr::Convert { value, .. } => f(value),
            Expr::Binary { lhs, rhs, .. } | Expr::Compare { lhs, rhs, .. } => {
                f(lhs);
                f(rhs);
            }
            Expr::Select { cond, accept, reject } => {
                f(cond);
                f(accept);
                f(reject);
            }
            Expr::Math { arg, arg1, arg2, .. } => {
                f(arg);
                arg1.into_iter().chain(arg2).for_each(f);
            }
            Expr::Offset { base, index, .. } => {
                f(base);
                f(index);
            }
            Expr::Extract { vector, .. } => f(vector),
            Expr::Compose { ref parts, .. } => parts.iter().copied().for_each(f),
            Expr::MapShared { ptr, cta } => {
                f(ptr);
                f(cta);
            }
        }
    }

    /// Replaces every operand `h` by `f(h)`.
    pub fn map_operands(&mut self, mut f: impl FnMut(Handle<Expr>) -> Handle<Expr>) {
        match self {
            Expr::Literal(_)
            | Expr::Param(_)
            | Expr::AllocPtr(_)
            | Expr::Special(_)
            | Expr::ReadVar(_)
            | Expr::OpResult(_) => {}
            Expr::Unary { value, .. } | Expr::Convert { value, .. } => *value = f(*value),
            Expr::Binary { lhs, rhs, .. } | Expr::Compare { lhs, rhs, .. } => {
                *lhs = f(*lhs);
                *rhs = f(*rhs);
            }
            Expr::Select { cond, accept, reject } => {
                *cond = f(*cond);
                *accept = f(*accept);
                *reject = f(*reject);
            }
            Expr::Math { arg, arg1, arg2, .. } => {
                *arg = f(*arg);
                if let Some(a) = arg1 {
                    *a = f(*a);
                }
                if let Some(a) = arg2 {
                    *a = f(*a);
                }
            }
            Expr::Offset { base, index, .. } => {
                *base = f(*base);
                *index = f(*index);
            }
            Expr::Extract { vector, .. } => *vector = f(*vector),
            Expr::Compose { parts, .. } => parts.iter_mut().for_each(|p| *p = f(*p)),
            Expr::MapShared { ptr, cta } => {
                *ptr = f(*ptr);
                *cta = f(*cta);
            }
        }
    }
}

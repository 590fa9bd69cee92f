//! The IR's type set: a few scalars, short vectors of them, and untyped pointers tagged with an address space.
//!
//! Types are small `Copy` values compared structurally, so equal types are equal without interning. Pointers are
//! opaque (like LLVM's): what is loaded or stored, and how aligned, is written on the memory access, never on the
//! pointer. Aggregates (the wgmma accumulator fragments, inline-PTX results with several outputs) will come as
//! an interned type arena next to this enum, with a `Type::Aggregate(Handle<..>)` variant.

use std::fmt;

/// A scalar type. Integers are signless; the operation says how they are read (see `BinaryOp`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Scalar {
    /// A predicate: the result of comparisons, the condition of `if` and `select`.
    I1,
    I32,
    I64,
    F16,
    BF16,
    F32,
    F64,
    /// OCP FP8 E4M3 (the *FN* variant: bias 7, no infinities, max 448, NaN `0x7f`/`0xff`) and E5M2 (IEEE-style:
    /// infinities, max 57344): one-byte **storage formats**. They are loaded, stored, converted
    /// ([`Expr::Convert`](crate::Expr::Convert): to and from every other scalar), compared (as `f32`) and fed to
    /// `wgmma`, but take no arithmetic and have no literals (the validator refuses both): code computes in `f32`.
    E4M3,
    E5M2,
}

impl Scalar {
    /// Size in bytes as stored in memory (`i1` is stored as a byte).
    pub fn size_bytes(self) -> u32 {
        match self {
            Scalar::I1 | Scalar::E4M3 | Scalar::E5M2 => 1,
            Scalar::F16 | Scalar::BF16 => 2,
            Scalar::I32 | Scalar::F32 => 4,
            Scalar::I64 | Scalar::F64 => 8,
        }
    }
    /// A floating-point type, the 8-bit storage formats included (see [`Scalar::is_fp8`]).
    pub fn is_float(self) -> bool {
        matches!(self, Scalar::F16 | Scalar::BF16 | Scalar::F32 | Scalar::F64 | Scalar::E4M3 | Scalar::E5M2)
    }
    /// `e4m3` and `e5m2`: floats without arithmetic.
    pub fn is_fp8(self) -> bool {
        matches!(self, Scalar::E4M3 | Scalar::E5M2)
    }
    /// A type arithmetic, negation and the math functions take: integers and the floats other than fp8.
    pub fn is_arithmetic(self) -> bool {
        self != Scalar::I1 && !self.is_fp8()
    }
    /// `i32` and `i64` (not `i1`).
    pub fn is_int(self) -> bool {
        matches!(self, Scalar::I32 | Scalar::I64)
    }
    pub fn name(self) -> &'static str {
        match self {
            Scalar::I1 => "i1",
            Scalar::I32 => "i32",
            Scalar::I64 => "i64",
            Scalar::F16 => "f16",
            Scalar::BF16 => "bf16",
            Scalar::F32 => "f32",
            Scalar::F64 => "f64",
            Scalar::E4M3 => "e4m3",
            Scalar::E5M2 => "e5m2",
        }
    }
}

/// Where a pointer points. The numbers are the NVPTX address spaces LLVM uses.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum AddrSpace {
    /// Device memory (kernel tensor arguments). LLVM address space 1.
    Global,
    /// Per-CTA shared memory. LLVM address space 3.
    Shared,
    /// Per-thread memory: register arrays that LLVM promotes to registers when every index is a constant.
    /// LLVM address space 5.
    Local,
    /// Kernel parameter space (the future home of TMA descriptors passed by value). LLVM address space 101.
    Param,
    /// The shared memory of any CTA of the cluster (distributed shared memory), addressed by [`Expr::MapShared`]
    /// (`mapa`). LLVM address space 7.
    ///
    /// [`Expr::MapShared`]: crate::Expr::MapShared
    SharedCluster,
}

impl AddrSpace {
    pub fn name(self) -> &'static str {
        match self {
            AddrSpace::Global => "global",
            AddrSpace::Shared => "shared",
            AddrSpace::Local => "local",
            AddrSpace::Param => "param",
            AddrSpace::SharedCluster => "shared_cluster",
        }
    }
    /// The LLVM NVPTX address-space number.
    pub fn llvm_number(self) -> u16 {
        match self {
            AddrSpace::Global => 1,
            AddrSpace::Shared => 3,
            AddrSpace::Local => 5,
            AddrSpace::Param => 101,
            AddrSpace::SharedCluster => 7,
        }
    }
}

/// The type of a value.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Type {
    Scalar(Scalar),
    /// `lanes` scalars (2, 4 or 8): one register group, loaded or stored by one vector instruction.
    Vector {
        scalar: Scalar,
        lanes: u8,
    },
    /// An opaque pointer into an address space.
    Ptr(AddrSpace),
}

impl Type {
    pub const I1: Type = Type::Scalar(Scalar::I1);
    pub const I32: Type = Type::Scalar(Scalar::I32);
    pub const I64: Type = Type::Scalar(Scalar::I64);
    pub const F16: Type = Type::Scalar(Scalar::F16);
    pub const BF16: Type = Type::Scalar(Scalar::BF16);
    pub const F32: Type = Type::Scalar(Scalar::F32);
    pub const F64: Type = Type::Scalar(Scalar::F64);
    pub const E4M3: Type = Type::Scalar(Scalar::E4M3);
    pub const E5M2: Type = Type::Scalar(Scalar::E5M2);

    pub fn vector(scalar: Scalar, lanes: u8) -> Type {
        if lanes == 1 { Type::Scalar(scalar) } else { Type::Vector { scalar, lanes } }
    }
    /// The scalar of a scalar or vector type.
    pub fn scalar(self) -> Option<Scalar> {
        match self {
            Type::Scalar(s) | Type::Vector { scalar: s, .. } => Some(s),
            Type::Ptr(_) => None,
        }
    }
    /// Lanes of a vector, 1 for a scalar, `None` for a pointer.
    pub fn lanes(self) -> Option<u32> {
        match self {
            Type::Scalar(_) => Some(1),
            Type::Vector { lanes, .. } => Some(lanes as u32),
            Type::Ptr(_) => None,
        }
    }
    /// Size in bytes of a value of this type in memory (pointers are 8 bytes: 64-bit addressing).
    pub fn size_bytes(self) -> u32 {
        match self {
            Type::Scalar(s) => s.size_bytes(),
            Type::Vector { scalar, lanes } => scalar.size_bytes() * lanes as u32,
            Type::Ptr(_) => 8,
        }
    }
    pub fn is_float(self) -> bool {
        self.scalar().is_some_and(Scalar::is_float)
    }
    pub fn is_int(self) -> bool {
        self.scalar().is_some_and(Scalar::is_int)
    }
    pub fn is_bool(self) -> bool {
        self == Type::I1
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::Scalar(s) => f.write_str(s.name()),
            Type::Vector { scalar, lanes } => write!(f, "{}x{}", scalar.name(), lanes),
            Type::Ptr(space) => write!(f, "ptr<{}>", space.name()),
        }
    }
}

impl fmt::Display for Scalar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

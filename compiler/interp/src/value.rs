//! The values a thread holds: scalar bits, vectors of them, and pointers kept as (memory, byte offset) so that
//! every access knows which buffer it is in and can be bounds-checked (the protocol check's (allocation,
//! offset, rank) pointers, with the rank folded into [`Mem::Shared`]).

use std::rc::Rc;

/// Which memory a pointer points into.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mem {
    /// The buffer of pointer parameter `param` (global memory).
    Global(u32),
    /// Shared memory: of the thread's own CTA (`cta: None`, a `ptr<shared>`), or of the CTA of that rank in the
    /// cluster (a `mapa` result, `ptr<shared_cluster>`), inside allocation `alloc`. Offsets are from the start
    /// of the CTA's shared memory (swizzles and wgmma descriptors act on these addresses); an access must stay
    /// inside its allocation.
    Shared { cta: Option<u32>, alloc: u32 },
    /// The thread's register array `alloc` (a `local` allocation).
    Local(u32),
    /// The tensor map passed as parameter `param`.
    Param(u32),
}

/// A pointer: a byte offset into one memory. Offsets may leave the memory; accesses are checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Ptr {
    pub mem: Mem,
    pub off: i64,
}

/// A value of an expression or a variable.
#[derive(Clone, Debug, PartialEq, Default)]
pub enum Val {
    /// Not computed yet (reading one is an interpreter bug the validator's SSA rules exclude).
    #[default]
    Undef,
    /// A scalar's bits (see `numeric`).
    Bits(u64),
    /// A vector's lanes.
    Vector(Rc<[u64]>),
    Ptr(Ptr),
}

impl Val {
    pub fn bool(b: bool) -> Val {
        Val::Bits(u64::from(b))
    }
    /// The lanes of a scalar (one) or a vector.
    pub fn lanes(&self) -> &[u64] {
        match self {
            Val::Bits(b) => std::slice::from_ref(b),
            Val::Vector(v) => v,
            Val::Undef | Val::Ptr(_) => &[],
        }
    }
    /// One lane is a scalar; none (the lanes of a pointer or of nothing) is no value.
    pub fn from_lanes(lanes: Vec<u64>) -> Val {
        match lanes.as_slice() {
            [] => Val::Undef,
            [one] => Val::Bits(*one),
            _ => Val::Vector(lanes.into()),
        }
    }
}

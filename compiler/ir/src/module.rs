//! Modules and kernels: the arenas, the parameters, and what the runtime needs to know about each kernel.

use crate::arena::{Arena, Handle, Loc};
use crate::expr::Expr;
use crate::schedule::{Barrier, BarrierKind, Owner, Ring};
use crate::stmt::Block;
use crate::types::{AddrSpace, Scalar, Type};

use cutec_target::{MAX_STATIC_SHARED_BYTES, MAX_THREAD_REGISTERS, SM_REGISTERS};

/// One compilation unit: kernels with everything they call inlined.
#[derive(Clone, Debug, Default)]
pub struct Module {
    pub kernels: Vec<Kernel>,
}

/// A kernel parameter as passed at launch: a pointer (one per tensor) or a scalar (a dynamic dimension).
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    pub name: String,
    pub ty: Type,
    /// For pointers: the alignment in bytes the runtime checks before launch (vector accesses rely on it).
    pub align: u32,
    /// For pointers: no other pointer parameter aliases the memory this one reaches.
    pub noalias: bool,
    /// For pointers: the kernel never stores through it (lets loads use the read-only path).
    pub readonly: bool,
}

/// A mutable local variable of scalar or vector type (`let mut`, loop counters). Back ends keep it in a register.
#[derive(Clone, Debug, PartialEq)]
pub struct Var {
    pub name: String,
    pub ty: Type,
}

/// A static allocation of `len` elements of type `elem`: shared memory for the CTA, or a per-thread register
/// array (address space `Local`, promoted to registers when every access has a constant offset).
#[derive(Clone, Debug, PartialEq)]
pub struct Alloc {
    pub name: String,
    pub space: AddrSpace,
    pub elem: Scalar,
    pub len: u32,
    pub align: u32,
}

impl Alloc {
    pub fn size_bytes(&self) -> u64 {
        self.elem.size_bytes() as u64 * self.len as u64
    }
}

/// A kernel: parameters, arenas and a body.
#[derive(Clone, Debug)]
pub struct Kernel {
    pub name: String,
    pub params: Vec<Param>,
    pub vars: Arena<Var>,
    pub allocs: Arena<Alloc>,
    pub exprs: Arena<Expr>,
    pub body: Block,
    /// The CTA size when it is known at compile time: back ends emit it as `.reqntid` and fold `ntid` reads.
    pub block_size: Option<[u32; 3]>,
    /// The cluster shape of the launch clause (`cluster = (2, 1, 1)`), when it has one.
    pub cluster: Option<[u32; 3]>,
    /// `#[warp_specialized]`: split the CTA into producer and consumer warpgroups (no pass implements it yet:
    /// the pipeline rejects it).
    pub warp_specialized: bool,
    /// `unchecked_protocol`: the program accepts a protocol `check-protocol` cannot follow (E0345 a warning, not
    /// an error).
    pub unchecked_protocol: bool,
    /// The bytes of one box of each TMA tensor-map parameter (its index in `params`): what a `tma.load` through
    /// it delivers to its mbarrier. The lowering derives the box (`tma.rs`); the text form writes it on the
    /// parameter (`%x_tma0: ptr<param> align(64) box(32768)`). `check-protocol` counts transaction bytes with it.
    pub tma_box_bytes: Vec<(u32, u64)>,
    /// The barriers the schedule runs on ([`crate::schedule`]): the mbarrier arrays the passes make, and the
    /// named barriers whose ids the compiler took from the kernel's pool.
    pub barriers: Arena<Barrier>,
    /// The rings of stages of the pipelined loops ([`crate::schedule`]), declared by `pipeline-loops`.
    pub rings: Arena<Ring>,
    /// The wgmma groups the commits yield ([`crate::schedule::WgmmaGroup`]), declared by the lowering of `gemm`.
    pub groups: Arena<crate::schedule::WgmmaGroup>,
    pub loc: Loc,
}

/// The registers per thread at the start of a kernel of `threads` threads that asks for one CTA per SM
/// (`.minnctapersm 1`): the register file ([`SM_REGISTERS`]) shared evenly, in ptxas's steps of 8, at most
/// [`MAX_THREAD_REGISTERS`] (248, its last step). A `setmaxnreg` to more is `.inc`, to fewer `.dec`.
pub fn entry_registers(threads: u32) -> u32 {
    ((SM_REGISTERS / threads.max(1)) / 8 * 8).min(MAX_THREAD_REGISTERS / 8 * 8)
}

impl Kernel {
    pub fn new(name: impl Into<String>) -> Kernel {
        Kernel {
            name: name.into(),
            params: Vec::new(),
            vars: Arena::new(),
            allocs: Arena::new(),
            exprs: Arena::new(),
            body: Block::new(),
            block_size: None,
            cluster: None,
            warp_specialized: false,
            unchecked_protocol: false,
            tma_box_bytes: Vec::new(),
            barriers: Arena::new(),
            rings: Arena::new(),
            groups: Arena::new(),
            loc: Loc::NONE,
        }
    }

    /// The registers per thread at the start of the kernel, when its block size is known: see
    /// [`entry_registers`].
    pub fn entry_registers(&self) -> Option<u32> {
        self.block_size.map(|[x, y, z]| entry_registers(x.saturating_mul(y).saturating_mul(z)))
    }

    /// Bytes of shared memory, each allocation aligned as it asks.
    pub fn shared_bytes(&self) -> u64 {
        self.shared_offsets().1
    }

    /// The offset of each shared-memory allocation (`None` for the others) when they are laid out one after the
    /// other, each aligned as it asks, and the total.
    pub fn shared_offsets(&self) -> (Vec<Option<u64>>, u64) {
        let mut total = 0u64;
        let mut offsets = Vec::with_capacity(self.allocs.len());
        for (_, a) in self.allocs.iter() {
            if a.space != AddrSpace::Shared {
                offsets.push(None);
                continue;
            }
            let align = a.align.max(1) as u64;
            total = total.div_ceil(align) * align;
            offsets.push(Some(total));
            total += a.size_bytes();
        }
        (offsets, total)
    }

    /// The bytes of one box of the tensor map passed as parameter `param`, when the lowering recorded it.
    pub fn tma_box_bytes(&self, param: u32) -> Option<u64> {
        self.tma_box_bytes.iter().find(|(p, _)| *p == param).map(|&(_, b)| b)
    }

    /// `count` named barriers of `threads` threads for `purpose`, from the kernel's pool: the ids after the
    /// compiler's named barriers so far (from 1), or the ones already reserved for the same purpose and shape.
    /// The declaration and its first id; `None` when the pool (ids 1..=15) is exhausted.
    pub fn reserve_named_barriers(
        &mut self,
        count: u32,
        threads: u32,
        purpose: &str,
        loc: Loc,
    ) -> Option<(Handle<Barrier>, u32)> {
        let mut next = 1;
        for (h, b) in self.barriers.iter() {
            if let BarrierKind::Named { first, count: c, threads: t } = b.kind
                && b.owner == Owner::Compiler
            {
                if b.purpose == purpose && c == count && t == threads {
                    return Some((h, first));
                }
                next = next.max(first + c);
            }
        }
        if next + count > 16 {
            return None;
        }
        let kind = BarrierKind::Named { first: next, count, threads };
        let h = self.barriers.append(Barrier { purpose: purpose.to_string(), kind, owner: Owner::Compiler }, loc);
        Some((h, next))
    }

    /// Declares the compiler's array of mbarriers `alloc`, each for `arrivals` arrivals and `bytes` per phase.
    pub fn declare_mbarriers(&mut self, alloc: Handle<Alloc>, arrivals: u32, bytes: u64, loc: Loc) -> Handle<Barrier> {
        let purpose = self.allocs.get(alloc).map_or_else(String::new, |a| a.name.clone());
        let kind = BarrierKind::Mbarrier { alloc, arrivals, bytes };
        self.barriers.append(Barrier { purpose, kind, owner: Owner::Compiler }, loc)
    }

    /// Whether the shared memory is over what a block may declare statically: back ends then place it in
    /// dynamic shared memory.
    pub fn shared_is_dynamic(&self) -> bool {
        self.shared_bytes() > u64::from(MAX_STATIC_SHARED_BYTES)
    }
}

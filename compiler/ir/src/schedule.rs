//! The schedule's entities: the asynchronous state a Hopper kernel runs on, declared in the kernel beside its
//! allocations, so that the passes that create it say what they made and the analyses read it instead of
//! guessing it back from the statements.
//!
//! - A [`Barrier`] is an mbarrier array (an `i64` shared allocation, one barrier per element, each initialised
//!   for `arrivals` arrivals and, per phase, `bytes` of asynchronous writes), or a named barrier (`bar.sync id,
//!   threads`) whose id the compiler took from the kernel's pool. [`Owner`] says who made it: a named barrier of
//!   the compiler's (the TMA-store epilogue's, the spare warps') is an id no `barrier_sync` of the program may
//!   use, which `check-operands` proves (E0348).
//! - A [`Ring`] is the stages of a pipelined loop: its tiles (each allocation `stages` stages long), its `full`
//!   and `empty` mbarrier arrays, who fills it (thread 0 ahead of the loop, or the producer warpgroup) and when a
//!   stage is released (at the end of the iteration that read it, or once the wgmma group that read it has
//!   retired). `pipeline-loops` declares it; `check-schedule` proves the hazards that depend on it (a stage
//!   refilled while a group still reads it: E0346; a generic write into a tile the async proxy fills: E0347);
//!   `check-protocol` runs the launches its depth calls for.
//! - A wgmma group ([`WgmmaGroup`]) is the token a `wgmma.commit_group #gN` yields: the tiles and register
//!   arrays its wgmmas read and write, which the lowering of `gemm` declares and `complete-wgmma` reads to know
//!   what a pending group still uses.
//! - A role's kind ([`RoleKind`]) says whether a warpgroup region is the compiler's producer or consumer, or a
//!   `role` of the program (by its name in the source), so that no pass tells them apart by name.
//!
//! Invariants (the validator's): every handle an entity holds is in range; a barrier's allocation is a shared
//! `i64` array; a ring's tiles are shared allocations and its `full`/`empty` are mbarrier arrays of `stages`
//! barriers; a named barrier's ids are inside 1..=15 and its thread count a positive multiple of 32, and the
//! compiler's named barriers have disjoint ids.

use crate::arena::Handle;
use crate::module::Alloc;
use std::fmt;

/// Who made a barrier: the compiler (a pass or the lowering of a library construct) or the program.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Owner {
    Compiler,
    Program,
}

/// What a [`Barrier`] is.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum BarrierKind {
    /// An array of mbarriers in shared memory (`alloc`, one per element), each initialised for `arrivals`
    /// arrivals, and expecting `bytes` of asynchronous writes per phase (0 for a barrier of arrivals only).
    Mbarrier { alloc: Handle<Alloc>, arrivals: u32, bytes: u64 },
    /// `bar.sync id, threads` with an id of `first..first + count` (one per group of threads that synchronise
    /// apart, say one per warpgroup of an epilogue), each of `threads` threads.
    Named { first: u32, count: u32, threads: u32 },
}

/// A barrier of the kernel (see the module documentation). `purpose` says what it is for, in the text form and
/// in diagnostics (`ring_full`, `epilogue`).
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct Barrier {
    pub purpose: String,
    pub kind: BarrierKind,
    pub owner: Owner,
}

/// Who issues a ring's copies.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Filler {
    /// Thread 0 of the CTA, S - 1 iterations ahead of the loop that reads the stages.
    Thread0,
    /// Thread 0 of the producer warpgroup, as far ahead as the ring lets it.
    Producer,
}

/// When a ring's stage is released (its `empty` barrier arrived on).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Release {
    /// At the end of the iteration that read it: the body reads the stage synchronously.
    EndOfIteration,
    /// Once the wgmma group committed by the iteration that read it has retired (`wgmma.wait_group 1` at the
    /// end of the next iteration, `0` after the loop): the body issues exactly one group per iteration.
    AfterGroup,
}

/// The stages of a pipelined loop (see the module documentation).
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct Ring {
    /// The tiles, each allocation `stages` stages long, filled by TMA only.
    pub tiles: Vec<Handle<Alloc>>,
    pub stages: u32,
    /// `stages` mbarriers: stage `s` has landed (one arrival and the copies' bytes).
    pub full: Handle<Barrier>,
    /// `stages` mbarriers: stage `s` has been read (one arrival per consumer warp, of every CTA it lands in).
    pub empty: Handle<Barrier>,
    pub filler: Filler,
    pub release: Release,
}

/// A wgmma group: the `wgmma.mma_async`s a `wgmma.commit_group` closes, as the token the commit yields. It names
/// what the group reads asynchronously (its operands' tiles in shared memory, an A fragment in registers) and
/// writes (its accumulators' register arrays); a `wgmma.wait_group N` retires every group but the N last
/// committed, and until then what the group names may not be written (nor its accumulators read).
#[derive(Clone, PartialEq, Eq, Hash, Debug, Default)]
pub struct WgmmaGroup {
    pub reads: Vec<Handle<Alloc>>,
    pub writes: Vec<Handle<Alloc>>,
}

/// What a warpgroup region is: the compiler's producer (it issues copies) or consumers (they compute), or a
/// `role` of the program, by its name in the source.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum RoleKind {
    Producer,
    Consumer,
    Source(String),
}

impl RoleKind {
    /// The name diagnostics use: `producer`, `consumer`, or the source's.
    pub fn name(&self) -> &str {
        match self {
            RoleKind::Producer => "producer",
            RoleKind::Consumer => "consumer",
            RoleKind::Source(name) => name,
        }
    }
}

/// The text form: `producer`, `consumer`, `role NAME`.
impl fmt::Display for RoleKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RoleKind::Producer | RoleKind::Consumer => f.write_str(self.name()),
            RoleKind::Source(name) => write!(f, "role {name}"),
        }
    }
}

impl Filler {
    pub fn name(self) -> &'static str {
        match self {
            Filler::Thread0 => "thread0",
            Filler::Producer => "producer",
        }
    }
}

impl Release {
    pub fn name(self) -> &'static str {
        match self {
            Release::EndOfIteration => "end_of_iteration",
            Release::AfterGroup => "after_group",
        }
    }
}

impl Owner {
    pub fn name(self) -> &'static str {
        match self {
            Owner::Compiler => "compiler",
            Owner::Program => "program",
        }
    }
}

/// The text form's line of barrier `h`: `barrier #b0 ring_full: mbarrier @ring_full arrivals(1) bytes(32768)`,
/// `barrier #b2 epilogue: named ids(1..3) threads(128)`, with ` program` after what the program declared.
pub fn barrier_line(k: &crate::Kernel, h: Handle<Barrier>, b: &Barrier) -> String {
    let what = match b.kind {
        BarrierKind::Mbarrier { alloc, arrivals, bytes } => {
            let name = k.allocs.get(alloc).map_or("?", |a| a.name.as_str());
            format!("mbarrier @{name} arrivals({arrivals}) bytes({bytes})")
        }
        BarrierKind::Named { first, count, threads } => {
            format!("named ids({first}..{}) threads({threads})", first + count)
        }
    };
    let owner = if b.owner == Owner::Program { " program" } else { "" };
    format!("barrier #b{} {}: {what}{owner}", h.index(), b.purpose)
}

/// The text form's line of wgmma group `h`: `group #g0: reads(@sa, @sb) writes(@acc)`.
pub fn group_line(k: &crate::Kernel, h: Handle<WgmmaGroup>, g: &WgmmaGroup) -> String {
    let names = |v: &[Handle<Alloc>]| {
        v.iter()
            .map(|&a| format!("@{}", k.allocs.get(a).map_or("?", |a| a.name.as_str())))
            .collect::<Vec<_>>()
            .join(", ")
    };
    format!("group #g{}: reads({}) writes({})", h.index(), names(&g.reads), names(&g.writes))
}

/// The text form's line of ring `h`: `ring #r0: tiles(@a, @b) stages(4) full(#b0) empty(#b1) filler(producer)
/// release(after_group)`.
pub fn ring_line(k: &crate::Kernel, h: Handle<Ring>, r: &Ring) -> String {
    let tiles: Vec<String> =
        r.tiles.iter().map(|&t| format!("@{}", k.allocs.get(t).map_or("?", |a| a.name.as_str()))).collect();
    format!(
        "ring #r{}: tiles({}) stages({}) full(#b{}) empty(#b{}) filler({}) release({})",
        h.index(),
        tiles.join(", "),
        r.stages,
        r.full.index(),
        r.empty.index(),
        r.filler.name(),
        r.release.name()
    )
}

//! The mbarrier protocol, checked by running it: an abstract execution of a kernel's synchronisation over small
//! trip counts, every thread of every CTA of one cluster, which proves for those launches that every
//! `mbarrier.wait` returns (arrival counts, transaction bytes, parities), that no CTA exits while a load or an
//! arrival of its cluster may still land in it, and reports the first launch and schedule where that fails, at
//! the wait, arrive or load, with the trace that shows it. The GPU reports none of these: they hang or race.
//!
//! # The interpreter (WEFT's class: Sharma, Bauer, Aiken, PLDI 2015; SCHEDULING.md §5)
//!
//! - **Values** ([`value`]): integers at their type's width, `i1`, pointers as (allocation or parameter, byte
//!   offset, `mapa` rank); floats, loads and shuffles are *unknown*. Only what the protocol depends on is
//!   evaluated: conditions, loop bounds, the operands of mbarrier, TMA-load and named-barrier operations, and
//!   what they are computed from, through variables.
//! - **Threads** run as coroutines over the structured body, in *groups* of threads that have executed the same
//!   statements so far: a group holds one value per expression, or one per thread where they differ
//!   (`thread_idx`), and splits where its threads disagree on a condition, a loop bound, a barrier operand or a
//!   role's warpgroups. A group of n threads arrives n times. So the 384 threads of a warp-specialised GEMM run
//!   as a handful of groups, yet each thread is accounted for. What a group computes per thread (values, the
//!   projections and parts of a split) depends only on its threads and the values it is computed from, the same
//!   in every launch and schedule: the memo (`memo.rs`) keeps it for every run of the kernel.
//! - **Blocking points**: `mbarrier.wait` (until the phase it means has completed), `bar.sync id, n`,
//!   `barrier.cta` (every live thread of the CTA), `barrier.cluster` (of the cluster), and the `.sync.aligned`
//!   collectives (`wgmma.*`, `setmaxnreg`, `stmatrix`, `shfl`, `elect.sync`), which converge their warp: a lane
//!   cannot run an iteration ahead of the rest of its warp.
//! - **mbarriers** (SCHEDULING.md §4, HOPPER.md): per CTA, the init count, the arrivals the current phase still
//!   needs, the transaction count, and an unbounded count of completed phases. A wait with parity p means the
//!   next phase of parity p after the last one its threads saw complete (phase -1, before the first, for a fresh
//!   barrier waited with parity 1); it returns when that phase has completed and the barrier's parity differs.
//! - **TMA loads** complete later: their bytes land on the barrier of each CTA of the multicast mask (or their
//!   own). Each launch runs under two schedules: bytes land as soon as the load issues, groups in program order;
//!   and bytes land as late as possible (only when every thread is blocked), groups in reverse order.
//!
//! # What it reports (`check-protocol`, E0340..E0344)
//!
//! - E0340: every unfinished thread is blocked and no load is in flight; the wait blocked longest is named with
//!   its barrier's state (arrivals missing).
//! - E0341: a wait that returns for a phase two or more ahead of the one it means (parity aliasing), one that
//!   never returns because the barrier is a whole phase past it, or one that returned at once for the phase
//!   before the first of a barrier that TMA loads signal (it waited for no data).
//! - E0342: bytes that do not match a phase's `expect_tx`: more land than it expects, a load lands after its
//!   phase completed without it, a wait misses bytes, or the kernel ends with a phase part-filled.
//! - E0343: a CTA exits while a load's bytes are still landing in it, or a peer arrives on or multicasts into a
//!   CTA that has exited.
//! - E0344: an arrival or a load on an mbarrier before its `init`, or more arrivals than a phase's count.
//!
//! # What it does not do
//!
//! It proves the protocol for the launches it runs, not for all: the integer parameters (dynamic dimensions, at
//! least 1, preferring multiples of large powers of two so that divisibility the runtime requires holds) are
//! chosen so that every loop bound it can evaluate takes each trip count up to 3 (a loop holding another loop:
//! the tiles of a persistent kernel) or 2S + 1 (the others: the k-tiles of an S-stage ring; S is the depth of
//! the deepest ring the passes declared, or in a kernel whose rings are written by hand its longest mbarrier
//! array); the grid is one cluster, or two of which the second runs (it gets the fewest tiles, none
//! at all with one tile); two schedules are explored, not every interleaving. The launch's requirements are not
//! in the IR: a launch the runtime would refuse may be run (none of the examples' checks depends on one). It **stops and
//! accepts the kernel** (never guesses) when control or a barrier operand depends on a value it does not know
//! (a load), when a TMA map's box is not known (`Kernel::tma_box_bytes`), when threads deadlock only at named or
//! cluster barriers, or past its budget of steps. It does not check what TMA loads overwrite against the wgmma
//! groups still reading a stage.

mod configs;
mod machine;
mod memo;
mod ops;
mod report;
mod split;
mod value;

use crate::arena::Loc;
use crate::module::Kernel;
use crate::types::{AddrSpace, Scalar};
use crate::valid::KernelInfo;

/// The work (statements and per-thread evaluations) one kernel's check may take before it gives up.
pub const BUDGET: u64 = 3_000_000;
/// The most threads (block times cluster) the check simulates.
const MAX_THREADS: u32 = 4096;

/// What kind of protocol error.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    /// A wait that never returns: arrivals missing (E0340).
    Deadlock,
    /// A wait's parity names another phase than the one the data is in (E0341).
    Parity,
    /// Transaction bytes that do not match `expect_tx` (E0342).
    Bytes,
    /// A CTA that exits while its cluster may still write into it (E0343).
    Exit,
    /// An mbarrier used before its init, or with more arrivals than its count (E0344).
    Misuse,
}

/// A protocol error at the wait, arrive or load `at`: what happened, and the trace that shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct ProtocolError {
    pub kind: Kind,
    pub at: Loc,
    pub message: String,
    /// The launch, the schedule, the threads, the barrier's state, what the other threads do.
    pub trace: Vec<String>,
}

/// Why a run ended early.
pub(crate) enum Stop {
    /// The check cannot say (an unknown value, its budget): the kernel is accepted.
    Skip(&'static str),
    Error(Box<ProtocolError>),
}

/// One schedule: when TMA bytes land, and in which order the groups run.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Schedule {
    late: bool,
    reverse: bool,
}

const SCHEDULES: [Schedule; 2] = [Schedule { late: false, reverse: false }, Schedule { late: true, reverse: true }];

/// What the check concluded about a kernel.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// Every launch it ran ran to its end under both schedules: `runs` of them, `work` steps in all. A check of
    /// those launches (small trip counts, two schedules of TMA completions), not a proof for every launch.
    Passed {
        runs: usize,
        work: u64,
    },
    /// The kernel has no mbarrier, named barrier or cluster barrier: nothing to check.
    NotApplicable,
    /// The check applies but cannot say (a value it does not know, its budget), and why: the kernel is
    /// accepted, and the pass says so in a warning (E0345).
    Skipped(&'static str),
    Failed(Box<ProtocolError>),
}

/// Checks the kernel's protocol (`info`: the validator's analysis of it).
pub fn analyse(kernel: &Kernel, info: &KernelInfo) -> Outcome {
    if !value::has_protocol(&kernel.body) {
        return Outcome::NotApplicable;
    }
    let Some(block) = kernel.block_size else { return Outcome::Skipped("the block size is not known") };
    let cluster = kernel.cluster.unwrap_or([1, 1, 1]);
    let threads = block.iter().chain(&cluster).fold(1u64, |a, &n| a.saturating_mul(u64::from(n)));
    if threads > u64::from(MAX_THREADS) || threads == 0 {
        return Outcome::Skipped("the cluster has too many threads to simulate");
    }
    let relevant = value::Relevant::of(kernel);
    let stages = ring_depth(kernel);
    let configs = configs::configs(kernel, info, &relevant, block, cluster, stages);
    let ctas: u32 = cluster.iter().product();
    let (mut runs, mut work) = (0, 0u64);
    let mut memo = memo::Memo::default();
    for config in &configs {
        let (clusters, index) = config.grid;
        let shape = value::Shape { block, cluster, params: config.params.clone(), clusters, index };
        for schedule in SCHEDULES {
            let budget = BUDGET.saturating_sub(work);
            let mut m = machine::Machine::new(kernel, info, &relevant, &shape, schedule, budget, &mut memo);
            let result = m.run();
            work += m.work;
            match result {
                Ok(()) => runs += 1,
                Err(Stop::Skip(why)) => return Outcome::Skipped(why),
                Err(Stop::Error(mut e)) => {
                    let with = if config.desc.is_empty() { String::new() } else { format!("with {}, ", config.desc) };
                    let cluster = if ctas > 1 { format!("in a cluster of {ctas} CTAs, ") } else { String::new() };
                    let when = match schedule.late {
                        false => "TMA bytes landing as soon as the load issues",
                        true => "TMA bytes landing as late as possible, the last threads first",
                    };
                    e.trace.insert(0, format!("the run that shows it: {with}{cluster}{when}"));
                    return Outcome::Failed(e);
                }
            }
        }
    }
    Outcome::Passed { runs, work }
}

/// The depth S of the kernel's deepest ring, whose k-tiles the launches take up to 2S + 1 of: from the rings
/// the passes declared ([`crate::schedule::Ring`]); in a kernel whose mbarriers are written by hand, which
/// declares none, the longest array of mbarriers (a hand-written ring's `full` and `empty` arrays have one per
/// stage). At most 8, the budget's bound.
fn ring_depth(kernel: &Kernel) -> i64 {
    let declared = kernel.rings.iter().map(|(_, r)| i64::from(r.stages)).max();
    let written = || {
        kernel
            .allocs
            .iter()
            .filter(|(_, a)| a.space == AddrSpace::Shared && a.elem == Scalar::I64)
            .map(|(_, a)| i64::from(a.len))
            .max()
    };
    declared.or_else(written).unwrap_or(1).clamp(1, 8)
}

/// The first protocol error of the kernel, if the check finds one.
pub fn check(kernel: &Kernel, info: &KernelInfo) -> Result<(), Box<ProtocolError>> {
    match analyse(kernel, info) {
        Outcome::Failed(e) => Err(e),
        Outcome::Passed { .. } | Outcome::NotApplicable | Outcome::Skipped(_) => Ok(()),
    }
}

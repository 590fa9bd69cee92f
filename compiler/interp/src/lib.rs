//! cutec-interp: an interpreter of the scheduled IR (after [`cutec_ir::run_pipeline`]) that runs a kernel on the
//! CPU, every thread of every CTA (and cluster), on host memory.
//!
//! # Model
//!
//! - **Memory.** Global memory is one buffer per pointer parameter ([`Arg::Buffer`]); shared memory one buffer
//!   per CTA, laid out as [`cutec_ir::Kernel::shared_offsets`] lays it out (so swizzles, which act on shared
//!   addresses, see the addresses the hardware's would, on the same alignment); registers and register arrays
//!   per thread. A pointer is a (memory, byte offset) pair ([`value::Ptr`]; a shared one knows its
//!   allocation), so every access is bounds-checked against the tensor argument or the allocation it is in,
//!   and an access outside it is an error with the statement's location.
//! - **Threads** are explicit continuations (`thread.rs`: a stack of frames over the structured blocks), not OS
//!   threads. A thread runs until it blocks — `bar.sync`, a named barrier, an mbarrier wait, a cluster barrier,
//!   or a warp (warpgroup) collective: shuffles, `elect.sync`, `stmatrix`, `wgmma.mma_async` — and the scheduler
//!   (`machine.rs`) releases what can go on: a barrier when its threads have arrived, a wait when its phase has
//!   completed, a collective when every live lane of its warp (warpgroup) has reached it, which then executes
//!   over the lanes' values at once. When nothing can go on and some thread has not exited, the run is a
//!   **deadlock**, reported with each wait, its barrier's state and its threads.
//! - **Asynchrony.** TMA loads land when the [`Schedule`] says (when issued, only when no thread can go on
//!   without one, or at seeded points); TMA stores and wgmma groups complete when issued. What the hardware
//!   leaves to timing is checked instead (`race.rs`): shared-memory accesses are ordered by happens-before
//!   (vector clocks over barriers, mbarrier phases, cluster barriers), a TMA load's bytes count as written only
//!   for threads that waited on its barrier, wgmma operands and TMA store sources stay read until the wait
//!   that retires their group, the asynchronous proxy's reads need a `fence.proxy.async` after the generic
//!   writes they read, and a wgmma group's accumulator and A registers are not touched before its
//!   `wgmma.wait_group`. A race is an error naming both statements. A race-free kernel computes the same values
//!   under every schedule (the suite checks it bit for bit on the GEMMs).
//! - **Values** are bit-exact (`numeric.rs`): integers wrap in their width, `f32` is IEEE, conversions round as the
//!   code generator's `cvt`s do (fp8 `.satfinite`), approximate math is correctly rounded (within the hardware's
//!   documented error). wgmma computes each k-step's dot products exactly (in `f64`, every product of two 16- or
//!   8-bit floats being exact) and adds them to the `f32` accumulator with one rounding; the hardware's order and
//!   rounding of that sum are unspecified, so results may differ from the GPU's in the last bits.
//! - **wgmma** reads its shared-memory operands through the descriptor the code generator would encode
//!   (`GmmaDesc::fixed_bits` and the operand's address) decoded and walked by `cutec_layout::gmma`, the model
//!   the code generator trusts: a wrong descriptor is a wrong answer here too.
//!
//! Errors are [`InterpError`] values; [`diag::to_diagnostic`] renders them with the codes of [`codes::CODES`].

pub mod codes;
mod collective;
pub mod diag;
mod error;
mod eval;
mod global_race;
mod machine;
mod memory;
pub mod numeric;
mod ops;
mod race;
mod thread;
mod tma;
pub mod value;
mod wgmma;

pub use error::{Access, InterpError, RaceKind, ThreadRef, Wait};
pub use machine::{Outcome, run};

/// The argument of one kernel parameter, in parameter order.
#[derive(Clone, Debug, PartialEq)]
pub enum Arg {
    /// The memory a pointer parameter points to (its element 0 at byte 0). Written in place by the run.
    Buffer(Vec<u8>),
    /// A scalar's bits, as [`numeric`] holds them (an `i32` zero-extended, an `f32`'s IEEE bits).
    Scalar(u64),
    /// A TMA tensor map (a `ptr<param>` parameter).
    TensorMap(TensorMap),
}

/// The swizzle of a TMA box in shared memory: the 16-byte chunk index XORed with the 128-byte row index modulo
/// 2, 4 or 8 (`Swizzle<b,4,3>` on shared-memory addresses).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TmaSwizzle {
    None,
    B32,
    B64,
    B128,
}

/// A tiled TMA tensor map as `cuTensorMapEncodeTiled` takes it, over the buffer of pointer parameter `tensor`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorMap {
    /// The pointer parameter whose buffer the map describes (its element 0 is the map's origin).
    pub tensor: u32,
    pub elem_bytes: u32,
    /// Extents, innermost first.
    pub dims: Vec<u64>,
    /// Byte strides of dimensions 1.. (dimension 0 is contiguous).
    pub strides: Vec<u64>,
    /// The box, in elements, innermost first.
    pub box_dims: Vec<u32>,
    /// The traversal stride per dimension (1 takes every element).
    pub element_strides: Vec<u32>,
    pub swizzle: TmaSwizzle,
    /// Out-of-bounds elements read as NaN (`NAN_REQUEST_ZERO_FMA`) rather than zero.
    pub oob_nan: bool,
}

/// When asynchronous TMA loads land (their mbarrier counts their bytes). A race-free kernel computes the
/// same values under every schedule; the schedules differ in the deadlocks and protocol errors they reach.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Schedule {
    /// When issued: the earliest point the hardware allows.
    #[default]
    Earliest,
    /// Only when no thread can go on without one: the oldest in flight lands then.
    Latest,
    /// At points drawn from the seed: after each round of the scheduler, each copy in flight lands with
    /// probability 1/2 (and the oldest when no thread can go on).
    Seeded(u64),
}

/// The launch: grid and block in CTAs and threads, and the cluster shape (`[1, 1, 1]` without clusters).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Launch {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub cluster: [u32; 3],
}

/// How to run.
pub struct Options<'a> {
    /// Statements all threads may execute in all before the run is stopped as endless.
    pub max_steps: u64,
    /// Called after each cluster of CTAs with (clusters done, clusters in all).
    pub progress: Option<&'a mut dyn FnMut(u64, u64)>,
    /// Check shared memory for races (`race.rs`); off, a run is about twice as fast.
    pub races: bool,
    pub schedule: Schedule,
}

impl Default for Options<'_> {
    fn default() -> Self {
        Options { max_steps: 20_000_000_000, progress: None, races: true, schedule: Schedule::Earliest }
    }
}

//! The interpreter's error codes (`E0500`..`E0519`), with what `cutec explain` prints.

use cutec_diagnostics::CodeInfo;

/// An access outside the memory it is in.
pub const OUT_OF_BOUNDS: &str = "E0500";
/// Every thread that has not exited waits, and nothing can release any of them.
pub const DEADLOCK: &str = "E0501";
/// An integer division or remainder by zero.
pub const DIVISION_BY_ZERO: &str = "E0502";
/// An mbarrier used against PTX's rules.
pub const MBARRIER: &str = "E0503";
/// A barrier or collective used against PTX's rules.
pub const COLLECTIVE: &str = "E0504";
/// A TMA copy the tensor map cannot do.
pub const TENSOR_MAP: &str = "E0505";
/// An operation the interpreter does not run yet.
pub const UNSUPPORTED: &str = "E0506";
/// Two accesses to shared memory that nothing orders.
pub const RACE: &str = "E0508";
/// IR the validator should have refused, or a run stopped as endless, or arguments that do not fit: not the
/// kernel's fault alone.
pub const CANNOT_RUN: &str = "E0507";

const fn code(code: &'static str, title: &'static str, explanation: &'static str) -> CodeInfo {
    CodeInfo { code, title, explanation }
}

pub const CODES: &[CodeInfo] = &[
    code(
        OUT_OF_BOUNDS,
        "out-of-bounds access on the CPU",
        "`cutec run --cpu` executed a load, store, TMA copy or wgmma operand read that falls outside the memory it \
is in: a tensor argument's buffer, the block's shared memory, or a register array. On the GPU such an access reads \
or overwrites something else, or faults. The message names the memory, its size, the byte offset and the thread; \
the label is the statement. Check the bounds the access is guarded by (a ragged last tile, an index computed from \
the wrong dimension).\n\n    cutec run --cpu examples/copy.cute --dim N=1000\n",
    ),
    code(
        DEADLOCK,
        "deadlock",
        "`cutec run --cpu` reached a point where every thread that has not exited waits — at `bar.sync`, a named \
barrier, an mbarrier wait, the cluster barrier or a warp collective — and nothing left can release any of them: \
the arrivals or transaction bytes a phase needs never come, a barrier counts more threads than reach it, or lanes \
of a warp wait at different collectives. On the GPU the kernel hangs. Each wait is listed with its barrier's state \
(phase, pending arrivals, transaction bytes) and its threads.\n",
    ),
    code(
        DIVISION_BY_ZERO,
        "integer division by zero",
        "An integer division or remainder by zero, whose result the hardware leaves undefined. Guard the divisor, \
or check the dimension it comes from.\n",
    ),
    code(
        MBARRIER,
        "mbarrier misuse",
        "An mbarrier operation that PTX leaves undefined: an operation before `mbarrier.init`, more arrivals in a \
phase than its count, a transaction count outside ±(2^20 - 1), an init count outside 1..2^20-1, or an mbarrier not \
8-byte aligned in shared memory.\n",
    ),
    code(
        COLLECTIVE,
        "barrier or collective misuse",
        "A barrier or warp collective used against PTX's rules: a named barrier id outside 0..15 or a thread count \
not a multiple of 32, a shuffle reading an exited lane, `stmatrix` or `wgmma` with lanes exited, wgmma operands \
that differ across the warpgroup, a `setmaxnreg` count outside 24..256 or not a multiple of 8, or a CTA rank \
outside the cluster.\n",
    ),
    code(
        TENSOR_MAP,
        "TMA copy outside its tensor map",
        "A TMA copy whose operand is not a tensor map, whose coordinates do not match the map's rank, or whose map \
reaches past its tensor's buffer.\n",
    ),
    code(
        UNSUPPORTED,
        "not supported by the CPU interpreter yet",
        "The kernel uses an operation `cutec run --cpu` does not execute yet (a wgmma with an 8-bit A in \
registers, a load or store of a pointer). Run it on the GPU.\n",
    ),
    code(
        RACE,
        "data race on shared memory",
        "`cutec run --cpu` found two accesses to the same byte of shared memory that nothing orders, the second \
labelled `this access` and the first `races with this one`: a read of data another thread wrote (or a TMA load \
delivers) before a barrier or an mbarrier wait orders them, two writes, a write over data another thread or an \
in-flight wgmma group or TMA store still reads (before its `wgmma.wait_group` or `cp.async.bulk.wait_group.read`), \
or an asynchronous read (TMA store, wgmma) of a generic write with no `fence.proxy.async` after it. The same code \
reports a thread touching an accumulator or A register of a wgmma group before the `wgmma.wait_group` that retires \
the group (undefined in PTX: the scheduling pass `complete-wgmma` exists to prevent it). On the GPU the \
result depends on timing. The interpreter orders accesses by happens-before: barriers, mbarrier arrivals and the \
waits that see their phase complete, cluster barriers; warp collectives order nothing. In global memory it reports \
blocks of different clusters accessing the same byte, one of them writing: nothing can order them (blocks of one \
cluster, which the cluster barrier may order, are not compared).\n",
    ),
    code(
        CANNOT_RUN,
        "the CPU interpreter cannot run this launch",
        "The interpreter refused the module or the launch before or while running it: the IR does not validate \
(a bug of the compiler), the arguments do not fit the kernel, or the run executed more statements than its limit \
(an endless loop).\n",
    ),
];

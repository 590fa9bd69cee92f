//! `cutec-target`: the facts of the sm_90a target (Hopper, compute capability 9.0) that more than one stage reads:
//! limits of the hardware, each stated once, with the document it comes from.
//!
//! The checker refuses a source that breaks one, the lowering and the validator refuse an IR that does, codegen
//! lays memory out by them, the manifest checks its tensor maps against them and the runtime checks launches;
//! each reads the limit here, so they cannot disagree. Limits of the compiler itself (statement budgets, nesting
//! depths) are not facts of the target and live with the stage that sets them.
//!
//! The sources: the CUDA C++ Programming Guide's table of technical specifications per compute capability
//! ("the guide's table" below), its section on compute capability 9.0, the CUDA driver API reference, and the PTX
//! ISA (version 8.x and later).
//!
//! Values are `u32`, the narrowest type every consumer widens from without loss (`u64::from`, `i64::from`).

/// The most elements a TMA box spans along each dimension of a tensor map (CUDA driver API,
/// `cuTensorMapEncodeTiled`: each `boxDim` entry is non-zero and at most 256).
pub const TMA_MAX_BOX: u32 = 256;

/// The 32-bit registers of one SM, which the warps resident on it share (the guide's table: 64 K per
/// multiprocessor): a CTA alone on the SM, all its warpgroups together, may hold at most this many, and a
/// `setmaxnreg.inc` past them waits forever.
pub const SM_REGISTERS: u32 = 65536;

/// The most registers a thread may have (the guide's table: 255 per thread).
pub const MAX_THREAD_REGISTERS: u32 = 255;

/// The most shared memory a block may use, static and dynamic together: 227 KiB (the guide's table: 227 KB per
/// thread block, of the SM's 228 KB; 1 KB per block is reserved for the system).
pub const MAX_SHARED_BYTES: u32 = 227 * 1024;

/// The most shared memory a block gets without opting in: the limit of static (`.shared`) allocations, and the
/// dynamic shared memory a function is allowed until `cudaFuncSetAttribute` (the driver's
/// `CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`) raises it (the guide, compute capability 9.0, shared memory:
/// "kernels relying on shared memory allocations over 48 KB per block ... must use dynamic shared memory ... and
/// require an explicit opt-in").
pub const MAX_STATIC_SHARED_BYTES: u32 = 48 * 1024;

/// The most threads a block has (the guide's table: 1024 threads per block).
pub const MAX_BLOCK_THREADS: u32 = 1024;

/// The most threads along x, y and z of a block (the guide's table: 1024, 1024 and 64).
pub const MAX_BLOCK_DIMS: [u32; 3] = [1024, 1024, 64];

/// The most blocks along x, y and z of a grid (the guide's table: 2^31 - 1, 65535 and 65535).
pub const MAX_GRID_DIMS: [u32; 3] = [(1 << 31) - 1, 65535, 65535];

/// The most CTAs in a cluster once the kernel allows non-portable sizes (the guide, thread block clusters: the
/// driver's `CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED`; 16 on sm_90a).
pub const MAX_CLUSTER_CTAS: u32 = 16;

/// The most CTAs in a cluster without that attribute (the guide, thread block clusters: 8, the portable size).
pub const PORTABLE_CLUSTER_CTAS: u32 = 8;

/// The fewest and the most registers per thread `setmaxnreg` sets, in steps of [`SETMAXNREG_STEP`] (PTX ISA,
/// `setmaxnreg`: a count "in the range 24 to 256 (both inclusive)" and "a multiple of 8").
pub const SETMAXNREG_MIN: u32 = 24;
/// See [`SETMAXNREG_MIN`].
pub const SETMAXNREG_MAX: u32 = 256;
/// See [`SETMAXNREG_MIN`].
pub const SETMAXNREG_STEP: u32 = 8;

/// Whether `setmaxnreg` can set `regs` registers per thread.
pub const fn setmaxnreg_takes(regs: u32) -> bool {
    SETMAXNREG_MIN <= regs && regs <= SETMAXNREG_MAX && regs.is_multiple_of(SETMAXNREG_STEP)
}

// Checked when compiling: opting in only ever raises the shared memory (and the cluster size) a block may use,
// and the largest block sharing the register file evenly stays within the registers a thread may have.
const _: () = assert!(MAX_STATIC_SHARED_BYTES < MAX_SHARED_BYTES);
const _: () = assert!(SM_REGISTERS / MAX_BLOCK_THREADS <= MAX_THREAD_REGISTERS);
const _: () = assert!(PORTABLE_CLUSTER_CTAS <= MAX_CLUSTER_CTAS);

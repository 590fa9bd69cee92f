//! The error codes of the lowering and the IR (`E0300`..`E0399`), with what `cutec explain` prints.

use cutec_diagnostics::CodeInfo;

/// A construct the checker accepts but the lowering or code generation cannot compile yet.
pub const UNSUPPORTED: &str = "E0300";
/// A register tensor (a fragment) indexed by a value not known at compile time (a warning: it still works, maybe
/// in local memory).
pub const DYNAMIC_FRAGMENT_INDEX: &str = "E0301";
/// A layout the lowering cannot turn into address arithmetic (a dynamic stride where a static one is needed...).
pub const UNSUPPORTED_LAYOUT: &str = "E0302";
/// A device function that cannot be inlined (recursion, a `return` before the end).
pub const NOT_INLINABLE: &str = "E0303";
/// `copy` between tensors of different sizes.
pub const COPY_SIZE_MISMATCH: &str = "E0304";
/// A value the lowering needs at compile time is only known at run time.
pub const NOT_CONSTANT: &str = "E0305";
/// A scheduling attribute (`pipelined`, `warp_specialized`) no pass implements yet.
pub const NOT_IMPLEMENTED: &str = "E0306";
/// The kernel's shared memory is over sm_90a's 227 KiB per block.
pub const TOO_MUCH_SHARED: &str = "E0307";
/// An access through a view of a kernel argument that may fall outside the argument, whose coordinates the
/// compiler could not follow to predicate it.
pub const UNBOUNDED_ACCESS: &str = "E0308";
/// A TMA copy (`tma_load`, `tma_store`) whose tiles the hardware cannot move: the global side is not a box of a
/// kernel argument, or the shared-memory side is not laid out as TMA writes the box.
pub const TMA_NOT_A_BOX: &str = "E0309";
/// An mbarrier operand that is not an element of a `u64` tensor in shared memory.
pub const NOT_AN_MBARRIER: &str = "E0310";
/// An operand of `gemm` that a wgmma cannot take (not in shared memory, a layout the hardware does not read,
/// an accumulator that is not a whole fragment).
pub const WGMMA_OPERAND: &str = "E0311";
/// A warpgroup-collective operation (`gemm`, `wgmma_wait`, `setmaxnreg`) under a condition that may split a
/// warpgroup.
pub const WARPGROUP_DIVERGENT: &str = "E0312";
/// The A operand of `gemm` is a register tensor that is not the wgmma's A fragment for the gemm (not made by
/// `mma.fragment_a`, a part of one, of another element type or another K).
pub const WGMMA_A_FRAGMENT: &str = "E0316";
/// `map_shared` of a tensor that is not in this CTA's shared memory.
pub const NOT_SHARED: &str = "E0317";
/// `map_shared` before any `cluster_sync()`: the other CTAs of the cluster may not have started.
pub const DSMEM_BEFORE_CLUSTER_SYNC: &str = "E0318";
/// A CTA rank (`map_shared`, `mbarrier_arrive(.., cta = r)`) not provably inside the kernel's cluster.
pub const CTA_RANK: &str = "E0319";
/// Warpgroup roles that do not fit the block: a role without threads, warpgroups without a role, a block that
/// is not whole warpgroups or not a constant, a `role` elsewhere than at the top level of a kernel body.
pub const ROLES_DO_NOT_FIT: &str = "E0313";
/// Register budgets of roles that `setmaxnreg` cannot give: not a multiple of 8 in 24..=256, or more in all
/// than the SM's register file.
pub const REGISTER_BUDGET: &str = "E0314";
/// An mbarrier tensor that is initialised but never waited on, or waited on but never arrived on.
pub const MBARRIER_NEVER_COMPLETES: &str = "E0315";
/// Unrolling a loop would make more statements than the budget (`passes::unroll::MAX_STMTS`).
pub const UNROLL_TOO_LARGE: &str = "E0320";
/// A kernel has more statements after inlining and unrolling than the budget.
pub const KERNEL_TOO_LARGE: &str = "E0321";
/// Blocks nest deeper than the lowering follows once device functions are inlined.
pub const NESTING_TOO_DEEP: &str = "E0322";
/// A constant index outside a register tensor (after unrolling).
pub const FRAGMENT_INDEX: &str = "E0323";
/// A schedule the scheduling passes cannot write (`pipelined`, `warp_specialized`, `tma_load` without `bar`).
pub const SCHEDULE: &str = "E0324";
/// A `map` function of `store` that computes from more than its argument (a thread index, a shuffle, a barrier).
pub const MAP_NOT_ELEMENTWISE: &str = "E0325";
/// `store(.., map = f, with = x)` whose spare warps read `x` one tile later, in a kernel that writes `x`'s argument.
pub const MAP_OPERAND_WRITTEN: &str = "E0326";
/// An mbarrier's arrival count or expected transaction bytes outside `0..2^20` (`check-operands`).
pub const MBARRIER_OPERAND: &str = "E0330";
/// A named barrier's id outside 1..=15, or a thread count that is not a constant multiple of 32 within the block.
pub const NAMED_BARRIER: &str = "E0331";
/// A multicast mask with no cluster, no CTA, or a CTA past the cluster.
pub const MULTICAST_MASK: &str = "E0332";
/// A role's register budget below the registers its wgmma accumulator keeps live.
pub const ROLE_REGISTERS: &str = "E0333";
/// An mbarrier wait that never returns: arrivals are missing (`check-protocol`).
pub const PROTOCOL_DEADLOCK: &str = "E0340";
/// A wait whose parity names another phase than the one the data is in.
pub const PROTOCOL_PARITY: &str = "E0341";
/// Transaction bytes that do not match a phase's `expect_tx`.
pub const PROTOCOL_BYTES: &str = "E0342";
/// A CTA that exits while a load or an arrival of its cluster may still land in it.
pub const PROTOCOL_EXIT: &str = "E0343";
/// An mbarrier used before its init, or arrived on more than its count.
pub const PROTOCOL_MISUSE: &str = "E0344";
/// A ring's stage that may be refilled while a wgmma group still reads it (`check-schedule`).
pub const STAGE_IN_USE: &str = "E0346";
/// A generic-proxy access to a ring's tile, which TMA (the async proxy) fills (`check-schedule`).
pub const RING_TILE_WRITE: &str = "E0347";
/// A generic write to shared memory that reaches an async-proxy read without `fence.proxy.async` (`check-schedule`).
pub const PROXY_FENCE: &str = "E0349";
/// An access to a tile before any wait on the mbarrier of the TMA load that writes it (`check-schedule`).
pub const TMA_NOT_LANDED: &str = "E0350";
/// A `barrier_sync` whose id may be one of the compiler's named barriers (`check-operands`).
pub const BARRIER_ID_TAKEN: &str = "E0348";
/// A warning: the protocol check could not follow a kernel that uses mbarriers, so it is not proved.
pub const PROTOCOL_UNCHECKED: &str = "E0345";
/// The IR failed validation: a compiler bug.
pub const INTERNAL: &str = "E0399";

pub const CODES: &[CodeInfo] = &[
    CodeInfo {
        code: UNSUPPORTED,
        title: "not supported yet",
        explanation: "The program is valid, but this construct cannot be compiled to PTX yet. The front end \
accepts the whole language; code generation compiles global, shared and register tensors of the types `int`, \
`i32`, `i64`, `f16`, `bf16`, `f32`, `f64` and `bool`, the whole layout algebra and swizzles, tiling, partitioning \
and slicing, `copy`, `fill` and `store`, loops and branches, most math, warp shuffles and `sync_threads`, and \
Hopper's operations written by hand: TMA copies (`tma_load(.., bar = b)` with multicast, `tma_store`), \
mbarriers, `elect_one`, `setmaxnreg`, warpgroup `role`s, `gemm` with one m64nNk16 wgmma atom per warpgroup (A \
from shared memory or registers), `stmatrix` epilogues, and clusters (launches, `cluster_sync`, `map_shared`). \
What it does not compile yet includes the other integer types and the fp8 types (`e4m3`, `e5m2`), tiled MMAs \
over several warpgroups, `tma_load` without its mbarrier, the `pipelined` and `warp_specialized` schedules, \
`make_identity_tensor`, `sync_warp`, `log`, `log2` and `erf`. The book's page \"What works today\" (book/src/reference/support.md), generated by running the \
compiler, lists every builtin and type with what `cutec build` makes of it. Rewrite the code with what is \
supported, or wait for a later version.\n",
    },
    CodeInfo {
        code: DYNAMIC_FRAGMENT_INDEX,
        title: "register tensor indexed at run time",
        explanation: "A register tensor (made by `make_fragment_like` or `make_tensor<_, rmem>`) is sure to live in \
registers only if every index into it is known at compile time: registers cannot be addressed at run time, so \
ptxas may place a tensor indexed with a run-time value in local memory (off-chip, much slower), unless it can \
remove the run-time indexing itself. Index it with constants or with the variable of a loop whose bounds are \
constants, which the compiler unrolls fully (say `unroll` to make it explicit):\n\n    for i in 0..size(frag) \
unroll { frag[i] = 0.0; }",
    },
    CodeInfo {
        code: UNSUPPORTED_LAYOUT,
        title: "layout not supported yet",
        explanation: "The layout of this tensor cannot be turned into address arithmetic yet. v0 supports layouts \
whose strides are static except in the modes of kernel parameters (dynamic dimensions), and slices or tiles of \
them. Make the offending shape or stride a compile-time constant.",
    },
    CodeInfo {
        code: NOT_INLINABLE,
        title: "device function cannot be inlined",
        explanation: "Device functions are inlined into the kernel that calls them. A function that calls itself, \
directly or not, cannot be inlined, and v0 requires `return` to be the last statement of a function. Restructure \
the function so that it returns at its end, for example by assigning to a `let mut` result.",
    },
    CodeInfo {
        code: COPY_SIZE_MISMATCH,
        title: "copy between tensors of different sizes",
        explanation: "`copy(src, dst)` copies element i of `src` to element i of `dst` for every i: both tensors \
must have the same number of elements. Slice or tile them so their sizes agree.",
    },
    CodeInfo {
        code: NOT_CONSTANT,
        title: "value must be known at compile time",
        explanation: "This value decides the shape of the generated code (a tile size, a layout, the size of a \
register or shared-memory tensor), so it must be a compile-time constant: a literal, a `const`, a const \
generic parameter, or arithmetic on them.",
    },
    CodeInfo {
        code: NOT_IMPLEMENTED,
        title: "transformation not implemented yet",
        explanation: "The program asks for a transformation that no pass of the pipeline implements yet; the \
compiler reports it instead of ignoring the request. No pass of this version reports it: the scheduling passes \
implement `pipelined(stages = S)` and `warp_specialized`, and report what they cannot schedule as E0324.",
    },
    CodeInfo {
        code: TOO_MUCH_SHARED,
        title: "shared memory over 227 KiB",
        explanation: "A block of sm_90a may use at most 227 KiB (232448 bytes) of shared memory. Up to 48 KiB the \
compiler declares it statically; past that it places every allocation in dynamic shared memory and the manifest \
asks the launch for it (`launch.smem_bytes`). The message gives the kernel's total, each `make_tensor<_, smem>` \
aligned as it asks (swizzled tiles copied by TMA are aligned to their swizzle's period); the label is at the \
allocation that goes over.\n\n    let s = make_tensor<f32, smem>((256, 256):(256, 1));   // 256 KiB: error\n",
    },
    CodeInfo {
        code: UNBOUNDED_ACCESS,
        title: "access that may fall outside its tensor, not predicable",
        explanation: "Every access through a view of a kernel argument (a tile of `local_tile`, a partition of \
`local_partition`, a slice) must stay inside that argument. Where the compiler cannot prove it does (a tile of a \
tensor with dynamic extents may cross the edge), it predicates the access: a load outside gives 0, a store \
outside is skipped. To predicate, it follows each element's coordinates in the argument through the operations \
that made the view; this error means an operation lost them (it merged modes of the argument into one, for \
example by composing with a layout that walks across rows), or that an access is outside the tensor whatever \
the arguments. Make the view with `local_tile`, `local_partition`, slicing, or compositions that keep the \
argument's modes apart, or state that the tiles divide the tensor with a requirement the runtime checks at \
launch:\n\n    static_assert(M % 128 == 0, \"M must be a multiple of the tile\");\n",
    },
    CodeInfo {
        code: TMA_NOT_A_BOX,
        title: "a TMA copy the hardware cannot do",
        explanation: "`tma_load(src, dst, bar = b)` and `tma_store(src, dst)` become one `cp.async.bulk.tensor` \
instruction, which moves a *box* described by a tensor map the compiler derives from the two tensors: the global \
side must be a tile of a kernel argument whose elements form a box of at most 256 elements along each mode of \
the argument (a tile made by `local_tile` and slicing), the argument's modes must be single integers (not \
nested) with one of stride 1, and the box's innermost extent must be a multiple of 16 bytes. The shared-memory \
side must hold the box exactly as TMA writes it: the innermost mode of the box contiguous, the other modes in \
order, with no padding, and swizzled by one of the swizzles TMA knows (`SW32_*`, `SW64_*`, `SW128_*`, whose rows \
are then exactly 32, 64 or 128 bytes); its start must be aligned to 128 bytes (to the swizzle's 256, 512 or 1024 \
bytes when swizzled). `tma_load(src, layout)`, the form the scheduling passes pipeline, copies a tile wider than \
its swizzle's rows as several boxes one row wide (an N-major tile of 256 `bf16` columns: 4 boxes of 64), each \
checked like a tile, so each box's elements must be consecutive in the layout: stack an MN-major tile's atoms \
along K first, `tile_to_shape(SW128_MN<bf16>, (BN, BK), (2, 1))`. The message names the first element where the \
two sides disagree.\n\n    let s = \
make_tensor<bf16, smem>(tile_to_shape(SW128_K<bf16>, (128, 64)));\n    tma_load(local_tile(a, (128, 64), \
(block_idx.x, k)), s, bar = full[0]);\n",
    },
    CodeInfo {
        code: NOT_AN_MBARRIER,
        title: "not an mbarrier",
        explanation: "The mbarrier operations (`mbarrier_init`, `mbarrier_arrive`, `mbarrier_arrive_expect_tx`, \
`mbarrier_wait`, and `tma_load`'s `bar =`) take an mbarrier: an element of a `u64` tensor in shared memory, \
written as an index expression, such as `bars[s]`.\n\n    let bars = make_tensor<u64, smem>(STAGES);\n    \
mbarrier_init(bars[0], 1);\n",
    },
    CodeInfo {
        code: WGMMA_OPERAND,
        title: "an operand a wgmma cannot take",
        explanation: "`gemm(mma, a, b, acc)` becomes one `wgmma.mma_async` per k-step of 16 elements. `a` (64 x BK) \
and `b` (N x BK) must be `bf16` or `f16` tensors in shared memory laid out as the hardware reads them: tiles of \
CuTe's wgmma atoms (`SW128_K<bf16>`, `SW64_K`, `SW32_K`, their `_MN` forms), which the compiler recognises by \
matching the layout element by element, and from which it derives the matrix descriptors. Their start must be \
aligned to the swizzle's period (1024 bytes for 128-byte swizzles; the allocation is aligned for you, a slice \
must start at a multiple). `a` may instead be in registers, as a `mma.fragment_a((64, BK))` (E0316 says \
which register tensors qualify). `acc` must be the whole accumulator made by `mma.fragment_c((64, N))`.\n\n    \
let sa = \
make_tensor<bf16, smem>(tile_to_shape(SW128_K<bf16>, (64, 64)));\n",
    },
    CodeInfo {
        code: WARPGROUP_DIVERGENT,
        title: "a collective operation some threads of its group may skip",
        explanation: "Some instructions are executed by a whole group of threads together (`.sync.aligned`): \
`gemm` (its `wgmma.mma_async` and fences), `wgmma_wait` and `setmaxnreg` (and a role's `registers`) by the 128 \
threads of a warpgroup; `stmatrix`, `elect_one()`, the warp shuffles and named barriers (`barrier_sync`) by the \
32 threads of a warp; `sync_threads()` and `cluster_sync()` by every thread of the CTA. If some threads of the \
group skip one, the kernel hangs or computes garbage. The compiler proves, on the IR after every pass, that \
each of them is executed by whole groups: a condition (of an `if`, a `while`, or the bounds of a `for`) on \
`thread_idx.x` is fine when it only looks at `thread_idx.x / 128` for a warpgroup (`/ 32` for a warp), or a \
multiple, or a shift, which is the same in a whole group; a condition on `thread_idx.x % 128`, `lane_idx`, \
`elect_one()`, a value loaded from memory or a shuffle's result is not, and neither is a variable that some \
threads of a group assign under such a condition. A `return` under such a condition earlier in the kernel, or \
a `break` or `continue` under one anywhere in an enclosing loop's body, leaves some threads out just the same, \
and so does a block that is not whole groups (a warpgroup needs a one-dimensional block of a multiple of 128 \
threads). The secondary label shows the condition, the bounds, the jump or the value.\n\n    \
let wg = thread_idx.x / 128;\n    if wg == 1 { gemm(mma, sa, sb, acc); }          // fine\n    \
if thread_idx.x == 0 { gemm(mma, sa, sb, acc); }  // error\n",
    },
    CodeInfo {
        code: WGMMA_A_FRAGMENT,
        title: "a register A operand that is not the wgmma's A fragment",
        explanation: "With A in registers, `gemm(mma, fa, sb, acc)` passes each thread's values of `fa` to \
`wgmma.mma_async` as they are: 4 registers of two `bf16` (or `f16`) per k-step of 16, in the order the hardware \
assigns to that thread (CuTe's `ALayout_64x16`). So `fa` must be a whole register fragment laid out that way for \
a 64 x K tile, with K the K of `sb` and the mma's input type: made by `mma.fragment_a((64, K))` and filled \
through `mma.partition_a` (`copy(mma.partition_a(sa), fa)`), or made by `make_fragment_like` of a whole \
`fragment_a` or `fragment_c` (the accumulator of a 64 x K product has the same layout: `store(acc, p)` converts \
it into the A operand of the next gemm). A register tensor made otherwise, a slice of a fragment, or a fragment \
for another K is refused.\n\n    let fa = mma.fragment_a((64, 64));\n    copy(mma.partition_a(sa), fa);\n    \
gemm(mma, fa, sb, acc, accumulate = false);   // sb: (N, 64) in shared memory\n",
    },
    CodeInfo {
        code: NOT_SHARED,
        title: "`map_shared` of a tensor outside this CTA's shared memory",
        explanation: "`map_shared(t, cta)` gives the same shared-memory tensor in another CTA of the cluster \
(distributed shared memory, `mapa.shared::cluster`): every CTA of a cluster lays out its shared memory alike, so \
the address of `t`'s base in this CTA names the same tensor there. `t` must be a tensor of this CTA's shared \
memory (`make_tensor<T, smem>(..)` or a slice of one), not a global tensor, a register fragment, or a tensor \
already mapped to another CTA.\n\n    let s = make_tensor<f32, smem>(64);\n    let peer = \
map_shared(s, block_rank_in_cluster ^ 1);   // the other CTA's `s`\n",
    },
    CodeInfo {
        code: DSMEM_BEFORE_CLUSTER_SYNC,
        title: "another CTA's shared memory mapped before the cluster has synchronised",
        explanation: "The CTAs of a cluster are scheduled together, but one may start before another: until a CTA \
has started, its shared memory is not its own, and a peer's write into it through `map_shared` is lost or \
lands in another kernel's memory. `cluster_sync()` returns only once every CTA of the cluster has arrived, so \
each has started; the compiler asks for one before any `map_shared` in the kernel, in program order, at the top \
level of the kernel's body (one in a loop may run zero times, one under a condition not at all). A second \
`cluster_sync()` after the accesses orders them before the reads of the other CTA, and keeps a CTA from leaving \
while its peers may still write into it.\n\n    cluster_sync();                                   // every CTA has started\n    \
let peer = map_shared(inbox, block_rank_in_cluster ^ 1);\n    peer[thread_idx.x] = mine;\n    cluster_sync();   \
                                // the writes are done and visible\n",
    },
    CodeInfo {
        code: CTA_RANK,
        title: "a CTA rank that may be outside the cluster",
        explanation: "`map_shared(t, r)` and `mbarrier_arrive(bar, cta = r)` name the CTA of rank `r` in the \
cluster. The hardware does not report a rank outside the cluster: `mapa` of it is undefined, and the access \
lands anywhere. So the compiler asks that `0 <= r < cluster size` be provable where the rank is used: a \
constant, a loop variable of `for r in 0..CLUSTER unroll`, or `block_rank_in_cluster` (with `^ k` for a \
partner). The kernel must also be launched in clusters (`launch(.., cluster = (2))`).\n\n    \
let peer = map_shared(s, block_rank_in_cluster ^ 1);   // fine in clusters of 2\n    \
let far = map_shared(s, thread_idx.x);                 // error: not bounded by the cluster\n",
    },
    CodeInfo {
        code: ROLES_DO_NOT_FIT,
        title: "warpgroup roles that do not fit the block",
        explanation: "`role NAME(warpgroups = N, registers = R) as RANK { .. }` statements at the top level of a \
kernel body split the block into warpgroups of 128 threads (warpgroup `w` is `thread_idx.x / 128 == w`): the \
roles take consecutive warpgroups from 0, in source order, and each runs its body on its own warpgroups only. \
For that, the block must be a compile-time constant, one-dimensional, whole number of warpgroups; every role \
needs at least one warpgroup that the block has (a role past the end of the block would have no threads); and \
every warpgroup needs a role (one without would run none, and hold registers the others cannot have). A `role` \
inside an `if`, a loop, a block or a device function is refused as well: the split is made once, at the top.\n\n    \
kernel k(..) launch(grid = (132), block = (384)) {\n        role producer(registers = 40) { .. }             // \
warpgroup 0\n        role consumer(warpgroups = 2, registers = 232) as wg { .. }  // warpgroups 1 and 2\n    }\n",
    },
    CodeInfo {
        code: REGISTER_BUDGET,
        title: "register budgets the SM cannot give",
        explanation: "A role's `registers = R` becomes `setmaxnreg` at the start of its body: R must be a multiple \
of 8 from 24 to 256. The budgets must also fit the SM's register file of 65536 registers: the sum over the \
roles of R x 128 threads x their warpgroups, where a role without `registers` keeps the budget at entry (65536 \
divided by the block's threads, rounded down to a multiple of 8, at most 248). `setmaxnreg.inc` waits until the \
registers it asks for are free, so a budget past the register file blocks forever. Give back registers in the \
roles that need few (a TMA producer runs with 40) to give them to the others. The same sum is proved over the \
IR after the scheduling passes (`check-operands`), each warpgroup counting the largest budget of the regions it \
runs, so the roles `warp_specialized` writes are held to it too:\n\n    \
role producer(registers = 40) { .. }                         // 40 x 128 x 1 =  5120\n    \
role consumer(warpgroups = 2, registers = 232) as wg { .. }  // 232 x 128 x 2 = 59392, 64512 in all\n",
    },
    CodeInfo {
        code: MBARRIER_NEVER_COMPLETES,
        title: "an mbarrier that cannot complete",
        explanation: "An mbarrier orders the threads that arrive on it (`mbarrier_arrive`, \
`mbarrier_arrive_expect_tx`, the bytes of `tma_load(.., bar = b)`) before the threads that wait on it \
(`mbarrier_wait`). The compiler checks each shared `u64` tensor used as mbarriers as a whole (its indices are \
run-time values): if it is initialised but no thread waits on any of its elements, it orders nothing and is \
likely a mistake (the error is at its `mbarrier_init`); if threads wait on it but nothing ever arrives on it, \
the wait never completes and the kernel hangs (the error is at the wait).\n\n    \
mbarrier_init(full[s], 1);\n    mbarrier_arrive_expect_tx(full[s], bytes);   // the producer\n    \
tma_load(g, sa, bar = full[s]);\n    mbarrier_wait(full[s], phase);               // the consumers\n",
    },
    CodeInfo {
        code: UNROLL_TOO_LARGE,
        title: "loop too large to unroll",
        explanation: "A loop marked `unroll` (or `unroll(N)`) is copied once per iteration, and the copies make more statements than the compiler's budget of 32768 per kernel (nested statements count, and so do the copies made by unrolling an inner loop). Past that size the back end takes minutes and the code no longer fits the instruction cache, so the compiler stops rather than hang. The message gives the number of copies and the size of the body. Unroll fewer iterations (`unroll(4)`), unroll only the inner loop, or drop `unroll`:\n\n    for i in 0..100000 unroll { ... }       // error: 100000 copies\n    for i in 0..100000 unroll(8) { ... }    // 8 copies per trip of the loop\n",
    },
    CodeInfo {
        code: KERNEL_TOO_LARGE,
        title: "kernel too large",
        explanation: "The kernel has more than 32768 statements once device functions are inlined, copies expanded and loops marked `unroll` unrolled (a source statement makes a few). The compiler counts before it does the work: a call is refused when the statements of the function, with those of every function it calls, would take the kernel past the budget, and a `copy`, `store` or `fill` when its loads and stores would (a tile copy makes one per element, or per vector when the layouts allow). Code that large takes the back end minutes and does not fit the instruction cache. Put repeated work in a loop, or split the kernel.",
    },
    CodeInfo {
        code: NESTING_TOO_DEEP,
        title: "blocks nest too deeply after inlining",
        explanation: "Device functions are inlined where they are called, so a call from deep inside nested blocks \
(`if`, `for`, `while`, `{ }`) puts the function's own blocks deeper still. Past 512 levels, counted through every \
inlined call, the compiler stops rather than risk overflowing its stack. The label is at the first block past \
the limit. Flatten the nesting (early `return`s are not available, but conditions can be combined with `&&`), or \
call the function from a shallower place:\n\n    if a { if b { if c { f(x); } } }   // the same as\n    \
if a && b && c { f(x); }\n",
    },
    CodeInfo {
        code: FRAGMENT_INDEX,
        title: "an index outside a register tensor",
        explanation: "A register tensor (`mma.fragment_c`, `make_fragment_like`, `make_tensor<T, rmem>`) has a \
fixed number of elements, and an index past them is not an error the hardware reports: it reads or writes \
another register, or lets the optimiser remove the code around it. The compiler checks every index it knows \
once the loops around it are unrolled; the label is at the access, and the message says which elements it \
touches and how many the tensor has.\n\n    let r = make_fragment_like<f32>(x);   // 4 elements\n    \
for i in 0..5 { s += r[i]; }            // error: element 4\n",
    },
    CodeInfo {
        code: MAP_NOT_ELEMENTWISE,
        title: "a `map` function that is not elementwise",
        explanation: "`store(acc, tile, map = f)` stores `f` of each converted value, and the compiler picks the \
threads that compute it: a warpgroup over its part of the tile, or the producer warpgroup's spare warps beside the \
next mainloop. So `f` must compute its result from its argument alone, with arithmetic, conversions and the math \
builtins (`exp`, `tanh`, `min`, `select`, ...), and call only functions that do the same. A thread or block \
index, a shuffle, a barrier or any other builtin would give a result that depends on which thread applied it:\n\n\
    fn shifted(v: f32) -> f32 {\n        return v + lane_idx as f32;   // error: `lane_idx` is not a function of `v`\n    }\n\n\
Compute what depends on the thread in the kernel, on the accumulator, before the `store`.",
    },
    CodeInfo {
        code: MAP_OPERAND_WRITTEN,
        title: "a `map` operand the kernel writes, read one tile later",
        explanation: "`store(acc, tile, map = f, with = x)` stores `f(v, x[i])` for each converted value `v` and the \
element `x[i]` at the same coordinate of the tile. At the top level of a `persistent` `warp_specialized` kernel the \
producer warpgroup's spare warps apply `f` while the consumers run the next tile's mainloop, so they read `x` \
later than the program says. That is only the same when nothing writes `x` in between: the compiler refuses a \
global `x` whose argument the kernel writes anywhere.\n\n\
    store(acc, local_tile(c, (BM, BN), (block_idx.x, block_idx.y)), map = add, with = local_tile(c2, (BM, BN), \
(block_idx.x, block_idx.y)));\n    ...\n    store(acc, local_tile(c2, (BM, BN), (block_idx.x, block_idx.y)));   // error: \
`c2` is written\n\n\
Pass a tensor the kernel only reads; an `x` in shared memory or registers is applied by the consumers' \
warpgroups themselves, in program order.",
    },
    CodeInfo {
        code: SCHEDULE,
        title: "a schedule the compiler cannot write",
        explanation: "The scheduling passes write the asynchronous parts of a Hopper kernel from a plain program: \
`tma_load(view, layout)` without `bar` gets an mbarrier and is complete before the tile is used; a `for` loop \
marked `pipelined(stages = S)` gets a ring of S shared-memory stages with full and empty mbarriers, its copies \
issued S - 1 iterations ahead; a `warp_specialized` kernel gets a producer warpgroup that issues the copies and \
consumer warpgroups that run everything else. This error says which of their conditions the program does not \
meet, for example:\n\n    for k in 0..n pipelined(stages = 1) { .. }    // error: a ring needs 2 stages or more\n\n\
The conditions: a pipelined loop has `tma_load`s at the top level of its body (not under a condition), whose \
coordinates are computed from the loop's variable and values fixed before the loop, and at least 2 stages; every \
thread of the block reaches it and runs the same iterations (its bounds are proved uniform); the ring must fit \
in shared memory; the copies into one tile (a tile wider than a TMA box comes as several, one per box) fill it \
exactly once; a `multicast = n` copy goes to every CTA of the cluster, and its tile is proved the same in \
each (it depends on no thread index, loaded value or `block_idx` along a dimension the cluster spans), inside a \
pipelined loop; a block is one-dimensional where a pass picks a thread to issue copies; a \
`warp_specialized` kernel has its pipelined loops at the top level of its body or of one loop there (each \
gets a ring of its own, which the producer fills in program order), a block of 128 threads per consumer \
warpgroup plus 128 for the producer, and no `sync_threads` after its first loop begins; in a \
`warp_specialized` kernel the consumers' work (what touches the mma's fragments, synchronizes, or is computed \
from those) runs on the consumer warpgroups, and a statement beside the pipelined loop that writes memory per \
thread runs on every thread, the producer's included, so it may use only values the producer has too (the \
kernel's arguments, indices, loads of global memory, variables only such statements write), and the pipelined \
loop's body writes no memory per thread; a `tma_load` without \
`bar` cannot stand inside a `role`, which schedules by hand. A `persistent` kernel runs its body once per tile \
in a loop, so its body has no `return`, makes no mbarriers, allocates no shared memory if it is \
`warp_specialized`, has no `role`s written by hand, and its cluster spans x and y only. Write the schedule by \
hand (`tma_load(.., bar = b)`, `role`, a loop over tiles) where the passes cannot.\n",
    },
    CodeInfo {
        code: MBARRIER_OPERAND,
        title: "an mbarrier count out of range",
        explanation: "An mbarrier counts arrivals and transaction bytes, and the hardware defines the range of \
both (PTX ISA, `mbarrier.init` and `mbarrier.expect_tx`): `mbarrier_init(bar, count)` takes a count from 1 to \
2^20 - 1, and `mbarrier_arrive_expect_tx(bar, bytes)` bytes from 0 to 2^20 - 1. Outside them the GPU reports \
nothing: the barrier's phase never completes (the CTA hangs) or completes early. The compiler proves the range of \
the operand from how it is computed (constants, thread and block indices, loop bounds); a value it cannot bound, \
such as a kernel argument, is refused as well. Compute the count from constants, or bound it:\n\n    \
mbarrier_init(bar[0], 0);                     // error: 0 arrivals never complete a phase\n    \
mbarrier_init(bar[0], 8 * CLUSTER_M);         // ok\n    \
mbarrier_arrive_expect_tx(bar[0], BM * BK * 2); // ok: the bytes of the boxes\n",
    },
    CodeInfo {
        code: NAMED_BARRIER,
        title: "a named barrier out of range",
        explanation: "`barrier_sync(id, threads)` is `bar.sync id, threads`: the CTA has 16 barriers, and barrier 0 \
is the one `sync_threads()` uses, so `id` is 1 to 15; `threads` is the number of threads that must arrive before \
any goes on, a whole number of warps (a multiple of 32) no larger than the block. A barrier waiting for more \
threads than the block has never opens. The compiler proves the id's range from how it is computed (in a role, \
`wg + 1` is 1 or 2 for the warpgroups 1 and 2); the thread count must be a constant:\n\n    \
barrier_sync(thread_idx.x, 128);   // error: the id may be 0 or past 15\n    \
barrier_sync(1, 256);              // error in a block of 128 threads\n    \
barrier_sync(wg + 1, 128);         // ok in a role of two warpgroups\n",
    },
    CodeInfo {
        code: MULTICAST_MASK,
        title: "a multicast mask outside the cluster",
        explanation: "`tma_load(.., multicast = mask)` copies the box into the shared memory of every CTA of the \
cluster whose rank is a bit of the mask, and signals each one's mbarrier. A mask needs a cluster (`cluster = (2, \
1)` in `launch`), at least one bit, and no bit at or past the cluster's size: a CTA named by no bit waits for \
bytes that never come, and a bit past the cluster is undefined. The compiler proves the mask's range:\n\n    \
tma_load(gb, sb, bar = full[s], multicast = (1 << CLUSTER_M) - 1);   // ok: every CTA of the cluster\n    \
tma_load(gb, sb, bar = full[s], multicast = 0b111);   // error with a cluster of 2\n",
    },
    CodeInfo {
        code: ROLE_REGISTERS,
        title: "a role with fewer registers than its accumulator",
        explanation: "`role name(registers = R)` sets the warpgroup's registers per thread with `setmaxnreg`. A wgmma \
accumulator of m64nN in f32 keeps N / 2 values per thread in registers for the whole main loop, so a budget below \
that cannot hold it: ptxas ignores the `setmaxnreg` (advisory C7507) and the role runs with another budget than \
the one the program states, which can break the sum of the roles' budgets that E0314 checked. Accumulators that \
one loop adds to on each iteration are all live across it, so they count together (two 64x256 accumulators in the \
consumers of a warp-specialized kernel take 256 registers, more than the 232 two consumer warpgroups get; ptxas \
would spill and serialize the wgmmas). Give the role at least the accumulators' registers (and room for addresses \
and the epilogue):\n\n    \
role consumer(registers = 24) { .. gemm(mma, a, b, acc) .. }    // error: a 64x256 accumulator takes 128\n    \
role consumer(registers = 232) { .. }                           // ok\n",
    },
    CodeInfo {
        code: PROTOCOL_DEADLOCK,
        title: "an mbarrier wait that never returns",
        explanation: "The compiler runs each kernel's synchronisation (mbarriers, TMA loads, named and cluster \
barriers) for small trip counts of its loops, every thread of every CTA of a cluster, and finds a launch where \
every thread still running is blocked: the wait in the error waits for a phase whose arrivals never come. The \
notes give the launch (the parameters' values), the threads, the barrier's state (arrivals of its count, bytes) \
and what the other threads wait for. On the GPU the kernel hangs. The usual causes are an init count larger \
than the threads that arrive, or a stage that is never released:\n\n    \
mbarrier_init(bar[0], 2);     // error: only one thread arrives\n    \
mbarrier_init(bar[0], 1);     // ok\n\n    \
mbarrier_wait(empty[s], ph ^ 1);  // the producer waits for a release...\n    \
mbarrier_arrive(empty[s]);        // ...that every consumer warp must make once it is done with the stage\n",
    },
    CodeInfo {
        code: PROTOCOL_PARITY,
        title: "an mbarrier wait on the wrong phase",
        explanation: "`mbarrier_wait(bar, parity)` returns once the barrier's phase of that parity has completed: \
it tells the current phase from the previous one only. A fresh barrier is in phase 0, so a wait for parity 1 \
returns at once (the producer's first wait on an empty slot relies on it), and a wait for parity 0 returns once \
phase 0 completes. The compiler follows each thread's waits and reports one that returns for a phase it does \
not mean: at once, before any data of a barrier that TMA loads signal; never, because the barrier went a whole \
phase past it; or two phases late (the data it guards was overwritten). In a ring of S stages, iteration i waits \
on stage i % S with parity (i / S) & 1:\n\n    \
mbarrier_wait(full[s], (it / STAGES + 1) & 1);   // error: returns before the stage's bytes land\n    \
mbarrier_wait(full[s], (it / STAGES) & 1);       // ok\n",
    },
    CodeInfo {
        code: PROTOCOL_BYTES,
        title: "transaction bytes that do not match `expect_tx`",
        explanation: "A phase of an mbarrier completes when all its arrivals are in and every byte that \
`mbarrier_arrive_expect_tx` announced has landed; each `tma_load(.., bar = b)` brings the bytes of its box \
(every CTA of a multicast mask counts them). If the phase expects fewer bytes than its loads bring, it completes \
early and the waiting threads read a tile that is still landing; if it expects more, it never completes. The \
compiler knows each box's size and counts the bytes of each phase; the error is at the wait, the load or the \
`expect_tx`:\n\n    \
mbarrier_arrive_expect_tx(bar[0], BM * BN * 2);   // error: the f32 box is BM * BN * 4 bytes\n    \
mbarrier_arrive_expect_tx(bar[0], BM * BN * 4);   // ok\n",
    },
    CodeInfo {
        code: PROTOCOL_EXIT,
        title: "a CTA that exits while its cluster may still write into it",
        explanation: "A CTA's shared memory is released when its threads exit. A TMA load still landing in it, a \
multicast from a peer CTA, or a peer's `mbarrier_arrive(.., cta = r)` then writes into memory that is no longer \
the CTA's: undefined behaviour the GPU does not report. The compiler runs the cluster and reports the load or \
arrival that may land after its target exited. Wait for every load into the CTA, and end a kernel whose CTAs \
write into each other with `cluster_sync()`:\n\n    \
mbarrier_arrive(empty[s], cta = r);   // a consumer releases the stage in every CTA...\n    \
cluster_sync();                       // ...and no CTA leaves before the others are done with it\n",
    },
    CodeInfo {
        code: PROTOCOL_MISUSE,
        title: "an mbarrier used outside its protocol",
        explanation: "An mbarrier must be initialised (`mbarrier_init`, by one thread, then a barrier that makes \
the init visible: `sync_threads()`, or `cluster_sync()` when other CTAs arrive on it or multicast to it) before \
any thread arrives on it, a load signals it or a thread waits on it; and a phase takes exactly its count of \
arrivals. The compiler runs the kernel and reports an arrival or load on a barrier not yet initialised, or an \
arrival past the count of a phase that waits only for bytes:\n\n    \
if thread_idx.x == 0 { mbarrier_init(bar[0], 1); }\n    \
sync_threads();                      // the init is visible to every thread\n    \
mbarrier_arrive(bar[0]);             // ok\n",
    },
    CodeInfo {
        code: PROTOCOL_UNCHECKED,
        title: "the mbarrier protocol cannot be checked",
        explanation: "The compiler runs the synchronisation of every kernel that uses mbarriers, named barriers or \
cluster barriers for small trip counts (E0340..E0344). It could not follow this one, and says why: a condition \
or a loop bound computed from data loaded from memory, a barrier address it cannot compute, a TMA box it does \
not know, threads that wait on each other at named or cluster barriers in a way it does not model, or more steps \
than its budget. A kernel whose protocol is not proved does not build: a wrong init count or parity would show \
as a hang on the GPU, or as wrong results. Compute loop bounds and barrier indices from dimensions, constants and \
thread indices rather than from loaded values. Where the control really depends on data, mark the kernel \
`unchecked_protocol` (after its launch clause): it then builds, with this code as a warning.\n\n    \
kernel k(..) launch(grid = (1), block = (32)) unchecked_protocol {\n        \
let rounds = n[0];                   // from memory: the check cannot follow the loop\n        \
..\n    }\n",
    },
    CodeInfo {
        code: STAGE_IN_USE,
        title: "a ring's stage may be refilled while wgmma still reads it",
        explanation: "A `pipelined` loop whose body calls `gemm` releases each stage of its ring after the `gemm` \
of the next iteration: at the end of iteration i the compiler waits until at most one wgmma group is in flight \
(`wgmma.wait_group 1`) and frees iteration i - 1's stage for the next copy. That is right only if every \
iteration commits a group of its own; an iteration that skips its `gemm` (under a condition, in an inner loop \
that may run no iteration, or after a `break`, `continue` or `return`) leaves iteration i - 1's group in flight \
while TMA overwrites the stage it reads. The compiler proves that every path through the loop body commits the \
same number of groups, at least one, and refuses the loop otherwise:\n\n    \
for k in 0..K / 64 pipelined(stages = 4) {\n        \
let ta = tma_load(ga[_, _, k], sa);\n        \
if k % 2 == 0 { gemm(mma, ta, tb, acc); }   // error: no group on odd k-tiles\n    \
}\n\nCall `gemm` on every iteration (mask what it must not add), and leave the loop only at its end.\n",
    },
    CodeInfo {
        code: RING_TILE_WRITE,
        title: "a store into a tile of a pipelined loop's ring",
        explanation: "The tiles a `pipelined` loop's `tma_load`s fill are the stages of a ring: TMA writes them \
through the asynchronous proxy, ahead of the iteration that reads them, and wgmma reads them through the same \
proxy, after the iteration has moved on. A store of the program into such a tile (`ta[i, j] = x`, `copy` into \
it) is a generic-proxy write that no wait orders against the copy landing in the stage or the group still \
reading it, and that wgmma may not see without `fence.proxy.async`. The compiler refuses every such store. \
Write your own `shared` tensor instead, or transform the data after copying it out of the stage.\n",
    },
    CodeInfo {
        code: PROXY_FENCE,
        title: "shared memory written by the threads and read by wgmma or TMA without a proxy fence",
        explanation: "Shared memory has two paths in: the threads' loads and stores go through the generic proxy, \
wgmma and TMA through the async proxy. A store is ordered before an async-proxy read of the same bytes only by \
a `fence.proxy.async` after it, by the thread that stored (PTX ISA, `fence.proxy`); a CTA barrier alone does not \
do it. Without the fence, wgmma may multiply, or a TMA store write out, what was in the tile before the stores. \
The compiler follows every path from a store into shared memory to the wgmma operands and TMA store sources it \
may reach and refuses the read that no fence separates from the store:\n\n    \
copy(ga, sa);           // the threads write the tile\n    \
fence_proxy_async();    // make the writes visible to the async proxy\n    \
sync_threads();         // then hand the tile to the warpgroup\n    \
gemm(mma, sa, sb, acc);\n",
    },
    CodeInfo {
        code: TMA_NOT_LANDED,
        title: "a tile used before the TMA load that writes it has landed",
        explanation: "`tma_load(view, tile, bar = b)` copies asynchronously: the bytes land some time later and are \
counted on the mbarrier `b`, and a thread may use the tile only after it has waited for that phase \
(`mbarrier_wait(b, phase)`). The compiler follows every path from the copy to the tile's uses (loads, stores, \
`gemm`, `tma_store`) and refuses a use that no wait on the copy's barrier precedes. (It does not tell the barriers \
of one array apart: a wait on any stage's barrier counts for the copies that signal any of them; the phases \
themselves are `check-protocol`'s.)\n\n    \
if thread_idx.x == 0 {\n        \
mbarrier_arrive_expect_tx(full[0], bytes);\n        \
tma_load(ga[_, _, k], sa, bar = full[0]);\n    \
}\n    \
mbarrier_wait(full[0], k & 1);   // without it, the gemm below races with the copy\n    \
gemm(mma, sa, sb, acc);\n",
    },
    CodeInfo {
        code: BARRIER_ID_TAKEN,
        title: "a `barrier_sync` on a named barrier the compiler uses",
        explanation: "The compiler takes named barriers for its own synchronisation from one pool per kernel, \
from id 1 up: the TMA-store epilogue one per warpgroup of the MMA, the spare warps of a persistent \
warp-specialized kernel one more. Threads that arrive at one id count together, so a `barrier_sync` of the \
program on one of those ids would complete the compiler's phases (or wait for a count they never make): \
undefined behaviour the GPU does not report. The compiler proves every `barrier_sync` id outside its own, and \
names the first free one:\n\n    \
barrier_sync(1, 256);   // error: the epilogue uses barriers 1 and 2\n    \
barrier_sync(3, 256);   // ok\n",
    },
    CodeInfo {
        code: INTERNAL,
        title: "internal compiler error: invalid IR",
        explanation: "The compiler produced intermediate code that its own validator rejects. This is a bug in \
cutec; please report it with the program that triggers it.",
    },
];

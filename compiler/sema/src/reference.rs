//! The user reference, generated from the checker's own tables so that it cannot drift: the builtin reference
//! page of the book (`book/src/reference/builtins.md`, from [`BUILTINS`] and [`TILED_MMA_METHODS`]) and the scalar
//! type tables of its types chapter (`book/src/reference/scalar-tables.md`, computed by checking one small
//! program per pair of types). The book test (`tests/suite/book/reference.rs`) compares the committed pages with
//! these functions and compiles every example they hold.
//!
//! Each builtin has a checked example ([`builtin_example`]) and a group ([`BuiltinGroup`]); both are exhaustive
//! matches over [`Builtin`], so a new builtin does not compile until it has them.

use crate::builtins::{ArgKind, BUILTINS, Builtin, BuiltinInfo, TILED_MMA_METHODS};
use crate::types::{Scalar, Type};
use crate::{CheckOutput, ModuleId, check};
use cutec_diagnostics::SourceMap;
use cutec_grammar::ast::{ItemKind, StmtKind};
use cutec_layout::LayoutOp;
use std::fmt::Write;

/// The command that rewrites the generated pages, named in their headers and in the drift tests' failures.
pub const REGENERATE: &str = "CUTEC_BLESS=1 cargo test -p cutec-tests book";

/// The sections of the builtin reference, in page order.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum BuiltinGroup {
    Indices,
    Math,
    Warp,
    Sync,
    Tensors,
    Inspect,
    Algebra,
    Swizzles,
    Hopper,
    Expert,
    CompileTime,
}

impl BuiltinGroup {
    pub const ALL: [BuiltinGroup; 11] = [
        BuiltinGroup::Indices,
        BuiltinGroup::Math,
        BuiltinGroup::Warp,
        BuiltinGroup::Sync,
        BuiltinGroup::Tensors,
        BuiltinGroup::Inspect,
        BuiltinGroup::Algebra,
        BuiltinGroup::Swizzles,
        BuiltinGroup::Hopper,
        BuiltinGroup::Expert,
        BuiltinGroup::CompileTime,
    ];

    pub fn title(self) -> &'static str {
        match self {
            BuiltinGroup::Indices => "Thread and block indices",
            BuiltinGroup::Math => "Math",
            BuiltinGroup::Warp => "Warp shuffles",
            BuiltinGroup::Sync => "Barriers",
            BuiltinGroup::Tensors => "Tensors",
            BuiltinGroup::Inspect => "Inspecting layouts and tensors",
            BuiltinGroup::Algebra => "Layout algebra",
            BuiltinGroup::Swizzles => "Swizzles",
            BuiltinGroup::Hopper => "Hopper MMA and TMA",
            BuiltinGroup::Expert => "Expert escape hatches",
            BuiltinGroup::CompileTime => "Compile time",
        }
    }

    /// One or two sentences under the section's heading.
    pub fn intro(self) -> &'static str {
        match self {
            BuiltinGroup::Indices => {
                "Values, used without a call. `Dim3` values have the fields `x`, `y` and `z`, each an `int`."
            }
            BuiltinGroup::Math => {
                "A `float` parameter takes any number and converts an integer to `f32`; a `number` result has the \
                 type of the arguments after promotion (see [Scalar types](../types.md))."
            }
            BuiltinGroup::Warp => "Exchange a register value between the lanes of the calling warp.",
            BuiltinGroup::Sync => "Every thread of the scope must reach the barrier.",
            BuiltinGroup::Tensors => {
                "Make tensors, give each CTA and thread its part of one, and move elements between them."
            }
            BuiltinGroup::Inspect => {
                "Ask a layout, tensor or tuple about its shape. The result is a compile-time constant where the \
                 layout is static."
            }
            BuiltinGroup::Algebra => {
                "CuTe's layout algebra (see [Layout algebra](../layout-algebra.md)). A shape stands for its compact \
                 column-major layout; the operations fold at compile time where their inputs are static."
            }
            BuiltinGroup::Swizzles => {
                "Constructors, used with generic arguments and without a call. The `SW*` atoms are the shared-memory \
                 layouts Hopper's TMA and wgmma expect, for element type `T`."
            }
            BuiltinGroup::Hopper => "Warpgroup MMAs and bulk copies through the Tensor Memory Accelerator.",
            BuiltinGroup::Expert => {
                "PTX-level operations for hand-written pipelines; the compiler inserts them itself for `pipelined` \
                 loops and `warp_specialized` kernels."
            }
            BuiltinGroup::CompileTime => "Checked by the checker; no code is emitted.",
        }
    }

    pub fn of(builtin: Builtin) -> BuiltinGroup {
        use Builtin as B;
        use BuiltinGroup as G;
        match builtin {
            B::ThreadIdx | B::BlockIdx | B::BlockDim | B::GridDim | B::LaneIdx | B::WarpIdx | B::BlockRankInCluster => {
                G::Indices
            }
            B::Inf
            | B::Exp
            | B::Exp2
            | B::Log
            | B::Log2
            | B::Sqrt
            | B::Rsqrt
            | B::Tanh
            | B::Erf
            | B::Abs
            | B::Min
            | B::Max
            | B::Fma
            | B::Select
            | B::CeilDiv => G::Math,
            B::ShflXor | B::ShflDown | B::ShflIdx => G::Warp,
            B::SyncThreads | B::BarrierSync | B::SyncWarp | B::ClusterSync | B::MapShared => G::Sync,
            B::Layout(LayoutOp::LocalTile | LayoutOp::LocalPartition)
            | B::MakeFragmentLike
            | B::MakeTensor
            | B::MakeIdentityTensor
            | B::Copy
            | B::Fill
            | B::Store => G::Tensors,
            B::Layout(
                LayoutOp::Size
                | LayoutOp::Rank
                | LayoutOp::Depth
                | LayoutOp::Get
                | LayoutOp::Shape
                | LayoutOp::Stride
                | LayoutOp::Cosize,
            ) => G::Inspect,
            // Every other operation of the algebra.
            B::Layout(_) => G::Algebra,
            B::Swizzle | B::Sw128K | B::Sw64K | B::Sw32K | B::Sw128Mn | B::Sw64Mn | B::Sw32Mn => G::Swizzles,
            B::Wgmma
            | B::TiledMma
            | B::TmaLoad
            | B::TmaStore
            | B::TmaStoreWait
            | B::PrefetchTensormap
            | B::Gemm
            | B::WgmmaWait => G::Hopper,
            B::FenceProxyAsync
            | B::ElectOne
            | B::Setmaxnreg
            | B::MbarrierInit
            | B::MbarrierArrive
            | B::MbarrierArriveExpectTx
            | B::MbarrierWait => G::Expert,
            B::StaticAssert => G::CompileTime,
        }
    }
}

/// The parameters and launch clause of most examples.
const HEADER: &str = "x: Tensor<f32, (128, 64):(64, 1), gmem>) launch(grid = (1), block = (128))";
const CLUSTER: &str = "x: Tensor<f32, (128, 64):(64, 1), gmem>) launch(grid = (2), block = (128), cluster = (2))";
const STORE: &str = "x: Tensor<f32, (128, 64):(64, 1), gmem>, y: Tensor<bf16, (128, 64):(64, 1), gmem>) launch(grid = (1), block = (128))";
const HOPPER: &str = "a: Tensor<bf16, (M, K):(K, 1), gmem>, b: Tensor<bf16, (N, K):(K, 1), gmem>, c: Tensor<bf16, (M, \
                      N):(N, 1), gmem>) launch(grid = (ceil_div(M, 128), ceil_div(N, 128)), block = (384)) \
                      warp_specialized";
const TMA_STORE: &str = "c: Tensor<bf16, (M, N):(N, 1), gmem>) launch(grid = (ceil_div(M, 64), ceil_div(N, 64)), \
                         block = (128))";

/// A checked example of `builtin`: a whole kernel, compiled by the book test and built by the support test.
pub fn builtin_example(builtin: Builtin) -> String {
    let (header, body) = example_parts(builtin);
    let name = info_name(builtin).to_ascii_lowercase();
    format!("kernel uses_{name}({header} {{\n{body}}}\n")
}

fn info_name(builtin: Builtin) -> &'static str {
    crate::builtins::info(builtin).name
}

/// The parameters and launch clause (after the kernel's name and `(`), and the body of each example.
fn example_parts(builtin: Builtin) -> (&'static str, &'static str) {
    use Builtin as B;
    match builtin {
        B::ThreadIdx => (HEADER, "    x[0, thread_idx.x % 64] = 0.0;\n"),
        B::BlockIdx => (HEADER, "    x[block_idx.x, 0] = 0.0;\n"),
        B::BlockDim => (HEADER, "    let threads = block_dim.x;\n"),
        B::GridDim => (HEADER, "    let ctas = grid_dim.x;\n"),
        B::LaneIdx => (HEADER, "    let lane = lane_idx;\n"),
        B::WarpIdx => (HEADER, "    let warp = warp_idx;\n"),
        B::BlockRankInCluster => (CLUSTER, "    let rank = block_rank_in_cluster;\n"),
        B::Inf => (HEADER, "    let lowest = -inf;\n"),
        B::Exp => (HEADER, "    let y = exp(x[0, 0]);\n"),
        B::Exp2 => (HEADER, "    let y = exp2(x[0, 0]);\n"),
        B::Log => (HEADER, "    let y = log(x[0, 0]);\n"),
        B::Log2 => (HEADER, "    let y = log2(x[0, 0]);\n"),
        B::Sqrt => (HEADER, "    let y = sqrt(x[0, 0]);\n"),
        B::Rsqrt => (HEADER, "    let y = rsqrt(x[0, 0]);\n"),
        B::Tanh => (HEADER, "    let y = tanh(x[0, 0]);\n"),
        B::Erf => (HEADER, "    let y = erf(x[0, 0]);\n"),
        B::Abs => (HEADER, "    let y = abs(x[0, 0] - 1.0);\n"),
        B::Min => (HEADER, "    let y = min(x[0, 0], 0.0);\n"),
        B::Max => (HEADER, "    let y = max(x[0, 0], 0.0);\n"),
        B::Fma => (HEADER, "    let y = fma(x[0, 0], 2.0, 1.0);\n"),
        B::Select => (
            HEADER,
            "    let relu = select(x[0, 0] > 0.0, x[0, 0], 0.0);\n    let swapped = select<1, 0>((4, 8):(8, 1)); // \
             (8,4):(1,8)\n",
        ),
        B::CeilDiv => (HEADER, "    let tiles = ceil_div(thread_idx.x, 32);\n"),
        B::ShflXor => (HEADER, "    let v = shfl_xor(x[0, thread_idx.x % 32], 16);\n"),
        B::ShflDown => (HEADER, "    let v = shfl_down(x[0, thread_idx.x % 32], 1);\n"),
        B::ShflIdx => (HEADER, "    let v = shfl_idx(x[0, thread_idx.x % 32], 0);\n"),
        B::SyncThreads => (HEADER, "    sync_threads();\n"),
        B::BarrierSync => (HEADER, "    barrier_sync(1, 128);\n"),
        B::SyncWarp => (HEADER, "    sync_warp();\n"),
        B::ClusterSync => (CLUSTER, "    cluster_sync();\n"),
        B::MapShared => (
            CLUSTER,
            "    let s = make_tensor<f32, smem>(64);\n    cluster_sync(); // every CTA of the cluster has started\n    \
             let peer = map_shared(s, block_rank_in_cluster ^ 1);\n    \
             peer[thread_idx.x % 64] = 1.0; // into the other CTA's `s`\n    cluster_sync();\n    \
             x[block_idx.x, thread_idx.x % 64] = s[thread_idx.x % 64];\n",
        ),
        B::Layout(LayoutOp::LocalTile) => (
            HEADER,
            "    let tile = local_tile(x, (32, 64), (block_idx.x, 0)); // (32,64):(64,1)\n    tile[0, 0] = 0.0;\n",
        ),
        B::Layout(LayoutOp::LocalPartition) => (
            HEADER,
            "    let mine = local_partition(x, (4, 32):(32, 1), thread_idx.x); // (32,2):(256,32)\n    mine[0, 0] = 0.0;\n",
        ),
        B::MakeFragmentLike => {
            (HEADER, "    let r = make_fragment_like(x[thread_idx.x, _]); // 64 f32 in registers\n    fill(r, 0.0);\n")
        }
        B::MakeTensor => {
            (HEADER, "    let s = make_tensor<f32, smem>((32, 32):(32, 1));\n    s[thread_idx.x % 32, 0] = 0.0;\n")
        }
        B::MakeIdentityTensor => (
            HEADER,
            "    let coords = make_identity_tensor((128, 64));\n    let mine = local_partition(coords, (4, 32):(32, 1), thread_idx.x);\n",
        ),
        B::Copy => (HEADER, "    let r = make_fragment_like(x[thread_idx.x, _]);\n    copy(x[thread_idx.x, _], r);\n"),
        B::Fill => (HEADER, "    fill(x[thread_idx.x, _], 0.0);\n"),
        B::Store => (
            STORE,
            "    let r = make_fragment_like(x[thread_idx.x, _]);\n    copy(x[thread_idx.x, _], r);\n    store(r, y[thread_idx.x, _]); // f32 -> bf16\n",
        ),
        B::Layout(LayoutOp::Size) => {
            (HEADER, "    let n = size(x);        // 8192\n    let rows = size<0>(x);  // 128\n")
        }
        B::Layout(LayoutOp::Rank) => (HEADER, "    let r = rank(x); // 2\n"),
        B::Layout(LayoutOp::Depth) => (HEADER, "    let d = depth(((2, 2), 4):((1, 8), 2)); // 2\n"),
        B::Layout(LayoutOp::Get) => (HEADER, "    let cols = get<1>(shape(x)); // 64\n"),
        B::Layout(LayoutOp::Shape) => (HEADER, "    let s = shape(x); // (128,64)\n"),
        B::Layout(LayoutOp::Stride) => (HEADER, "    let d = stride(x); // (64,1)\n"),
        B::Layout(LayoutOp::Cosize) => (HEADER, "    let c = cosize((4, 8):(8, 1)); // 32\n"),
        B::Layout(LayoutOp::Composition) => (
            HEADER,
            "    let l = composition((8, 8):(8, 1), 16:1);                         // (8,2):(8,1)\n    let s = \
             composition(Swizzle<3, 2, 3>, (8, 32):(32, 1)); // Sw<3,2,3> o (8,32):(32,1)\n",
        ),
        B::Layout(LayoutOp::MakeLayout) => (
            HEADER,
            "    let row_major = make_layout((4, 8), (8, 1)); // (4,8):(8,1)\n    let compact = make_layout((4, 8));         // (4,8):(1,4)\n",
        ),
        B::Layout(LayoutOp::Coalesce) => (HEADER, "    let l = coalesce((2, 4):(1, 2)); // 8:1\n"),
        B::Layout(LayoutOp::Complement) => (HEADER, "    let l = complement(4:2, 16); // (2,2):(1,8)\n"),
        B::Layout(LayoutOp::Filter) => (HEADER, "    let l = filter((4, 1, 8):(1, 0, 4)); // (4,8):(1,4)\n"),
        B::Layout(LayoutOp::RightInverse) => (HEADER, "    let l = right_inverse((4, 8):(8, 1)); // (8,4):(4,1)\n"),
        B::Layout(LayoutOp::LeftInverse) => (HEADER, "    let l = left_inverse((4, 8):(8, 1)); // (8,4):(4,1)\n"),
        B::Layout(LayoutOp::LogicalDivide) => {
            (HEADER, "    let l = logical_divide((128, 64):(64, 1), (32, 16)); // ((32,4),(16,4)):((64,2048),(1,16))\n")
        }
        B::Layout(LayoutOp::ZippedDivide) => {
            (HEADER, "    let l = zipped_divide((128, 64):(64, 1), (32, 16)); // ((32,16),(4,4)):((64,1),(2048,16))\n")
        }
        B::Layout(LayoutOp::TiledDivide) => {
            (HEADER, "    let l = tiled_divide((128, 64):(64, 1), (32, 16)); // ((32,16),4,4):((64,1),2048,16)\n")
        }
        B::Layout(LayoutOp::FlatDivide) => {
            (HEADER, "    let l = flat_divide((128, 64):(64, 1), (32, 16)); // (32,16,4,4):(64,1,2048,16)\n")
        }
        B::Layout(LayoutOp::LogicalProduct) => (HEADER, "    let l = logical_product((2, 2):(1, 2), (3, 4):(1, 3));\n"),
        B::Layout(LayoutOp::ZippedProduct) => (HEADER, "    let l = zipped_product((2, 2):(1, 2), (3, 4):(1, 3));\n"),
        B::Layout(LayoutOp::TiledProduct) => (HEADER, "    let l = tiled_product((2, 2):(1, 2), (3, 4):(1, 3));\n"),
        B::Layout(LayoutOp::FlatProduct) => (HEADER, "    let l = flat_product((2, 2):(1, 2), (3, 4):(1, 3));\n"),
        B::Layout(LayoutOp::BlockedProduct) => {
            (HEADER, "    let l = blocked_product((2, 2):(1, 2), (3, 4):(1, 3)); // ((2,3),(2,4)):((1,4),(2,12))\n")
        }
        B::Layout(LayoutOp::RakedProduct) => {
            (HEADER, "    let l = raked_product((2, 2):(1, 2), (3, 4):(1, 3)); // ((3,2),(4,2)):((4,1),(12,2))\n")
        }
        B::Layout(LayoutOp::TileToShape) => (HEADER, "    let l = tile_to_shape((8, 8):(8, 1), (64, 64));\n"),
        B::Layout(LayoutOp::MakeOrderedLayout) => {
            (HEADER, "    let l = make_ordered_layout((4, 8), (1, 0)); // (4,8):(8,1)\n")
        }
        B::Layout(LayoutOp::MakeLayoutTv) => (HEADER, "    let tv = make_layout_tv((4, 8):(8, 1), (2, 2):(2, 1));\n"),
        B::Layout(LayoutOp::MaxCommonVector) => {
            (HEADER, "    let v = max_common_vector((4, 8):(1, 4), (4, 8):(1, 4)); // 32\n")
        }
        B::Layout(LayoutOp::Upcast) => (HEADER, "    let l = upcast<2>((4, 8):(8, 1)); // (4,4):(4,1)\n"),
        B::Layout(LayoutOp::Downcast) => (HEADER, "    let l = downcast<2>((4, 8):(8, 1)); // (4,16):(16,1)\n"),
        B::Swizzle => (
            HEADER,
            "    let s = make_tensor<f32, smem>(composition(Swizzle<5, 0, 5>, (32, 32):(32, 1)));\n    s[thread_idx.x \
             % 32, 0] = 0.0;\n",
        ),
        B::Sw128K => (HEADER, "    let s = make_tensor<bf16, smem>(tile_to_shape(SW128_K<bf16>, (64, 64)));\n"),
        B::Sw64K => (HEADER, "    let s = make_tensor<bf16, smem>(tile_to_shape(SW64_K<bf16>, (64, 64)));\n"),
        B::Sw32K => (HEADER, "    let s = make_tensor<bf16, smem>(tile_to_shape(SW32_K<bf16>, (64, 64)));\n"),
        B::Sw128Mn => (HEADER, "    let s = make_tensor<bf16, smem>(tile_to_shape(SW128_MN<bf16>, (64, 64)));\n"),
        B::Sw64Mn => (HEADER, "    let s = make_tensor<bf16, smem>(tile_to_shape(SW64_MN<bf16>, (64, 64)));\n"),
        B::Sw32Mn => (HEADER, "    let s = make_tensor<bf16, smem>(tile_to_shape(SW32_MN<bf16>, (64, 64)));\n"),
        B::Wgmma => (HOPPER, "    let atom = wgmma<64, 128, 16, bf16, bf16, f32>;\n"),
        B::TiledMma => (
            HOPPER,
            "    let mma = tiled_mma(wgmma<64, 128, 16, bf16, bf16, f32>, (2, 1, 1));\n    let acc = \
             mma.fragment_c((128, 128));\n    fill(acc, 0.0);\n",
        ),
        B::TmaLoad => (
            HOPPER,
            "    let sa = tile_to_shape(SW128_K<bf16>, (128, 64));\n    let ga = local_tile(a, (128, 64), (block_idx.x, \
             _));\n    for k in 0..ceil_div(K, 64) {\n        let ta = tma_load(ga[_, _, k], sa);\n    }\n",
        ),
        B::TmaStore => (
            TMA_STORE,
            "    let s = make_tensor<bf16, smem>(tile_to_shape(SW128_K<bf16>, (64, 64)));\n    tma_store(s, \
             local_tile(c, (64, 64), (block_idx.x, block_idx.y)));\n",
        ),
        B::TmaStoreWait => (
            TMA_STORE,
            "    let s = make_tensor<bf16, smem>(tile_to_shape(SW128_K<bf16>, (64, 64)));\n    tma_store(s, \
             local_tile(c, (64, 64), (block_idx.x, block_idx.y)));\n    tma_store_wait<0>();\n",
        ),
        B::PrefetchTensormap => (
            TMA_STORE,
            "    let s = make_tensor<bf16, smem>(tile_to_shape(SW128_K<bf16>, (64, 64)));\n    let g = local_tile(c, \
             (64, 64), (block_idx.x, block_idx.y));\n    if thread_idx.x == 0 {\n        prefetch_tensormap(g, s);\n    \
             }\n    tma_store(s, g);\n",
        ),
        B::Gemm => (
            HOPPER,
            "    let sa = tile_to_shape(SW128_K<bf16>, (128, 64));\n    let sb = tile_to_shape(SW128_K<bf16>, (128, \
             64));\n    let mma = tiled_mma(wgmma<64, 128, 16, bf16, bf16, f32>, (2, 1, 1));\n    let ga = \
             local_tile(a, (128, 64), (block_idx.x, _));\n    let gb = local_tile(b, (128, 64), (block_idx.y, _));\n    \
             let acc = mma.fragment_c((128, 128));\n    fill(acc, 0.0);\n    for k in 0..ceil_div(K, 64) \
             pipelined(stages = 4) {\n        gemm(mma, tma_load(ga[_, _, k], sa), tma_load(gb[_, _, k], sb), \
             acc);\n    }\n    store(acc, local_tile(c, (128, 128), (block_idx.x, block_idx.y)));\n",
        ),
        B::WgmmaWait => (HEADER, "    wgmma_wait<0>();\n"),
        B::FenceProxyAsync => (HEADER, "    fence_proxy_async();\n"),
        B::ElectOne => (HEADER, "    if elect_one() {\n        x[0, warp_idx] = 1.0;\n    }\n"),
        B::Setmaxnreg => (HEADER, "    setmaxnreg<240>();\n"),
        B::MbarrierInit => (
            HEADER,
            "    let bars = make_tensor<u64, smem>(2);\n    mbarrier_init(bars[0], 128);\n    sync_threads();\n    \
             mbarrier_arrive(bars[0]);\n    mbarrier_wait(bars[0], 0);\n",
        ),
        // The mbarrier examples keep the protocol `check-protocol` runs: initialised before use, every phase
        // completed.
        B::MbarrierArrive | B::MbarrierWait => (
            HEADER,
            "    let bars = make_tensor<u64, smem>(2);\n    if thread_idx.x == 0 {\n        mbarrier_init(bars[0], \
             128);\n    }\n    sync_threads();\n    mbarrier_arrive(bars[0]);\n    mbarrier_wait(bars[0], 0);\n",
        ),
        B::MbarrierArriveExpectTx => (
            HEADER,
            "    let bars = make_tensor<u64, smem>(2);\n    let s = make_tensor<f32, smem>((32, 64):(64, 1));\n    if \
             thread_idx.x == 0 {\n        mbarrier_init(bars[0], 1);\n        mbarrier_arrive_expect_tx(bars[0], 32 * 64 \
             * 4);\n        tma_load(local_tile(x, (32, 64), (0, 0)), s, bar = bars[0]);\n        \
             mbarrier_wait(bars[0], 0);\n    }\n",
        ),
        B::StaticAssert => (HEADER, "    static_assert(size(x) % 128 == 0, \"every thread takes the same share\");\n"),
        // The algebra's operations that are not builtins (`take`, `nullspace`, ...) have no row, so no example.
        B::Layout(_) => (HEADER, ""),
    }
}

/// The example of the tiled MMA methods.
pub fn methods_example() -> String {
    format!(
        "kernel uses_tiled_mma_methods({HOPPER} {{\n    let mma = tiled_mma(wgmma<64, 128, 16, bf16, bf16, f32>, (2, 1, \
         1));\n    let acc = mma.fragment_c((128, 128));\n    fill(acc, 0.0);\n    let coords = \
         mma.partition_c(make_identity_tensor((128, 128)));\n    store(acc, mma.partition_c(local_tile(c, (128, 128), \
         (block_idx.x, block_idx.y))));\n}}\n"
    )
}

/// `book/src/reference/builtins.md`: every builtin of [`BUILTINS`] with its signature, doc and example, by group.
pub fn builtins_markdown() -> String {
    let mut out = String::new();
    out.push_str("# Builtin reference\n\n");
    let _ = writeln!(
        out,
        "{}",
        generated_note("cutec_sema::reference::builtins_markdown", "compiler/sema/src/builtins.rs")
    );
    out.push_str(
        "Every builtin function, value and constructor of the language, from the checker's own table. Each entry \
         gives the signature the checker enforces (`?` marks an optional parameter, `name = kind` a named \
         one, `...` repeated generic arguments), what the builtin does, and an example that the book's test \
         compiles. Which builtins `cutec build` compiles today is on [What works today](support.md).\n\n",
    );
    out.push_str("Signatures name kinds of values rather than types:\n\n| kind | what it accepts |\n|---|---|\n");
    for kind in arg_kinds() {
        // A `|` inside a table cell, code spans included, must be escaped.
        let _ = writeln!(out, "| `{}` | {} |", kind.sig().replace('|', "\\|"), kind.describe());
    }
    out.push_str("| `const int` | (a generic argument) a constant integer expression |\n");
    out.push_str("| `T` | (a generic argument) an element type: `f32`, `bf16`, ... |\n");
    out.push_str("| `space` | (a generic argument) a memory space: `gmem`, `smem`, `rmem` |\n\n");
    for group in BuiltinGroup::ALL {
        let _ = write!(out, "## {}\n\n{}\n\n", group.title(), group.intro());
        for b in BUILTINS.iter().filter(|b| BuiltinGroup::of(b.builtin) == group) {
            write_builtin(&mut out, b);
        }
    }
    out.push_str("## Methods of a tiled MMA\n\nA tiled MMA (made by `tiled_mma`) has these methods:\n\n");
    for m in TILED_MMA_METHODS {
        let _ = writeln!(out, "- `{}`: {}", m.signature(), m.doc);
    }
    let _ = write!(out, "\n```cute\n{}```\n", methods_example());
    out
}

fn write_builtin(out: &mut String, b: &BuiltinInfo) {
    let _ = write!(
        out,
        "### `{}`\n\n```text\n{}\n```\n\n{}\n\n```cute\n{}```\n\n",
        b.name,
        b.signature(),
        b.doc,
        builtin_example(b.builtin)
    );
}

/// The argument kinds that appear in the table, in order of first appearance.
fn arg_kinds() -> Vec<ArgKind> {
    let mut kinds: Vec<ArgKind> = Vec::new();
    for b in BUILTINS {
        for p in b.params.iter().chain(b.named) {
            if !kinds.contains(&p.kind) {
                kinds.push(p.kind);
            }
        }
    }
    kinds
}

/// The comment at the top of a generated page.
pub fn generated_note(generator: &str, source: &str) -> String {
    format!("<!-- Generated by `{generator}` from {source}; do not edit. Regenerate with `{REGENERATE}`. -->\n")
}

// ----- Scalar types -----

/// Checks `src` alone (no defines).
fn check_program(src: &str) -> CheckOutput {
    let mut map = SourceMap::new();
    let root = map.add("table.cute", src);
    check(&mut map, root, &[])
}

/// The type of the first `let` of the first item of a program that checked without errors.
fn first_let_type(out: &CheckOutput) -> Option<Type> {
    if out.has_errors() {
        return None;
    }
    let module = out.program.module(ModuleId::ROOT)?;
    let item = module.ast.items.first()?;
    let ItemKind::Fn(f) = &item.kind else { return None };
    f.body.stmts.iter().find_map(|s| match &s.kind {
        StmtKind::Let { id, .. } => Some(out.program.type_of(ModuleId::ROOT, *id).clone()),
        _ => None,
    })
}

/// The type of `a + b` for `a: lhs`, `b: rhs`, as the checker computes it; `None` if it rejects the sum.
pub fn checked_sum(lhs: Scalar, rhs: Scalar) -> Option<Scalar> {
    checked_binary(lhs, "+", rhs)
}

/// The type of `a op b` for `a: lhs`, `b: rhs`; `None` if the checker rejects it.
fn checked_binary(lhs: Scalar, op: &str, rhs: Scalar) -> Option<Scalar> {
    let out = check_program(&format!("fn f(a: {lhs}, b: {rhs}) {{\n    let c = a {op} b;\n}}\n"));
    first_let_type(&out).and_then(|t| t.scalar())
}

/// Whether the checker accepts `let b: to = a;` for `a: from` (an implicit conversion).
pub fn checked_implicit(from: Scalar, to: Scalar) -> bool {
    !check_program(&format!("fn f(a: {from}) {{\n    let b: {to} = a;\n}}\n")).has_errors()
}

/// Whether the checker accepts `a as to` for `a: from`.
pub fn checked_cast(from: Scalar, to: Scalar) -> bool {
    !check_program(&format!("fn f(a: {from}) {{\n    let b = a as {to};\n}}\n")).has_errors()
}

fn scalar_kind(s: Scalar) -> &'static str {
    match s {
        Scalar::Int => "signed integer: the index type of literals, loop variables and dimensions",
        Scalar::Bool => "`true` or `false`",
        s if s.is_fp8() => "8-bit float: a storage format (no arithmetic)",
        s if s.is_float() => "floating point",
        s if s.is_signed() => "signed integer",
        _ => "unsigned integer",
    }
}

/// A matrix over every pair of scalar types: rows are the first type, columns the second.
fn matrix(out: &mut String, corner: &str, cell: impl Fn(Scalar, Scalar) -> String) {
    let _ = write!(out, "| {corner} |");
    for s in Scalar::ALL {
        let _ = write!(out, " `{s}` |");
    }
    out.push_str("\n|---|");
    out.push_str(&"---|".repeat(Scalar::ALL.len()));
    out.push('\n');
    for a in Scalar::ALL {
        let _ = write!(out, "| **`{a}`** |");
        for b in Scalar::ALL {
            let _ = write!(out, " {} |", cell(a, b));
        }
        out.push('\n');
    }
}

/// `book/src/reference/scalar-tables.md`: the scalar types, and which pairs the checker accepts in arithmetic,
/// implicit conversions and `as`, each computed by checking one small program per pair.
pub fn scalar_tables_markdown() -> String {
    let mut out = generated_note("cutec_sema::reference::scalar_tables_markdown", "the checker");
    out.push_str("\n<!-- Every cell below is the checker's answer to a one-line program. -->\n\n");
    out.push_str("#### The scalar types\n\n| type | bits | kind |\n|---|---|---|\n");
    for s in Scalar::ALL {
        let _ = writeln!(out, "| `{s}` | {} | {} |", s.bits(), scalar_kind(s));
    }
    out.push_str(
        "\n#### Arithmetic: the type of `a + b`\n\nRow: the type of `a`; column: the type of `b`; `·`: rejected \
         (E0112). `-`, `*`, `/` and `%` give the same. Comparisons give `bool` for the same operands, and \
         also for two values of one type (fp8 included; for `bool` only `==` and `!=`).\n\n",
    );
    matrix(&mut out, "`a` \\ `b`", |a, b| checked_sum(a, b).map_or("·".to_owned(), |s| format!("`{s}`")));
    out.push_str(
        "\n#### Implicit conversions: `let b: T = a;`\n\nRow: the type of `a`; column: `T`; `✓`: accepted without \
         `as`. The same conversions apply to arguments, returns and stores into tensor elements.\n\n",
    );
    matrix(&mut out, "from \\ to", |a, b| if checked_implicit(a, b) { "✓" } else { "·" }.to_owned());
    out.push_str("\n#### Casts: `a as T`\n\nRow: the type of `a`; column: `T`; `✓`: accepted (otherwise E0114).\n\n");
    matrix(&mut out, "from \\ to", |a, b| if checked_cast(a, b) { "✓" } else { "·" }.to_owned());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_example_checks() {
        let mut failures = String::new();
        let examples = BUILTINS.iter().map(|b| (b.name, builtin_example(b.builtin)));
        for (name, src) in examples.chain([("tiled MMA methods", methods_example())]) {
            let out = check_program(&src);
            if !out.diagnostics.is_empty() {
                let codes: Vec<&str> = out.diagnostics.iter().map(|d| d.code).collect();
                let _ = writeln!(failures, "{name}: {codes:?}\n{src}");
            }
        }
        assert!(failures.is_empty(), "{failures}");
    }

    #[test]
    fn other_operators_follow_the_sum_table() {
        for a in Scalar::ALL {
            for b in Scalar::ALL {
                let sum = checked_sum(a, b);
                for op in ["-", "*", "/", "%"] {
                    assert_eq!(checked_binary(a, op, b), sum, "{a} {op} {b}");
                }
                // Two values of one type always compare (fp8 included); `bool`s only for equality.
                let same = |ok: bool| if ok { Some(Scalar::Bool) } else { sum.map(|_| Scalar::Bool) };
                assert_eq!(checked_binary(a, "<", b), same(a == b && a != Scalar::Bool), "{a} < {b}");
                assert_eq!(checked_binary(a, "==", b), same(a == b), "{a} == {b}");
            }
        }
    }

    #[test]
    fn probes_agree_with_promote_and_coerces() {
        for a in Scalar::ALL {
            assert!(checked_cast(a, a) && checked_implicit(a, a), "{a} to itself");
            for b in Scalar::ALL {
                assert_eq!(checked_implicit(a, b), crate::types::scalar_coerces(a, b), "{a} to {b}");
                if a != Scalar::Bool && b != Scalar::Bool {
                    assert_eq!(checked_sum(a, b), crate::promote(a, b), "{a} + {b}");
                }
            }
        }
    }
}

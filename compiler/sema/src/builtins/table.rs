//! The rows of [`BUILTINS`]: one per builtin, with the constructors that give each row its defaults.

use super::{ArgKind, Builtin, BuiltinInfo, Form, GenericKind, ParamSig};
use cutec_layout::LayoutOp;

pub(super) const fn p(name: &'static str, kind: ArgKind) -> ParamSig {
    ParamSig { name, kind }
}

/// A row with defaults; the table below overrides what differs.
const fn row(builtin: Builtin, name: &'static str, form: Form, ret: &'static str, doc: &'static str) -> BuiltinInfo {
    BuiltinInfo {
        builtin,
        name,
        form,
        generics: &[],
        optional_generics: 0,
        variadic_generics: false,
        params: &[],
        optional: 0,
        named: &[],
        ret,
        doc,
    }
}

const fn value(b: Builtin, name: &'static str, ret: &'static str, doc: &'static str) -> BuiltinInfo {
    row(b, name, Form::Value, ret, doc)
}

const fn func(
    b: Builtin,
    name: &'static str,
    params: &'static [ParamSig],
    ret: &'static str,
    doc: &'static str,
) -> BuiltinInfo {
    BuiltinInfo { params, ..row(b, name, Form::Function, ret, doc) }
}

use ArgKind as K;
use Builtin as B;
use GenericKind as G;

const X: &[ParamSig] = &[p("x", K::Float)];
const L: &[ParamSig] = &[p("layout", K::Layout)];
const LT: &[ParamSig] = &[p("x", K::LayoutOrTensor)];
const DIVIDE: &[ParamSig] = &[p("x", K::LayoutOrTensor), p("tiler", K::Tiler)];
const PRODUCT: &[ParamSig] = &[p("a", K::Layout), p("b", K::Layout)];
const INSPECT: &[ParamSig] = &[p("x", K::Inspectable)];
const SW_ATOM: &[GenericKind] = &[G::DType];

/// The table. Names are unique except for none; `select` is one entry with two forms (see [`Builtin::Select`]).
pub static BUILTINS: &[BuiltinInfo] = &[
    value(B::ThreadIdx, "thread_idx", "Dim3", "Index of the calling thread in its CTA (fields x, y, z)."),
    value(B::BlockIdx, "block_idx", "Dim3", "Index of the calling CTA in the grid (fields x, y, z)."),
    value(B::BlockDim, "block_dim", "Dim3", "Number of threads of a CTA along x, y and z."),
    value(B::GridDim, "grid_dim", "Dim3", "Number of CTAs of the grid along x, y and z."),
    value(B::LaneIdx, "lane_idx", "int", "Index of the calling thread in its warp, 0..32."),
    value(B::WarpIdx, "warp_idx", "int", "Index of the calling warp in its CTA."),
    value(B::BlockRankInCluster, "block_rank_in_cluster", "int", "Rank of the calling CTA in its cluster."),
    value(B::Inf, "inf", "f32", "Positive infinity (f32); `-inf` is the identity of `max`."),
    func(B::Exp, "exp", X, "float", "e raised to `x`."),
    func(B::Exp2, "exp2", X, "float", "2 raised to `x` (one SFU instruction)."),
    func(B::Log, "log", X, "float", "Natural logarithm."),
    func(B::Log2, "log2", X, "float", "Base-2 logarithm."),
    func(B::Sqrt, "sqrt", X, "float", "Square root."),
    func(B::Rsqrt, "rsqrt", X, "float", "1 / sqrt(x), approximate (one SFU instruction)."),
    func(B::Tanh, "tanh", X, "float", "Hyperbolic tangent."),
    func(B::Erf, "erf", X, "float", "The error function."),
    func(B::Abs, "abs", &[p("x", K::Numeric)], "number", "Absolute value, of the argument's type."),
    func(B::Min, "min", &[p("a", K::Numeric), p("b", K::Numeric)], "number", "The smaller of two numbers."),
    func(B::Max, "max", &[p("a", K::Numeric), p("b", K::Numeric)], "number", "The larger of two numbers."),
    func(B::Fma, "fma", &[p("a", K::Float), p("b", K::Float), p("c", K::Float)], "float", "a * b + c, rounded once."),
    BuiltinInfo {
        variadic_generics: true,
        ..func(
            B::Select,
            "select",
            &[p("cond", K::Bool), p("a", K::Numeric), p("b", K::Numeric)],
            "number",
            "`cond ? a : b` without branching; `select<i, ...>(x)` keeps the modes i, ... of a layout (of a \
             tensor: the same elements through those modes).",
        )
    },
    func(
        B::ShflXor,
        "shfl_xor",
        &[p("v", K::Numeric), p("lane_mask", K::Int)],
        "number",
        "The value `v` of lane `lane_idx ^ lane_mask` of the calling warp.",
    ),
    func(
        B::ShflDown,
        "shfl_down",
        &[p("v", K::Numeric), p("delta", K::Int)],
        "number",
        "`v` of lane `lane_idx + delta`.",
    ),
    func(B::ShflIdx, "shfl_idx", &[p("v", K::Numeric), p("lane", K::Int)], "number", "`v` of lane `lane`."),
    func(B::SyncThreads, "sync_threads", &[], "()", "Barrier over the CTA (`__syncthreads`)."),
    func(
        B::BarrierSync,
        "barrier_sync",
        &[p("id", K::Int), p("threads", K::Int)],
        "()",
        "Named barrier `id` (1..=15; 0 is `sync_threads`) over `threads` threads, a multiple of 32: every warp of a \
         warpgroup waits for the others.",
    ),
    func(B::SyncWarp, "sync_warp", &[], "()", "Barrier over the warp (`__syncwarp`)."),
    func(B::ClusterSync, "cluster_sync", &[], "()", "Barrier over all threads of the cluster."),
    func(
        B::MapShared,
        "map_shared",
        &[p("t", K::Tensor), p("cta", K::Int)],
        "Tensor",
        "The shared-memory tensor `t` of the CTA of rank `cta` in the cluster (distributed shared memory): the same \
         layout, read and written with `ld`/`st.shared::cluster`. Order the accesses with `cluster_sync()`.",
    ),
    func(B::CeilDiv, "ceil_div", &[p("a", K::Int), p("b", K::Int)], "int", "a / b rounded up."),
    func(
        B::Layout(LayoutOp::LocalTile),
        "local_tile",
        &[p("t", K::Tensor), p("tiler", K::Tiler), p("coord", K::Coord)],
        "Tensor",
        "The tile of `t` at `coord` when `t` is cut into tiles of shape `tiler`; `_` in `coord` keeps that mode.",
    ),
    func(
        B::Layout(LayoutOp::LocalPartition),
        "local_partition",
        &[p("t", K::Tensor), p("threads", K::Layout), p("idx", K::Int)],
        "Tensor",
        "The elements of `t` owned by thread `idx` when `threads` is tiled over `t`.",
    ),
    BuiltinInfo {
        generics: &[G::DType],
        optional_generics: 1,
        ..func(
            B::MakeFragmentLike,
            "make_fragment_like",
            &[p("x", K::LayoutOrTensor)],
            "Tensor",
            "A register tensor of the shape of `x` (element type `T`, or that of `x`).",
        )
    },
    BuiltinInfo {
        generics: &[G::DType, G::Space],
        ..func(
            B::MakeTensor,
            "make_tensor",
            &[p("layout", K::Layout)],
            "Tensor",
            "A new tensor of element type `T` with `layout`, in shared memory or registers.",
        )
    },
    func(
        B::MakeIdentityTensor,
        "make_identity_tensor",
        &[p("shape", K::Shape)],
        "Tensor",
        "A tensor whose elements are their own coordinates: partition it to learn which (row, col) a thread owns.",
    ),
    func(
        B::Copy,
        "copy",
        &[p("src", K::Tensor), p("dst", K::Tensor)],
        "()",
        "Copies `src` to `dst` (same element type), vectorized as the layouts allow.",
    ),
    func(B::Fill, "fill", &[p("t", K::Tensor), p("v", K::Numeric)], "()", "Sets every element of `t` to `v`."),
    BuiltinInfo {
        named: &[p("map", K::Function), p("with", K::Tensor)],
        ..func(
            B::Store,
            "store",
            &[p("src", K::Tensor), p("dst", K::Tensor)],
            "()",
            "Converts `src` to the element type of `dst` and writes it (the epilogue of a GEMM). With `map = f`, \
             each stored value is `f` of the converted one, `dst = T(f(T(src)))` for `dst` of element type `T`, \
             as an elementwise operation on the stored tile computes it; with `with = x` as well, `f` takes the \
             element of `x` at the same coordinate, `dst = T(f(T(src), x))`, where `x` has `dst`'s shape or is a \
             row of it (one value per column, broadcast along the rows: a bias). At the top level of a \
             `persistent` `warp_specialized` kernel the producer warpgroup's spare warps apply `f` beside the \
             next tile's mainloop (a global `x` the kernel must not write, E0326).",
        )
    },
    BuiltinInfo {
        generics: &[G::Int],
        optional_generics: 1,
        variadic_generics: true,
        ..func(B::Layout(LayoutOp::Size), "size", INSPECT, "int", "Number of elements (of mode i with `size<i>`).")
    },
    func(B::Layout(LayoutOp::Rank), "rank", INSPECT, "int", "Number of top-level modes."),
    func(B::Layout(LayoutOp::Depth), "depth", INSPECT, "int", "Nesting depth of the shape (0 for an integer)."),
    BuiltinInfo {
        generics: &[G::Int],
        variadic_generics: true,
        ..func(
            B::Layout(LayoutOp::Get),
            "get",
            INSPECT,
            "mode",
            "Mode i of a tuple, layout or tensor; `get<i, j>` goes deeper.",
        )
    },
    func(B::Layout(LayoutOp::Shape), "shape", INSPECT, "Shape", "The shape of a layout or tensor."),
    func(B::Layout(LayoutOp::Stride), "stride", INSPECT, "Shape", "The stride of a layout or tensor."),
    func(B::Layout(LayoutOp::Cosize), "cosize", LT, "int", "Size of the codomain: one past the largest offset."),
    func(
        B::Layout(LayoutOp::Composition),
        "composition",
        &[p("a", K::Composable), p("b", K::Layout)],
        "Layout | Tensor",
        "a ∘ b: the layout (or tensor) `a` indexed through `b`.",
    ),
    BuiltinInfo {
        optional: 1,
        ..func(
            B::Layout(LayoutOp::MakeLayout),
            "make_layout",
            &[p("shape", K::Shape), p("stride", K::Shape)],
            "Layout",
            "The layout `shape:stride` (compact column-major without `stride`).",
        )
    },
    func(B::Layout(LayoutOp::Coalesce), "coalesce", L, "Layout", "The same function with the fewest modes."),
    BuiltinInfo {
        optional: 1,
        ..func(
            B::Layout(LayoutOp::Complement),
            "complement",
            &[p("layout", K::Layout), p("cosize", K::Shape)],
            "Layout",
            "The layout that fills the offsets `layout` leaves out, up to `cosize`.",
        )
    },
    func(B::Layout(LayoutOp::Filter), "filter", L, "Layout", "Removes stride-0 and size-1 modes."),
    func(B::Layout(LayoutOp::RightInverse), "right_inverse", L, "Layout", "R with layout(R(i)) == i."),
    func(B::Layout(LayoutOp::LeftInverse), "left_inverse", L, "Layout", "L with L(layout(i)) == i."),
    func(
        B::Layout(LayoutOp::LogicalDivide),
        "logical_divide",
        DIVIDE,
        "Layout | Tensor",
        "Splits each mode into (tile, rest).",
    ),
    func(
        B::Layout(LayoutOp::ZippedDivide),
        "zipped_divide",
        DIVIDE,
        "Layout | Tensor",
        "((tile modes), (rest modes)).",
    ),
    func(
        B::Layout(LayoutOp::TiledDivide),
        "tiled_divide",
        DIVIDE,
        "Layout | Tensor",
        "((tile modes), rest0, rest1, ...).",
    ),
    func(
        B::Layout(LayoutOp::FlatDivide),
        "flat_divide",
        DIVIDE,
        "Layout | Tensor",
        "(tile0, tile1, ..., rest0, rest1, ...).",
    ),
    func(
        B::Layout(LayoutOp::LogicalProduct),
        "logical_product",
        PRODUCT,
        "Layout",
        "(a, complement(a) ∘ b): b copies of a.",
    ),
    func(B::Layout(LayoutOp::ZippedProduct), "zipped_product", PRODUCT, "Layout", "((a modes), (b modes))."),
    func(B::Layout(LayoutOp::TiledProduct), "tiled_product", PRODUCT, "Layout", "((a modes), b0, b1, ...)."),
    func(B::Layout(LayoutOp::FlatProduct), "flat_product", PRODUCT, "Layout", "(a0, a1, ..., b0, b1, ...)."),
    func(
        B::Layout(LayoutOp::BlockedProduct),
        "blocked_product",
        PRODUCT,
        "Layout",
        "Copies of a laid out blockwise by b.",
    ),
    func(
        B::Layout(LayoutOp::RakedProduct),
        "raked_product",
        PRODUCT,
        "Layout",
        "Copies of a interleaved (raked) by b.",
    ),
    BuiltinInfo {
        optional: 1,
        ..func(
            B::Layout(LayoutOp::TileToShape),
            "tile_to_shape",
            &[p("atom", K::Layout), p("shape", K::Shape), p("order", K::Shape)],
            "Layout",
            "Repeats the layout `atom` (often a swizzle atom) until it covers `shape`, along the modes in `order` \
             (first mode first without it): `(2, 1)` stacks an MN-major atom along K first.",
        )
    },
    func(
        B::Layout(LayoutOp::MakeOrderedLayout),
        "make_ordered_layout",
        &[p("shape", K::Shape), p("order", K::Shape)],
        "Layout",
        "A compact layout whose modes are ordered by `order` (smallest stride first).",
    ),
    func(
        B::Layout(LayoutOp::MakeLayoutTv),
        "make_layout_tv",
        &[p("threads", K::Layout), p("values", K::Layout)],
        "Layout",
        "The (thread, value) -> coordinate layout of threads that each own `values`.",
    ),
    func(
        B::Layout(LayoutOp::MaxCommonVector),
        "max_common_vector",
        &[p("a", K::Layout), p("b", K::Layout)],
        "int",
        "The number of leading elements both layouts map contiguously.",
    ),
    BuiltinInfo {
        generics: &[G::Int],
        ..func(
            B::Layout(LayoutOp::Upcast),
            "upcast",
            LT,
            "Layout | Tensor",
            "Groups N elements into one (e.g. for vector types).",
        )
    },
    BuiltinInfo {
        generics: &[G::Int],
        ..func(B::Layout(LayoutOp::Downcast), "downcast", LT, "Layout | Tensor", "Splits each element into N.")
    },
    BuiltinInfo {
        generics: &[G::Int, G::Int, G::Int],
        ..row(B::Swizzle, "Swizzle", Form::Constructor, "Swizzle", "XOR swizzle: bits [M+S, M+S+B) into [M, M+B).")
    },
    BuiltinInfo {
        generics: SW_ATOM,
        ..row(B::Sw128K, "SW128_K", Form::Constructor, "Layout", "128-byte swizzle atom, K-major (8 rows x 128 B).")
    },
    BuiltinInfo {
        generics: SW_ATOM,
        ..row(B::Sw64K, "SW64_K", Form::Constructor, "Layout", "64-byte swizzle atom, K-major (8 rows x 64 B).")
    },
    BuiltinInfo {
        generics: SW_ATOM,
        ..row(B::Sw32K, "SW32_K", Form::Constructor, "Layout", "32-byte swizzle atom, K-major (8 rows x 32 B).")
    },
    BuiltinInfo {
        generics: SW_ATOM,
        ..row(B::Sw128Mn, "SW128_MN", Form::Constructor, "Layout", "128-byte swizzle atom, M/N-major.")
    },
    BuiltinInfo {
        generics: SW_ATOM,
        ..row(B::Sw64Mn, "SW64_MN", Form::Constructor, "Layout", "64-byte swizzle atom, M/N-major.")
    },
    BuiltinInfo {
        generics: SW_ATOM,
        ..row(B::Sw32Mn, "SW32_MN", Form::Constructor, "Layout", "32-byte swizzle atom, M/N-major.")
    },
    BuiltinInfo {
        generics: &[G::Int, G::Int, G::Int, G::DType, G::DType, G::DType],
        ..row(
            B::Wgmma,
            "wgmma",
            Form::Constructor,
            "MmaAtom",
            "A warpgroup MMA m{M}n{N}k{K}: A and B from shared memory, accumulator C in registers.",
        )
    },
    func(
        B::TiledMma,
        "tiled_mma",
        &[p("atom", K::MmaAtom), p("tiling", K::Shape)],
        "TiledMma",
        "The atom repeated over (x, y, z) warpgroups; methods fragment_a/b/c and partition_a/b/c.",
    ),
    BuiltinInfo {
        named: &[p("bar", K::Mbarrier), p("multicast", K::Int)],
        ..func(
            B::TmaLoad,
            "tma_load",
            &[p("src", K::Tensor), p("dst", K::LayoutOrTensor)],
            "Tensor",
            "Asynchronous bulk copy of a global tile into shared memory (a new buffer if `dst` is a layout); by \
             hand, `bar = b` names the mbarrier that counts its bytes and `multicast = mask` the CTAs of the \
             cluster it lands in. Without `bar`, the compiler schedules it: in a `pipelined` loop, on a ring of \
             stages; in a `warp_specialized` kernel, before the pipelined loop in the same block (a tile of a \
             bias, once per output tile), by the producer, waited for where it is first read; elsewhere, waited \
             for right after the copy.",
        )
    },
    func(
        B::TmaStore,
        "tma_store",
        &[p("src", K::Tensor), p("dst", K::Tensor)],
        "()",
        "Asynchronous bulk copy of a shared-memory tile to global memory (elements outside `dst`'s tensor are \
         not written); `tma_store_wait` says when `src` may be reused.",
    ),
    BuiltinInfo {
        generics: &[G::Int],
        ..func(
            B::TmaStoreWait,
            "tma_store_wait",
            &[],
            "()",
            "Waits until at most N of this thread's `tma_store`s still read their shared-memory source.",
        )
    },
    func(
        B::PrefetchTensormap,
        "prefetch_tensormap",
        &[p("g", K::Tensor), p("s", K::Tensor)],
        "()",
        "Prefetches the tensor map that `tma_load(g, s, ..)` and `tma_store(s, g)` use (`prefetch.tensormap`): \
         the map is derived from the global tile `g` and the shared-memory tile `s` as the copy derives it, and \
         does not depend on where the box starts, so `g` may be any box of the copies (`ga[_, _, 0]` for \
         `tma_load(ga[_, _, k], sa, ..)`). Issue it once, early, from the thread that will copy.",
    ),
    BuiltinInfo {
        named: &[p("accumulate", K::Bool)],
        ..func(
            B::Gemm,
            "gemm",
            &[p("mma", K::TiledMma), p("a", K::Tensor), p("b", K::Tensor), p("acc", K::Tensor)],
            "()",
            "acc += a * b^T with the tiled MMA (`b` in shared memory, `a` too or in registers as a \
             `mma.fragment_a`): one asynchronous group of wgmmas; \
             `wgmma_wait` says when it is done. With `accumulate = false` (a run-time `bool`), acc = a * b^T: the \
             first k-tile needs no zeroed accumulator.",
        )
    },
    BuiltinInfo {
        generics: &[G::Int],
        ..func(
            B::WgmmaWait,
            "wgmma_wait",
            &[],
            "()",
            "Waits until at most N of this warpgroup's `gemm` groups are still running.",
        )
    },
    func(B::FenceProxyAsync, "fence_proxy_async", &[], "()", "Orders generic-proxy writes before async-proxy reads."),
    func(B::ElectOne, "elect_one", &[], "bool", "True in exactly one lane of the calling warp."),
    BuiltinInfo {
        generics: &[G::Int],
        ..func(B::Setmaxnreg, "setmaxnreg", &[], "()", "Sets this warpgroup's register budget (24..=256, step 8).")
    },
    func(
        B::MbarrierInit,
        "mbarrier_init",
        &[p("bar", K::Mbarrier), p("count", K::Int)],
        "()",
        "Initializes an mbarrier expecting `count` arrivals per phase.",
    ),
    BuiltinInfo {
        named: &[p("cta", K::Int)],
        ..func(
            B::MbarrierArrive,
            "mbarrier_arrive",
            &[p("bar", K::Mbarrier)],
            "()",
            "Arrives on an mbarrier; with `cta = r`, on the one at the same place in CTA r of the cluster.",
        )
    },
    func(
        B::MbarrierArriveExpectTx,
        "mbarrier_arrive_expect_tx",
        &[p("bar", K::Mbarrier), p("bytes", K::Int)],
        "()",
        "Arrives and announces `bytes` of incoming asynchronous copies.",
    ),
    func(
        B::MbarrierWait,
        "mbarrier_wait",
        &[p("bar", K::Mbarrier), p("phase", K::Int)],
        "()",
        "Waits until the phase with parity `phase` of an mbarrier has completed.",
    ),
    func(
        B::StaticAssert,
        "static_assert",
        &[p("cond", K::Bool), p("message", K::Str)],
        "()",
        "Stops compilation with `message` if the constant `cond` is false (checked once const generics have values).",
    ),
];

//! Every builtin of the language in one table: its name, generic and value parameters, what it returns and a
//! one-line doc. Arity and argument kinds are checked from this table; result types are computed in
//! `check_call.rs` (one `match` over [`Builtin`]).

use crate::types::{Scalar, Type};
use cutec_layout::LayoutOp;

/// A builtin name.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub enum Builtin {
    // Special values.
    ThreadIdx,
    BlockIdx,
    BlockDim,
    GridDim,
    LaneIdx,
    WarpIdx,
    BlockRankInCluster,
    Inf,
    // Math.
    Exp,
    Exp2,
    Log,
    Log2,
    Sqrt,
    Rsqrt,
    Tanh,
    Erf,
    Abs,
    Min,
    Max,
    Fma,
    /// `select(c, a, b)`, or with generic arguments CuTe's `select<i...>(layout)`.
    Select,
    // Warp.
    ShflXor,
    ShflDown,
    ShflIdx,
    // Synchronisation.
    SyncThreads,
    BarrierSync,
    SyncWarp,
    ClusterSync,
    MapShared,
    // Integers.
    CeilDiv,
    // Tensors.
    LocalTile,
    LocalPartition,
    MakeFragmentLike,
    MakeTensor,
    MakeIdentityTensor,
    Copy,
    Fill,
    Store,
    Size,
    Rank,
    Depth,
    Get,
    Shape,
    Stride,
    Cosize,
    Composition,
    // Layout algebra.
    MakeLayout,
    Coalesce,
    Complement,
    Filter,
    RightInverse,
    LeftInverse,
    LogicalDivide,
    ZippedDivide,
    TiledDivide,
    FlatDivide,
    LogicalProduct,
    ZippedProduct,
    TiledProduct,
    FlatProduct,
    BlockedProduct,
    RakedProduct,
    TileToShape,
    MakeOrderedLayout,
    MakeLayoutTv,
    MaxCommonVector,
    Upcast,
    Downcast,
    // Swizzles and Hopper atoms.
    Swizzle,
    Sw128K,
    Sw64K,
    Sw32K,
    Sw128Mn,
    Sw64Mn,
    Sw32Mn,
    Wgmma,
    TiledMma,
    TmaLoad,
    TmaStore,
    TmaStoreWait,
    PrefetchTensormap,
    Gemm,
    WgmmaWait,
    // Expert escape hatches.
    FenceProxyAsync,
    ElectOne,
    Setmaxnreg,
    MbarrierInit,
    MbarrierArrive,
    MbarrierArriveExpectTx,
    MbarrierWait,
    // Compile time.
    /// `static_assert(cond, "message")`: checked by the checker, emits no code.
    StaticAssert,
}

/// What an argument must be.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ArgKind {
    /// An integer scalar.
    Int,
    /// Any numeric scalar.
    Numeric,
    /// A numeric scalar; integers are converted to `f32`.
    Float,
    Bool,
    Tensor,
    /// A layout, or a shape (an integer or a tuple of integers) standing for its compact column-major layout.
    Layout,
    LayoutOrTensor,
    /// An integer or a tuple of integers.
    Shape,
    /// An integer, a tuple of integers and `_`, or a layout.
    Tiler,
    /// An integer or a tuple of integers and `_`.
    Coord,
    /// A layout, a tensor or a swizzle: the outer function of `composition`.
    Composable,
    MmaAtom,
    TiledMma,
    /// A `u64` mbarrier word, usually an element of a shared-memory tensor.
    Mbarrier,
    /// A layout, tensor, shape or tuple: what `size`, `rank` and `get` inspect.
    Inspectable,
    /// A string literal (the message of `static_assert`); strings are not values.
    Str,
}

impl ArgKind {
    /// "expected {}, found ..."
    pub fn describe(self) -> &'static str {
        match self {
            ArgKind::Int => "an integer",
            ArgKind::Numeric => "a number",
            ArgKind::Float => "a floating-point number",
            ArgKind::Bool => "a `bool`",
            ArgKind::Tensor => "a tensor",
            ArgKind::Layout => "a layout or a shape",
            ArgKind::LayoutOrTensor => "a layout or a tensor",
            ArgKind::Shape => "a shape (an integer or a tuple of integers)",
            ArgKind::Tiler => "a tiler (an integer, a tuple or a layout)",
            ArgKind::Coord => "a coordinate (an integer or a tuple of integers and `_`)",
            ArgKind::Composable => "a layout, a tensor or a swizzle",
            ArgKind::MmaAtom => "an MMA atom such as `wgmma<64, 128, 16, bf16, bf16, f32>`",
            ArgKind::TiledMma => "a tiled MMA (made by `tiled_mma`)",
            ArgKind::Mbarrier => "an mbarrier (a `u64` in shared memory)",
            ArgKind::Inspectable => "a layout, a tensor or a tuple",
            ArgKind::Str => "a string literal",
        }
    }

    /// How the kind is written in signatures.
    pub fn sig(self) -> &'static str {
        match self {
            ArgKind::Int => "int",
            ArgKind::Numeric => "number",
            ArgKind::Float => "float",
            ArgKind::Bool => "bool",
            ArgKind::Tensor => "Tensor",
            ArgKind::Layout => "Layout",
            ArgKind::LayoutOrTensor => "Layout | Tensor",
            ArgKind::Shape => "Shape",
            ArgKind::Tiler => "Tiler",
            ArgKind::Coord => "Coord",
            ArgKind::Composable => "Layout | Tensor | Swizzle",
            ArgKind::MmaAtom => "MmaAtom",
            ArgKind::TiledMma => "TiledMma",
            ArgKind::Mbarrier => "u64",
            ArgKind::Inspectable => "Layout | Tensor | Tuple",
            ArgKind::Str => "string",
        }
    }

    /// Whether a value of type `ty` is acceptable. `Error` is accepted everywhere (it has been reported).
    pub fn accepts(self, ty: &Type) -> bool {
        if ty.is_error() {
            return true;
        }
        let numeric = ty.scalar().is_some_and(Scalar::is_numeric);
        let shape = ty.is_integer() || ty.is_int_tuple();
        match self {
            ArgKind::Int => ty.is_integer(),
            ArgKind::Numeric | ArgKind::Float => numeric,
            ArgKind::Bool => *ty == Type::BOOL,
            ArgKind::Tensor => matches!(ty, Type::Tensor(_)),
            ArgKind::Layout => shape || matches!(ty, Type::Layout(_)),
            ArgKind::LayoutOrTensor => shape || matches!(ty, Type::Layout(_) | Type::Tensor(_)),
            ArgKind::Shape => shape,
            ArgKind::Tiler => ty.is_integer() || ty.is_coord_tuple() || matches!(ty, Type::Layout(_)),
            ArgKind::Coord => ty.is_integer() || ty.is_coord_tuple() || *ty == Type::Wildcard,
            ArgKind::Composable => shape || matches!(ty, Type::Layout(_) | Type::Tensor(_) | Type::Swizzle(_)),
            ArgKind::MmaAtom => matches!(ty, Type::MmaAtom(_)),
            ArgKind::TiledMma => matches!(ty, Type::TiledMma(_)),
            ArgKind::Mbarrier => *ty == Type::Scalar(Scalar::U64),
            ArgKind::Inspectable => shape || matches!(ty, Type::Layout(_) | Type::Tensor(_) | Type::Tuple(_)),
            // A string has no type: `static_assert` looks at its argument's syntax.
            ArgKind::Str => false,
        }
    }

    /// The scalar type an untyped literal argument takes.
    pub fn literal_hint(self) -> Option<Scalar> {
        match self {
            ArgKind::Int | ArgKind::Shape | ArgKind::Coord | ArgKind::Tiler | ArgKind::Layout => Some(Scalar::Int),
            ArgKind::Float => Some(Scalar::F32),
            _ => None,
        }
    }
}

/// What a generic argument must be.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum GenericKind {
    /// A constant integer expression.
    Int,
    /// An element type: `f32`, `bf16`, ...
    DType,
    /// A memory space: `gmem`, `smem`, `rmem`.
    Space,
}

impl GenericKind {
    pub fn sig(self) -> &'static str {
        match self {
            GenericKind::Int => "const int",
            GenericKind::DType => "T",
            GenericKind::Space => "space",
        }
    }
}

/// How a builtin is used.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Form {
    /// A value, used without a call: `thread_idx`, `inf`.
    Value,
    /// A function, called: `exp(x)`.
    Function,
    /// A value built from generic arguments, not called: `Swizzle<3, 4, 3>`, `wgmma<...>`.
    Constructor,
}

#[derive(Clone, Copy, Debug)]
pub struct ParamSig {
    pub name: &'static str,
    pub kind: ArgKind,
}

/// One row of the table.
#[derive(Clone, Copy, Debug)]
pub struct BuiltinInfo {
    pub builtin: Builtin,
    pub name: &'static str,
    pub form: Form,
    pub generics: &'static [GenericKind],
    /// How many trailing generics may be left out.
    pub optional_generics: usize,
    /// Whether the last generic kind may repeat (`get<0, 1>`).
    pub variadic_generics: bool,
    pub params: &'static [ParamSig],
    /// How many trailing positional parameters may be left out.
    pub optional: usize,
    /// Named arguments it accepts (`multicast = 2`), all optional.
    pub named: &'static [ParamSig],
    /// The result, as written in signatures.
    pub ret: &'static str,
    pub doc: &'static str,
}

impl BuiltinInfo {
    /// `ceil_div(a: int, b: int) -> int`, for notes.
    pub fn signature(&self) -> String {
        let mut s = self.name.to_owned();
        if !self.generics.is_empty() {
            let g: Vec<&str> = self.generics.iter().map(|g| g.sig()).collect();
            s.push('<');
            s.push_str(&g.join(", "));
            if self.variadic_generics {
                s.push_str(", ...");
            }
            s.push('>');
        }
        if self.form == Form::Function {
            let required = self.params.len() - self.optional;
            let mut ps: Vec<String> = self
                .params
                .iter()
                .enumerate()
                .map(|(i, p)| {
                    let opt = if i >= required { "?" } else { "" };
                    format!("{}{opt}: {}", p.name, p.kind.sig())
                })
                .collect();
            ps.extend(self.named.iter().map(|p| format!("{} = {}", p.name, p.kind.sig())));
            s.push('(');
            s.push_str(&ps.join(", "));
            s.push(')');
        }
        if self.ret != "()" {
            s.push_str(" -> ");
            s.push_str(self.ret);
        }
        s
    }

    pub fn min_args(&self) -> usize {
        self.params.len() - self.optional
    }
}

const fn p(name: &'static str, kind: ArgKind) -> ParamSig {
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
        B::LocalTile,
        "local_tile",
        &[p("t", K::Tensor), p("tiler", K::Tiler), p("coord", K::Coord)],
        "Tensor",
        "The tile of `t` at `coord` when `t` is cut into tiles of shape `tiler`; `_` in `coord` keeps that mode.",
    ),
    func(
        B::LocalPartition,
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
    func(
        B::Store,
        "store",
        &[p("src", K::Tensor), p("dst", K::Tensor)],
        "()",
        "Converts `src` to the element type of `dst` and writes it (the epilogue of a GEMM).",
    ),
    BuiltinInfo {
        generics: &[G::Int],
        optional_generics: 1,
        variadic_generics: true,
        ..func(B::Size, "size", INSPECT, "int", "Number of elements (of mode i with `size<i>`).")
    },
    func(B::Rank, "rank", INSPECT, "int", "Number of top-level modes."),
    func(B::Depth, "depth", INSPECT, "int", "Nesting depth of the shape (0 for an integer)."),
    BuiltinInfo {
        generics: &[G::Int],
        variadic_generics: true,
        ..func(B::Get, "get", INSPECT, "mode", "Mode i of a tuple, layout or tensor; `get<i, j>` goes deeper.")
    },
    func(B::Shape, "shape", INSPECT, "Shape", "The shape of a layout or tensor."),
    func(B::Stride, "stride", INSPECT, "Shape", "The stride of a layout or tensor."),
    func(B::Cosize, "cosize", LT, "int", "Size of the codomain: one past the largest offset."),
    func(
        B::Composition,
        "composition",
        &[p("a", K::Composable), p("b", K::Layout)],
        "Layout | Tensor",
        "a ∘ b: the layout (or tensor) `a` indexed through `b`.",
    ),
    BuiltinInfo {
        optional: 1,
        ..func(
            B::MakeLayout,
            "make_layout",
            &[p("shape", K::Shape), p("stride", K::Shape)],
            "Layout",
            "The layout `shape:stride` (compact column-major without `stride`).",
        )
    },
    func(B::Coalesce, "coalesce", L, "Layout", "The same function with the fewest modes."),
    BuiltinInfo {
        optional: 1,
        ..func(
            B::Complement,
            "complement",
            &[p("layout", K::Layout), p("cosize", K::Shape)],
            "Layout",
            "The layout that fills the offsets `layout` leaves out, up to `cosize`.",
        )
    },
    func(B::Filter, "filter", L, "Layout", "Removes stride-0 and size-1 modes."),
    func(B::RightInverse, "right_inverse", L, "Layout", "R with layout(R(i)) == i."),
    func(B::LeftInverse, "left_inverse", L, "Layout", "L with L(layout(i)) == i."),
    func(B::LogicalDivide, "logical_divide", DIVIDE, "Layout | Tensor", "Splits each mode into (tile, rest)."),
    func(B::ZippedDivide, "zipped_divide", DIVIDE, "Layout | Tensor", "((tile modes), (rest modes))."),
    func(B::TiledDivide, "tiled_divide", DIVIDE, "Layout | Tensor", "((tile modes), rest0, rest1, ...)."),
    func(B::FlatDivide, "flat_divide", DIVIDE, "Layout | Tensor", "(tile0, tile1, ..., rest0, rest1, ...)."),
    func(B::LogicalProduct, "logical_product", PRODUCT, "Layout", "(a, complement(a) ∘ b): b copies of a."),
    func(B::ZippedProduct, "zipped_product", PRODUCT, "Layout", "((a modes), (b modes))."),
    func(B::TiledProduct, "tiled_product", PRODUCT, "Layout", "((a modes), b0, b1, ...)."),
    func(B::FlatProduct, "flat_product", PRODUCT, "Layout", "(a0, a1, ..., b0, b1, ...)."),
    func(B::BlockedProduct, "blocked_product", PRODUCT, "Layout", "Copies of a laid out blockwise by b."),
    func(B::RakedProduct, "raked_product", PRODUCT, "Layout", "Copies of a interleaved (raked) by b."),
    func(
        B::TileToShape,
        "tile_to_shape",
        &[p("atom", K::Layout), p("shape", K::Shape)],
        "Layout",
        "Repeats the layout `atom` (often a swizzle atom) until it covers `shape`.",
    ),
    func(
        B::MakeOrderedLayout,
        "make_ordered_layout",
        &[p("shape", K::Shape), p("order", K::Shape)],
        "Layout",
        "A compact layout whose modes are ordered by `order` (smallest stride first).",
    ),
    func(
        B::MakeLayoutTv,
        "make_layout_tv",
        &[p("threads", K::Layout), p("values", K::Layout)],
        "Layout",
        "The (thread, value) -> coordinate layout of threads that each own `values`.",
    ),
    func(
        B::MaxCommonVector,
        "max_common_vector",
        &[p("a", K::Layout), p("b", K::Layout)],
        "int",
        "The number of leading elements both layouts map contiguously.",
    ),
    BuiltinInfo {
        generics: &[G::Int],
        ..func(B::Upcast, "upcast", LT, "Layout | Tensor", "Groups N elements into one (e.g. for vector types).")
    },
    BuiltinInfo {
        generics: &[G::Int],
        ..func(B::Downcast, "downcast", LT, "Layout | Tensor", "Splits each element into N.")
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
             cluster it lands in.",
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

/// The row of `name`. `Sw` is `Swizzle`, as CuTe prints it (`Sw<3,4,3> o (8,64):(64,1)`).
pub fn lookup(name: &str) -> Option<&'static BuiltinInfo> {
    let name = if name == "Sw" { "Swizzle" } else { name };
    BUILTINS.iter().find(|b| b.name == name)
}

/// The row of `builtin`.
pub fn info(builtin: Builtin) -> &'static BuiltinInfo {
    // Every variant has a row (a unit test checks it); the fallback only keeps this total.
    BUILTINS.iter().find(|b| b.builtin == builtin).unwrap_or(&BUILTINS[0])
}

impl Builtin {
    /// The operation of the layout algebra this builtin is (`cutec_layout::apply` computes it, for the checker's
    /// folding and for the lowering alike); `None` for builtins that are not algebra. `select` is the algebra's
    /// `select<I...>(L)` when it has generic arguments. Tied to the algebra's table by a test: a builtin named
    /// after an operation is that operation.
    pub fn layout_op(self) -> Option<LayoutOp> {
        use Builtin as B;
        Some(match self {
            B::Size => LayoutOp::Size,
            B::Rank => LayoutOp::Rank,
            B::Depth => LayoutOp::Depth,
            B::Get => LayoutOp::Get,
            B::Shape => LayoutOp::Shape,
            B::Stride => LayoutOp::Stride,
            B::Cosize => LayoutOp::Cosize,
            B::Select => LayoutOp::Select,
            B::Composition => LayoutOp::Composition,
            B::MakeLayout => LayoutOp::MakeLayout,
            B::Coalesce => LayoutOp::Coalesce,
            B::Complement => LayoutOp::Complement,
            B::Filter => LayoutOp::Filter,
            B::RightInverse => LayoutOp::RightInverse,
            B::LeftInverse => LayoutOp::LeftInverse,
            B::LogicalDivide => LayoutOp::LogicalDivide,
            B::ZippedDivide => LayoutOp::ZippedDivide,
            B::TiledDivide => LayoutOp::TiledDivide,
            B::FlatDivide => LayoutOp::FlatDivide,
            B::LogicalProduct => LayoutOp::LogicalProduct,
            B::ZippedProduct => LayoutOp::ZippedProduct,
            B::TiledProduct => LayoutOp::TiledProduct,
            B::FlatProduct => LayoutOp::FlatProduct,
            B::BlockedProduct => LayoutOp::BlockedProduct,
            B::RakedProduct => LayoutOp::RakedProduct,
            B::TileToShape => LayoutOp::TileToShape,
            B::MakeOrderedLayout => LayoutOp::MakeOrderedLayout,
            B::MakeLayoutTv => LayoutOp::MakeLayoutTv,
            B::MaxCommonVector => LayoutOp::MaxCommonVector,
            B::Upcast => LayoutOp::Upcast,
            B::Downcast => LayoutOp::Downcast,
            B::LocalTile => LayoutOp::LocalTile,
            B::LocalPartition => LayoutOp::LocalPartition,
            _ => return None,
        })
    }
}

/// A method of a builtin value type.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Method {
    FragmentA,
    FragmentB,
    FragmentC,
    PartitionA,
    PartitionB,
    PartitionC,
}

#[derive(Clone, Copy, Debug)]
pub struct MethodInfo {
    pub method: Method,
    pub name: &'static str,
    pub params: &'static [ParamSig],
    pub ret: &'static str,
    pub doc: &'static str,
}

impl MethodInfo {
    pub fn signature(&self) -> String {
        let ps: Vec<String> = self.params.iter().map(|p| format!("{}: {}", p.name, p.kind.sig())).collect();
        format!("TiledMma.{}({}) -> {}", self.name, ps.join(", "), self.ret)
    }
}

/// The methods of a tiled MMA (the only builtin type with methods so far).
pub static TILED_MMA_METHODS: &[MethodInfo] = &[
    MethodInfo {
        method: Method::FragmentA,
        name: "fragment_a",
        params: &[p("tile", K::Shape)],
        ret: "Tensor",
        doc: "Register fragment of the A operand for a (BM, BK) tile. For a wgmma, `mma.fragment_a((64, K))` \
              is A in registers (CuTe's `ALayout_64x16` along K: K / 2 values per thread, 8 per k-step of 16): \
              `gemm(mma, fa, sb, acc)` then reads A from it and B from shared memory.",
    },
    MethodInfo {
        method: Method::FragmentB,
        name: "fragment_b",
        params: &[p("tile", K::Shape)],
        ret: "Tensor",
        doc: "Register fragment of the B operand for a (BN, BK) tile.",
    },
    MethodInfo {
        method: Method::FragmentC,
        name: "fragment_c",
        params: &[p("tile", K::Shape)],
        ret: "Tensor",
        doc: "Register accumulator for a (BM, BN) tile, of the atom's C type.",
    },
    MethodInfo {
        method: Method::PartitionA,
        name: "partition_a",
        params: &[p("t", K::Tensor)],
        ret: "Tensor",
        doc: "The part of an A tile the calling thread feeds to the MMA, partitioned like `fragment_a`: \
              `copy(mma.partition_a(t), fa)` fills the fragment from a (64, K) tile in global or shared memory.",
    },
    MethodInfo {
        method: Method::PartitionB,
        name: "partition_b",
        params: &[p("t", K::Tensor)],
        ret: "Tensor",
        doc: "The part of a B tile the calling thread feeds to the MMA.",
    },
    MethodInfo {
        method: Method::PartitionC,
        name: "partition_c",
        params: &[p("t", K::Tensor)],
        ret: "Tensor",
        doc: "The part of a C tile the calling thread holds, partitioned like `fragment_c`.",
    },
];

/// Attributes and where they go.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum AttrTarget {
    Kernel,
    Fn,
    Loop,
}

impl AttrTarget {
    pub fn describe(self) -> &'static str {
        match self {
            AttrTarget::Kernel => "kernels",
            AttrTarget::Fn => "device functions",
            AttrTarget::Loop => "`for` loops",
        }
    }
}

/// `(name, where it applies, how it is written)`.
pub static ATTRIBUTES: &[(&str, AttrTarget, &str)] = &[
    ("warp_specialized", AttrTarget::Kernel, "warp_specialized"),
    ("inline", AttrTarget::Fn, "inline"),
    ("unroll", AttrTarget::Loop, "unroll  or  unroll(N)"),
    ("pipelined", AttrTarget::Loop, "pipelined(stages = S)"),
];

/// Launch clause keys.
pub static LAUNCH_KEYS: &[&str] = &["grid", "block", "cluster", "smem"];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_is_unique_and_documented() {
        let mut names: Vec<&str> = BUILTINS.iter().map(|b| b.name).collect();
        names.sort_unstable();
        let n = names.len();
        names.dedup();
        assert_eq!(n, names.len(), "duplicate builtin name");
        for b in BUILTINS {
            assert!(!b.doc.is_empty() && b.doc.ends_with('.'), "{}: doc must be one sentence", b.name);
            assert_eq!(info(b.builtin).name, b.name);
            assert!(b.optional <= b.params.len() && b.optional_generics <= b.generics.len());
        }
    }

    #[test]
    fn layout_builtins_are_the_algebras_operations() {
        for b in BUILTINS {
            let by_name = LayoutOp::from_name(b.name);
            match b.builtin.layout_op() {
                Some(op) => assert_eq!(op.name(), b.name, "{:?} is the operation `{}`", b.builtin, op.name()),
                // `ceil_div` is the language's integer `ceil_div(a, b)`, the algebra's works on shapes.
                None => assert!(
                    by_name.is_none() || b.builtin == Builtin::CeilDiv,
                    "the builtin `{}` is named after a layout operation but does not map to it",
                    b.name
                ),
            }
            // Every operation the builtin maps to accepts the builtin's arity (`select(c, a, b)` is the scalar
            // form; the algebra's is `select<I...>(L)`).
            if let Some(op) = b.builtin.layout_op().filter(|_| b.builtin != Builtin::Select) {
                let (lo, hi) = op.info().args;
                assert!(b.min_args() >= lo && b.params.len() <= hi, "{}: arity disagrees with the algebra", b.name);
            }
        }
    }

    #[test]
    fn signatures_read_like_the_docs() {
        assert_eq!(lookup("ceil_div").map(BuiltinInfo::signature), Some("ceil_div(a: int, b: int) -> int".into()));
        assert_eq!(
            lookup("tma_load").map(BuiltinInfo::signature),
            Some("tma_load(src: Tensor, dst: Layout | Tensor, bar = u64, multicast = int) -> Tensor".into())
        );
        assert_eq!(
            lookup("make_tensor").map(BuiltinInfo::signature).as_deref().map(|s| &s[..22]),
            Some("make_tensor<T, space>(")
        );
    }
}

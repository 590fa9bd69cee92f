//! Every builtin of the language in one table: its name, generic and value parameters, what it returns and a
//! one-line doc. Arity and argument kinds are checked from this table; result types are computed in
//! `check_call.rs` (one `match` over [`Builtin`]). The rows are in `builtins/table.rs`; the layout algebra's
//! operations are one variant, [`Builtin::Layout`], holding the algebra's [`LayoutOp`].

use crate::types::{Scalar, Type};
use cutec_layout::LayoutOp;

mod table;
use ArgKind as K;
pub use table::BUILTINS;
use table::p;

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
    MakeFragmentLike,
    MakeTensor,
    MakeIdentityTensor,
    Copy,
    Fill,
    Store,
    /// An operation of the layout algebra (`size`, `composition`, `local_tile`, ...): its name and its value
    /// are the algebra's, computed by `cutec_layout::apply`.
    Layout(LayoutOp),
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
    /// The name of a device function `fn(f32) -> f32` (`store(acc, c, map = gelu)`); functions are not values,
    /// the checker resolves the name.
    Function,
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
            ArgKind::Tiler => "a tiler (an integer, a layout, or a tuple of them)",
            ArgKind::Coord => "a coordinate (an integer or a tuple of integers and `_`)",
            ArgKind::Composable => "a layout, a tensor or a swizzle",
            ArgKind::MmaAtom => "an MMA atom such as `wgmma<64, 128, 16, bf16, bf16, f32>`",
            ArgKind::TiledMma => "a tiled MMA (made by `tiled_mma`)",
            ArgKind::Mbarrier => "an mbarrier (a `u64` in shared memory)",
            ArgKind::Inspectable => "a layout, a tensor or a tuple",
            ArgKind::Str => "a string literal",
            ArgKind::Function => "the name of a function `fn(f32) -> f32`",
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
            ArgKind::Function => "fn(f32) -> f32",
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
            ArgKind::Tiler => ty.is_tiler(),
            ArgKind::Coord => ty.is_integer() || ty.is_coord_tuple() || *ty == Type::Wildcard,
            ArgKind::Composable => shape || matches!(ty, Type::Layout(_) | Type::Tensor(_) | Type::Swizzle(_)),
            ArgKind::MmaAtom => matches!(ty, Type::MmaAtom(_)),
            ArgKind::TiledMma => matches!(ty, Type::TiledMma(_)),
            ArgKind::Mbarrier => *ty == Type::Scalar(Scalar::U64),
            ArgKind::Inspectable => shape || matches!(ty, Type::Layout(_) | Type::Tensor(_) | Type::Tuple(_)),
            // A string has no type: `static_assert` looks at its argument's syntax; a function's name is resolved
            // by the checker (`function_arg`).
            ArgKind::Str | ArgKind::Function => false,
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
        match self {
            Builtin::Layout(op) => Some(op),
            Builtin::Select => Some(LayoutOp::Select),
            _ => None,
        }
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
    ("unchecked_protocol", AttrTarget::Kernel, "unchecked_protocol"),
    ("persistent", AttrTarget::Kernel, "persistent  or  persistent(raster = grouped(G))"),
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

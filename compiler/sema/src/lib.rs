//! cutec-sema: module loading, name resolution and type checking of `.cute` programs.
//!
//! [`check`] parses a root file and the standard library modules it `use`s, resolves every name, assigns a
//! [`Type`] to every expression and binding, and describes every kernel and device function (const generic
//! values, dynamic dimensions, launch clause). Lowering to the IR reads the resulting [`Program`].
//!
//! # How it is organised
//!
//! - `load.rs`: parsing the root and the embedded stdlib modules, `use` resolution, module namespaces.
//! - `program.rs`: the checker's state and the order of its phases, `-D`, the recursion check.
//! - `signature.rs`: kernels' and functions' generics, parameters (dynamic dimensions), `-D`, launch, attributes.
//! - `body.rs` (scopes and names), `check_stmt.rs`, `check_expr.rs`, `check_call.rs` (builtin and function
//!   calls), `check_atom.rs` (Hopper atoms, tiled MMA methods), `check_type.rs` (written types, layout
//!   literals, generic arguments): the checking of bodies.
//!   `consteval.rs`: symbolic integers and constants from checked expressions.
//! - `reference.rs`: the book's generated reference (builtins, scalar type tables) and each builtin's example.
//! - `types.rs`: the [`Type`] language and the promotion rules; `builtins.rs`: the one table of builtins (its rows
//!   in `builtins/table.rs`; the layout algebra's operations are `Builtin::Layout(LayoutOp)`).
//! - `errors.rs`: the one error enum and its conversion to [`Diagnostic`], one module per family of errors
//!   (`errors/render_*.rs`); `codes.rs`: `cutec explain` texts.
//!
//! # Invariants
//!
//! - **Checking never fails and never panics**: every input gives a [`Program`] and a list of diagnostics.
//! - **Every expression and binding of a module without errors has a type other than [`Type::Error`]**; every
//!   `Name` expression of such a module has a [`Resolution`]. Where a module has errors, the broken expressions
//!   (and only expressions that depend on them) have `Type::Error`, and no diagnostic is reported about an
//!   `Error`-typed operand, so one mistake gives one diagnostic.
//! - **Names are resolved once**: a parameter, const generic or dynamic dimension of the enclosing kernel or
//!   function resolves to its typed id ([`ParamId`], [`ConstGenericId`], [`DimId`]), an index into that
//!   function's [`FunctionInfo`]; nothing after the checker looks these names up again. Names stay for printing,
//!   and a dimension inside a [`SymInt`] is a [`SymInt::Dim`] by name, as the manifest writes it.
//! - Side tables are keyed by ([`ModuleId`], [`NodeId`]): binding sites (`let`, `for`, parameters, const
//!   generics, `const` items) and expressions share one id space per module.
//! - A [`LayoutType`] holds a literal's symbolic shape and stride, otherwise at most its rank. Where the inputs
//!   are known, the checker also *folds* layouts with the layout algebra (`cutec-layout`, `fold.rs`): layout
//!   literals, layout operations and tensor expressions (`local_tile`, `composition`, slices, fragments, kernel
//!   parameters) get their [`cutec_layout::Value`] in [`CheckedModule::folded`]; read it with
//!   [`Program::folded`], [`Program::folded_layout`] and [`Program::folded_int`]. Algebra errors on static values
//!   are reported (E0200..E0299); run-time values stay symbolic (named [`cutec_layout::Int::Dynamic`]s).
//! - Diagnostics are sorted by file, then position. Syntax errors of every module come first in that order like
//!   all others; a module with syntax errors is still checked (its `Error` nodes are skipped silently).
//! - Device functions are never recursive (directly or through others) in a program without errors, so lowering
//!   can inline them.

mod body;
mod builtins;
mod check_atom;
mod check_call;
mod check_expr;
mod check_modes;
mod check_stmt;
mod check_type;
mod codes;
mod consteval;
mod errors;
mod fold;
mod fold_diag;
mod load;
mod program;
pub mod reference;
mod signature;
mod size_diag;
mod types;

#[cfg(test)]
mod fold_tests;
#[cfg(test)]
mod role_tests;
#[cfg(test)]
mod tests;

pub use builtins::{ATTRIBUTES, ArgKind, BUILTINS, Builtin, BuiltinInfo, Form, GenericKind, Method, TILED_MMA_METHODS};
pub use codes::CODES;
pub use fold_diag::algebra_diagnostic;
pub use load::STDLIB;
pub use signature::LoopAttrs;
pub use types::{
    IntTuple, LayoutType, MmaAtom, Scalar, Space, SwizzleType, SymInt, SymLayout, SymOp, TensorType, TiledMmaType,
    Type, promote,
};

use cutec_diagnostics::{Diagnostic, FileId, SourceMap, Span};
use cutec_grammar::ast::{self, NodeId};
use std::collections::HashMap;

/// Index of a module in [`Program::modules`]; the root file is module 0.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub struct ModuleId(pub u32);

impl ModuleId {
    pub const ROOT: ModuleId = ModuleId(0);
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// A const generic of a kernel or function: its index in [`FunctionInfo::const_generics`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub struct ConstGenericId(pub u32);

/// A dynamic dimension of a kernel or function: its index in [`FunctionInfo::dyn_dims`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub struct DimId(pub u32);

/// A parameter of a kernel or function: its index in [`FunctionInfo::params`] (for a scalar kernel parameter,
/// also the index of its [`SymInt::Param`] leaves).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub struct ParamId(pub u32);

impl ConstGenericId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl DimId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl ParamId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// What [`check`] returns: the program (always) and every diagnostic.
#[derive(Debug)]
pub struct CheckOutput {
    pub program: Program,
    /// Sorted by file and position; syntax errors included.
    pub diagnostics: Vec<Diagnostic>,
}

impl CheckOutput {
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }
}

/// A checked program: its modules with their side tables, and a description of every kernel and function.
#[derive(Debug, Default)]
pub struct Program {
    /// The root file first, then the stdlib modules in the order they were first `use`d.
    pub modules: Vec<CheckedModule>,
    /// Every kernel and device function of every module, in module order, then item order.
    pub functions: Vec<FunctionInfo>,
    /// Every `const` item.
    pub consts: Vec<ConstInfo>,
}

impl Program {
    /// The compile-time value of the integer expression `id` of module `m`, if the checker computed one.
    pub fn value_of(&self, m: ModuleId, id: NodeId) -> Option<i64> {
        self.module(m).and_then(|m| m.values.get(&id)).copied()
    }
    pub fn module(&self, id: ModuleId) -> Option<&CheckedModule> {
        self.modules.get(id.index())
    }
    /// The type of the expression or binding `id` of module `m` (`Error` if it has none).
    pub fn type_of(&self, m: ModuleId, id: NodeId) -> &Type {
        self.module(m).and_then(|m| m.types.get(id.0 as usize)).unwrap_or(&Type::Error)
    }
    /// What the name expression `id` of module `m` denotes (also: the method of a method call).
    pub fn resolution(&self, m: ModuleId, id: NodeId) -> Option<&Resolution> {
        self.module(m).and_then(|m| m.resolutions.get(id.0 as usize)).and_then(Option::as_ref)
    }
    /// The kernel or function defined by item `item` of module `m`.
    pub fn function(&self, m: ModuleId, item: usize) -> Option<&FunctionInfo> {
        self.functions.iter().find(|f| f.module == m && f.item == item)
    }
    /// The kernels, in source order.
    pub fn kernels(&self) -> impl Iterator<Item = &FunctionInfo> {
        self.functions.iter().filter(|f| f.is_kernel)
    }
    /// The kernel named `name` of the root module.
    pub fn kernel(&self, name: &str) -> Option<&FunctionInfo> {
        self.kernels().find(|k| k.name == name && k.module == ModuleId::ROOT)
    }
    /// The folded value of expression or binding `id` of module `m`: the layout of a layout or tensor
    /// expression (a tensor's value is its layout), a tuple, `_`, a swizzle, or an integer. See
    /// [`CheckedModule::folded`].
    pub fn folded(&self, m: ModuleId, id: NodeId) -> Option<&cutec_layout::Value> {
        self.module(m).and_then(|m| m.folded.get(&id))
    }
    /// The folded plain layout of the layout or tensor expression (or binding) `id`; `None` if it did not fold
    /// or is swizzled (then [`Program::folded`] holds a [`cutec_layout::Value::Composed`]).
    pub fn folded_layout(&self, m: ModuleId, id: NodeId) -> Option<&cutec_layout::Layout> {
        match self.folded(m, id)? {
            cutec_layout::Value::Layout(l) => Some(l),
            _ => None,
        }
    }
    /// The static integer the expression or binding `id` folded to (`size(tv)`, `rank(l)`, a literal, ...).
    pub fn folded_int(&self, m: ModuleId, id: NodeId) -> Option<i64> {
        match self.folded(m, id)? {
            cutec_layout::Value::Int(cutec_layout::Int::Static(v)) => Some(*v),
            _ => None,
        }
    }
    pub fn constant(&self, m: ModuleId, item: usize) -> Option<&ConstInfo> {
        self.consts.iter().find(|c| c.module == m && c.item == item)
    }
}

/// One parsed module and its side tables, indexed by `NodeId.0`.
#[derive(Debug)]
pub struct CheckedModule {
    pub file: FileId,
    /// `main` for the root, `stdlib::reduce` for a stdlib module.
    pub path: String,
    pub ast: ast::Module,
    /// The type of every expression and binding (`Type::Error` where none was assigned).
    pub types: Vec<Type>,
    /// The resolution of every `Name` expression, and the method of every `MethodCall` expression.
    pub resolutions: Vec<Option<Resolution>>,
    /// Names brought in by `use`: `(local name, defining module, item index)`.
    pub imports: Vec<(String, ModuleId, usize)>,
    /// The attributes of `for` loops that have some, keyed by the loop variable's binding id.
    pub loops: HashMap<NodeId, LoopAttrs>,
    /// The values of the integer expressions the checker needed at compile time and could compute: generic
    /// arguments (`size<I>`, `Swizzle<...>`, `wgmma<...>`, calls `f<4>(..)`), attribute counts, const generic
    /// defaults and static layout entries. Const generics are replaced by their values (defaults and `-D`).
    /// Also the static results of folded layout queries (`size(rx)`, `cosize`, `rank`, `depth`, `get` of a
    /// tuple, `max_common_vector`), which count as compile-time constants (loop bounds, generic arguments).
    pub values: HashMap<NodeId, i64>,
    /// The folded values of layout, tensor and integer expressions and of the bindings holding them (`let`
    /// bindings by their binding id, kernel parameters by [`ParamInfo::id`]), computed with the layout algebra
    /// where the inputs are known:
    ///
    /// - layout expressions: [`cutec_layout::Value::Layout`], or [`cutec_layout::Value::Composed`] when a swizzle
    ///   is composed in (`composition(Swizzle<3,3,3>, L)`, `SW128_K<bf16>` is `Sw<3,3,3> o 0 o (8,64):(64,1)`);
    /// - tensor expressions: the tensor's layout, as CuTe gives it: a kernel parameter's written layout with
    ///   const generics substituted (`N:1` is `4096:1` under `-D N=4096`), the tile of `local_tile` and the
    ///   part of `local_partition` (without their offsets, which lowering computes from the coordinates), the
    ///   result of `composition(tensor, layout)` and of divides, the layout of a slice `t[i, _]` (CuTe's
    ///   `slice`, which keeps the modes under `_`: `(256,4):(4,1)` sliced at `[t, _]` is `(4):(1)`),
    ///   `make_fragment_like` (CuTe's compact fragment layout), `make_tensor`, `tma_load`;
    /// - integers: [`cutec_layout::Int::Static`] when known at compile time, otherwise
    ///   [`cutec_layout::Int::Dynamic`] named after the expression (`M`, `thread_idx.x`, `block_idx.x*128`) with
    ///   no value, so layouts over dynamic dimensions stay symbolic (`(128,64):(K,1)`);
    /// - tuples (shapes, tilers, coordinates with `_`), swizzles, and `make_layout_tv`'s pair.
    ///
    /// No entry: values that need a const generic without value (checked symbolically), operations that must
    /// branch on a run-time value (the algebra's `NeedsStatic`), device functions' tensor parameters (any
    /// layout), tiled-MMA fragments and partitions, and anything with an error.
    pub folded: HashMap<NodeId, cutec_layout::Value>,
}

/// What a name denotes. Names of the enclosing kernel or function are resolved to ids into its
/// [`FunctionInfo`], so that nothing after the checker looks them up by name again.
#[derive(Clone, PartialEq, Debug)]
pub enum Resolution {
    /// A `let` or `for` binding of the same module, by the binding's id.
    Local(NodeId),
    /// A parameter of the enclosing kernel or function ([`FunctionInfo::param`]).
    Param(ParamId),
    /// A const generic of the enclosing kernel or function ([`FunctionInfo::const_generic`], with its value).
    ConstGeneric(ConstGenericId),
    /// A dynamic dimension of the enclosing kernel or function ([`FunctionInfo::dyn_dim`]).
    DynDim(DimId),
    Builtin(Builtin),
    /// A device function: defining module and item index.
    Function(ModuleId, usize),
    /// A kernel (only as the callee of an erroneous call).
    Kernel(ModuleId, usize),
    /// A `const` item: defining module and item index.
    Const(ModuleId, usize),
    /// An element type name written as a generic argument or in a type.
    Scalar(Scalar),
    /// A memory space name written as a generic argument.
    Space(Space),
    /// Keyed by a `MethodCall` expression: the builtin method it calls.
    Method(Method),
    /// `grouped` in `persistent(raster = grouped(G))`: a tile order, which only that attribute names.
    Rasterization,
}

/// A kernel or a device function.
#[derive(Clone, Debug)]
pub struct FunctionInfo {
    pub module: ModuleId,
    pub item: usize,
    pub name: String,
    pub is_kernel: bool,
    pub const_generics: Vec<ConstGenericInfo>,
    pub params: Vec<ParamInfo>,
    /// `Unit` for kernels and for functions without `-> T`.
    pub ret: Type,
    /// Names in parameter layouts that are neither const generics nor constants: runtime `int`s read from the
    /// arguments (kernel parameters of the PTX entry).
    pub dyn_dims: Vec<DynDim>,
    /// Kernels only (`None` also when the clause is missing, which is an error).
    pub launch: Option<LaunchInfo>,
    pub warp_specialized: bool,
    /// `unchecked_protocol`: the program accepts that the compiler may not follow its mbarrier protocol (E0345
    /// is then a warning, not an error).
    pub unchecked_protocol: bool,
    /// Kernels only: `persistent(...)`, which runs the grid of the launch clause as a loop over its tiles on one
    /// CTA (or cluster) per SM.
    pub persistent: Option<Persistent>,
    pub inline: bool,
    /// Kernels only: `static_assert(M % 128 == 0)` on dynamic dimensions, which the runtime checks at launch and
    /// the lowering may rely on.
    pub requires: Vec<Requirement>,
}

/// `persistent(raster = grouped(G))`: the launch clause's grid becomes a list of tiles, which the CTAs (or the
/// clusters) launched, one per SM, take in turn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Persistent {
    /// `grouped(G)`: groups of G rows of tiles (along the grid's x) sweep the columns (y) together, so the tiles
    /// running at the same time share their operands in L2. `None`: the grid's own order, x fastest (also when G
    /// is a const generic without value, which is then reported).
    pub group: Option<u32>,
}

impl FunctionInfo {
    pub fn const_generic(&self, id: ConstGenericId) -> Option<&ConstGenericInfo> {
        self.const_generics.get(id.index())
    }
    pub fn dyn_dim(&self, id: DimId) -> Option<&DynDim> {
        self.dyn_dims.get(id.index())
    }
    pub fn param(&self, id: ParamId) -> Option<&ParamInfo> {
        self.params.get(id.index())
    }
    /// The dynamic dimension named `name`: for [`SymInt::Dim`] leaves, which name their dimension (as the
    /// manifest does).
    pub fn dim_id(&self, name: &str) -> Option<DimId> {
        let i = self.dyn_dims.iter().position(|d| d.name == name)?;
        u32::try_from(i).ok().map(DimId)
    }
}

/// A divisibility requirement on a dynamic dimension, from a `static_assert` the checker cannot decide.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Requirement {
    pub dim: String,
    /// Positive.
    pub multiple_of: i64,
    /// The `static_assert`'s message, if it has one.
    pub message: Option<String>,
    pub span: Span,
}

/// `const NAME: int = default` in a generic list.
#[derive(Clone, PartialEq, Debug)]
pub struct ConstGenericInfo {
    pub id: NodeId,
    pub name: String,
    /// `int` or `bool`.
    pub ty: Scalar,
    pub default: Option<i64>,
    /// The value used: `-D` if given, else the default; `None` if neither (booleans are 0 or 1).
    pub value: Option<i64>,
    /// Whether the value came from `-D`.
    pub from_define: bool,
}

#[derive(Clone, PartialEq, Debug)]
pub struct ParamInfo {
    pub id: NodeId,
    pub name: String,
    pub ty: Type,
    pub span: Span,
}

/// Whether a dynamic dimension is read from a shape or a stride.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum DimComponent {
    Shape,
    Stride,
}

/// Where a name occurs in a parameter's layout: parameter index, path of mode indices from the top of the shape
/// or stride tree (`[1]` is top-level mode 1, `[1, 0]` its first sub-mode), and which of the two.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct DimSite {
    pub param: usize,
    pub path: Vec<usize>,
    pub component: DimComponent,
}

/// A dynamic dimension such as the `M` of `Tensor<f32, (M, N):(N, 1), gmem>`.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct DynDim {
    pub name: String,
    /// The site it is read from: the first shape occurrence with the shortest path, else the first stride one.
    pub source: DimSite,
    /// Every bare occurrence, `source` included: the runtime checks that all agree (same name, same value).
    pub sites: Vec<DimSite>,
}

/// A kernel's launch clause, as symbolic integers over const generics (folded), dynamic dimensions and scalar
/// integer parameters.
#[derive(Clone, PartialEq, Debug, Default)]
pub struct LaunchInfo {
    /// 1 to 3 entries (x, y, z).
    pub grid: Vec<SymInt>,
    pub block: Vec<SymInt>,
    pub cluster: Option<Vec<SymInt>>,
    /// Dynamic shared memory bytes requested by `smem = ...`.
    pub smem: Option<SymInt>,
}

/// A `const` item.
#[derive(Clone, PartialEq, Debug)]
pub struct ConstInfo {
    pub module: ModuleId,
    pub item: usize,
    pub name: String,
    pub ty: Scalar,
    /// `None` if the value could not be computed (an error was reported).
    pub value: Option<ConstValue>,
}

#[derive(Clone, Copy, PartialEq, Debug)]
pub enum ConstValue {
    Int(i64),
    Bool(bool),
    Float(f64),
}

/// The value of a `-D NAME=VALUE` as it was written: the kind of literal travels with it, so that the checker
/// refuses `true` for an `int` parameter and `1` for a `bool` one instead of converting between them.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum DefineValue {
    Int(i64),
    Bool(bool),
}

impl From<i64> for DefineValue {
    fn from(v: i64) -> Self {
        DefineValue::Int(v)
    }
}

impl From<bool> for DefineValue {
    fn from(b: bool) -> Self {
        DefineValue::Bool(b)
    }
}

impl std::fmt::Display for DefineValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DefineValue::Int(v) => write!(f, "{v}"),
            DefineValue::Bool(b) => write!(f, "{b}"),
        }
    }
}

/// Parses `root` (already in `map`) and the stdlib modules it uses, then resolves and checks everything.
///
/// `defines` are `-D NAME=VALUE` overrides of kernels' const generics; a name that is no const generic of any
/// kernel, or a value of the wrong kind or range for its parameter, is reported against a `<command line>`
/// pseudo-file added to `map`.
pub fn check(map: &mut SourceMap, root: FileId, defines: &[(String, DefineValue)]) -> CheckOutput {
    program::check_program(map, root, defines)
}

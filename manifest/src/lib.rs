//! The **kernel manifest** (format version 1): the JSON file the cutec compiler writes next to a PTX (or cubin)
//! module and the runtime reads to validate arguments and launch kernels.
//!
//! # Format
//!
//! ```json
//! {
//!   "format_version": 1,
//!   "target": "sm_90a",
//!   "module": "softmax.ptx",
//!   "kernels": [
//!     {
//!       "name": "softmax",
//!       "params": [
//!         { "kind": "tensor", "name": "x", "dtype": "f32", "space": "gmem",
//!           "layout": { "shape": ["M", 4096], "stride": [4096, 1] }, "align_bytes": 16, "access": "read" },
//!         { "kind": "tensor", "name": "y", "dtype": "f32", "space": "gmem",
//!           "layout": { "shape": ["M", 4096], "stride": [4096, 1] }, "align_bytes": 16, "access": "write" },
//!         { "kind": "scalar", "name": "scale", "dtype": "f32" }
//!       ],
//!       "dims": [ { "name": "M", "type": "i32", "from": { "param": "x", "mode": 0 } } ],
//!       "launch": {
//!         "grid": [ { "op": "ceil_div", "args": [ { "dim": "M" }, { "int": 4 } ] } ],
//!         "block": [ { "int": 128 } ],
//!         "smem_bytes": { "int": 0 },
//!         "static_smem_bytes": 512
//!       },
//!       "const_params": { "N": 4096, "ROWS_PER_BLOCK": 4 },
//!       "tensor_maps": [ { "name": "x_tma0", "tensor": "x", "modes": [1, 0], "box": [32, 4],
//!                          "swizzle": "128B", "l2_promotion": "128B", "oob_fill": "zero" } ]
//!     }
//!   ]
//! }
//! ```
//!
//! * `format_version` (integer, required, checked first): `1`. A reader rejects any other version.
//! * `target`: the architecture the module was compiled for (`sm_90a`). `module`: the file name of the PTX/cubin,
//!   relative to the manifest.
//! * `kernels[].name`: the PTX entry symbol (`.entry name`).
//! * `params`, in declaration order. A **tensor** has an element `dtype` (`f32 f16 bf16 e4m3 e5m2 f64 i8 u8 i32
//!   i64 u32 bool`), a memory `space` (`"gmem"` only in v1), a `layout` — CuTe `shape` and `stride` (in elements)
//!   as congruent, possibly nested JSON tuples whose leaves are integers (static) or strings naming a dynamic
//!   dimension — and `align_bytes`, the alignment the kernel requires of the base pointer (a power of two, at
//!   least the element size; e.g. 16 for 128-bit vector accesses), and optionally `access` (`read`, `write` or
//!   `read_write`, the default): how the kernel uses it. A **scalar** has a `dtype`.
//! * `dims`: the dynamic dimensions, in order. Each has a `type` (`i32` or `i64`: the PTX parameter type) and
//!   `from`: the tensor parameter, the top-level `mode` and the component (`"of": "shape"`, the default, or
//!   `"stride"`) that binds it. That leaf must be exactly the dimension's name. At launch the runtime binds every
//!   dimension from its source, then checks every other occurrence in every layout against the bound value.
//! * `launch`: `grid` and `block` are lists of 1 to 3 expressions (x, y, z; missing entries are 1), `cluster` an
//!   optional list of 1 to 3 expressions, `smem_bytes` the dynamic shared memory in bytes (an expression; default
//!   0), `static_smem_bytes` the static shared memory the compiler allocated (informational), and `persistent`
//!   (optional, default `false`): `grid` is then the grid of *tiles* the kernel's body runs over, and the runtime
//!   launches `min(tiles, SMs)` CTAs (whole clusters along x: `min(clusters of tiles, SMs / cluster size)` times
//!   the cluster, by the cluster's y) which take the tiles in turn (see [`Launch::hardware_grid`]). Expressions are JSON
//!   trees: `{"int": 4}`, `{"dim": "M"}`, `{"op": OP, "args": [..]}` with `OP` one of `add sub mul div rem ceil_div
//!   shape_div min max` (the compiler's one symbolic integer, [`SymInt`], whose JSON form this is); on input a bare
//!   integer or string is accepted as shorthand.
//! * `const_params`: the compile-time (const generic) values the kernel was specialized with: integers, booleans
//!   or strings; informational.
//! * `requires` (optional): divisibility the kernel's code relies on: `dim` must be a multiple of `multiple_of`
//!   (positive), with the `message` of the `static_assert` it comes from.
//! * `tensor_maps` (optional, omitted when empty): the TMA tensor maps the kernel reads, each encoded by the
//!   runtime at launch from a tensor argument ([`TensorMapParam`]). `name` is the PTX parameter's name (one
//!   namespace with the parameters and dimensions); `tensor` the tensor parameter it describes. Map dimension `d`
//!   (0 innermost, as the driver counts) is the tensor's top-level mode `modes[d]`: its extent is that mode's bound
//!   shape, its byte stride (for `d >= 1`) that mode's stride times the element size. `box` is the box moved by one
//!   instruction, in elements per map dimension. `swizzle` (`none`, `32B`, `64B`, `128B`), `l2_promotion` (`none`,
//!   `64B`, `128B`, `256B`) and `oob_fill` (`zero`, or `nan` for f16, bf16, f32 and f64) are the driver's options
//!   of the same names. The element type is the tensor's dtype (1-byte types move as bytes); element strides are
//!   1 and there is no interleave. Modes of the tensor not listed are not part of the map. Rules: 1 to 5 modes, as
//!   many as box entries, distinct and below the tensor's rank, each a leaf (not a nested mode); the stride of
//!   `modes[0]` is the static integer 1; each box entry is 1 to 256; `box[0]` times the element size is a multiple
//!   of 16 bytes, and at most the swizzle's span (32, 64 or 128 bytes) with a swizzle; the tensor's `align_bytes`
//!   is at least 16. What depends on the arguments (extents of 1 to 2^32, strides that are multiples of 16 bytes
//!   below 2^40) is checked at launch.
//!
//! # PTX parameter ABI (v1)
//!
//! The kernel's PTX parameters are, in order ([`Kernel::ptx_params`]): for each entry of `params`, a tensor's base
//! pointer (`.u64`, a generic address of global memory) or a scalar's value (its dtype's size; `bool` is one byte),
//! then each entry of `dims` as an `.s32`/`.s64` value, then each entry of `tensor_maps` as the 128 bytes of its
//! encoded `CUtensorMap` (`.param .align 64 .b8 NAME[128]`, a `__grid_constant__` parameter).
//!
//! Unknown fields are rejected everywhere (a misspelled field is an error, not a silently ignored default).

mod dtype;
mod error;
mod layout;
mod tma;
mod validate;

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

pub use cutec_symint::{EvalError as ExprError, Op, SymInt};
pub use dtype::{DType, IntType, UnknownDType};
pub use error::ManifestError;

/// A launch expression: a [`SymInt`] over the kernel's dynamic dimensions (the only leaves it may have).
pub type Expr = SymInt;
pub use layout::{Entry, IntTuple, Layout, dim_names};
pub use tma::{
    TENSOR_MAP_ALIGN, TENSOR_MAP_BYTES, TENSOR_MAP_MAX_RANK, TMA_ALIGN, TMA_MAX_BOX, TensorMapParam, TmaL2Promotion,
    TmaOobFill, TmaSwizzle,
};

/// The manifest format version this crate reads and writes.
pub const FORMAT_VERSION: u32 = 1;

/// A whole manifest: one module and its kernels. Invariants after [`Manifest::from_json`] or
/// [`Manifest::validate`]: see the rules in the [crate documentation](crate).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    pub format_version: u32,
    pub target: String,
    pub module: String,
    pub kernels: Vec<Kernel>,
}

/// One kernel (one PTX entry).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Kernel {
    pub name: String,
    pub params: Vec<Param>,
    #[serde(default)]
    pub dims: Vec<Dim>,
    pub launch: Launch,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub const_params: BTreeMap<String, ConstValue>,
    /// Divisibility the kernel's code relies on (its `static_assert`s on dynamic dimensions): the runtime
    /// refuses a launch that breaks one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requires: Vec<Requirement>,
    /// The TMA tensor maps the runtime encodes at launch, passed after the dims.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tensor_maps: Vec<TensorMapParam>,
    /// The floating-point operations one launch issues on the tensor cores, over the dims: 2 per multiply-add of
    /// every wgmma the kernel runs, tiles at the edges counted whole (for a GEMM whose tiles divide M, N and K,
    /// `2 M N K`). Absent when the compiler cannot count them (an MMA under a condition, or in a loop whose trip
    /// count depends on more than the dims). `cutec run --bench` reports TFLOP/s from it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flops: Option<Expr>,
}

/// `dim` must be a multiple of `multiple_of` (positive).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Requirement {
    pub dim: String,
    pub multiple_of: i64,
    /// The message of the `static_assert` it comes from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// A kernel parameter as the user sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Param {
    Tensor(TensorParam),
    Scalar(ScalarParam),
}

/// A tensor in global memory, passed as its base pointer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TensorParam {
    pub name: String,
    pub dtype: DType,
    pub space: MemorySpace,
    pub layout: Layout,
    pub align_bytes: u32,
    /// How the kernel uses the tensor; `read_write` when absent.
    #[serde(default)]
    pub access: Access,
}

/// How a kernel uses a tensor parameter. Tools use it (e.g. `cutec run` poisons write-only tensors before a launch
/// and fills the others with data); the runtime does not enforce it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Access {
    Read,
    Write,
    #[default]
    ReadWrite,
}

/// A scalar passed by value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScalarParam {
    pub name: String,
    pub dtype: DType,
}

/// Where a tensor lives. Only global memory in v1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MemorySpace {
    Gmem,
}

/// A dynamic dimension: a runtime integer bound from a tensor argument and passed as its own PTX parameter.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Dim {
    pub name: String,
    #[serde(rename = "type")]
    pub ty: IntType,
    pub from: DimSource,
}

/// The layout leaf that binds a [`Dim`]: `param.of[mode]`, e.g. `x.shape[0]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DimSource {
    pub param: String,
    pub mode: usize,
    #[serde(default)]
    pub of: DimComponent,
}

/// Whether a dimension is bound from a shape or from a stride.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DimComponent {
    #[default]
    Shape,
    Stride,
}

impl fmt::Display for DimComponent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DimComponent::Shape => "shape",
            DimComponent::Stride => "stride",
        })
    }
}

/// The launch configuration as expressions over the kernel's dimensions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Launch {
    pub grid: Vec<Expr>,
    pub block: Vec<Expr>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster: Option<Vec<Expr>>,
    #[serde(default = "zero")]
    pub smem_bytes: Expr,
    #[serde(default)]
    pub static_smem_bytes: u32,
    /// `persistent`: `grid` describes tiles, not CTAs (see [`Launch::hardware_grid`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub persistent: bool,
}

impl Launch {
    /// The grid to launch for a `grid` of tiles (evaluated; cluster-divisible) on a device of `sms` SMs: as is
    /// unless `persistent`; then one CTA per SM at most, in whole clusters laid along x (the kernel computes its
    /// share of the tiles from `%nctaid.x` and `%ctaid.x`, its cluster's y from `%ctaid.y`): `(n * cx, cy, 1)`
    /// with `n = min(tiles / (cx * cy), max(1, sms / (cx * cy)))`.
    pub fn hardware_grid(&self, grid: [u32; 3], cluster: Option<[u32; 3]>, sms: u32) -> [u32; 3] {
        if !self.persistent {
            return grid;
        }
        let [cx, cy, cz] = cluster.unwrap_or([1, 1, 1]).map(|c| u64::from(c.max(1)));
        let tiles = grid.iter().map(|&g| u64::from(g)).product::<u64>();
        let per_cluster = cx * cy * cz;
        let clusters = (tiles / per_cluster).min((u64::from(sms) / per_cluster).max(1)).max(1);
        // At most `sms` CTAs, within u32 after the division above.
        [(clusters * cx) as u32, cy as u32, cz as u32]
    }
}

fn zero() -> Expr {
    Expr::Const(0)
}

/// A compile-time parameter value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ConstValue {
    Bool(bool),
    Int(i64),
    Str(String),
}

/// One PTX parameter of a kernel, in ABI order (see the [crate documentation](crate)).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PtxParam<'a> {
    /// A tensor's base pointer (`.u64`).
    Pointer(&'a TensorParam),
    /// A scalar by value.
    Scalar(&'a ScalarParam),
    /// A dynamic dimension (`.s32` or `.s64`).
    Dim(&'a Dim),
    /// An encoded TMA tensor map (`.param .align 64 .b8 NAME[128]`).
    TensorMap(&'a TensorMapParam),
}

impl PtxParam<'_> {
    /// Size in bytes of the PTX parameter.
    pub fn size_bytes(&self) -> u32 {
        match self {
            PtxParam::Pointer(_) => 8,
            PtxParam::Scalar(s) => s.dtype.size_bytes(),
            PtxParam::Dim(d) => d.ty.size_bytes(),
            PtxParam::TensorMap(_) => TENSOR_MAP_BYTES,
        }
    }

    /// Alignment in bytes of the PTX parameter.
    pub fn align_bytes(&self) -> u32 {
        match self {
            PtxParam::TensorMap(_) => TENSOR_MAP_ALIGN,
            other => other.size_bytes(),
        }
    }
}

impl Param {
    pub fn name(&self) -> &str {
        match self {
            Param::Tensor(t) => &t.name,
            Param::Scalar(s) => &s.name,
        }
    }

    pub fn dtype(&self) -> DType {
        match self {
            Param::Tensor(t) => t.dtype,
            Param::Scalar(s) => s.dtype,
        }
    }

    /// `"tensor"` or `"scalar"`.
    pub fn kind(&self) -> &'static str {
        match self {
            Param::Tensor(_) => "tensor",
            Param::Scalar(_) => "scalar",
        }
    }
}

impl Kernel {
    /// The parameter called `name`.
    pub fn param(&self, name: &str) -> Option<&Param> {
        self.params.iter().find(|p| p.name() == name)
    }

    /// The dimension called `name`.
    pub fn dim(&self, name: &str) -> Option<&Dim> {
        self.dims.iter().find(|d| d.name == name)
    }

    /// The tensor parameters, in order.
    pub fn tensors(&self) -> impl Iterator<Item = &TensorParam> {
        self.params.iter().filter_map(|p| match p {
            Param::Tensor(t) => Some(t),
            Param::Scalar(_) => None,
        })
    }

    /// The tensor map called `name`.
    pub fn tensor_map(&self, name: &str) -> Option<&TensorMapParam> {
        self.tensor_maps.iter().find(|m| m.name == name)
    }

    /// The PTX parameters in ABI order: the params (pointer or value), then the dims, then the tensor maps.
    pub fn ptx_params(&self) -> impl Iterator<Item = PtxParam<'_>> {
        self.params
            .iter()
            .map(|p| match p {
                Param::Tensor(t) => PtxParam::Pointer(t),
                Param::Scalar(s) => PtxParam::Scalar(s),
            })
            .chain(self.dims.iter().map(PtxParam::Dim))
            .chain(self.tensor_maps.iter().map(PtxParam::TensorMap))
    }
}

impl Manifest {
    /// Parses and [validates](Manifest::validate) a manifest. The format version is checked before anything else,
    /// so a manifest of another version is reported as such rather than as a schema error.
    pub fn from_json(json: &str) -> Result<Manifest, ManifestError> {
        let value: serde_json::Value = serde_json::from_str(json)?;
        match value.get("format_version") {
            None => return Err(ManifestError::MissingFormatVersion),
            Some(v) if v.as_u64() != Some(u64::from(FORMAT_VERSION)) => {
                return Err(ManifestError::UnsupportedFormatVersion { found: v.to_string() });
            }
            Some(_) => {}
        }
        let manifest: Manifest = serde_json::from_value(value)?;
        manifest.validate()?;
        Ok(manifest)
    }

    /// Pretty-printed JSON (two-space indentation, fields in declaration order, a trailing newline).
    pub fn to_json_pretty(&self) -> String {
        // Serializing these types cannot fail: every map key is a string and no Serialize impl errors.
        let mut s = serde_json::to_string_pretty(self).unwrap_or_default();
        s.push('\n');
        s
    }

    /// The kernel whose PTX entry is `name`.
    pub fn kernel(&self, name: &str) -> Option<&Kernel> {
        self.kernels.iter().find(|k| k.name == name)
    }

    /// Checks every rule of the format; see the [crate documentation](crate).
    pub fn validate(&self) -> Result<(), ManifestError> {
        validate::manifest(self)
    }
}

#[cfg(test)]
mod tests;

//! Errors of reading and validating a manifest.

use crate::ExprError;
use crate::layout::IntTuple;
use crate::{DimComponent, FORMAT_VERSION, TENSOR_MAP_MAX_RANK, TMA_ALIGN, TMA_MAX_BOX};

/// Why a manifest was rejected. Every variant names the kernel and the parameter or dimension concerned.
#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    #[error("invalid manifest JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error("the manifest has no `format_version` field (this reader understands version {FORMAT_VERSION})")]
    MissingFormatVersion,
    #[error("unsupported manifest format_version {found} (this reader understands version {FORMAT_VERSION})")]
    UnsupportedFormatVersion { found: String },
    #[error("target `{target}` is not an NVIDIA architecture name like `sm_90a`")]
    BadTarget { target: String },
    #[error("kernel `{name}` is defined twice")]
    DuplicateKernel { name: String },
    #[error("kernel `{kernel}`: `{name}` is not a valid {what} name")]
    BadName { kernel: String, what: &'static str, name: String },
    #[error(
        "kernel `{kernel}`: the name `{name}` is used twice (parameters, dimensions and tensor maps share one \
         namespace)"
    )]
    DuplicateName { kernel: String, name: String },
    #[error("kernel `{kernel}`, parameter `{param}`: shape {shape} and stride {stride} are not congruent")]
    NotCongruent { kernel: String, param: String, shape: IntTuple, stride: IntTuple },
    #[error("kernel `{kernel}`, parameter `{param}`: negative static extent {value} in shape {shape}")]
    NegativeExtent { kernel: String, param: String, value: i64, shape: IntTuple },
    #[error("kernel `{kernel}`: dimension `{dim}` used in {used_in} is not declared in `dims`")]
    UndeclaredDim { kernel: String, dim: String, used_in: String },
    #[error(
        "kernel `{kernel}`, parameter `{param}`: align_bytes {align} must be a power of two \
         and at least the size of {dtype} ({size} bytes)"
    )]
    BadAlignment { kernel: String, param: String, align: u32, dtype: crate::DType, size: u32 },
    #[error("kernel `{kernel}`: dimension `{dim}` comes from `{param}`, which is not a parameter of the kernel")]
    DimSourceUnknownParam { kernel: String, dim: String, param: String },
    #[error("kernel `{kernel}`: dimension `{dim}` comes from `{param}`, which is a scalar, not a tensor")]
    DimSourceNotTensor { kernel: String, dim: String, param: String },
    #[error("kernel `{kernel}`: dimension `{dim}` comes from {param}.{of}[{mode}], but `{param}` has rank {rank}")]
    DimSourceMode { kernel: String, dim: String, param: String, of: DimComponent, mode: usize, rank: usize },
    #[error("kernel `{kernel}`: dimension `{dim}` comes from {param}.{of}[{mode}], which is `{found}`, not `{dim}`")]
    DimSourceMismatch { kernel: String, dim: String, param: String, of: DimComponent, mode: usize, found: IntTuple },
    #[error(
        "kernel `{kernel}`: requirement `{dim} % {multiple_of} == 0` needs a declared dimension and a positive divisor"
    )]
    BadRequirement { kernel: String, dim: String, multiple_of: i64 },
    #[error("kernel `{kernel}`: launch.{what} has {len} entries; it must have 1 to 3")]
    LaunchArity { kernel: String, what: &'static str, len: usize },
    #[error("kernel `{kernel}`: {what}: {source}")]
    LaunchExpr { kernel: String, what: String, source: ExprError },
    #[error("kernel `{kernel}`: tensor map `{map}` describes `{tensor}`, which is not a parameter of the kernel")]
    TensorMapUnknownTensor { kernel: String, map: String, tensor: String },
    #[error("kernel `{kernel}`: tensor map `{map}` describes `{tensor}`, which is a scalar, not a tensor")]
    TensorMapNotTensor { kernel: String, map: String, tensor: String },
    #[error(
        "kernel `{kernel}`: tensor map `{map}` has {modes} modes and {boxes} box extents; a tensor map has 1 to \
         {TENSOR_MAP_MAX_RANK} dimensions, each with one mode and one box extent"
    )]
    TensorMapRank { kernel: String, map: String, modes: usize, boxes: usize },
    #[error(
        "kernel `{kernel}`: tensor map `{map}`: dimension {dim} is mode {mode} of `{tensor}`, which has rank {rank}"
    )]
    TensorMapMode { kernel: String, map: String, dim: usize, tensor: String, mode: usize, rank: usize },
    #[error("kernel `{kernel}`: tensor map `{map}` lists mode {mode} of `{tensor}` twice")]
    TensorMapRepeatedMode { kernel: String, map: String, tensor: String, mode: usize },
    #[error(
        "kernel `{kernel}`: tensor map `{map}`: mode {mode} of `{tensor}` is the nested mode {layout}; each map \
         dimension is one leaf mode"
    )]
    TensorMapNestedMode { kernel: String, map: String, tensor: String, mode: usize, layout: String },
    #[error(
        "kernel `{kernel}`: tensor map `{map}`: its innermost dimension is mode {mode} of `{tensor}`, whose stride \
         is {stride}; TMA reads the innermost dimension contiguously (stride 1)"
    )]
    TensorMapInnerStride { kernel: String, map: String, tensor: String, mode: usize, stride: IntTuple },
    #[error("kernel `{kernel}`: tensor map `{map}`: box[{dim}] is {size}; TMA takes 1 to {TMA_MAX_BOX}")]
    TensorMapBoxSize { kernel: String, map: String, dim: usize, size: u32 },
    #[error(
        "kernel `{kernel}`: tensor map `{map}`: the box's inner row (box[0] = {elements} {dtype}) is {bytes} bytes; \
         TMA moves rows of a multiple of {TMA_ALIGN} bytes"
    )]
    TensorMapBoxRow { kernel: String, map: String, elements: u32, dtype: crate::DType, bytes: u64 },
    #[error(
        "kernel `{kernel}`: tensor map `{map}`: the box's inner row is {bytes} bytes, more than the {span}-byte span \
         of its swizzle"
    )]
    TensorMapSwizzleSpan { kernel: String, map: String, bytes: u64, span: u64 },
    #[error(
        "kernel `{kernel}`: tensor map `{map}` describes `{tensor}`, whose align_bytes is {align}; TMA needs a \
         {TMA_ALIGN}-byte-aligned address"
    )]
    TensorMapAlignment { kernel: String, map: String, tensor: String, align: u32 },
    #[error(
        "kernel `{kernel}`: tensor map `{map}`: NaN fill needs an f16, bf16, f32 or f64 tensor, and `{tensor}` is \
         {dtype}"
    )]
    TensorMapNanFill { kernel: String, map: String, tensor: String, dtype: crate::DType },
}

//! Argument checking: the pure function from a kernel's manifest and descriptions of the arguments to a launch
//! plan (launch configuration and the ordered PTX parameter values), or an error naming the parameter.
//!
//! Nothing here touches the GPU, so every rule is unit-tested on any machine.

use cutec_manifest::{DType, DimComponent, Entry, Expr, ExprError, IntType, Kernel, Param, TensorParam};

use crate::ScalarValue;

mod tma;
pub use tma::{PlannedTensorMap, TensorMapRefusal, tensor_map_desc};

/// What the checker needs to know of a tensor argument. Invariant expected of callers (checked):
/// `shape.len() == strides.len()`, extents non-negative.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorDesc {
    pub dtype: DType,
    /// Extent of each mode.
    pub shape: Vec<i64>,
    /// Stride of each mode, in elements.
    pub strides: Vec<i64>,
    /// The device address of element 0.
    pub ptr: u64,
    /// How many elements, from `ptr` on, the allocation holds.
    pub len: u64,
    /// Ordinal of the device the memory lives on.
    pub device: usize,
}

impl TensorDesc {
    /// Row-major (C-order) strides of `shape`, in elements; `None` on overflow.
    pub fn row_major_strides(shape: &[i64]) -> Option<Vec<i64>> {
        let mut strides = vec![0; shape.len()];
        let mut acc: i64 = 1;
        for (s, &extent) in strides.iter_mut().zip(shape).rev() {
            *s = acc;
            acc = acc.checked_mul(extent.max(1))?;
        }
        Some(strides)
    }
}

/// The description of one argument.
#[derive(Debug, Clone, PartialEq)]
pub enum ArgDesc {
    Tensor(TensorDesc),
    Scalar(ScalarValue),
}

impl ArgDesc {
    fn kind(&self) -> &'static str {
        match self {
            ArgDesc::Tensor(_) => "tensor",
            ArgDesc::Scalar(_) => "scalar",
        }
    }
}

/// One PTX parameter value, in ABI order.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ParamValue {
    Pointer(u64),
    Scalar(ScalarValue),
    Dim { ty: IntType, value: i64 },
}

impl ParamValue {
    /// The bytes the kernel receives, little-endian, zero-padded to 8; the first [`Self::size_bytes`] count.
    pub fn to_le_bytes(&self) -> [u8; 8] {
        match *self {
            ParamValue::Pointer(p) => p.to_le_bytes(),
            ParamValue::Scalar(v) => v.to_le_bytes(),
            // The value was range-checked against `ty`, so the low bytes are the value in that type.
            ParamValue::Dim { value, .. } => value.to_le_bytes(),
        }
    }

    pub fn size_bytes(&self) -> u32 {
        match self {
            ParamValue::Pointer(_) => 8,
            ParamValue::Scalar(v) => v.dtype().size_bytes(),
            ParamValue::Dim { ty, .. } => ty.size_bytes(),
        }
    }
}

/// A dynamic dimension with its value and where it came from (`x.shape[0]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoundDim {
    pub name: String,
    pub value: i64,
    pub origin: String,
}

/// Everything a launch needs, all checked: the configuration and the PTX parameter values in ABI order.
#[derive(Debug, Clone, PartialEq)]
pub struct LaunchPlan {
    /// The launch clause's grid; for a persistent kernel the grid of tiles (`Kernel::hardware_grid` is what runs).
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub cluster: Option<[u32; 3]>,
    pub smem_bytes: u32,
    pub params: Vec<ParamValue>,
    pub dims: Vec<BoundDim>,
    /// The tensor maps, checked, in manifest order: the PTX parameters after `params`, encoded at launch.
    pub tensor_maps: Vec<PlannedTensorMap>,
}

/// Why arguments do not fit a kernel. Every variant names the parameter (or dimension) and the values involved.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ArgError {
    #[error("kernel `{kernel}` takes {expected} arguments ({signature}), got {got}")]
    Arity { kernel: String, expected: usize, got: usize, signature: String },
    #[error("argument `{param}`: expected a {expected}, got a {got}")]
    Kind { param: String, expected: &'static str, got: &'static str },
    #[error("argument `{param}`: expected dtype {expected}, got {got}")]
    DType { param: String, expected: DType, got: DType },
    #[error("argument `{param}` is on device {got}, but the kernel is loaded on device {expected}")]
    Device { param: String, expected: usize, got: usize },
    #[error(
        "argument `{param}`: expected rank {expected} (the kernel's layout is {layout}), got rank {got} (shape {shape:?})"
    )]
    Rank { param: String, expected: usize, got: usize, layout: String, shape: Vec<i64> },
    #[error("argument `{param}`: invalid tensor description: {reason}")]
    Descriptor { param: String, reason: String },
    #[error(
        "argument `{param}`: pointer {ptr:#x} is not aligned to {align} bytes as the kernel requires \
         (it is {} bytes past a multiple)", ptr % u64::from(*align)
    )]
    Misaligned { param: String, ptr: u64, align: u32 },
    #[error("argument `{param}`: {of}[{mode}] is {got}, but the kernel was compiled for {expected}")]
    StaticMismatch { param: String, of: DimComponent, mode: usize, expected: i64, got: i64 },
    #[error("dimension `{dim}` is {bound} (from {origin}), but argument `{param}` has {of}[{mode}] = {got}")]
    DimMismatch { dim: String, bound: i64, origin: String, param: String, of: DimComponent, mode: usize, got: i64 },
    #[error("argument `{param}`: {of}[{mode}] = {got} does not match the kernel's layout mode {layout_mode}{detail}")]
    NestedMode { param: String, of: DimComponent, mode: usize, got: i64, layout_mode: String, detail: String },
    #[error("dimension `{dim}` = {value} (from {origin}) does not fit in {ty}, its parameter type")]
    DimRange { dim: String, value: i64, origin: String, ty: IntType },
    #[error(
        "argument `{param}`: the layout {layout} reaches element {max_offset}, but the buffer holds {len} elements"
    )]
    BufferTooSmall { param: String, layout: String, max_offset: i64, len: u64 },
    #[error(
        "argument `{param}`: the layout {layout} reaches element {reach}; kernels index with 32-bit integers and \
         take at most {MAX_INDEX} elements along a mode or in offset (2^31 - 2^24: room for a tile past the edge)"
    )]
    IndexRange { param: String, layout: String, reach: i64 },
    #[error("argument `{param}`: the layout {layout} reaches negative offset {min_offset}")]
    NegativeOffset { param: String, layout: String, min_offset: i64 },
    #[error("argument `{param}`: integer overflow computing the extent of layout {layout}")]
    LayoutOverflow { param: String, layout: String },
    #[error("launch.{what} = {expr}: {source}")]
    LaunchExpr { what: String, expr: String, source: ExprError },
    #[error("launch.{what} = {expr} = {value} is outside [{min}, {max}]")]
    LaunchRange { what: String, expr: String, value: i64, min: i64, max: i64 },
    #[error("block {x}x{y}x{z} has {total} threads; at most {} are allowed", cutec_target::MAX_BLOCK_THREADS)]
    BlockTooLarge { x: u32, y: u32, z: u32, total: u64 },
    #[error("cluster {x}x{y}x{z} has {total} blocks; at most {} are allowed", cutec_target::MAX_CLUSTER_CTAS)]
    ClusterTooLarge { x: u32, y: u32, z: u32, total: u64 },
    #[error("grid.{axis} = {grid} is not a multiple of cluster.{axis} = {cluster}")]
    ClusterDivides { axis: char, grid: u32, cluster: u32 },
    #[error(
        "dimension `{dim}` = {value} (from {origin}) is not a multiple of {multiple_of}, which the kernel requires{}",
        message.as_deref().map(|m| format!(": {m}")).unwrap_or_default()
    )]
    NotMultiple { dim: String, value: i64, origin: String, multiple_of: i64, message: Option<String> },
    #[error("tensor map `{map}` of `{tensor}`: {refusal}")]
    TensorMap { map: String, tensor: String, refusal: TensorMapRefusal },
    #[error("inconsistent manifest: {reason}")]
    BadManifest { reason: String },
}

/// The largest extent and element offset an argument may have: kernels index with 32-bit signed integers, and
/// the coordinates of a tile that crosses an extent (up to 2^24 elements past it) must not wrap around.
pub const MAX_INDEX: i64 = (1 << 31) - (1 << 24);

fn origin(param: &str, of: DimComponent, mode: usize) -> String {
    format!("{param}.{of}[{mode}]")
}

/// Checks `args` against `kernel` (which must come from a validated manifest) for a launch on device `device`,
/// binds the dynamic dimensions, evaluates the launch configuration and lays out the PTX parameters.
///
/// Order of checks: arity; per argument kind, dtype, device, rank, alignment; dimension binding (each from its
/// source, in `dims` order) and range; every shape and stride mode against static values and bound dimensions;
/// buffer bounds; requirements; tensor maps (the driver's rules on extents, strides and address); launch
/// configuration.
pub fn check_launch(kernel: &Kernel, device: usize, args: &[ArgDesc]) -> Result<LaunchPlan, ArgError> {
    if args.len() != kernel.params.len() {
        let signature = kernel
            .params
            .iter()
            .map(|p| format!("{}: {} {}", p.name(), p.kind(), p.dtype()))
            .collect::<Vec<_>>()
            .join(", ");
        return Err(ArgError::Arity {
            kernel: kernel.name.clone(),
            expected: kernel.params.len(),
            got: args.len(),
            signature,
        });
    }
    let mut tensors = Vec::new();
    for (param, arg) in kernel.params.iter().zip(args) {
        match (param, arg) {
            (Param::Tensor(p), ArgDesc::Tensor(t)) => {
                check_tensor_basics(p, t, device)?;
                tensors.push((p, t));
            }
            (Param::Scalar(p), ArgDesc::Scalar(v)) if v.dtype() != p.dtype => {
                return Err(ArgError::DType { param: p.name.clone(), expected: p.dtype, got: v.dtype() });
            }
            (Param::Scalar(_), ArgDesc::Scalar(_)) => {}
            (p, a) => return Err(ArgError::Kind { param: p.name().to_owned(), expected: p.kind(), got: a.kind() }),
        }
    }

    let dims = bind_dims(kernel, args)?;
    for (p, t) in &tensors {
        check_layout(p, t, &dims)?;
    }
    for r in &kernel.requires {
        if let Some(b) = dims.iter().find(|b| b.name == r.dim)
            && b.value % r.multiple_of != 0
        {
            return Err(ArgError::NotMultiple {
                dim: r.dim.clone(),
                value: b.value,
                origin: b.origin.clone(),
                multiple_of: r.multiple_of,
                message: r.message.clone(),
            });
        }
    }

    let tensor_maps = tma::plan_tensor_maps(kernel, args)?;

    let env = |name: &str| dims.iter().find(|b| b.name == name).map(|b| b.value);
    let launch = &kernel.launch;
    let grid = eval3("grid", &launch.grid, &env, cutec_target::MAX_GRID_DIMS.map(i64::from))?;
    let block = eval3("block", &launch.block, &env, cutec_target::MAX_BLOCK_DIMS.map(i64::from))?;
    let total = block.iter().map(|&b| u64::from(b)).product::<u64>();
    if total > u64::from(cutec_target::MAX_BLOCK_THREADS) {
        return Err(ArgError::BlockTooLarge { x: block[0], y: block[1], z: block[2], total });
    }
    let cluster = match &launch.cluster {
        None => None,
        Some(list) => {
            let c = eval3("cluster", list, &env, [i64::from(cutec_target::MAX_CLUSTER_CTAS); 3])?;
            let total = c.iter().map(|&b| u64::from(b)).product::<u64>();
            if total > u64::from(cutec_target::MAX_CLUSTER_CTAS) {
                return Err(ArgError::ClusterTooLarge { x: c[0], y: c[1], z: c[2], total });
            }
            for (axis, (&g, &c)) in ['x', 'y', 'z'].into_iter().zip(grid.iter().zip(&c)) {
                if g % c != 0 {
                    return Err(ArgError::ClusterDivides { axis, grid: g, cluster: c });
                }
            }
            // One CTA per cluster is every launch's implicit cluster: launched plainly (codegen declares no
            // cluster for it either).
            (total > 1).then_some(c)
        }
    };
    // A persistent kernel numbers its tiles in 32-bit arithmetic (`cutec-lower`'s `persistent.rs`).
    let tiles = grid.iter().map(|&g| i64::from(g)).product::<i64>();
    if launch.persistent && tiles > i64::from(i32::MAX) {
        let (what, expr) = ("tiles".to_owned(), format!("{}*{}*{}", grid[0], grid[1], grid[2]));
        return Err(ArgError::LaunchRange { what, expr, value: tiles, min: 1, max: i64::from(i32::MAX) });
    }
    let smem_bytes = eval_in_range("smem_bytes".into(), &launch.smem_bytes, &env, 0, i64::from(u32::MAX))?;

    let params = args
        .iter()
        .map(|a| match a {
            ArgDesc::Tensor(t) => ParamValue::Pointer(t.ptr),
            ArgDesc::Scalar(v) => ParamValue::Scalar(*v),
        })
        .chain(kernel.dims.iter().zip(&dims).map(|(d, b)| ParamValue::Dim { ty: d.ty, value: b.value }))
        .collect();
    Ok(LaunchPlan { grid, block, cluster, smem_bytes: smem_bytes as u32, params, dims, tensor_maps })
}

fn check_tensor_basics(p: &TensorParam, t: &TensorDesc, device: usize) -> Result<(), ArgError> {
    let param = || p.name.clone();
    if t.dtype != p.dtype {
        return Err(ArgError::DType { param: param(), expected: p.dtype, got: t.dtype });
    }
    if t.device != device {
        return Err(ArgError::Device { param: param(), expected: device, got: t.device });
    }
    if t.shape.len() != t.strides.len() {
        let reason = format!("{} extents but {} strides", t.shape.len(), t.strides.len());
        return Err(ArgError::Descriptor { param: param(), reason });
    }
    if let Some(e) = t.shape.iter().find(|&&e| e < 0) {
        return Err(ArgError::Descriptor { param: param(), reason: format!("negative extent {e}") });
    }
    if t.shape.len() != p.layout.rank() {
        return Err(ArgError::Rank {
            param: param(),
            expected: p.layout.rank(),
            got: t.shape.len(),
            layout: p.layout.to_string(),
            shape: t.shape.clone(),
        });
    }
    if !t.ptr.is_multiple_of(u64::from(p.align_bytes)) {
        return Err(ArgError::Misaligned { param: param(), ptr: t.ptr, align: p.align_bytes });
    }
    Ok(())
}

fn bind_dims(kernel: &Kernel, args: &[ArgDesc]) -> Result<Vec<BoundDim>, ArgError> {
    let mut dims = Vec::with_capacity(kernel.dims.len());
    for d in &kernel.dims {
        let src = &d.from;
        let bad = |what: &str| ArgError::BadManifest { reason: format!("dimension `{}`: {what}", d.name) };
        let index = kernel.params.iter().position(|p| p.name() == src.param).ok_or_else(|| bad("unknown source"))?;
        let Some(ArgDesc::Tensor(t)) = args.get(index) else { return Err(bad("source is not a tensor")) };
        let values = match src.of {
            DimComponent::Shape => &t.shape,
            DimComponent::Stride => &t.strides,
        };
        let value = *values.get(src.mode).ok_or_else(|| bad("source mode out of range"))?;
        let origin = origin(&src.param, src.of, src.mode);
        if !d.ty.contains(value) {
            return Err(ArgError::DimRange { dim: d.name.clone(), value, origin, ty: d.ty });
        }
        dims.push(BoundDim { name: d.name.clone(), value, origin });
    }
    Ok(dims)
}

fn leaf_value(leaf: &Entry, dims: &[BoundDim]) -> Result<i64, ArgError> {
    match leaf {
        Entry::Int(v) => Ok(*v),
        Entry::Dim(name) => dims
            .iter()
            .find(|b| b.name == *name)
            .map(|b| b.value)
            .ok_or_else(|| ArgError::BadManifest { reason: format!("dimension `{name}` is not declared") }),
    }
}

/// Compares one leaf of the kernel's layout with the argument's value at `param.of[mode]`.
fn check_leaf(
    param: &str,
    of: DimComponent,
    mode: usize,
    leaf: &Entry,
    got: i64,
    dims: &[BoundDim],
) -> Result<(), ArgError> {
    let expected = leaf_value(leaf, dims)?;
    if expected == got {
        return Ok(());
    }
    Err(match leaf {
        Entry::Dim(name) => {
            let b = dims.iter().find(|b| b.name == *name);
            ArgError::DimMismatch {
                dim: name.clone(),
                bound: expected,
                origin: b.map(|b| b.origin.clone()).unwrap_or_default(),
                param: param.to_owned(),
                of,
                mode,
                got,
            }
        }
        _ => ArgError::StaticMismatch { param: param.to_owned(), of, mode, expected, got },
    })
}

fn check_layout(p: &TensorParam, t: &TensorDesc, dims: &[BoundDim]) -> Result<(), ArgError> {
    let (shape, stride) = (&p.layout.shape, &p.layout.stride);
    let overflow = || ArgError::LayoutOverflow { param: p.name.clone(), layout: p.layout.to_string() };
    let nested = |of, mode: usize, got, detail: String| ArgError::NestedMode {
        param: p.name.clone(),
        of,
        mode,
        got,
        layout_mode: match (shape.modes().get(mode), stride.modes().get(mode)) {
            (Some(s), Some(d)) => format!("{s}:{d}"),
            _ => p.layout.to_string(),
        },
        detail,
    };
    // Shapes first: a wrong extent is the more fundamental mismatch.
    for (i, s_mode) in shape.modes().iter().enumerate() {
        let extent = t.shape[i];
        if let Some(leaf) = s_mode.as_int() {
            check_leaf(&p.name, DimComponent::Shape, i, leaf, extent, dims)?;
        } else {
            let mut product: i64 = 1;
            for leaf in s_mode.leaves() {
                product = product.checked_mul(leaf_value(leaf, dims)?).ok_or_else(overflow)?;
            }
            if product != extent {
                return Err(nested(DimComponent::Shape, i, extent, format!(" (extent {product})")));
            }
        }
    }
    for (i, (s_mode, d_mode)) in shape.modes().iter().zip(stride.modes()).enumerate() {
        let (extent, arg_stride) = (t.shape[i], t.strides[i]);
        // A stride only matters where the index can be non-zero.
        if extent <= 1 {
            continue;
        }
        if let Some(leaf) = d_mode.as_int() {
            check_leaf(&p.name, DimComponent::Stride, i, leaf, arg_stride, dims)?;
        } else {
            // The argument's flat mode (extent, stride) viewed as nested leaves (s_k):(d_k) requires
            // d_k = stride * s_0 * ... * s_{k-1} for every leaf with s_k > 1 (first leaf fastest, as in CuTe).
            let mut expected = arg_stride;
            for (s, d) in s_mode.leaves().into_iter().zip(d_mode.leaves()) {
                let s = leaf_value(s, dims)?;
                let d = leaf_value(d, dims)?;
                if s > 1 && d != expected {
                    let detail = format!(" (a leaf of extent {s} has stride {d}; this argument gives it {expected})");
                    return Err(nested(DimComponent::Stride, i, arg_stride, detail));
                }
                expected = expected.checked_mul(s).ok_or_else(overflow)?;
            }
        }
    }

    // Bounds: the offsets the layout reaches must lie in [0, len).
    let (mut min_offset, mut max_offset, mut empty) = (0i64, 0i64, false);
    for (s, d) in shape.leaves().into_iter().zip(stride.leaves()) {
        let (s, d) = (leaf_value(s, dims)?, leaf_value(d, dims)?);
        if s == 0 {
            empty = true;
            break;
        }
        let reach = (s - 1).checked_mul(d).ok_or_else(overflow)?;
        if reach < 0 {
            min_offset = min_offset.checked_add(reach).ok_or_else(overflow)?;
        } else {
            max_offset = max_offset.checked_add(reach).ok_or_else(overflow)?;
        }
    }
    if empty {
        return Ok(());
    }
    if min_offset < 0 {
        return Err(ArgError::NegativeOffset { param: p.name.clone(), layout: p.layout.to_string(), min_offset });
    }
    // Kernels compute coordinates and offsets in 32-bit integers; a tile may reach past an extent (up to its own
    // size) before its bounds test, which must not wrap around.
    let largest_extent =
        shape.leaves().into_iter().map(|s| leaf_value(s, dims)).try_fold(0i64, |m, s| s.map(|s| m.max(s)))?;
    if max_offset.max(largest_extent) > MAX_INDEX {
        return Err(ArgError::IndexRange {
            param: p.name.clone(),
            layout: p.layout.to_string(),
            reach: max_offset.max(largest_extent),
        });
    }
    if u64::try_from(max_offset).map_or(true, |m| m >= t.len) {
        return Err(ArgError::BufferTooSmall {
            param: p.name.clone(),
            layout: p.layout.to_string(),
            max_offset,
            len: t.len,
        });
    }
    Ok(())
}

fn eval_in_range(
    what: String,
    e: &Expr,
    env: &dyn Fn(&str) -> Option<i64>,
    min: i64,
    max: i64,
) -> Result<i64, ArgError> {
    let value =
        e.eval_dims(env).map_err(|source| ArgError::LaunchExpr { what: what.clone(), expr: e.to_string(), source })?;
    if value < min || value > max {
        return Err(ArgError::LaunchRange { what, expr: e.to_string(), value, min, max });
    }
    Ok(value)
}

/// Evaluates a list of 1 to 3 expressions (x, y, z); missing entries are 1. Each must lie in `[1, max]`.
fn eval3(what: &str, list: &[Expr], env: &dyn Fn(&str) -> Option<i64>, max: [i64; 3]) -> Result<[u32; 3], ArgError> {
    if list.is_empty() || list.len() > 3 {
        return Err(ArgError::BadManifest { reason: format!("launch.{what} has {} entries", list.len()) });
    }
    let mut out = [1u32; 3];
    for (i, e) in list.iter().enumerate() {
        let axis = ["x", "y", "z"][i];
        // Every max is at most i32::MAX, so the value fits in u32.
        out[i] = eval_in_range(format!("{what}.{axis}"), e, env, 1, max[i])? as u32;
    }
    Ok(out)
}

#[cfg(test)]
mod tests;

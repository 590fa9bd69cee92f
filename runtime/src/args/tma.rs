//! The tensor maps of a launch: each manifest [`TensorMapParam`] becomes a [`TensorMapDesc`] from its tensor
//! argument, checked against the driver's rules, with a refusal phrased on the tensor's modes.

use cutec_manifest::{Kernel, Param, TensorMapParam};

use super::{ArgDesc, ArgError};
use crate::tensor_map::{TensorMapDesc, TensorMapError};

/// A tensor map of a launch, checked: what [`TensorMapDesc::encode`] turns into the parameter's 128 bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedTensorMap {
    /// The manifest's name of the map (its PTX parameter).
    pub name: String,
    pub desc: TensorMapDesc,
    /// The device address of the tensor's element 0.
    pub address: u64,
}

/// Why a tensor argument cannot be described by a tensor map, in terms of the tensor's modes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TensorMapRefusal {
    #[error("mode {mode} has extent {extent}; TMA needs 1 to 2^32")]
    Extent { mode: usize, extent: i64 },
    #[error("the stride of mode {mode} is {bytes} bytes; TMA needs {}", stride_rule(*bytes))]
    Stride { mode: usize, bytes: i128 },
    #[error("the address {address:#x} is not a multiple of 16; TMA needs a 16-byte-aligned address")]
    Address { address: u64 },
    /// A rule of the map itself (box, swizzle, fill), which manifest validation checks first.
    #[error("{0}")]
    Map(TensorMapError),
}

fn stride_rule(bytes: i128) -> &'static str {
    if bytes < 0 {
        "a non-negative stride"
    } else if bytes % 16 != 0 {
        "a multiple of 16 bytes"
    } else {
        "less than 2^40 bytes"
    }
}

/// The tensor maps of `kernel` for `args`, in manifest order, each checked by [`tensor_map_desc`].
pub(crate) fn plan_tensor_maps(kernel: &Kernel, args: &[ArgDesc]) -> Result<Vec<PlannedTensorMap>, ArgError> {
    kernel.tensor_maps.iter().map(|m| tensor_map_desc(kernel, m, args)).collect()
}

/// The description of tensor map `map` of `kernel` for the launch arguments `args` (in parameter order, already
/// checked against the manifest's layouts), and its check against the driver's rules.
///
/// Dimension `d` is the tensor's mode `map.modes[d]`: its extent is the argument's extent of that mode, and for
/// `d >= 1` its stride in bytes is the argument's stride times the element size, except that a mode of extent 1
/// gets stride 0: only its coordinate 0 is inside the tensor, so its stride never moves an address, and any
/// stride an argument gives it (as torch does for a size-1 dimension) is accepted. (An extent of 0 is refused.)
pub fn tensor_map_desc(kernel: &Kernel, map: &TensorMapParam, args: &[ArgDesc]) -> Result<PlannedTensorMap, ArgError> {
    let bad = |what: String| ArgError::BadManifest { reason: format!("tensor map `{}`: {what}", map.name) };
    let index = kernel.params.iter().position(|p| p.name() == map.tensor);
    let (Some(Param::Tensor(param)), Some(ArgDesc::Tensor(t))) =
        (index.map(|i| &kernel.params[i]), index.and_then(|i| args.get(i)))
    else {
        return Err(bad(format!("`{}` is not a tensor argument", map.tensor)));
    };
    let refuse = |refusal| ArgError::TensorMap { map: map.name.clone(), tensor: map.tensor.clone(), refusal };
    let elem = i128::from(t.dtype.size_bytes());
    let mut global_dims = Vec::with_capacity(map.modes.len());
    let mut global_strides = Vec::with_capacity(map.modes.len().saturating_sub(1));
    for (d, &mode) in map.modes.iter().enumerate() {
        let (Some(&extent), Some(&stride)) = (t.shape.get(mode), t.strides.get(mode)) else {
            return Err(bad(format!("mode {mode} of a rank-{} argument", t.shape.len())));
        };
        let extent_u64 = u64::try_from(extent).map_err(|_| refuse(TensorMapRefusal::Extent { mode, extent }))?;
        global_dims.push(extent_u64);
        if d == 0 {
            // The driver takes the innermost dimension as contiguous; the manifest says its stride is 1.
            if extent > 1 && stride != 1 {
                return Err(bad(format!("the innermost mode {mode} of `{}` has stride {stride}", param.name)));
            }
            continue;
        }
        let bytes = if extent <= 1 { 0 } else { i128::from(stride) * elem };
        let bytes = u64::try_from(bytes).map_err(|_| refuse(TensorMapRefusal::Stride { mode, bytes }))?;
        global_strides.push(bytes);
    }
    let desc = TensorMapDesc {
        dtype: t.dtype,
        global_dims,
        global_strides,
        box_dims: map.box_shape.clone(),
        element_strides: vec![1; map.box_shape.len()],
        swizzle: map.swizzle,
        l2_promotion: map.l2_promotion,
        oob_fill: map.oob_fill,
    };
    desc.check(t.ptr).map_err(|e| {
        refuse(match e {
            // `check` refuses a wrong rank first, so `dim` indexes `modes`.
            TensorMapError::Extent { dim, extent } => TensorMapRefusal::Extent {
                mode: map.modes.get(dim).copied().unwrap_or(dim),
                extent: i64::try_from(extent).unwrap_or(i64::MAX),
            },
            TensorMapError::Stride { dim, stride } => {
                TensorMapRefusal::Stride { mode: map.modes.get(dim).copied().unwrap_or(dim), bytes: i128::from(stride) }
            }
            TensorMapError::Address { address } => TensorMapRefusal::Address { address },
            other => TensorMapRefusal::Map(other),
        })
    })?;
    Ok(PlannedTensorMap { name: map.name.clone(), desc, address: t.ptr })
}

#[cfg(test)]
mod tests;

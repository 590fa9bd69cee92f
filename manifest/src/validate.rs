//! The validation rules of the manifest format.

use std::collections::HashSet;

use crate::layout::dim_names;
use crate::{
    DType, DimComponent, Entry, IntTuple, Kernel, Manifest, ManifestError, Param, TENSOR_MAP_MAX_RANK, TMA_ALIGN,
    TMA_MAX_BOX, TensorMapParam, TmaOobFill,
};

pub(crate) fn manifest(m: &Manifest) -> Result<(), ManifestError> {
    if m.format_version != crate::FORMAT_VERSION {
        return Err(ManifestError::UnsupportedFormatVersion { found: m.format_version.to_string() });
    }
    let arch = m.target.strip_prefix("sm_").unwrap_or("");
    if arch.is_empty()
        || !arch.starts_with(|c: char| c.is_ascii_digit())
        || !arch.chars().all(|c| c.is_ascii_alphanumeric())
    {
        return Err(ManifestError::BadTarget { target: m.target.clone() });
    }
    let mut names = HashSet::new();
    for k in &m.kernels {
        if !names.insert(k.name.as_str()) {
            return Err(ManifestError::DuplicateKernel { name: k.name.clone() });
        }
        kernel(k)?;
    }
    Ok(())
}

/// A PTX identifier: `[A-Za-z_$%][A-Za-z0-9_$]*` (PTX ISA, "Identifiers").
fn is_ptx_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || matches!(c, '_' | '$' | '%'))
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '$'))
}

/// A parameter or dimension name: `[A-Za-z_][A-Za-z0-9_]*`.
fn is_plain_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn kernel(k: &Kernel) -> Result<(), ManifestError> {
    let kname = || k.name.clone();
    if !is_ptx_identifier(&k.name) {
        return Err(ManifestError::BadName { kernel: kname(), what: "kernel", name: k.name.clone() });
    }

    // One namespace for parameters, dimensions and tensor maps: each is a PTX parameter.
    let mut names = HashSet::new();
    let all_names = k
        .params
        .iter()
        .map(|p| (p.name(), "parameter"))
        .chain(k.dims.iter().map(|d| (d.name.as_str(), "dimension")))
        .chain(k.tensor_maps.iter().map(|m| (m.name.as_str(), "tensor map")));
    for (name, what) in all_names {
        if !is_plain_identifier(name) {
            return Err(ManifestError::BadName { kernel: kname(), what, name: name.to_owned() });
        }
        if !names.insert(name) {
            return Err(ManifestError::DuplicateName { kernel: kname(), name: name.to_owned() });
        }
    }
    let declared = |d: &str| k.dims.iter().any(|dim| dim.name == d);

    for t in k.tensors() {
        let (shape, stride) = (&t.layout.shape, &t.layout.stride);
        if !shape.congruent(stride) {
            return Err(ManifestError::NotCongruent {
                kernel: kname(),
                param: t.name.clone(),
                shape: shape.clone(),
                stride: stride.clone(),
            });
        }
        if let Some(&&Entry::Int(value)) = shape.leaves().iter().find(|l| matches!(l, Entry::Int(v) if *v < 0)) {
            return Err(ManifestError::NegativeExtent {
                kernel: kname(),
                param: t.name.clone(),
                value,
                shape: shape.clone(),
            });
        }
        for (component, tuple) in [("shape", shape), ("stride", stride)] {
            if let Some(dim) = dim_names(tuple).into_iter().find(|d| !declared(d)) {
                return Err(ManifestError::UndeclaredDim {
                    kernel: kname(),
                    dim: dim.to_owned(),
                    used_in: format!("the {component} of `{}`", t.name),
                });
            }
        }
        let size = t.dtype.size_bytes();
        if !t.align_bytes.is_power_of_two() || t.align_bytes < size {
            return Err(ManifestError::BadAlignment {
                kernel: kname(),
                param: t.name.clone(),
                align: t.align_bytes,
                dtype: t.dtype,
                size,
            });
        }
    }

    for r in &k.requires {
        if r.multiple_of <= 0 || !declared(&r.dim) {
            return Err(ManifestError::BadRequirement {
                kernel: kname(),
                dim: r.dim.clone(),
                multiple_of: r.multiple_of,
            });
        }
    }

    for d in &k.dims {
        let src = &d.from;
        let t = match k.param(&src.param) {
            None => {
                return Err(ManifestError::DimSourceUnknownParam {
                    kernel: kname(),
                    dim: d.name.clone(),
                    param: src.param.clone(),
                });
            }
            Some(Param::Scalar(_)) => {
                return Err(ManifestError::DimSourceNotTensor {
                    kernel: kname(),
                    dim: d.name.clone(),
                    param: src.param.clone(),
                });
            }
            Some(Param::Tensor(t)) => t,
        };
        let tuple = match src.of {
            DimComponent::Shape => &t.layout.shape,
            DimComponent::Stride => &t.layout.stride,
        };
        let modes = tuple.modes();
        let Some(leaf) = modes.get(src.mode) else {
            return Err(ManifestError::DimSourceMode {
                kernel: kname(),
                dim: d.name.clone(),
                param: src.param.clone(),
                of: src.of,
                mode: src.mode,
                rank: modes.len(),
            });
        };
        if !matches!(leaf, IntTuple::Int(Entry::Dim(n)) if *n == d.name) {
            return Err(ManifestError::DimSourceMismatch {
                kernel: kname(),
                dim: d.name.clone(),
                param: src.param.clone(),
                of: src.of,
                mode: src.mode,
                found: leaf.clone(),
            });
        }
    }

    let launch = &k.launch;
    let lists = [("grid", Some(&launch.grid)), ("block", Some(&launch.block)), ("cluster", launch.cluster.as_ref())];
    for (what, list) in lists {
        let Some(list) = list else { continue };
        if list.is_empty() || list.len() > 3 {
            return Err(ManifestError::LaunchArity { kernel: kname(), what, len: list.len() });
        }
        for (i, e) in list.iter().enumerate() {
            expr(k, &format!("launch.{what}[{i}]"), e, &declared)?;
        }
    }
    expr(k, "launch.smem_bytes", &launch.smem_bytes, &declared)?;
    if let Some(flops) = &k.flops {
        expr(k, "flops", flops, &declared)?;
    }
    k.tensor_maps.iter().try_for_each(|m| tensor_map(k, m))
}

/// The rules of a tensor map that do not depend on the arguments (those are checked at launch).
fn tensor_map(k: &Kernel, m: &TensorMapParam) -> Result<(), ManifestError> {
    let (kernel, map) = (|| k.name.clone(), || m.name.clone());
    let t = match k.param(&m.tensor) {
        Some(Param::Tensor(t)) => t,
        Some(Param::Scalar(_)) => {
            return Err(ManifestError::TensorMapNotTensor { kernel: kernel(), map: map(), tensor: m.tensor.clone() });
        }
        None => {
            return Err(ManifestError::TensorMapUnknownTensor {
                kernel: kernel(),
                map: map(),
                tensor: m.tensor.clone(),
            });
        }
    };
    let tensor = || t.name.clone();
    let rank = m.modes.len();
    if rank != m.box_shape.len() || !(1..=TENSOR_MAP_MAX_RANK).contains(&rank) {
        return Err(ManifestError::TensorMapRank {
            kernel: kernel(),
            map: map(),
            modes: rank,
            boxes: m.box_shape.len(),
        });
    }
    let (shapes, strides) = (t.layout.shape.modes(), t.layout.stride.modes());
    for (dim, &mode) in m.modes.iter().enumerate() {
        let (Some(shape), Some(stride)) = (shapes.get(mode), strides.get(mode)) else {
            let rank = t.layout.rank();
            return Err(ManifestError::TensorMapMode {
                kernel: kernel(),
                map: map(),
                dim,
                tensor: tensor(),
                mode,
                rank,
            });
        };
        if m.modes[..dim].contains(&mode) {
            return Err(ManifestError::TensorMapRepeatedMode { kernel: kernel(), map: map(), tensor: tensor(), mode });
        }
        if shape.is_tuple() || stride.is_tuple() {
            return Err(ManifestError::TensorMapNestedMode {
                kernel: kernel(),
                map: map(),
                tensor: tensor(),
                mode,
                layout: format!("{shape}:{stride}"),
            });
        }
        if dim == 0 && *stride != IntTuple::int(1) {
            return Err(ManifestError::TensorMapInnerStride {
                kernel: kernel(),
                map: map(),
                tensor: tensor(),
                mode,
                stride: stride.clone(),
            });
        }
    }
    if let Some((dim, &size)) = m.box_shape.iter().enumerate().find(|(_, s)| !(1..=TMA_MAX_BOX).contains(s)) {
        return Err(ManifestError::TensorMapBoxSize { kernel: kernel(), map: map(), dim, size });
    }
    let row = u64::from(m.box_shape[0]) * u64::from(t.dtype.size_bytes());
    if !row.is_multiple_of(u64::from(TMA_ALIGN)) {
        return Err(ManifestError::TensorMapBoxRow {
            kernel: kernel(),
            map: map(),
            elements: m.box_shape[0],
            dtype: t.dtype,
            bytes: row,
        });
    }
    if let Some(span) = m.swizzle.span()
        && row > span
    {
        return Err(ManifestError::TensorMapSwizzleSpan { kernel: kernel(), map: map(), bytes: row, span });
    }
    if t.align_bytes < TMA_ALIGN {
        return Err(ManifestError::TensorMapAlignment {
            kernel: kernel(),
            map: map(),
            tensor: tensor(),
            align: t.align_bytes,
        });
    }
    // The 1-byte types move as bytes: only TMA's float types have a NaN.
    if m.oob_fill == TmaOobFill::Nan && !matches!(t.dtype, DType::F16 | DType::Bf16 | DType::F32 | DType::F64) {
        return Err(ManifestError::TensorMapNanFill { kernel: kernel(), map: map(), tensor: tensor(), dtype: t.dtype });
    }
    Ok(())
}

/// `what` names the expression as the manifest does (`launch.grid[0]`, `flops`).
fn expr(k: &Kernel, what: &str, e: &crate::Expr, declared: &dyn Fn(&str) -> bool) -> Result<(), ManifestError> {
    // Only dimensions and constants are known at launch (deserialized expressions have nothing else).
    let mut other = None;
    e.any_leaf(&mut |l| {
        let bad = !matches!(l, crate::SymInt::Const(_) | crate::SymInt::Dim(_));
        if bad {
            other = Some(l.to_string());
        }
        bad
    });
    if let Some(name) = other {
        let source = crate::ExprError::Unbound { name };
        return Err(ManifestError::LaunchExpr { kernel: k.name.clone(), what: what.to_owned(), source });
    }
    let mut undeclared = None;
    e.for_each_dim(&mut |d| {
        if undeclared.is_none() && !declared(d) {
            undeclared = Some(d.to_owned());
        }
    });
    match undeclared {
        Some(dim) => Err(ManifestError::UndeclaredDim { kernel: k.name.clone(), dim, used_in: what.to_owned() }),
        None => Ok(()),
    }
}

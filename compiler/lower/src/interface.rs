//! The kernel's manifest entry (`cutec-manifest`), from the checker's description of its signature.

use super::{LResult, Lower};
use crate::error::LowerError;
use cutec_diagnostics::Span;
use cutec_manifest as mf;
use cutec_sema::{DimComponent, FunctionInfo, Scalar, SymInt, Type};
use std::collections::BTreeMap;

impl Lower<'_> {
    /// The manifest entry of the kernel; every tensor's `align_bytes` starts at its element size and is raised
    /// by [`set_alignments`] to what the generated code relies on.
    pub fn interface(&mut self, info: &FunctionInfo, span: Span) -> LResult<mf::Kernel> {
        let mut params = Vec::new();
        for p in &info.params {
            params.push(match &p.ty {
                Type::Tensor(t) => {
                    let Some(elem) = t.elem.scalar() else { return self.unsupported(p.span, "a tensor of tuples") };
                    let dtype = self.dtype(elem, p.span)?;
                    let Some(l) = &t.layout.value else {
                        return self.fail(
                            p.span,
                            LowerError::Layout { problem: "a parameter's layout must be written out".into() },
                        );
                    };
                    let layout = mf::Layout {
                        shape: l.shape.try_map(|s| self.mf_entry(s, p.span))?,
                        stride: l.stride.try_map(|s| self.mf_entry(s, p.span))?,
                    };
                    let align_bytes = dtype.size_bytes();
                    mf::Param::Tensor(mf::TensorParam {
                        name: p.name.clone(),
                        dtype,
                        space: mf::MemorySpace::Gmem,
                        layout,
                        align_bytes,
                        // Refined by `set_access` once the body is lowered.
                        access: mf::Access::ReadWrite,
                    })
                }
                Type::Scalar(s) => {
                    mf::Param::Scalar(mf::ScalarParam { name: p.name.clone(), dtype: self.dtype(*s, p.span)? })
                }
                other => {
                    let other = other.to_string();
                    return self.unsupported(p.span, format!("a kernel parameter of type `{other}`"));
                }
            });
        }
        let mut dims = Vec::new();
        for d in &info.dyn_dims {
            let src = &d.source;
            let Some(param) = info.params.get(src.param) else {
                return self.internal(span, "a dimension's source");
            };
            if src.path.len() > 1 {
                return self.unsupported(param.span, format!("a dimension `{}` nested inside a mode", d.name));
            }
            let of = match src.component {
                DimComponent::Shape => mf::DimComponent::Shape,
                DimComponent::Stride => mf::DimComponent::Stride,
            };
            let from = mf::DimSource { param: param.name.clone(), mode: src.path.first().copied().unwrap_or(0), of };
            dims.push(mf::Dim { name: d.name.clone(), ty: mf::IntType::I32, from });
        }
        let Some(launch) = &info.launch else {
            return self.internal(span, "a kernel without a launch clause");
        };
        let grid = launch.grid.iter().map(|g| self.mf_expr(g, span)).collect::<LResult<_>>()?;
        let block = launch.block.iter().map(|b| self.mf_expr(b, span)).collect::<LResult<_>>()?;
        let cluster = match &launch.cluster {
            Some(c) => Some(c.iter().map(|x| self.mf_expr(x, span)).collect::<LResult<Vec<_>>>()?),
            None => None,
        };
        let smem_bytes = match &launch.smem {
            Some(s) => self.mf_expr(s, span)?,
            None => mf::Expr::Const(0),
        };
        let const_params: BTreeMap<String, mf::ConstValue> = info
            .const_generics
            .iter()
            .filter_map(|g| {
                let v = g.value?;
                Some((
                    g.name.clone(),
                    if g.ty == Scalar::Bool { mf::ConstValue::Bool(v != 0) } else { mf::ConstValue::Int(v) },
                ))
            })
            .collect();
        Ok(mf::Kernel {
            name: info.name.clone(),
            params,
            dims,
            launch: mf::Launch {
                grid,
                block,
                cluster,
                smem_bytes,
                static_smem_bytes: 0,
                persistent: info.persistent.is_some(),
            },
            const_params,
            // Added by the TMA copies as the body is lowered.
            tensor_maps: Vec::new(),
            // Counted by the `gemm`s as the body is lowered.
            flops: None,
            requires: info
                .requires
                .iter()
                .map(|r| mf::Requirement { dim: r.dim.clone(), multiple_of: r.multiple_of, message: r.message.clone() })
                .collect(),
        })
    }

    fn dtype(&mut self, s: Scalar, span: Span) -> LResult<mf::DType> {
        let name = if s == Scalar::Int { "i32" } else { s.name() };
        match name.parse::<mf::DType>() {
            Ok(d) => Ok(d),
            Err(_) => self.unsupported(span, format!("a kernel argument of type `{s}`")),
        }
    }

    /// An entry of a parameter's layout type as the manifest writes it.
    fn mf_entry(&mut self, s: &SymInt, span: Span) -> LResult<mf::Entry> {
        match s {
            SymInt::Const(v) => Ok(mf::Entry::Int(*v)),
            SymInt::Dim(n) => Ok(mf::Entry::Dim(n.clone())),
            SymInt::Generic(n) => self.no_value(n, span),
            other => self.unsupported(span, format!("the layout entry `{other}` in a kernel parameter")),
        }
    }

    /// A launch expression: the checker's symbolic integer itself, once it is known to be computable at launch
    /// (constants and dynamic dimensions only).
    pub fn mf_expr(&mut self, s: &SymInt, span: Span) -> LResult<mf::Expr> {
        let mut found = None;
        s.any_leaf(&mut |l| {
            let stop = !matches!(l, SymInt::Const(_) | SymInt::Dim(_));
            if stop {
                found = Some(l.clone());
            }
            stop
        });
        match found {
            None => Ok(s.clone()),
            Some(SymInt::Generic(n)) => self.no_value(&n, span),
            Some(_) => self.unsupported(span, "a launch size computed from a scalar argument"),
        }
    }
}

/// Raises each tensor parameter's `align_bytes` to the alignment the code relies on (`aligns` by parameter).
pub(super) fn set_alignments(kernel: &mut mf::Kernel, aligns: &[u32]) {
    for (p, &a) in kernel.params.iter_mut().zip(aligns) {
        if let mf::Param::Tensor(t) = p {
            t.align_bytes = t.align_bytes.max(a);
        }
    }
}

/// Sets each tensor parameter's `access` from what the body does with it (`(read, written)` by parameter).
pub(super) fn set_access(kernel: &mut mf::Kernel, uses: &[(bool, bool)]) {
    for (p, &(read, written)) in kernel.params.iter_mut().zip(uses) {
        if let mf::Param::Tensor(t) = p {
            t.access = match (read, written) {
                (true, false) => mf::Access::Read,
                (false, true) => mf::Access::Write,
                _ => mf::Access::ReadWrite,
            };
        }
    }
}

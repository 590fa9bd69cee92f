//! Tensor element access, slicing, and `copy` with vector width chosen from the layouts.

use super::value::{CoordV, Idx, TensorView, Value};
use super::{LResult, Lower};
use crate::{AddrSpace, Expr, Handle, Type, codes};
use cutec_diagnostics::Span;

/// The widest vector access in bytes (`ld.global.v4.f32`, `ld.shared.v2.f64`...).
const MAX_VECTOR_BYTES: u32 = 16;
/// Copies of more elements than this are not unrolled by the lowering (v0 has no loop form of `copy`).
const MAX_COPY_ELEMENTS: usize = 1 << 14;

impl Lower<'_> {
    /// `t[coord]`: an element (loaded) when the coordinate is complete, a sliced tensor when it has `_`.
    pub fn index(&mut self, t: Value, coord: Value, span: Span) -> LResult<Value> {
        let Value::Tensor(t) = t else {
            return self.unsupported(span, "indexing something other than a tensor");
        };
        let coord = self.coord_of(&coord, span)?;
        if coord.has_underscore() {
            return Ok(Value::Tensor(self.slice(&t, &coord, span)?));
        }
        let (ptr, align) = self.element_ptr(&t, &coord, span)?;
        let ty = self.ir_scalar(t.elem, span)?;
        Ok(Value::Scalar(self.b.load(ptr, Type::Scalar(ty), align), t.elem))
    }

    /// Stores `value` into element `coord` of `t`.
    pub fn store_element(&mut self, t: &TensorView, coord: &CoordV, value: &Value, span: Span) -> LResult<()> {
        if coord.has_underscore() {
            return self.unsupported(span, "assigning to a slice (use `copy` or `fill`)");
        }
        let v = self.scalar(value, t.elem, span)?;
        let (ptr, align) = self.element_ptr(t, coord, span)?;
        self.b.store(ptr, v, align);
        Ok(())
    }

    /// The address of an element and its alignment (the element's size: the base is at least that aligned).
    pub fn element_ptr(&mut self, t: &TensorView, coord: &CoordV, span: Span) -> LResult<(Handle<Expr>, u32)> {
        let (shape, stride) = (t.layout.shape().clone(), t.layout.stride().clone());
        let idx = self.crd2idx(coord, &shape, &stride, span)?;
        let idx = self.idx_add(t.offset, idx);
        let elem = self.ir_scalar(t.elem, span)?;
        Ok((self.offset_ptr(t.base, idx, elem), elem.size_bytes()))
    }

    fn offset_ptr(&mut self, base: Handle<Expr>, idx: Idx, elem: crate::Scalar) -> Handle<Expr> {
        if idx == Idx::Const(0) {
            return base;
        }
        let i = self.idx_value(idx);
        self.b.offset(base, i, Type::Scalar(elem))
    }

    /// `t[coord]` with `_`: the modes under `_`, offset by the rest of the coordinate.
    pub fn slice(&mut self, t: &TensorView, coord: &CoordV, span: Span) -> LResult<TensorView> {
        let r = t.layout.slice_and_offset(&coord.placeholder());
        let (layout, _) = self.layout_result(r, span)?;
        let (shape, stride) = (t.layout.shape().clone(), t.layout.stride().clone());
        let idx = self.crd2idx(coord, &shape, &stride, span)?;
        let offset = self.idx_add(t.offset, idx);
        Ok(TensorView { layout, offset, ..t.clone() })
    }

    /// `copy(src, dst)`: element i of `src` to element i of `dst`, `v` elements at a time, where `v` is the
    /// widest vector (a power of two, at most 16 bytes) such that every group of `v` elements is contiguous and
    /// aligned to `v` elements in both tensors.
    pub fn copy(&mut self, src: &TensorView, dst: &TensorView, span: Span) -> LResult<()> {
        if src.elem != dst.elem {
            return self.unsupported(span, "`copy` between tensors of different element types");
        }
        let (si, di) = (self.static_indices(src, span)?, self.static_indices(dst, span)?);
        if si.len() != di.len() {
            return self.error(
                codes::COPY_SIZE_MISMATCH,
                span,
                format!("`copy` from a tensor of {} elements to one of {}", si.len(), di.len()),
            );
        }
        let elem = self.ir_scalar(src.elem, span)?;
        let bytes = elem.size_bytes();
        let mut v = (MAX_VECTOR_BYTES / bytes).max(1) as usize;
        while v > 1 && !(vectorizable(src, &si, v, bytes) && vectorizable(dst, &di, v, bytes)) {
            v /= 2;
        }
        let ty = Type::vector(elem, v as u8);
        let align = bytes * v as u32;
        for t in [src, dst] {
            self.require_alignment(t, align);
        }
        for k in (0..si.len()).step_by(v) {
            // `vectorizable` proved both groups aligned to `align`.
            let s_idx = self.idx_add(src.offset, Idx::Const(si[k]));
            let d_idx = self.idx_add(dst.offset, Idx::Const(di[k]));
            let from = self.offset_ptr(src.base, s_idx, elem);
            let value = self.b.load(from, ty, align);
            let to = self.offset_ptr(dst.base, d_idx, elem);
            self.b.store(to, value, align);
        }
        Ok(())
    }

    /// `fill(t, value)`: every element of `t`.
    pub fn fill(&mut self, t: &TensorView, value: &Value, span: Span) -> LResult<()> {
        let indices = self.static_indices(t, span)?;
        let v = self.scalar(value, t.elem, span)?;
        let elem = self.ir_scalar(t.elem, span)?;
        for i in indices {
            let idx = self.idx_add(t.offset, Idx::Const(i));
            let to = self.offset_ptr(t.base, idx, elem);
            self.b.store(to, v, elem.size_bytes());
        }
        Ok(())
    }

    /// The layout's value at each element (`layout(i)` for `i < size`); the layout must be static.
    fn static_indices(&mut self, t: &TensorView, span: Span) -> LResult<Vec<i64>> {
        if !t.layout.is_static() {
            return self.error(
                codes::UNSUPPORTED_LAYOUT,
                span,
                format!(
                    "this tensor's layout `{}` is not static; codegen v0 copies tensors with static layouts",
                    t.layout
                ),
            );
        }
        let size = self.layout_result(t.layout.size(), span)?.static_value().unwrap_or(0);
        if size < 0 || size as usize > MAX_COPY_ELEMENTS {
            return self.unsupported(span, format!("a copy of {size} elements per thread"));
        }
        self.layout_result(t.layout.indices(), span)
    }

    /// Records that a kernel argument's base must be aligned to `bytes` (the manifest's `align_bytes`).
    fn require_alignment(&mut self, t: &TensorView, bytes: u32) {
        if let (Some(p), AddrSpace::Global) = (t.param, t.space)
            && let Some(a) = self.param_align.get_mut(p)
        {
            *a = (*a).max(bytes.min(t.base_align));
        }
    }
}

/// Whether groups of `v` elements at indices `idx` are contiguous and aligned to `v` elements in `t`.
fn vectorizable(t: &TensorView, idx: &[i64], v: usize, bytes: u32) -> bool {
    idx.len().is_multiple_of(v)
        && idx.chunks(v).all(|group| {
            group.windows(2).all(|w| w[1] == w[0] + 1) && t.align_at(Idx::Const(group[0]), bytes) >= bytes * v as u32
        })
}

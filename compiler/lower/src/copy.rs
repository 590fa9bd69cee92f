//! Tensor element access, slicing, and `copy` with vector width chosen from the layouts.

use super::value::{CoordV, TensorView, Value};
use super::{LResult, Lower};
use crate::error::Charge;
use crate::error::LowerError;
use cutec_diagnostics::Span;
use cutec_ir::{AddrSpace, Expr, Handle, Type};
use cutec_sema::SymInt;

/// The widest vector access in bytes (`ld.global.v4.f32`, `ld.shared.v2.f64`...).
const MAX_VECTOR_BYTES: u32 = 16;
/// Copies of more elements than this are not unrolled by the lowering (v0 has no loop form of `copy`).
const MAX_COPY_ELEMENTS: usize = 1 << 14;

/// Terms `(x, k)` of a sum `sum k * x`.
type Terms = Vec<(SymInt, i64)>;

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
        if let Some(shape) = t.identity.clone() {
            return self.identity_element(&t, &shape, &coord, span);
        }
        let pred = self.element_pred(&t, &coord, span)?;
        let (ptr, align) = self.element_ptr(&t, &coord, span)?;
        let ty = self.ir_scalar(t.elem, span)?;
        let value = match pred {
            None => self.b.load(ptr, Type::Scalar(ty), align),
            Some(p) => self.guarded_load(p, ptr, ty, align),
        };
        Ok(Value::Scalar(value, t.elem))
    }

    /// `p ? *ptr : 0`, the load made only where `p` holds.
    fn guarded_load(&mut self, p: Handle<Expr>, ptr: Handle<Expr>, ty: cutec_ir::Scalar, align: u32) -> Handle<Expr> {
        let var = self.b.var("inside", Type::Scalar(ty));
        let zero = self.zero(ty);
        self.b.write(var, zero);
        self.b.if_then(p, |b| {
            let v = b.load(ptr, Type::Scalar(ty), align);
            b.write(var, v);
        });
        self.b.read(var)
    }

    /// The zero of a scalar type.
    fn zero(&mut self, ty: cutec_ir::Scalar) -> Handle<Expr> {
        if ty.is_int() {
            self.b.lit(cutec_ir::Literal::Int { value: 0, ty })
        } else {
            self.b.lit(cutec_ir::Literal::Float { value: 0.0, ty })
        }
    }

    /// Stores `value` into element `coord` of `t`.
    pub fn store_element(&mut self, t: &TensorView, coord: &CoordV, value: &Value, span: Span) -> LResult<()> {
        if coord.has_underscore() {
            return self.unsupported(span, "assigning to a slice (use `copy` or `fill`)");
        }
        let v = self.scalar(value, t.elem, span)?;
        let pred = self.element_pred(t, coord, span)?;
        let (ptr, align) = self.element_ptr(t, coord, span)?;
        match pred {
            None => self.b.store(ptr, v, align),
            Some(p) => self.b.if_then(p, |b| b.store(ptr, v, align)),
        }
        Ok(())
    }

    /// Element `coord` of a view of `make_identity_tensor(shape)`: the coordinate, in `shape`, of the element's
    /// index (column-major, as CuTe's identity tensor counts), an integer per mode.
    fn identity_element(
        &mut self,
        t: &TensorView,
        shape: &cutec_layout::IntTuple,
        coord: &CoordV,
        span: Span,
    ) -> LResult<Value> {
        let (s, d) = (t.layout.shape().clone(), t.layout.stride().clone());
        let idx = self.crd2idx(coord, &s, &d, span)?;
        let idx = self.idx_add(&t.offset, &idx, span)?;
        let extents: Vec<i64> = match shape {
            cutec_layout::IntTuple::Int(i) => i.static_value().into_iter().collect(),
            cutec_layout::IntTuple::Tuple(v) => v
                .iter()
                .filter_map(|x| match x {
                    cutec_layout::IntTuple::Int(i) => i.static_value(),
                    cutec_layout::IntTuple::Tuple(_) => None,
                })
                .collect(),
        };
        if let SymInt::Const(c) = idx {
            let mut rest = c;
            let mut out = Vec::new();
            for &n in &extents {
                out.push(Value::Const(rest % n.max(1)));
                rest /= n.max(1);
            }
            return Ok(if out.len() == 1 { out.remove(0) } else { Value::Tuple(out) });
        }
        if let [rows, _] = extents[..]
            && let Some((row, col)) = self.split_rows_and_columns(&idx, rows)
        {
            let row = Value::Scalar(self.sum_of_terms(&row, span)?, cutec_sema::Scalar::Int);
            let col = Value::Scalar(self.sum_of_terms(&col, span)?, cutec_sema::Scalar::Int);
            return Ok(Value::Tuple(vec![row, col]));
        }
        let mut rest = self.materialize(&idx, span)?;
        let mut out = Vec::new();
        for (m, &n) in extents.iter().enumerate() {
            let n_h = self.b.i32(i32::try_from(n).unwrap_or(i32::MAX));
            // The last mode takes what is left (an index inside the tensor is below its size).
            let x = if m + 1 == extents.len() { rest } else { self.b.rem(rest, n_h) };
            out.push(Value::Scalar(x, cutec_sema::Scalar::Int));
            if m + 1 < extents.len() {
                rest = self.b.div(rest, n_h);
            }
        }
        Ok(if out.len() == 1 { out.remove(0) } else { Value::Tuple(out) })
    }

    /// `(idx % rows, idx / rows)` without a division, when `idx` is a sum of terms `k * x` (`x >= 0` bounded, `k`
    /// a constant) each of which lands in the rows (all of them together below `rows`) or in the columns (`k` a
    /// multiple of `rows`): what a wgmma accumulator's partition of an identity tensor is, a part that depends on
    /// the thread plus a constant per element. Written so, each element's row and column share the thread's part
    /// (one computation for all of them) and differ by constants, instead of each being a division of its own:
    /// equal rows are then the same value (the loads they index merge) and LLVM has no divisions to simplify.
    fn split_rows_and_columns(&self, idx: &SymInt, rows: i64) -> Option<(Terms, Terms)> {
        if rows <= 0 {
            return None;
        }
        let mut parts = Vec::new();
        self.index_terms(idx, 1, &mut parts, 0)?;
        let (mut row, mut col): (Terms, Terms) = (Vec::new(), Vec::new());
        let (mut konst, mut row_max) = (0i64, 0i64);
        for (x, k) in parts {
            if let Some(c) = x.as_const() {
                konst = konst.checked_add(c.checked_mul(k)?)?;
                continue;
            }
            // Every term is a non-negative multiple of a bounded non-negative value.
            let (lo, hi) = self.constant_range(&x)?;
            if k <= 0 || lo < 0 {
                return None;
            }
            if k % rows == 0 {
                col.push((x, k / rows));
            } else {
                row_max = row_max.checked_add(hi.checked_mul(k)?)?;
                row.push((x, k));
            }
        }
        if konst < 0 {
            return None;
        }
        let (row_c, col_c) = (konst % rows, konst / rows);
        // The rows' terms never carry into the columns.
        if row_max.checked_add(row_c)? >= rows {
            return None;
        }
        row.push((SymInt::Const(1), row_c));
        col.push((SymInt::Const(1), col_c));
        Some((row, col))
    }

    /// The IR value of `sum k * x` over `terms`, in order (a term's `x` an IR value or a symbolic integer).
    fn sum_of_terms(&mut self, terms: &Terms, span: Span) -> LResult<Handle<cutec_ir::Expr>> {
        let mut sum: Option<Handle<cutec_ir::Expr>> = None;
        for (x, k) in terms {
            let term = match x.as_const() {
                Some(c) => {
                    let v = c.checked_mul(*k).and_then(|v| i32::try_from(v).ok());
                    let Some(v) = v else { return self.internal(span, "a coordinate past 32 bits") };
                    if v == 0 && sum.is_some() {
                        continue;
                    }
                    self.b.i32(v)
                }
                None => {
                    let h = match x {
                        SymInt::Value { id, .. } => match Handle::<cutec_ir::Expr>::from_value_id(*id) {
                            Some(h) => h,
                            None => return self.internal(span, "a coordinate's term without its IR value"),
                        },
                        other => self.materialize(other, span)?,
                    };
                    match i32::try_from(*k) {
                        Ok(1) => h,
                        Ok(k) => {
                            let k = self.b.i32(k);
                            self.b.mul(h, k)
                        }
                        Err(_) => return self.internal(span, "a coordinate's stride past 32 bits"),
                    }
                }
            };
            sum = Some(match sum {
                Some(s) => self.b.add(s, term),
                None => term,
            });
        }
        match sum {
            Some(s) => Ok(s),
            None => Ok(self.b.i32(0)),
        }
    }

    /// `s` as a sum of terms `k * x` with constant `k` (appended to `out`, times `sign`), opening sums, differences
    /// and constant multiples, of symbolic integers and of the IR values they name.
    fn index_terms(&self, s: &SymInt, sign: i64, out: &mut Vec<(SymInt, i64)>, depth: u32) -> Option<()> {
        use cutec_sema::SymOp;
        if depth > 64 {
            return None;
        }
        let mul = |a: &SymInt, b: &SymInt, out: &mut Vec<(SymInt, i64)>| -> Option<bool> {
            match (a.as_const(), b.as_const()) {
                (_, Some(k)) => self.index_terms(a, sign.checked_mul(k)?, out, depth + 1).map(|()| true),
                (Some(k), _) => self.index_terms(b, sign.checked_mul(k)?, out, depth + 1).map(|()| true),
                _ => Some(false),
            }
        };
        match s {
            SymInt::Op(SymOp::Add, a, b) => {
                self.index_terms(a, sign, out, depth + 1)?;
                self.index_terms(b, sign, out, depth + 1)
            }
            SymInt::Op(SymOp::Sub, a, b) => {
                self.index_terms(a, sign, out, depth + 1)?;
                self.index_terms(b, sign.checked_neg()?, out, depth + 1)
            }
            SymInt::Op(SymOp::Mul, a, b) => {
                if !mul(a, b, out)? {
                    out.push((s.clone(), sign));
                }
                Some(())
            }
            SymInt::Value { id, .. } => {
                let h = Handle::<cutec_ir::Expr>::from_value_id(*id)?;
                let leaf = super::prove::leaf;
                match self.b.kernel().exprs.get(h) {
                    Some(&cutec_ir::Expr::Binary { op: cutec_ir::BinaryOp::Add, lhs, rhs }) => {
                        self.index_terms(&leaf(lhs), sign, out, depth + 1)?;
                        self.index_terms(&leaf(rhs), sign, out, depth + 1)
                    }
                    Some(&cutec_ir::Expr::Binary { op: cutec_ir::BinaryOp::Mul, lhs, rhs }) => {
                        let (a, b) = (
                            self.ir_const(lhs).map_or_else(|| leaf(lhs), SymInt::Const),
                            self.ir_const(rhs).map_or_else(|| leaf(rhs), SymInt::Const),
                        );
                        if !mul(&a, &b, out)? {
                            out.push((s.clone(), sign));
                        }
                        Some(())
                    }
                    Some(cutec_ir::Expr::Literal(l)) => {
                        out.push((SymInt::Const(l.as_int()?), sign));
                        Some(())
                    }
                    _ => {
                        out.push((s.clone(), sign));
                        Some(())
                    }
                }
            }
            other => {
                out.push((other.clone(), sign));
                Some(())
            }
        }
    }

    /// The address of an element and its alignment (the element's size: the base is at least that aligned).
    pub fn element_ptr(&mut self, t: &TensorView, coord: &CoordV, span: Span) -> LResult<(Handle<Expr>, u32)> {
        if t.identity.is_some() {
            return self.unsupported(span, "an identity tensor in memory (read its elements with `t[i]`)");
        }
        let (shape, stride) = (t.layout.shape().clone(), t.layout.stride().clone());
        let idx = self.crd2idx(coord, &shape, &stride, span)?;
        let idx = self.idx_add(&t.offset, &idx, span)?;
        let elem = self.ir_scalar(t.elem, span)?;
        Ok((self.offset_ptr(t, &idx, elem, span)?, elem.size_bytes()))
    }

    /// The address of element `idx` of `t`'s storage, through its swizzle.
    pub(super) fn offset_ptr(
        &mut self,
        t: &TensorView,
        idx: &SymInt,
        elem: cutec_ir::Scalar,
        span: Span,
    ) -> LResult<Handle<Expr>> {
        let element = match &t.swizzle {
            Some(sw) => self.swizzled(sw, idx, span)?,
            None => idx.clone(),
        };
        if let SymInt::Const(e) = element {
            self.check_shared_index(t, idx, e, span)?;
        }
        let idx = element;
        if idx == SymInt::Const(0) {
            return Ok(t.base);
        }
        let i = self.materialize(&idx, span)?;
        Ok(self.b.offset(t.base, i, Type::Scalar(elem)))
    }

    /// E0353 where `element`, a constant element index of `t` (`idx` before its swizzle), lies outside the
    /// shared-memory allocation `t` views. (Register tensors are checked by the IR once loops are unrolled,
    /// E0323; views of kernel arguments are predicated, `bounds.rs`.)
    fn check_shared_index(&mut self, t: &TensorView, idx: &SymInt, element: i64, span: Span) -> LResult<()> {
        if t.space != AddrSpace::Shared {
            return Ok(());
        }
        let kernel = self.b.kernel();
        let Some(cutec_ir::Expr::AllocPtr(a)) = kernel.exprs.get(t.base) else { return Ok(()) };
        let Some(alloc) = kernel.allocs.get(*a) else { return Ok(()) };
        if (0..i64::from(alloc.len)).contains(&element) {
            return Ok(());
        }
        let (tensor, len) = (alloc.name.clone(), alloc.len);
        let index = idx.as_const().unwrap_or(element);
        let swizzled = (index != element).then_some(element);
        self.fail(span, LowerError::SharedIndex { tensor, index, swizzled, len })
    }

    /// CuTe's `Swizzle<B, M, S>` applied to an index: `i ^ ((i & yyy_mask) >> S)` (a left shift for a negative
    /// `S`), folded for constants.
    fn swizzled(&mut self, sw: &cutec_layout::Swizzle, idx: &SymInt, span: Span) -> LResult<SymInt> {
        if let SymInt::Const(c) = idx {
            return Ok(SymInt::Const(sw.apply(*c)));
        }
        let (Ok(mask), Ok(shift)) = (i32::try_from(sw.yyy_mask()), i32::try_from(sw.shift())) else {
            return self.unsupported(span, format!("the swizzle {sw} on 32-bit indices"));
        };
        let x = self.materialize(idx, span)?;
        let m = self.b.i32(mask);
        let bits = self.b.binary(cutec_ir::BinaryOp::And, x, m);
        let moved = if shift >= 0 {
            let s = self.b.i32(shift);
            self.b.binary(cutec_ir::BinaryOp::Shr, bits, s)
        } else {
            let s = self.b.i32(-shift);
            self.b.binary(cutec_ir::BinaryOp::Shl, bits, s)
        };
        let h = self.b.binary(cutec_ir::BinaryOp::Xor, x, moved);
        // The low `base` bits are kept.
        let div = crate::value::pow2_part(self.divisor(idx)).min(1 << sw.base().clamp(0, 20));
        Ok(self.sym_value(h, div))
    }

    /// `t[coord]` with `_`: the modes under `_`, offset by the rest of the coordinate.
    pub fn slice(&mut self, t: &TensorView, coord: &CoordV, span: Span) -> LResult<TensorView> {
        let (layout, idx) = self.crd_result(slice_parts(&t.layout, coord), span)?;
        let offset = self.idx_add(&t.offset, &idx, span)?;
        let bounds = t.bounds.follow(&layout, |l| slice_parts(l, coord));
        Ok(TensorView { layout, offset, bounds, ..t.clone() })
    }

    /// `copy(src, dst)`: element i of `src` to element i of `dst`, `v` elements at a time, where `v` is the
    /// widest vector (a power of two, at most 16 bytes) such that every group of `v` elements is contiguous and
    /// aligned to `v` elements in both tensors. Shapes must be static; strides may be dynamic (a tile of a
    /// tensor with a dynamic row stride): offsets are then affine in the dynamic strides, and two elements are
    /// contiguous when they differ only in the constant part.
    pub fn copy(&mut self, src: &TensorView, dst: &TensorView, span: Span) -> LResult<()> {
        if src.elem != dst.elem {
            return self.unsupported(span, "`copy` between tensors of different element types");
        }
        self.transfer(src, dst, span)
    }

    /// `copy`, converting each element to `dst`'s type on the way (`store`): the vector width is the widest that
    /// both tensors allow for their own element sizes, and the conversion is one lane-wise convert per vector.
    pub fn transfer(&mut self, src: &TensorView, dst: &TensorView, span: Span) -> LResult<()> {
        if src.identity.is_some() || dst.identity.is_some() {
            return self.unsupported(span, "copying an identity tensor (read its elements with `t[i]`)");
        }
        let (so, d_o) = (self.affine_offsets(src, span)?, self.affine_offsets(dst, span)?);
        if so.len() != d_o.len() {
            return self.fail(span, LowerError::CopySizeMismatch { from: so.len(), to: d_o.len() });
        }
        let elem = self.ir_scalar(src.elem, span)?;
        let to_elem = self.ir_scalar(dst.elem, span)?;
        let (sp, dp) = (self.tile_pred(src, so.len(), span)?, self.tile_pred(dst, d_o.len(), span)?);
        if sp.is_none() && dp.is_none() {
            return self.copy_vectorized(src, dst, &so, &d_o, (elem, to_elem), span);
        }
        // Some element may be outside: the whole tile is tested once, and only a tile that crosses the edge
        // takes the element-by-element path (loads outside give 0, stores outside are skipped).
        let all = [&sp, &dp]
            .into_iter()
            .flatten()
            .filter_map(|p| p.all)
            .reduce(|a, b| self.b.binary(cutec_ir::BinaryOp::And, a, b));
        let slow = |cx: &mut Self| -> LResult<()> {
            let ty = Type::Scalar(elem);
            // At least a load and a store per element.
            cx.charge(2 * so.len() as u64, Charge::Copy { elements: so.len() }, span)?;
            for i in 0..so.len() {
                let d = match &dp {
                    Some(p) => cx.tile_elem_pred(p, i, span)?,
                    None => None,
                };
                cx.b.open_block();
                let from = cx.affine_ptr(src, &so[i], elem, span)?;
                let value = match &sp {
                    Some(p) => match cx.tile_elem_pred(p, i, span)? {
                        Some(s) => cx.guarded_load(s, from, elem, elem.size_bytes()),
                        None => cx.b.load(from, ty, elem.size_bytes()),
                    },
                    None => cx.b.load(from, ty, elem.size_bytes()),
                };
                let value = if to_elem == elem { value } else { cx.b.convert(value, to_elem) };
                let to = cx.affine_ptr(dst, &d_o[i], to_elem, span)?;
                cx.b.store(to, value, to_elem.size_bytes());
                let block = cx.b.close_block();
                cx.guarded_block(d, block);
            }
            Ok(())
        };
        self.versioned(all, |cx| cx.copy_vectorized(src, dst, &so, &d_o, (elem, to_elem), span), slow)
    }

    /// `fast` where `all` holds (nothing when it is the literal `false`), `slow` elsewhere.
    fn versioned(
        &mut self,
        all: Option<Handle<Expr>>,
        fast: impl FnOnce(&mut Self) -> LResult<()>,
        slow: impl FnOnce(&mut Self) -> LResult<()>,
    ) -> LResult<()> {
        let Some(all) = all else { return fast(self) };
        let never = matches!(self.b.kernel().exprs.get(all), Some(Expr::Literal(cutec_ir::Literal::Bool(false))));
        if never {
            return slow(self);
        }
        self.b.open_block();
        let f = fast(self);
        let accept = self.b.close_block();
        self.b.open_block();
        let s = slow(self);
        let reject = self.b.close_block();
        self.b.push(cutec_ir::Stmt::If { cond: all, accept, reject });
        f.and(s)
    }

    /// The statements of `block`, under `if p` when there is a predicate.
    fn guarded_block(&mut self, p: Option<Handle<Expr>>, block: cutec_ir::Block) {
        match p {
            None => self.b.append_block(block),
            Some(p) => self.b.push(cutec_ir::Stmt::If { cond: p, accept: block, reject: cutec_ir::Block::new() }),
        }
    }

    /// The copy of [`Lower::copy`] when every element is inside: vectors as wide as the layouts allow.
    fn copy_vectorized(
        &mut self,
        src: &TensorView,
        dst: &TensorView,
        so: &[Affine],
        d_o: &[Affine],
        (elem, to_elem): (cutec_ir::Scalar, cutec_ir::Scalar),
        span: Span,
    ) -> LResult<()> {
        if self.try_stmatrix(src, dst, (so, d_o), (elem, to_elem), span)? {
            return Ok(());
        }
        let (bytes, to_bytes) = (elem.size_bytes(), to_elem.size_bytes());
        let mut v = (MAX_VECTOR_BYTES / bytes.max(to_bytes)).max(1) as usize;
        while v > 1 && !(self.vectorizable(src, so, v, bytes) && self.vectorizable(dst, d_o, v, to_bytes)) {
            v /= 2;
        }
        // A load and a store per vector, charged before they are built.
        self.charge(2 * so.len().div_ceil(v) as u64, Charge::Copy { elements: so.len() }, span)?;
        let ty = Type::vector(elem, v as u8);
        let (align, to_align) = (bytes * v as u32, to_bytes * v as u32);
        self.require_alignment(src, align);
        self.require_alignment(dst, to_align);
        for k in (0..so.len()).step_by(v) {
            // `vectorizable` proved both groups aligned to `align`.
            let from = self.affine_ptr(src, &so[k], elem, span)?;
            let value = self.b.load(from, ty, align);
            let value = if to_elem == elem { value } else { self.b.convert(value, to_elem) };
            let to = self.affine_ptr(dst, &d_o[k], to_elem, span)?;
            self.b.store(to, value, to_align);
        }
        Ok(())
    }

    /// `fill(t, value)`: every element of `t`.
    pub fn fill(&mut self, t: &TensorView, value: &Value, span: Span) -> LResult<()> {
        if t.identity.is_some() {
            return self.unsupported(span, "filling an identity tensor");
        }
        let offsets = self.affine_offsets(t, span)?;
        let v = self.scalar(value, t.elem, span)?;
        let elem = self.ir_scalar(t.elem, span)?;
        let pred = self.tile_pred(t, offsets.len(), span)?;
        let store = |cx: &mut Self, i: usize, guard: bool| -> LResult<()> {
            let p = match (&pred, guard) {
                (Some(p), true) => cx.tile_elem_pred(p, i, span)?,
                _ => None,
            };
            cx.b.open_block();
            let to = cx.affine_ptr(t, &offsets[i], elem, span)?;
            cx.b.store(to, v, elem.size_bytes());
            let block = cx.b.close_block();
            cx.guarded_block(p, block);
            Ok(())
        };
        let all = pred.as_ref().and_then(|p| p.all);
        let n = offsets.len();
        // A store per element on each path, charged before it is built.
        let charge = |cx: &mut Self| cx.charge(n as u64, Charge::Copy { elements: n }, span);
        self.versioned(
            all,
            |cx| charge(cx).and_then(|()| (0..n).try_for_each(|i| store(cx, i, false))),
            |cx| charge(cx).and_then(|()| (0..n).try_for_each(|i| store(cx, i, true))),
        )
    }

    /// The offset of each element `i < size` (colexicographic over the flattened static shape) as a constant
    /// plus coordinate multiples of the dynamic strides.
    fn affine_offsets(&mut self, t: &TensorView, span: Span) -> LResult<Vec<Affine>> {
        let leaves = t.layout.leaves();
        let mut shape = Vec::with_capacity(leaves.len());
        for (s, _) in &leaves {
            match s.static_value() {
                Some(v) if v >= 0 => shape.push(v),
                _ => {
                    return self.fail(
                        span,
                        LowerError::Layout {
                            // The shape is not printed: its run-time extents would show the IR's names.
                            problem: "this tensor's shape is not static; `copy` moves tensors of static shape"
                                .to_owned(),
                        },
                    );
                }
            }
        }
        let size = shape.iter().try_fold(1i64, |acc, &s| acc.checked_mul(s)).unwrap_or(i64::MAX);
        if size as u64 > MAX_COPY_ELEMENTS as u64 {
            return self.unsupported(span, format!("a copy of {size} elements per thread"));
        }
        let mut out = Vec::with_capacity(size as usize);
        for i in 0..size {
            let (mut rest, mut a) = (i, Affine { konst: 0, terms: Vec::new() });
            for (k, (&s, (_, d))) in shape.iter().zip(&leaves).enumerate() {
                let c = if s > 0 { rest % s } else { 0 };
                rest = if s > 0 { rest / s } else { 0 };
                match d.static_value() {
                    Some(d) => a.konst = a.konst.wrapping_add(c.wrapping_mul(d)),
                    None if c != 0 => a.terms.push((k, c)),
                    None => {}
                }
            }
            out.push(a);
        }
        Ok(out)
    }

    /// Whether groups of `v` elements are contiguous and aligned to `v` elements in `t`.
    fn vectorizable(&mut self, t: &TensorView, offsets: &[Affine], v: usize, bytes: u32) -> bool {
        offsets.len().is_multiple_of(v)
            && offsets.chunks(v).all(|group| {
                group.windows(2).all(|w| w[1].terms == w[0].terms && w[1].konst == w[0].konst + 1)
                    && self.affine_align(t, &group[0], bytes) >= bytes * v as u32
            })
    }

    /// The alignment in bytes of the element at `a` in `t`.
    pub(super) fn affine_align(&mut self, t: &TensorView, a: &Affine, bytes: u32) -> u32 {
        let leaves = t.layout.leaves();
        let offset = SymInt::op(cutec_sema::SymOp::Add, t.offset.clone(), SymInt::Const(a.konst));
        let mut div = self.divisor(&offset);
        for &(k, c) in &a.terms {
            let stride = leaves.get(k).map_or(1, |(_, d)| self.stride_divisor(d));
            div = SymInt::gcd(div, stride.saturating_mul(c.checked_abs().unwrap_or(1).max(1)));
        }
        t.align_for(div, bytes)
    }

    /// The address of the element at `a` in `t`.
    pub(super) fn affine_ptr(
        &mut self,
        t: &TensorView,
        a: &Affine,
        elem: cutec_ir::Scalar,
        span: Span,
    ) -> LResult<Handle<Expr>> {
        let leaves = t.layout.leaves();
        let mut idx = self.idx_add(&t.offset, &SymInt::Const(a.konst), span)?;
        for &(k, c) in &a.terms {
            let Some((s, d)) = leaves.get(k) else { continue };
            let (shape, stride) = (cutec_layout::IntTuple::Int(s.clone()), cutec_layout::IntTuple::Int(d.clone()));
            let part = self.crd2idx(&CoordV::Int(SymInt::Const(c)), &shape, &stride, span)?;
            idx = self.idx_add(&idx, &part, span)?;
        }
        self.offset_ptr(t, &idx, elem, span)
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

/// An element's offset: `konst` plus, for each `(leaf, c)` of `terms`, `c` times that leaf's dynamic stride.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Affine {
    pub konst: i64,
    pub terms: Vec<(usize, i64)>,
}

/// A slice of the layout `l` at `coord` (with `_`): the layout of the modes under `_`, and the offset of the rest.
fn slice_parts(
    l: &cutec_layout::Layout,
    coord: &CoordV,
) -> Result<(cutec_layout::Layout, SymInt), cutec_layout::LayoutError> {
    let (layout, _) = l.slice_and_offset(&coord.placeholder())?;
    let idx =
        cutec_layout::int_tuple::crd2idx(cutec_layout::LayoutOp::Crd2idx, &coord.to_layout(), l.shape(), l.stride())?;
    Ok((layout, idx.sym()))
}

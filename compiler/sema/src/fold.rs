//! Folding the layout algebra while checking: every layout literal, layout operation and tensor expression whose
//! inputs are known gets its value from `cutec-layout` ([`cutec_layout::apply`]), recorded in the module's
//! `folded` table ([`crate::CheckedModule::folded`]).
//!
//! # What a value is
//!
//! - Integers: literals, constants, const generics with a value (default or `-D`) are [`Int::Static`]; dynamic
//!   dimensions, integer parameters, loop variables, `thread_idx.x` and every other run-time integer are
//!   [`Int::Dynamic`] with a readable name and no value, so layouts over them stay symbolic (`(128,64):(K,1)`).
//! - An integer that depends on a const generic without value (`softmax`'s `N` without `-D N=...`) has no value:
//!   nothing that needs it folds, and nothing about it is reported.
//! - A tensor expression's value is its layout ([`Value::Layout`], or [`Value::Composed`] when swizzled); a
//!   layout expression's value is the layout; tuples, `_` and swizzles are themselves.
//!
//! # Errors
//!
//! An operation that fails with [`LayoutError::NeedsStatic`] (it would have to branch on a run-time value) just
//! does not fold. Every other [`LayoutError`] is an error of the program (E0200..E0205, `fold_diag.rs`). Folding
//! runs only on calls the checker accepted (no error inside them), so a type error is never reported twice.
//! Indexing checks index counts (where the type did not know the rank) and static indices against folded shapes.

use crate::Resolution;
use crate::body::{Fcx, MAX_DEPTH};
use crate::builtins::Builtin;
use crate::check_type::GenVal;
use crate::errors::SemaError;
use crate::fold_diag::LayoutDiag;
use crate::size_diag::SizeDiag;
use crate::types::{LayoutType, Scalar, SymInt, SymOp, Type};
use cutec_diagnostics::Span;
use cutec_grammar::ast::{BinaryOp, Expr, ExprKind, NodeId};
use cutec_layout::int_tuple::compact_col_major;
use cutec_layout::{
    ComposedLayout, Int, IntTuple, Layout, LayoutError, LayoutOp, Shape, Swizzle, Tiler, Value, apply,
    make_ordered_layout, tiled_product,
};

/// Longest name given to a run-time integer (`block_idx.x*128`); longer expressions are cut.
const MAX_NAME: usize = 40;
/// Largest layout whose offsets are enumerated to check a swizzle.
const MAX_ENUMERATED: i64 = 1 << 16;

/// The algebra's integer for a symbolic one of a signature: `None` where a const generic has no value.
fn sym_to_int(s: &SymInt) -> Option<Int> {
    match s {
        SymInt::Const(v) => Some(Int::Static(*v)),
        _ if s.has_generic() => None,
        other => Some(Int::from_sym(other.clone())),
    }
}

/// The folded layout of a written layout type (a kernel parameter's), with const generics substituted.
pub(crate) fn layout_of_type(l: &LayoutType) -> Option<Value> {
    let v = l.value.as_ref()?;
    if l.swizzled {
        return None;
    }
    let entry = |s: &SymInt| sym_to_int(s).ok_or(());
    Layout::new(v.shape.try_map(entry).ok()?, v.stride.try_map(entry).ok()?).ok().map(Value::Layout)
}

/// A short source-like text of an integer expression, the name of its run-time value.
pub(crate) fn text(e: &Expr, depth: u32) -> String {
    if depth > 8 {
        return "..".to_owned();
    }
    let s = match &e.kind {
        ExprKind::Int(v) => v.to_string(),
        ExprKind::Name { name, .. } => name.name.clone(),
        ExprKind::Field { base, field } => format!("{}.{}", text(base, depth + 1), field.name),
        ExprKind::Binary { op, lhs, rhs } => {
            let side = |x: &Expr| {
                let t = text(x, depth + 1);
                if matches!(x.kind, ExprKind::Binary { .. }) { format!("({t})") } else { t }
            };
            format!("{}{}{}", side(lhs), op.as_str(), side(rhs))
        }
        ExprKind::Unary { op, operand } => format!("{}{}", op.as_str(), text(operand, depth + 1)),
        ExprKind::Cast { value, .. } => text(value, depth + 1),
        ExprKind::Call { callee, .. } => format!("{}(..)", text(callee, depth + 1)),
        ExprKind::Index { base, .. } => format!("{}[..]", text(base, depth + 1)),
        _ => "?".to_owned(),
    };
    if s.len() > MAX_NAME {
        let cut = (0..=MAX_NAME).rev().find(|&i| s.is_char_boundary(i)).unwrap_or(0);
        format!("{}..", &s[..cut])
    } else {
        s
    }
}

/// Whether the source of `e` already shows its value (no names), so a label repeating it is noise.
fn shows_value(e: &Expr, depth: u32) -> bool {
    depth < 32
        && match &e.kind {
            ExprKind::Int(_) | ExprKind::Wildcard => true,
            ExprKind::Tuple(v) => v.iter().all(|x| shows_value(x, depth + 1)),
            ExprKind::Layout { shape, stride } => shows_value(shape, depth + 1) && shows_value(stride, depth + 1),
            _ => false,
        }
}

/// CuTe's `Swizzle` atoms for Hopper's shared memory (`GMMA::Layout_{K,MN}_SW{128,64,32}_Atom<T>`): the byte
/// atom `Sw<B,4,3> o (8,R):(R,1)` (K-major; `(R,8):(1,R)` M/N-major, R the row bytes) upcast to elements of `T`.
fn sw_atom(b: Builtin, elem: Scalar) -> Option<Value> {
    let (bits, row) = match b {
        Builtin::Sw128K | Builtin::Sw128Mn => (3, 128),
        Builtin::Sw64K | Builtin::Sw64Mn => (2, 64),
        Builtin::Sw32K | Builtin::Sw32Mn => (1, 32),
        _ => return None,
    };
    if elem == Scalar::Bool {
        return None;
    }
    let bytes = i64::from(elem.bits() / 8);
    let layout = if matches!(b, Builtin::Sw128K | Builtin::Sw64K | Builtin::Sw32K) {
        Layout::new(IntTuple::ints(&[8, row]), IntTuple::ints(&[row, 1]))
    } else {
        Layout::new(IntTuple::ints(&[row, 8]), IntTuple::ints(&[1, row]))
    };
    ComposedLayout::new(Swizzle::new(bits, 4, 3).ok()?, layout.ok()?).upcast(bytes).ok().map(Value::Composed)
}

/// A value used as a layout: itself, or the compact layout of a shape.
fn as_layout(v: &Value) -> Option<Value> {
    match v {
        Value::Layout(_) | Value::Composed(_) => Some(v.clone()),
        other => Layout::compact(other.to_int_tuple()?).ok().map(Value::Layout),
    }
}

fn plain_layout(v: &Value) -> Option<&Layout> {
    match v {
        Value::Layout(l) => Some(l),
        Value::Composed(c) => Some(&c.layout),
        _ => None,
    }
}

/// CuTe's `filter_zeros(stride, shape)`: the shape with 1 where the stride is 0.
fn filter_zeros(stride: &IntTuple, shape: &IntTuple) -> IntTuple {
    match (stride, shape) {
        (IntTuple::Tuple(a), IntTuple::Tuple(b)) => {
            IntTuple::Tuple(a.iter().zip(b).map(|(x, y)| filter_zeros(x, y)).collect())
        }
        (IntTuple::Int(d), IntTuple::Int(_)) if d.is(0) => IntTuple::Int(Int::Static(1)),
        (_, s) => s.clone(),
    }
}

/// CuTe's `make_fragment_like(layout)`: a compact register layout of the same shape; for a static shape of rank
/// > 1, mode 0 stays first (compact, broadcast modes kept broadcast) and the other modes keep their stride order.
fn fragment_like(v: &Value) -> Option<Value> {
    let l = plain_layout(v).cloned().or_else(|| Layout::compact(v.to_int_tuple()?).ok())?;
    let r = l.rank();
    if r > 1 && l.shape().is_static() {
        let m0 = l.mode(0).ok()?;
        let filtered = filter_zeros(m0.stride(), m0.shape());
        let (stride0, _) = compact_col_major(LayoutOp::MakeLayout, &filtered, &Int::Static(1)).ok()?;
        let a = Layout::new(m0.shape().clone(), stride0).ok()?;
        let rest = l.take(1, r).ok()?;
        let b = make_ordered_layout(rest.shape(), rest.stride()).ok()?;
        tiled_product(&a, &Tiler::Layout(b)).ok().map(Value::Layout)
    } else {
        Layout::compact(l.shape().clone()).ok().map(Value::Layout)
    }
}

/// The first offset of a swizzled layout that the swizzle sends outside the layout's codomain:
/// `(offset, swizzled offset, cosize)`.
fn swizzle_escape(c: &ComposedLayout) -> Option<(i64, i64, i64)> {
    let cosize = c.layout.cosize().ok()?.static_value()?;
    let size = c.layout.size().ok()?.static_value()?;
    if size > MAX_ENUMERATED || !c.offset.is(0) {
        return None;
    }
    let mut worst: Option<(i64, i64)> = None;
    for o in c.layout.indices().ok()? {
        let to = c.swizzle.apply(o);
        if o >= 0 && (to >= cosize || to < 0) && worst.is_none_or(|(w, _)| o < w) {
            worst = Some((o, to));
        }
    }
    worst.map(|(o, to)| (o, to, cosize))
}

fn static_size(t: &IntTuple) -> Option<i64> {
    t.product(LayoutOp::Size).ok()?.static_value()
}

impl Fcx<'_, '_> {
    /// The folded value of expression or binding `id` of this module.
    pub fn folded(&self, id: NodeId) -> Option<&Value> {
        self.cx.tables.get(self.m.index()).and_then(|t| t.folded.get(&id))
    }

    pub fn set_folded(&mut self, id: NodeId, v: Value) {
        if let Some(t) = self.cx.tables.get_mut(self.m.index()) {
            t.folded.insert(id, v);
        }
    }

    /// The static integer `id` folded to.
    pub fn folded_static(&self, id: NodeId) -> Option<i64> {
        match self.folded(id) {
            Some(Value::Int(Int::Static(v))) => Some(*v),
            _ => None,
        }
    }

    /// Folds the parameters of the enclosing function: a kernel's tensors get their written layouts (const
    /// generics substituted), integer parameters become named run-time integers. A device function's tensor
    /// parameters take any layout, so they have none.
    pub fn fold_params(&mut self) {
        let Some(f) = self.func.and_then(|f| self.cx.functions.get(f)) else { return };
        let is_kernel = f.is_kernel;
        let params: Vec<(NodeId, String, Type)> =
            f.params.iter().map(|p| (p.id, p.name.clone(), p.ty.clone())).collect();
        for (id, name, ty) in params {
            let v = match &ty {
                Type::Tensor(t) if is_kernel => layout_of_type(&t.layout),
                Type::Layout(l) if is_kernel => layout_of_type(l),
                t if t.is_integer() => {
                    Some(Value::Int(Int::from_sym(SymInt::value(cutec_symint::ValueId::Node(id.0), name))))
                }
                _ => None,
            };
            if let Some(v) = v {
                self.set_folded(id, v);
            }
        }
    }

    /// Folds `e` (already checked, of type `ty`) from the values of its parts. Calls of builtins fold in
    /// [`Fcx::fold_call`], while they are checked.
    pub fn fold_expr(&mut self, e: &Expr, ty: &Type) {
        if ty.is_error() || self.folded(e.id).is_some() {
            return;
        }
        let v = match &e.kind {
            ExprKind::Wildcard => Some(Value::Underscore),
            ExprKind::Tuple(items) => {
                items.iter().map(|x| self.folded(x.id).cloned()).collect::<Option<Vec<_>>>().map(Value::Tuple)
            }
            ExprKind::Layout { shape, stride } => self.fold_literal(shape, stride),
            ExprKind::Name { generics, .. } => self.fold_name(e, generics, ty),
            ExprKind::Index { base, indices } => self.fold_index(base, indices, ty),
            ExprKind::Binary { op, lhs, rhs } if ty.is_integer() => self.fold_binary(e, *op, lhs, rhs),
            _ if ty.is_integer() => self.int_value(e),
            _ => None,
        };
        if let Some(v) = v {
            self.set_folded(e.id, v);
        }
    }

    /// A binding's value: what its initializer folded to (immutable bindings only).
    pub fn fold_binding(&mut self, id: NodeId, value: &Expr, mutable: bool) {
        if !mutable && let Some(v) = self.folded(value.id).cloned() {
            self.set_folded(id, v);
        }
    }

    fn fold_literal(&self, shape: &Expr, stride: &Expr) -> Option<Value> {
        Layout::new(self.tree(shape, 0)?, self.tree(stride, 0)?).ok().map(Value::Layout)
    }

    /// The shape or stride tree of a layout literal.
    fn tree(&self, e: &Expr, depth: u32) -> Option<IntTuple> {
        if depth > MAX_DEPTH {
            return None;
        }
        match &e.kind {
            ExprKind::Tuple(items) => {
                items.iter().map(|x| self.tree(x, depth + 1)).collect::<Option<_>>().map(IntTuple::Tuple)
            }
            _ => match self.folded(e.id)? {
                Value::Int(i) => Some(IntTuple::Int(i.clone())),
                _ => None,
            },
        }
    }

    /// An integer: static if the checker computes it, otherwise a named run-time value; `None` if it needs a
    /// const generic without value.
    fn int_value(&self, e: &Expr) -> Option<Value> {
        let s = self.sym(e);
        match s {
            SymInt::Const(v) => Some(Value::Int(Int::Static(v))),
            _ if s.has_generic() => None,
            s => Some(Value::Int(Int::from_sym(s))),
        }
    }

    fn fold_binary(&self, e: &Expr, op: BinaryOp, lhs: &Expr, rhs: &Expr) -> Option<Value> {
        let sop = match op {
            BinaryOp::Add => Some(SymOp::Add),
            BinaryOp::Sub => Some(SymOp::Sub),
            BinaryOp::Mul => Some(SymOp::Mul),
            BinaryOp::Div => Some(SymOp::Div),
            BinaryOp::Rem => Some(SymOp::Rem),
            _ => None,
        };
        if let (Some(sop), Some(a), Some(b)) = (sop, self.folded_static(lhs.id), self.folded_static(rhs.id))
            && let Ok(v) = sop.apply(a, b)
        {
            return Some(Value::Int(Int::Static(v)));
        }
        self.int_value(e)
    }

    fn fold_name(&self, e: &Expr, generics: &[Expr], ty: &Type) -> Option<Value> {
        let own = match self.res(e.id)? {
            Resolution::Local(id) => self.folded(*id).cloned(),
            Resolution::Param(i) => {
                let f = self.func.and_then(|f| self.cx.functions.get(f))?;
                f.param(*i).and_then(|p| self.folded(p.id)).cloned()
            }
            Resolution::Builtin(Builtin::Swizzle) => match ty {
                Type::Swizzle(s) => Swizzle::new(s.bits?, s.base?, s.shift?).ok().map(Value::Swizzle),
                _ => None,
            },
            Resolution::Builtin(b) => match generics.first().map(|g| self.ty(g.id)) {
                Some(Type::DType(s)) => sw_atom(*b, *s),
                _ => None,
            },
            _ => None,
        };
        own.or_else(|| if ty.is_integer() { self.int_value(e) } else { None })
    }

    /// `t[i, _]`: the slice's layout; checks the number of indices and static indices against the folded layout.
    fn fold_index(&mut self, base: &Expr, indices: &[Expr], ty: &Type) -> Option<Value> {
        let layout = self.folded(base.id)?.clone();
        let typed_rank = self.ty(base.id).tensor()?.layout.rank;
        let coords: Vec<Value> = indices.iter().map(|i| self.folded(i.id).cloned()).collect::<Option<_>>()?;
        let l = plain_layout(&layout)?;
        let rank = l.rank();
        if indices.len() > 1 && rank != indices.len() {
            if typed_rank.is_none() {
                let span = indices[0].span.to(indices[indices.len() - 1].span);
                let (found, base, layout) = (indices.len(), base.span, layout.to_string());
                self.error(SemaError::Layout(LayoutDiag::IndexCount { span, found, rank, base, layout }));
            }
            return None;
        }
        let extents: Vec<(Option<usize>, Option<i64>)> = if indices.len() == 1 {
            vec![(None, static_size(l.shape()))]
        } else {
            (0..rank).map(|k| (Some(k), l.shape().mode(k).and_then(static_size))).collect()
        };
        for ((ix, c), (mode, extent)) in indices.iter().zip(&coords).zip(extents) {
            if let (Value::Int(Int::Static(index)), Some(extent)) = (c, extent)
                && !(0..extent).contains(index)
            {
                let (span, base, layout) = (ix.span, base.span, layout.to_string());
                let index = *index;
                self.error(SemaError::Layout(LayoutDiag::IndexOutOfRange { span, index, extent, mode, base, layout }));
                return None;
            }
        }
        if !matches!(ty, Type::Tensor(_)) {
            return None;
        }
        if indices.len() == 1 {
            return Some(layout);
        }
        apply(LayoutOp::Slice, &[], &[Value::Tuple(coords), layout]).ok()
    }

    fn report_algebra(&mut self, op: Option<LayoutOp>, error: LayoutError, span: Span, pos: &[&Expr], args: &[Value]) {
        if matches!(error, LayoutError::NeedsStatic { .. }) {
            return;
        }
        let args =
            pos.iter().zip(args).filter(|(p, _)| !shows_value(p, 0)).map(|(p, v)| (p.span, v.to_string())).collect();
        self.error(SemaError::Layout(LayoutDiag::Algebra { op, error, span, args }));
    }

    /// Folds the call `e` of builtin `b`, checked without errors, with generic values `gens` and
    /// positional arguments `pos`, of type `ty`. Static integer results are recorded as compile-time values.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn fold_call(
        &mut self,
        e: &Expr,
        b: Builtin,
        generics: &[Expr],
        gens: &[GenVal],
        pos: &[&Expr],
        ty: &Type,
    ) {
        use Builtin as B;
        if ty.is_error() || (b == B::Select && generics.is_empty()) {
            return;
        }
        let Some(args) = pos.iter().map(|p| self.folded(p.id).cloned()).collect::<Option<Vec<Value>>>() else {
            return;
        };
        let ints = || gens.iter().map(|g| g.int()).collect::<Option<Vec<i64>>>();
        let arg = |i: usize| args.get(i);
        // Every algebra builtin is computed by the one evaluator, keyed on its operation.
        let lop = b.layout_op();
        let eval_op = |generics: &[i64], args: &[Value]| match lop {
            Some(lop) => apply(lop, generics, args),
            // Only the algebra's builtins are evaluated (`lop.is_some()` below).
            None => Err(LayoutError::UnknownOp { name: crate::builtins::info(b).name.to_owned() }),
        };
        let result: Result<Option<Value>, (LayoutError, Span)> = match b {
            B::Layout(LayoutOp::LocalTile | LayoutOp::LocalPartition) => match eval_op(&[], &args) {
                Ok(Value::Tuple(mut v)) if !v.is_empty() => Ok(Some(v.swap_remove(0))),
                Ok(_) => Ok(None),
                Err(err) => Err((err, e.span)),
            },
            B::MakeFragmentLike => Ok(arg(0).and_then(fragment_like)),
            B::MakeTensor | B::MakeIdentityTensor => Ok(arg(0).and_then(as_layout)),
            B::TmaLoad => Ok(arg(1).and_then(as_layout)),
            B::Layout(
                LayoutOp::Size
                | LayoutOp::Cosize
                | LayoutOp::Rank
                | LayoutOp::Depth
                | LayoutOp::Shape
                | LayoutOp::Stride
                | LayoutOp::Get,
            ) => {
                let Some(path) = ints() else { return };
                let mut cur = args.first().cloned();
                let mut failed = None;
                for (k, g) in path.iter().enumerate() {
                    match cur.as_ref().map(|c| cutec_layout::apply(LayoutOp::Get, &[*g], std::slice::from_ref(c))) {
                        Some(Ok(v)) => cur = Some(v),
                        Some(Err(err)) => {
                            failed = Some((err, generics.get(k).map_or(e.span, |g| g.span)));
                            break;
                        }
                        None => break,
                    }
                }
                match (failed, cur) {
                    (Some(f), _) => Err(f),
                    (None, Some(c)) if b == B::Layout(LayoutOp::Get) => Ok(Some(c)),
                    (None, Some(c)) => eval_op(&[], &[c]).map(Some).map_err(|err| (err, e.span)),
                    (None, None) => Ok(None),
                }
            }
            B::Select | B::Layout(LayoutOp::Upcast | LayoutOp::Downcast) => {
                let Some(g) = ints() else { return };
                eval_op(&g, &args).map(Some).map_err(|err| {
                    let at = match &err {
                        LayoutError::IndexOutOfRange { index, .. } => {
                            gens.iter().position(|x| x.int() == Some(*index)).and_then(|k| generics.get(k))
                        }
                        _ => None,
                    };
                    (err, at.map_or(e.span, |g| g.span))
                })
            }
            B::Layout(LayoutOp::Composition) => match eval_op(&[], &args) {
                Ok(Value::Composed(c)) if matches!(arg(0), Some(Value::Swizzle(_))) => {
                    if let Some((offset, to, cosize)) = swizzle_escape(&c) {
                        self.error(SemaError::Layout(LayoutDiag::SwizzleOutside {
                            span: e.span,
                            swizzle: c.swizzle.to_string(),
                            layout: c.layout.to_string(),
                            offset,
                            to,
                            cosize,
                        }));
                        return;
                    }
                    Ok(Some(Value::Composed(c)))
                }
                r => r.map(Some).map_err(|err| (err, e.span)),
            },
            B::Copy => {
                self.check_copy_sizes(e.span, pos, &args);
                return;
            }
            // Every other operation of the algebra.
            _ if lop.is_some() => eval_op(&[], &args).map(Some).map_err(|err| (err, e.span)),
            _ => return,
        };
        match result {
            Ok(Some(v)) => {
                if ty.is_integer()
                    && let Value::Int(Int::Static(n)) = v
                {
                    self.record_value(e, n);
                }
                self.set_folded(e.id, v);
            }
            Ok(None) => {}
            Err((err, span)) => self.report_algebra(lop, err, span, pos, &args),
        }
    }
}

impl Fcx<'_, '_> {
    /// `copy(src, dst)` of two tensors whose layouts folded to static sizes: the sizes must agree (E0161).
    fn check_copy_sizes(&mut self, span: Span, pos: &[&Expr], args: &[Value]) {
        // A tensor's folded value is its layout.
        let size = |v: &Value| -> Option<(i64, String)> {
            let shape = match v {
                Value::Layout(l) => l.shape(),
                Value::Composed(c) => c.layout.shape(),
                _ => return None,
            };
            Some((static_size(shape)?, v.to_string()))
        };
        let (Some(src), Some(dst), [s, d, ..]) = (args.first().and_then(size), args.get(1).and_then(size), pos) else {
            return;
        };
        if src.0 != dst.0 {
            self.error(SemaError::Size(SizeDiag::CopySize {
                span,
                src: (s.span, src.0, src.1),
                dst: (d.span, dst.0, dst.1),
            }));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swizzle_atoms_are_cutes() {
        let s = |b, t| sw_atom(b, t).map(|v| v.to_string()).unwrap_or_default();
        assert_eq!(s(Builtin::Sw128K, Scalar::BF16), "Sw<3,3,3> o 0 o (8,64):(64,1)");
        assert_eq!(s(Builtin::Sw128K, Scalar::E4M3), "Sw<3,4,3> o 0 o (8,128):(128,1)");
        assert_eq!(s(Builtin::Sw64Mn, Scalar::F32), "Sw<2,2,3> o 0 o (16,8):(1,16)");
        assert_eq!(sw_atom(Builtin::Sw32K, Scalar::Bool), None);
    }

    #[test]
    fn fragments_are_compact_with_mode_zero_first() {
        let l = |s: &str| Value::Layout(cutec_layout::parse_layout(s).unwrap());
        let f = |s: &str| fragment_like(&l(s)).map(|v| v.to_string()).unwrap_or_default();
        // CUTLASS 4.2's tiled_product keeps the rest of a rank-1 tiler as a tuple.
        assert_eq!(f("(4,4):(1,1024)"), "(4,(4)):(1,(4))");
        assert_eq!(f("(4,8):(8,1)"), "(4,(8)):(1,(4))");
        assert_eq!(f("((4,4)):((1,1024))"), "((4,4)):((1,4))");
        // A broadcast mode 0 stays broadcast (CuTe's compact strides give size-1 modes stride 0).
        assert_eq!(f("(4,2):(0,1)"), "(4,(2)):(0,(1))");
    }

    #[test]
    fn swizzles_that_leave_the_codomain_are_found() {
        let c = |sw: Swizzle, s: &str| ComposedLayout::new(sw, cutec_layout::parse_layout(s).unwrap());
        let sw = Swizzle::new(3, 3, 3).unwrap();
        assert_eq!(swizzle_escape(&c(sw, "(8,64):(64,1)")), None);
        assert_eq!(swizzle_escape(&c(sw, "(8,60):(60,1)")).map(|x| x.2), Some(480));
    }
}

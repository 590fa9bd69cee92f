//! Calls: the builtins code generation v0 supports, and device functions (inlined).

use super::value::{TensorView, Value};
use super::{Frame, LResult, Lower, Reported};
use crate::error::{Located, LowerError};
use cutec_diagnostics::Span;
use cutec_grammar::ast::{self, ExprKind, StmtKind};
use cutec_ir::{AddrSpace, MathFn, ShuffleMode};
use cutec_layout::{Layout, LayoutOp, Tiler};
use cutec_sema::SymInt;
use cutec_sema::{Builtin, Resolution, Scalar, Space, Type};
use std::collections::HashMap;

/// Alignment of every static allocation: enough for 16-byte vector accesses.
const ALLOC_ALIGN: u32 = 16;

impl Lower<'_> {
    pub fn call(&mut self, e: &ast::Expr, callee: &ast::Expr, args: &[ast::Arg]) -> LResult<Value> {
        let target = match &callee.kind {
            ExprKind::Name { .. } => self.resolution(callee.id).cloned(),
            _ => None,
        };
        // Checked by the checker; nothing happens at run time.
        if target == Some(Resolution::Builtin(Builtin::StaticAssert)) {
            return Ok(Value::Unit);
        }
        if let Some(Resolution::Builtin(b)) = target
            && let Some(v) = self.hopper_call(e, b, args)
        {
            return v;
        }
        if let Some(a) = args.iter().find(|a| a.name.is_some()) {
            return self.unsupported(a.span, "a named argument");
        }
        match target {
            Some(Resolution::Builtin(b)) => {
                let values = args.iter().map(|a| self.expr(&a.value)).collect::<LResult<Vec<_>>>()?;
                let spans: Vec<Span> = args.iter().map(|a| a.span).collect();
                self.at(e.span);
                self.builtin(e, b, &values, &spans)
            }
            Some(Resolution::Function(m, item)) => {
                let values = args.iter().map(|a| self.expr(&a.value)).collect::<LResult<Vec<_>>>()?;
                self.at(e.span);
                self.inline(e.span, m, item, values)
            }
            _ => self.unsupported(callee.span, "calling this"),
        }
    }

    pub(crate) fn builtin(&mut self, e: &ast::Expr, b: Builtin, args: &[Value], spans: &[Span]) -> LResult<Value> {
        let span = e.span;
        let arg = |i: usize| args.get(i).cloned().ok_or(Reported);
        let arg_span = |i: usize| spans.get(i).copied().unwrap_or(span);
        match b {
            Builtin::Exp | Builtin::Exp2 | Builtin::Sqrt | Builtin::Rsqrt | Builtin::Tanh | Builtin::Abs => {
                let fun = match b {
                    Builtin::Exp => MathFn::Exp,
                    Builtin::Exp2 => MathFn::Exp2,
                    Builtin::Sqrt => MathFn::Sqrt,
                    Builtin::Rsqrt => MathFn::Rsqrt,
                    Builtin::Tanh => MathFn::Tanh,
                    _ => MathFn::Abs,
                };
                self.math(e, fun, args)
            }
            Builtin::Min | Builtin::Max => {
                if let (Value::Const(x), Value::Const(y)) = (arg(0)?, arg(1)?) {
                    return Ok(Value::Const(if b == Builtin::Min { x.min(y) } else { x.max(y) }));
                }
                self.math(e, if b == Builtin::Min { MathFn::Min } else { MathFn::Max }, args)
            }
            Builtin::Fma => self.math(e, MathFn::Fma, args),
            Builtin::Select if args.len() == 3 => {
                let s = self.scalar_type(e)?;
                let c = self.scalar(&arg(0)?, Scalar::Bool, arg_span(0))?;
                let (x, y) = (self.scalar(&arg(1)?, s, arg_span(1))?, self.scalar(&arg(2)?, s, arg_span(2))?);
                Ok(Value::Scalar(self.b.select(c, x, y), s))
            }
            Builtin::ShflXor | Builtin::ShflDown | Builtin::ShflIdx => {
                let mode = match b {
                    Builtin::ShflXor => ShuffleMode::Bfly,
                    Builtin::ShflDown => ShuffleMode::Down,
                    _ => ShuffleMode::Idx,
                };
                let s = self.scalar_type(e)?;
                if !matches!(s, Scalar::F32 | Scalar::Int | Scalar::I32) {
                    return self.unsupported(span, format!("a warp shuffle of `{s}`"));
                }
                let v = self.scalar(&arg(0)?, s, arg_span(0))?;
                let lane = self.scalar(&arg(1)?, Scalar::Int, arg_span(1))?;
                Ok(Value::Scalar(self.b.shuffle(mode, v, lane), s))
            }
            Builtin::SyncThreads => {
                self.b.barrier();
                Ok(Value::Unit)
            }
            Builtin::CeilDiv => match (arg(0)?, arg(1)?) {
                (Value::Const(x), Value::Const(y)) if y > 0 => match x.checked_add(y - 1) {
                    Some(top) => Ok(Value::Const(top.div_euclid(y))),
                    None => self.unsupported(span, "`ceil_div` of integers this large"),
                },
                (x, y) => {
                    let (x, y) =
                        (self.scalar(&x, Scalar::Int, arg_span(0))?, self.scalar(&y, Scalar::Int, arg_span(1))?);
                    let one = self.b.i32(1);
                    let sum = self.b.add(x, y);
                    let top = self.b.sub(sum, one);
                    Ok(Value::Scalar(self.b.div(top, y), Scalar::Int))
                }
            },
            // The checker folds sizes (`size<0>(acc)`, `cosize(l)`, `rank(t)`) where they are static.
            Builtin::Layout(LayoutOp::Size | LayoutOp::Cosize | LayoutOp::Rank | LayoutOp::Depth)
                if let Some(v) = self.frame().ok().and_then(|f| self.program.value_of(f.module, e.id)) =>
            {
                Ok(Value::Const(v))
            }
            Builtin::Layout(LayoutOp::LocalTile) => {
                let Value::Tensor(t) = arg(0)? else { return self.unsupported(span, "`local_tile` of a layout") };
                let tiler = self.tiler_of(&arg(1)?, arg_span(1))?;
                let coord = self.coord_of(&arg(2)?, arg_span(2))?;
                self.local_tile(&t, &tiler, coord, span).map(Value::Tensor)
            }
            Builtin::Layout(LayoutOp::LocalPartition) => {
                let Value::Tensor(t) = arg(0)? else { return self.unsupported(span, "`local_partition` of a layout") };
                let tile = self.layout_of(&arg(1)?, arg_span(1))?;
                let index = self.idx_of(&arg(2)?, arg_span(2))?;
                self.local_partition(&t, &tile, index, span).map(Value::Tensor)
            }
            Builtin::MakeFragmentLike => {
                let (layout, elem, wgmma) = match arg(0)? {
                    Value::Tensor(t) => {
                        // A whole wgmma fragment makes another with its (thread, value) layout.
                        let cols = self.wgmma_fragments.get(&t.base).copied();
                        let whole = |c: u32| {
                            t.offset == SymInt::Const(0)
                                && t.layout.size().ok().and_then(|s| s.static_value()) == Some(i64::from(c / 2))
                        };
                        (t.layout.clone(), t.elem, cols.filter(|&c| whole(c)))
                    }
                    _ => return self.unsupported(span, "`make_fragment_like` of a layout"),
                };
                let elem = match self.type_of(e.id) {
                    Type::Tensor(t) => t.elem.scalar().unwrap_or(elem),
                    _ => elem,
                };
                // CuTe's fragment layout as the checker folded it (so `--emit` of both stages agree), else the
                // compact column-major layout of the same shape.
                let folded = self.frame().ok().and_then(|f| self.program.folded_layout(f.module, e.id)).cloned();
                let compact = match folded.filter(|l| l.is_static()) {
                    Some(l) => l,
                    None => self.layout_result(Layout::compact(layout.shape().clone()), span)?,
                };
                let t = self.allocate(elem, Space::Rmem, compact, span)?;
                if let Some(cols) = wgmma {
                    self.wgmma_fragments.insert(t.base, cols);
                }
                Ok(Value::Tensor(t))
            }
            Builtin::MakeTensor => {
                let Type::Tensor(t) = self.type_of(e.id) else { return Err(Reported) };
                let (space, elem) = (t.space, t.elem.scalar());
                let Some(elem) = elem else { return self.unsupported(span, "a tensor of tuples") };
                if space == Space::Smem {
                    self.shared_in_tile_loop(elem, span)?;
                }
                if let Value::Composed(c) = arg(0)? {
                    return self.allocate_swizzled(elem, space, &c, span).map(Value::Tensor);
                }
                let layout = self.layout_of(&arg(0)?, arg_span(0))?;
                self.allocate(elem, space, layout, span).map(Value::Tensor)
            }
            Builtin::MakeIdentityTensor => {
                let shape = match arg(0)? {
                    Value::Const(n) => vec![n],
                    Value::Tuple(items) => {
                        let mut v = Vec::with_capacity(items.len());
                        for x in items {
                            let Value::Const(n) = x else {
                                return self
                                    .unsupported(span, "an identity tensor of a shape not known at compile time");
                            };
                            v.push(n);
                        }
                        v
                    }
                    _ => return self.unsupported(span, "an identity tensor of this shape"),
                };
                let int = |n: i64| cutec_layout::IntTuple::Int(cutec_layout::Int::Static(n));
                let shape = match shape[..] {
                    [n] => int(n),
                    _ => cutec_layout::IntTuple::Tuple(shape.iter().map(|&n| int(n)).collect()),
                };
                let layout = self.layout_result(Layout::compact(shape.clone()), span)?;
                Ok(Value::Tensor(TensorView {
                    base: self.b.i32(0),
                    space: cutec_ir::AddrSpace::Local,
                    elem: Scalar::Int,
                    layout,
                    swizzle: None,
                    offset: SymInt::Const(0),
                    base_align: 1,
                    param: None,
                    bounds: super::bounds::Bounds::Free,
                    identity: Some(shape),
                }))
            }
            // The tiled MMA's shape is in its type; the value carries nothing.
            Builtin::TiledMma => Ok(Value::Mma),
            Builtin::Copy => match (arg(0)?, arg(1)?) {
                (Value::Tensor(s), Value::Tensor(d)) => self.copy(&s, &d, span).map(|()| Value::Unit),
                _ => self.unsupported(span, "`copy` of these values"),
            },
            Builtin::Fill => match arg(0)? {
                Value::Tensor(t) => self.fill(&t, &arg(1)?, span).map(|()| Value::Unit),
                _ => self.unsupported(span, "`fill` of this value"),
            },
            // Every other operation of the algebra: computed by the one evaluator; on a tensor, the operation
            // applies to its layout (its swizzle and offset stay) where the checker typed the result a tensor.
            _ if let Some(op) = b.layout_op() => self.layout_call(e, op, args),
            _ => self.unsupported(span, format!("the builtin `{}`", builtin_name(b))),
        }
    }

    /// A call of an operation of the layout algebra, by `cutec_layout::apply`.
    fn layout_call(&mut self, e: &ast::Expr, op: cutec_layout::LayoutOp, args: &[Value]) -> LResult<Value> {
        let generics = self.generic_ints(e)?;
        let on_tensor = matches!(self.type_of(e.id), Type::Tensor(_));
        self.layout_apply(op, &generics, args, on_tensor, e.span)
    }

    /// `op` of the algebra on `args`; with `on_tensor`, a tensor first argument gives a tensor (the operation
    /// applies to its layout).
    pub(super) fn layout_apply(
        &mut self,
        op: cutec_layout::LayoutOp,
        generics: &[i64],
        args: &[Value],
        on_tensor: bool,
        span: Span,
    ) -> LResult<Value> {
        let generics = generics.to_vec();
        let tensor = match args.first() {
            Some(Value::Tensor(t)) if on_tensor => Some(t.clone()),
            _ => None,
        };
        let mut values = Vec::with_capacity(args.len());
        for (k, a) in args.iter().enumerate() {
            values.push(match (k, &tensor) {
                // The view's layout: its swizzle and offset are applied after it.
                (0, Some(t)) => cutec_layout::Value::Layout(t.layout.clone()),
                _ => self.algebra_value(a, span)?,
            });
        }
        let result = self.layout_result(cutec_layout::apply(op, &generics, &values), span)?;
        match (tensor, result) {
            (Some(t), cutec_layout::Value::Layout(layout)) => {
                // The same operation on the view's coordinates.
                let bounds = t.bounds.follow(&layout, |l| {
                    let mut coords = values.clone();
                    coords[0] = cutec_layout::Value::Layout(l.clone());
                    match cutec_layout::apply(op, &generics, &coords)? {
                        cutec_layout::Value::Layout(l) => Ok((l, SymInt::Const(0))),
                        other => {
                            Err(cutec_layout::LayoutError::Invalid { op, what: format!("`{other}` is not a layout") })
                        }
                    }
                });
                Ok(Value::Tensor(TensorView { layout, bounds, ..t }))
            }
            (Some(_), other) => self.unsupported(span, format!("`{}` giving `{other}` on a tensor", op.name())),
            (None, v) => self.value_of_algebra(v, span),
        }
    }

    /// A math builtin: every argument converted to the result type.
    fn math(&mut self, e: &ast::Expr, fun: MathFn, args: &[Value]) -> LResult<Value> {
        let s = self.scalar_type(e)?;
        let handles = args.iter().map(|a| self.scalar(a, s, e.span)).collect::<LResult<Vec<_>>>()?;
        Ok(Value::Scalar(self.b.math(fun, &handles), s))
    }

    /// The compile-time values of a call's generic arguments (`size<0, 1>(t)` gives `[0, 1]`), as the checker
    /// evaluated them.
    pub(super) fn generic_ints(&mut self, e: &ast::Expr) -> LResult<Vec<i64>> {
        let ExprKind::Call { callee, .. } = &e.kind else { return Ok(Vec::new()) };
        let ExprKind::Name { generics, .. } = &callee.kind else { return Ok(Vec::new()) };
        let module = self.frame()?.module;
        generics
            .iter()
            .map(|g| match self.program.value_of(module, g.id) {
                Some(v) => Ok(v),
                None => self.unsupported(g.span, "a generic argument that is not a compile-time integer"),
            })
            .collect()
    }

    /// `local_tile(t, tiler, coord)`: the tile at `coord` of `zipped_divide(t, tiler)`, offset in IR.
    pub(super) fn local_tile(
        &mut self,
        t: &TensorView,
        tiler: &Tiler,
        coord: super::value::CoordV,
        span: Span,
    ) -> LResult<TensorView> {
        let r = local_tile_parts(&t.layout, tiler, &coord);
        let (layout, idx) = self.crd_result(r, span)?;
        let offset = self.idx_add(&t.offset, &idx, span)?;
        let bounds = t.bounds.follow(&layout, |l| local_tile_parts(l, tiler, &coord));
        Ok(TensorView { layout, offset, bounds, ..t.clone() })
    }

    /// `local_partition(t, tile, index)` (CuTe's `outer_partition`): the elements of `zipped_divide(t,
    /// shape(tile))` at the tile coordinate of thread `index`, that coordinate computed in IR
    /// (`tile.get_flat_coord(index)`).
    fn local_partition(&mut self, t: &TensorView, tile: &Layout, index: SymInt, span: Span) -> LResult<TensorView> {
        use super::value::CoordV;
        if !tile.is_static() {
            return self.fail(
                span,
                LowerError::Layout { problem: "the thread layout of `local_partition` must be static".into() },
            );
        }
        let sizes =
            tile.modes().iter().map(|m| m.size().map(cutec_layout::IntTuple::Int)).collect::<Result<Vec<_>, _>>();
        let sizes = self.layout_result(sizes, span)?;
        let tiler = Tiler::from_shape(&cutec_layout::IntTuple::Tuple(sizes));
        // get_flat_coord: the hierarchical coordinate of `index`, then one 1-D coordinate per top-level mode.
        let hier = self.idx2crd(&index, tile.shape(), tile.stride(), span)?;
        let mut flat = Vec::new();
        for (k, m) in tile.modes().iter().enumerate() {
            let c = match &hier {
                CoordV::Tuple(v) => v.get(k).cloned().unwrap_or(CoordV::Int(SymInt::Const(0))),
                c => c.clone(),
            };
            let compact = self.layout_result(Layout::compact(m.shape().clone()), span)?;
            let (shape, stride) = (compact.shape().clone(), compact.stride().clone());
            flat.push(CoordV::Int(self.crd2idx(&c, &shape, &stride, span)?));
        }
        let r = partition_parts(&t.layout, tile, &tiler, &flat);
        let (layout, idx) = self.crd_result(r, span)?;
        let offset = self.idx_add(&t.offset, &idx, span)?;
        let bounds = t.bounds.follow(&layout, |l| partition_parts(l, tile, &tiler, &flat));
        Ok(TensorView { layout, offset, bounds, ..t.clone() })
    }

    /// A new register or shared-memory tensor: a static allocation of `cosize(layout)` elements.
    pub(super) fn allocate(&mut self, elem: Scalar, space: Space, layout: Layout, span: Span) -> LResult<TensorView> {
        // `u64` tensors in shared memory hold mbarriers, which only the mbarrier operations touch: storage
        // without arithmetic (the IR has no unsigned 64-bit operations).
        let ir_elem = match elem {
            Scalar::U64 if space == Space::Smem => cutec_ir::Scalar::I64,
            _ => self.ir_scalar(elem, span)?,
        };
        if ir_elem == cutec_ir::Scalar::I1 {
            return self.unsupported(span, "a tensor of `bool`");
        }
        let space = match space {
            Space::Rmem => AddrSpace::Local,
            Space::Smem => AddrSpace::Shared,
            _ => return self.unsupported(span, format!("allocating a tensor in `{}`", space.name())),
        };
        let cosize = self.layout_result(layout.cosize(), span)?;
        let Some(len) = cosize.static_value().and_then(|v| u32::try_from(v).ok()) else {
            return self
                .fail(span, LowerError::NotConstant { problem: "the layout of a new tensor must be static".into() });
        };
        // Named after the `let` that makes it, when there is one.
        let name =
            self.name_hint.take().unwrap_or_else(|| if space == AddrSpace::Shared { "smem" } else { "frag" }.into());
        let base = self.b.alloc(&name, space, ir_elem, len.max(1), ALLOC_ALIGN);
        self.check_shared_limit(space, span)?;
        Ok(TensorView {
            base,
            space,
            elem,
            layout,
            swizzle: None,
            offset: SymInt::Const(0),
            base_align: ALLOC_ALIGN,
            param: None,
            bounds: super::bounds::Bounds::Free,
            identity: None,
        })
    }

    /// A new tensor with a swizzled layout `Sw o offset o L`: enough elements for every index the swizzle
    /// reaches.
    pub(super) fn allocate_swizzled(
        &mut self,
        elem: Scalar,
        space: Space,
        c: &cutec_layout::ComposedLayout,
        span: Span,
    ) -> LResult<TensorView> {
        let indices = self.layout_result(c.indices(), span)?;
        let len = indices.iter().copied().max().map_or(0, |m| m + 1);
        let mut t = self.allocate(elem, space, c.layout.clone(), span)?;
        let Ok(len) = u32::try_from(len) else {
            return self
                .fail(span, LowerError::NotConstant { problem: "the layout of a new tensor must be static".into() });
        };
        if let Some(cutec_ir::Expr::AllocPtr(a)) = self.b.kernel_mut().exprs.get(t.base).cloned()
            && let Some(alloc) = self.b.kernel_mut().allocs.get_mut(a)
        {
            alloc.len = alloc.len.max(len);
        }
        self.check_shared_limit(t.space, span)?;
        t.swizzle = Some(c.swizzle);
        t.offset = c.offset.sym();
        Ok(t)
    }

    /// E0307 at `span` (an allocation) when the kernel's shared memory is over what a block of sm_90a may have.
    pub(super) fn check_shared_limit(&mut self, space: AddrSpace, span: Span) -> LResult<()> {
        let bytes = self.b.kernel_mut().shared_bytes();
        if space != AddrSpace::Shared || bytes <= u64::from(cutec_ir::MAX_SHARED_BYTES) {
            return Ok(());
        }
        self.fail(span, LowerError::TooMuchShared { bytes, limit: u64::from(cutec_ir::MAX_SHARED_BYTES) })
    }

    /// Inlines a device function: binds its parameters to the argument values, lowers its body, and gives the
    /// value of its final `return`.
    pub(super) fn inline(
        &mut self,
        span: Span,
        m: cutec_sema::ModuleId,
        item: usize,
        args: Vec<Value>,
    ) -> LResult<Value> {
        let (Some(info), Some(f)) = (self.program.function(m, item), self.function_ast(m, item)) else {
            return self.internal(span, "a call to a function the checker did not describe");
        };
        if self.frames.len() > 64 {
            return self.fail(span, LowerError::InlineTooDeep);
        }
        // Charged before the body is lowered: a chain of functions each calling the next twice doubles the size
        // per level, and used to be inlined (minutes, gigabytes) before the kernel's size was checked.
        let size = self.inlined_size((m, item));
        self.charge(size, crate::error::Charge::Call { function: info.name.clone() }, span)?;
        // `return` is allowed only as the last statement, where it gives the result.
        let stmts = &f.body.stmts;
        let (body, ret) = match stmts.split_last() {
            Some((last, rest)) if matches!(last.kind, StmtKind::Return(_)) => (rest, Some(last)),
            _ => (&stmts[..], None),
        };
        if let Some(early) = find_return(body) {
            let file = self.program.module(m).map_or(self.file(), |md| md.file);
            self.errors.push(Located { file, span: early, error: LowerError::EarlyReturn });
            return Err(Reported);
        }
        let file = self.program.module(m).map_or(self.file(), |md| md.file);
        self.frames.push(Frame { module: m, file, info, args, bindings: HashMap::new() });
        let result = self.inlined_body(body, ret);
        self.frames.pop();
        result
    }

    /// The statements of an inlined body, then the value of its final `return`.
    fn inlined_body(&mut self, body: &[ast::Stmt], ret: Option<&ast::Stmt>) -> LResult<Value> {
        for s in body {
            // Keep lowering after an error, to report every unsupported construct of the body at once (the
            // diagnostics fail the kernel).
            let _ = self.stmt(s);
        }
        match ret.map(|r| &r.kind) {
            Some(StmtKind::Return(Some(value))) => self.expr(value),
            _ => Ok(Value::Unit),
        }
    }
}

/// The span of a `return` anywhere in `stmts` (nested blocks included).
fn find_return(stmts: &[ast::Stmt]) -> Option<Span> {
    stmts.iter().find_map(|s| match &s.kind {
        StmtKind::Return(_) => Some(s.span),
        StmtKind::If { then_block, else_block, .. } => {
            find_return(&then_block.stmts).or_else(|| else_block.as_ref().and_then(|b| find_return(&b.stmts)))
        }
        StmtKind::For { body, .. }
        | StmtKind::While { body, .. }
        | StmtKind::Role { body, .. }
        | StmtKind::Block(body) => find_return(&body.stmts),
        _ => None,
    })
}

fn builtin_name(b: Builtin) -> String {
    cutec_sema::BUILTINS.iter().find(|i| i.builtin == b).map_or_else(|| format!("{b:?}"), |i| i.name.to_string())
}

/// `local_tile` of the layout `l`: the tile's layout and the offset of the tile at `coord` (missing trailing
/// coordinates are `_`, as in `cutec_layout::local_tile`).
fn local_tile_parts(
    l: &Layout,
    tiler: &Tiler,
    coord: &super::value::CoordV,
) -> Result<(Layout, SymInt), cutec_layout::LayoutError> {
    use super::value::CoordV;
    let (layout, _) = cutec_layout::local_tile(l, tiler, &coord.placeholder())?;
    let zipped = cutec_layout::zipped_divide(l, tiler)?;
    let rest = zipped.mode(1)?;
    let coord = match coord.clone() {
        CoordV::Tuple(mut v) if rest.rank() > v.len() => {
            v.resize(rest.rank(), CoordV::Underscore);
            CoordV::Tuple(v)
        }
        c => c,
    };
    let idx = cutec_layout::int_tuple::crd2idx(LayoutOp::Crd2idx, &coord.to_layout(), rest.shape(), rest.stride())?;
    Ok((layout, idx.sym()))
}

/// `local_partition` of the layout `l` by the thread layout `tile` (its mode sizes `tiler`): the partition's
/// layout and the offset of the thread whose flat coordinate is `flat`.
fn partition_parts(
    l: &Layout,
    tile: &Layout,
    tiler: &Tiler,
    flat: &[super::value::CoordV],
) -> Result<(Layout, SymInt), cutec_layout::LayoutError> {
    use super::value::CoordV;
    let (layout, _) = cutec_layout::local_partition(l, tile, &cutec_layout::Int::Static(0))?;
    let z = cutec_layout::zipped_divide(l, tiler)?;
    let (r0, r1) = (z.mode(0)?.rank(), z.mode(1)?.rank());
    let mut flat = flat.to_vec();
    flat.resize(r0.max(flat.len()), CoordV::Underscore);
    let rest = if r1 == 1 { CoordV::Underscore } else { CoordV::Tuple(vec![CoordV::Underscore; r1]) };
    let first = if r0 == 1 && flat.len() == 1 { flat.remove(0) } else { CoordV::Tuple(flat) };
    let c = CoordV::Tuple(vec![first, rest]).to_layout();
    let idx = cutec_layout::int_tuple::crd2idx(LayoutOp::Crd2idx, &c, z.shape(), z.stride())?;
    Ok((layout, idx.sym()))
}

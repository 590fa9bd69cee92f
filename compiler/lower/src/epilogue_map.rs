//! `store(acc, tile, map = f)` through the TMA epilogue: each stored value is `f` of the converted one, `tile =
//! T(f(T(acc)))` for a tile of type `T`, as an elementwise operation on the stored tile computes it (torch's
//! `gelu(addmm(..))` in bf16 rounds the product before the GELU too).
//!
//! The values are converted into the staging tile as without `map`; `f` is then applied there, 16 bytes at a
//! time (a thread reads a piece, widens it, calls `f` on each element, narrows and writes it back), before the
//! TMA stores read the tile. Who applies it:
//! - by default, each warpgroup to its own part, between the staging and the stores;
//! - in a `persistent` `warp_specialized` kernel, the producer warpgroup's three spare warps (its first warp
//!   issues the copies), beside the consumers' next mainloop: the consumers stage the tile and go on, which
//!   hides `f` (a GELU's `tanh` costs the tensor cores about 4 % of a 128 x 256 tile at K = 2048 otherwise;
//!   `examples/gemm_epilogue_manual.cute` is the same schedule by hand). Two mbarriers hand the staging tile
//!   over: `staged` (every consumer thread has written its part) and `drained` (the spare warps' stores have
//!   read it), with counters of the tiles handed over (`$epilogue` for the consumers, `$epilogue_spare` for
//!   the spare warps) for their phases, as `pipeline-loops` keeps `$tile_copy`. The CTA's last tile has no mainloop after it to hide behind: its consumers apply `f` and
//!   store it themselves, faster than three warps would.
//!
//! A `store` from registers to global memory (no staging tile) maps the values in registers instead, into a new
//! array, since the source may be read again after the `store` (`map_registers`).

use super::mma::MmaTiling;
use super::value::{TensorView, Value};
use super::{LResult, Lower};
use cutec_diagnostics::Span;
use cutec_ir::{BinaryOp, CompareOp, Handle, Op, Role, RoleRegion, Stmt, Type, Unroll};
use cutec_layout::{Int, IntTuple, Layout};
use cutec_sema::{ModuleId, Scalar, Space};

/// The function `map = f` names.
pub(crate) type MapFn = (ModuleId, usize);

/// `map = f` and its operand `with = x`: each stored value is `f(v)`, or `f(v, x[c])` with `x`'s element at the
/// value's coordinate `c` in the stored tile (`x` has the tile's shape, [`Lower::map_operand`]). Where `f` is
/// applied to part of the tile, `with` is the same part of `x`.
#[derive(Clone)]
pub(crate) struct Map {
    pub f: MapFn,
    pub with: Option<TensorView>,
}

impl Map {
    /// The same map over the part `part(x)` of the operand.
    pub(super) fn with_part(&self, part: impl FnOnce(&TensorView) -> LResult<TensorView>) -> LResult<Map> {
        Ok(Map { f: self.f, with: self.with.as_ref().map(part).transpose()? })
    }
}

/// Mode sizes as a message shows them: `256`, `(128, 256)`, `?` for a size known only at run time.
fn sizes_text(sizes: &[Option<i64>]) -> String {
    let each: Vec<String> = sizes.iter().map(|s| s.map_or("?".to_string(), |n| n.to_string())).collect();
    if each.len() == 1 { each[0].clone() } else { format!("({})", each.join(", ")) }
}

/// The threads that apply `f` beside the mainloop: the producer warpgroup less its first warp.
const SPARE_THREADS: i64 = 96;

impl Lower<'_> {
    /// E0325 unless `f`, and every function it calls, computes from its argument alone: arithmetic,
    /// conversions, the math builtins and compile-time layout questions. Anything else (a thread's index, a
    /// shuffle, a barrier, memory) would make the result depend on the threads the compiler picks to apply it.
    pub(super) fn check_map_elementwise(&mut self, f: MapFn, site: Span) -> LResult<()> {
        use cutec_grammar::ast::ExprKind;
        use cutec_sema::{Builtin, Resolution};
        let allowed = |b: Builtin| {
            matches!(
                b,
                Builtin::Inf
                    | Builtin::Exp
                    | Builtin::Exp2
                    | Builtin::Log
                    | Builtin::Log2
                    | Builtin::Sqrt
                    | Builtin::Rsqrt
                    | Builtin::Tanh
                    | Builtin::Erf
                    | Builtin::Abs
                    | Builtin::Min
                    | Builtin::Max
                    | Builtin::Fma
                    | Builtin::Select
                    | Builtin::CeilDiv
                    | Builtin::StaticAssert
                    | Builtin::Layout(_)
            )
        };
        let name = |this: &Self, (m, i): MapFn| this.program.function(m, i).map_or(String::new(), |f| f.name.clone());
        let mut seen = vec![f];
        let mut todo = vec![f];
        while let Some((m, item)) = todo.pop() {
            let Some(body) = self.function_ast(m, item) else { continue };
            let file = self.program.module(m).map_or(self.file(), |md| md.file);
            let mut bad: Option<(String, Span)> = None;
            for s in &body.body.stmts {
                super::stmt::visit_stmt(s, &mut |e| {
                    if bad.is_some() {
                        return;
                    }
                    match (&e.kind, self.program.resolution(m, e.id)) {
                        (ExprKind::Name { name, .. }, Some(Resolution::Builtin(b))) if !allowed(*b) => {
                            bad = Some((format!("`{}`", name.name), e.span));
                        }
                        (ExprKind::Name { .. }, Some(Resolution::Function(fm, fi))) if !seen.contains(&(*fm, *fi)) => {
                            seen.push((*fm, *fi));
                            todo.push((*fm, *fi));
                        }
                        (ExprKind::MethodCall { .. }, _) => bad = Some(("a method".into(), e.span)),
                        (ExprKind::Index { .. }, _) => bad = Some(("a tensor element".into(), e.span)),
                        _ => {}
                    }
                });
            }
            if let Some((what, at)) = bad {
                let function = name(self, f);
                let what = if (m, item) == f { what } else { format!("{what} (in `{}`)", name(self, (m, item))) };
                let error = super::error::LowerError::MapNotElementwise { function, what, use_file: file, use_at: at };
                return self.fail(site, error);
            }
        }
        Ok(())
    }

    /// The operand `with = x` of `store(.., dst, map = f, with = x)` as a view of `dst`'s shape: `x` itself when
    /// it has that shape (mode by mode), or, for a 2-D `dst` and a 1-D `x` of one element per column, `x` read
    /// along the columns and broadcast along the rows (a bias), `x ∘ (rows, cols):(0, 1)`. E0304 otherwise.
    pub(super) fn map_operand(&mut self, x: TensorView, dst: &TensorView, span: Span) -> LResult<TensorView> {
        let sizes = |l: &Layout| -> Vec<Option<i64>> {
            l.modes().iter().map(|m| m.size().ok().and_then(|s| s.static_value())).collect()
        };
        let (xs, ds) = (sizes(&x.layout), sizes(&dst.layout));
        if xs == ds && xs.iter().all(Option::is_some) {
            return Ok(x);
        }
        if let ([Some(cols)], [Some(rows), Some(dcols)]) = (xs.as_slice(), ds.as_slice())
            && cols == dcols
        {
            let int = |n: i64| IntTuple::Int(Int::Static(n));
            let rows_by_cols = self.layout_result(
                Layout::new(IntTuple::Tuple(vec![int(*rows), int(*cols)]), IntTuple::Tuple(vec![int(0), int(1)])),
                span,
            )?;
            let broadcast = self.layout_apply(
                cutec_layout::LayoutOp::Composition,
                &[],
                &[Value::Tensor(x), Value::Layout(rows_by_cols)],
                true,
                span,
            )?;
            return match broadcast {
                Value::Tensor(t) => Ok(t),
                _ => self.internal(span, "a composition of a tensor that is not a tensor"),
            };
        }
        let error = super::error::LowerError::MapOperandShape { operand: sizes_text(&xs), tile: sizes_text(&ds) };
        self.fail(span, error)
    }

    /// The part `x` of the operand that one thread reads, in registers: `x` itself if it is there, else a copy
    /// (`copy`'s vector accesses where the part lies inside its argument, element by element at the edge), so
    /// that a row of 8 f32 biases is two 16-byte loads, not eight.
    fn operand_in_registers(&mut self, x: &TensorView, span: Span) -> LResult<TensorView> {
        if x.space == cutec_ir::AddrSpace::Local {
            return Ok(x.clone());
        }
        let layout = self.layout_result(Layout::compact(x.layout.shape().clone()), span)?;
        let r = self.allocate(x.elem, Space::Rmem, layout, span)?;
        self.transfer(x, &r, span)?;
        Ok(r)
    }

    /// The operand's element at `at`, as f32.
    fn operand_at(&mut self, x: &TensorView, at: Value, span: Span) -> LResult<Value> {
        let e = self.index(Value::Tensor(x.clone()), at, span)?;
        Ok(Value::Scalar(self.scalar(&e, Scalar::F32, span)?, Scalar::F32))
    }

    /// `f(v)`, or `f(v, x)` with the operand's element `x`, for the f32 value `v`.
    fn apply_map(&mut self, map: &Map, v: Handle<cutec_ir::Expr>, x: Option<Value>, span: Span) -> LResult<Value> {
        let mut args = vec![Value::Scalar(v, Scalar::F32)];
        args.extend(x);
        self.inline(span, map.f.0, map.f.1, args)
    }

    /// `f32(f(T(v)))` (`f32(f(T(v), x))` with the operand's element `x`) for every element `v` of `src`, in a new
    /// f32 register array of `src`'s shape (element `i` of it is `src`'s element `i`): the values `store(src,
    /// dst, map = f)` converts and stores when `src` goes to `dst` from registers, `T` being `dst`'s element type.
    pub(super) fn map_registers(
        &mut self,
        src: &TensorView,
        elem: Scalar,
        map: &Map,
        span: Span,
    ) -> LResult<TensorView> {
        let Some(n) = src.layout.size().ok().and_then(|s| s.static_value()) else {
            return self.unsupported(span, "`map` on a `store` of a tensor of dynamic size");
        };
        if let Some(x) = &map.with
            && x.layout.size().ok().and_then(|s| s.static_value()) != Some(n)
        {
            let size = x.layout.size().ok().and_then(|s| s.static_value());
            let error = super::error::LowerError::MapOperandShape {
                operand: sizes_text(&[size]),
                tile: sizes_text(&[Some(n)]),
            };
            return self.fail(span, error);
        }
        let shape = src.layout.shape().clone();
        let layout = self.layout_result(Layout::compact(shape), span)?;
        let out = self.allocate(Scalar::F32, Space::Rmem, layout, span)?;
        let with = match &map.with {
            Some(x) => Some(self.operand_in_registers(x, span)?),
            None => None,
        };
        for i in 0..n {
            let v = self.index(Value::Tensor(src.clone()), Value::Const(i), span)?;
            let narrow = self.scalar(&v, elem, span)?;
            let wide = self.scalar(&Value::Scalar(narrow, elem), Scalar::F32, span)?;
            let x = match &with {
                Some(x) => Some(self.operand_at(x, Value::Const(i), span)?),
                None => None,
            };
            let mapped = self.apply_map(map, wide, x, span)?;
            let at = self.coord_of(&Value::Const(i), span)?;
            self.store_element(&out, &at, &mapped, span)?;
        }
        Ok(out)
    }

    /// Applies `f` to every element of `part` (`rows` x `cols` elements of a staging tile), 16 bytes at a time:
    /// thread `index` of `threads` takes the pieces of one group of columns in every `threads / (cols / v)`-th
    /// row (v elements per piece), so its address arithmetic is one row step per piece.
    pub(super) fn map_pass(
        &mut self,
        part: &TensorView,
        (rows, cols): (i64, i64),
        index: Handle<cutec_ir::Expr>,
        threads: i64,
        map: &Map,
        span: Span,
    ) -> LResult<()> {
        let v = 16 / i64::from(part.elem.bits() / 8).max(1);
        let per = cols / v;
        if cols % v != 0 || per == 0 || rows <= 0 {
            return self.unsupported(span, "`map` on a tile whose rows are not a whole number of 16-byte pieces");
        }
        // The pieces in row-major order, piece q at row q / per, group q % per; thread `index` takes pieces
        // index, index + threads, ... . The trip count is a run-time value, so the loop stays a loop (each
        // iteration's addresses are not all computed ahead and kept in registers).
        let per_c = self.b.i32(per as i32);
        let whole_rows = threads % per == 0;
        let (first, step, total) = if whole_rows {
            // A thread keeps to one group of columns and steps whole rows.
            (self.b.div(index, per_c), threads / per, rows)
        } else {
            (index, threads, rows * per)
        };
        let fixed_group = self.b.rem(index, per_c);
        // An operand constant along the rows (a bias) is read once, ahead of the loop, where each thread keeps to
        // one group of columns: `v` values per thread and tile.
        let rows_constant = |x: &TensorView| {
            x.layout.mode(0).is_ok_and(|m| m.leaves().iter().all(|(shape, stride)| stride.is(0) || shape.is(1)))
        };
        let hoisted = match &map.with {
            Some(x) if whole_rows && rows_constant(x) => {
                let at = (Value::Const(0), Value::Scalar(fixed_group, Scalar::Int));
                let piece = self.mma_part(x.clone(), (1, v), at, span)?;
                let piece = self.operand_in_registers(&piece, span)?;
                let mut values = Vec::new();
                for e in 0..v {
                    values.push(self.operand_at(&piece, Value::Tuple(vec![Value::Const(0), Value::Const(e)]), span)?);
                }
                Some(values)
            }
            _ => None,
        };
        let total_c = self.b.i32(total as i32);
        let left = self.b.sub(total_c, first);
        let bump = self.b.i32((step - 1) as i32);
        let up = self.b.add(left, bump);
        let step_c = self.b.i32(step as i32);
        let trips = self.b.div(up, step_c);
        let zero = self.b.i32(0);
        let var = self.b.var("map", Type::I32);
        self.b.open_block();
        let j = self.b.read(var);
        let jump = self.b.mul(j, step_c);
        let at = self.b.add(first, jump);
        let (row, group) = if whole_rows { (at, fixed_group) } else { (self.b.div(at, per_c), self.b.rem(at, per_c)) };
        let at = || (Value::Scalar(row, Scalar::Int), Value::Scalar(group, Scalar::Int));
        let piece = self.mma_part(part.clone(), (1, v), at(), span)?;
        let operand = match (&map.with, &hoisted) {
            (Some(x), None) => {
                let piece = self.mma_part(x.clone(), (1, v), at(), span)?;
                Some(self.operand_in_registers(&piece, span)?)
            }
            _ => None,
        };
        let int = |n: i64| IntTuple::Int(Int::Static(n));
        let layout = self.layout_result(
            Layout::new(IntTuple::Tuple(vec![int(1), int(v)]), IntTuple::Tuple(vec![int(v), int(1)])),
            span,
        )?;
        let x = self.allocate(part.elem, Space::Rmem, layout, span)?;
        self.transfer(&piece, &x, span)?;
        for e in 0..v {
            let coord = self.coord_of(&Value::Tuple(vec![Value::Const(0), Value::Const(e)]), span)?;
            let value =
                self.index(Value::Tensor(x.clone()), Value::Tuple(vec![Value::Const(0), Value::Const(e)]), span)?;
            let wide = self.scalar(&value, Scalar::F32, span)?;
            let operand = match (&hoisted, &operand) {
                (Some(values), _) => values.get(e as usize).cloned(),
                (None, Some(o)) => {
                    Some(self.operand_at(o, Value::Tuple(vec![Value::Const(0), Value::Const(e)]), span)?)
                }
                (None, None) => None,
            };
            let mapped = self.apply_map(map, wide, operand, span)?;
            self.store_element(&x, &coord, &mapped, span)?;
        }
        self.transfer(&x, &piece, span)?;
        let body = self.b.close_block();
        self.b.push(Stmt::For { var, start: zero, end: trips, step: 1, unroll: Unroll::Disable, stages: None, body });
        Ok(())
    }

    /// Whether `store(.., map = f)` goes to the spare warps: at the top level of the loop over tiles of a
    /// `persistent` `warp_specialized` kernel, whose producer warpgroup has them and runs that loop too (a
    /// `store` under a condition or in a function is mapped by its warpgroups: the spare warps would not know
    /// whether it runs).
    pub(super) fn map_beside_mainloop(&self) -> bool {
        self.kernel_info.warp_specialized && self.tile.is_some() && self.frames.len() == 1 && self.block_depth == 1
    }

    /// The TMA epilogue with `map = f` on the spare warps (see the module documentation): `staging` is the
    /// whole tile (`rows` x `cols`) the consumers convert `acc` into, `mine` their warpgroup's part, `d` the
    /// whole tile of the argument; `stores` issues the TMA stores of a staging view into a tile view.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn map_epilogue_beside(
        &mut self,
        acc: &TensorView,
        staging: &TensorView,
        mine_view: &TensorView,
        d: &TensorView,
        tiling: MmaTiling,
        map: &Map,
        e: &cutec_grammar::ast::Expr,
    ) -> LResult<()> {
        let span = e.span;
        let Some(tile) = self.tile else {
            return self.internal(span, "`map` beside a mainloop outside a loop over tiles");
        };
        let wgs = i64::from(tiling.wm * tiling.wn);
        let (rows, cols) = (64 * i64::from(tiling.wm), i64::from(tiling.shape.n * tiling.wn));
        // The barriers and the counter, set up once ahead of the body (a CTA barrier publishes them); their
        // addresses are computed there too, where every later statement sees them.
        // One counter for the consumers and one for the spare warps: until `specialize-warps` splits the roles
        // every thread runs the consumers' statements too, so one variable would count twice there.
        let counter = self.b.var("epilogue", Type::I32);
        let spare_counter = self.b.var("epilogue_spare", Type::I32);
        self.b.open_block();
        let one_bar = self.layout_result(Layout::int(1, 1), span)?;
        self.name_hint = Some("epilogue_staged".into());
        let staged = self.allocate(Scalar::U64, Space::Smem, one_bar.clone(), span)?.base;
        self.name_hint = Some("epilogue_drained".into());
        let drained = self.allocate(Scalar::U64, Space::Smem, one_bar, span)?.base;
        {
            let zero = self.b.i32(0);
            self.b.write(counter, zero);
            self.b.write(spare_counter, zero);
            let tid = self.b.thread_idx_x();
            let thread0 = self.b.compare(CompareOp::Eq, tid, zero);
            let consumers = self.b.i32((128 * wgs) as i32);
            let one = self.b.i32(1);
            self.b.if_then(thread0, |b| {
                b.op(Op::MbarrierInit { bar: staged, count: consumers });
                b.op(Op::MbarrierInit { bar: drained, count: one });
                b.op(Op::FenceMbarrierInit);
            });
            self.b.barrier();
        }
        let block = self.b.close_block();
        self.prologue.append(block);
        // The consumers: wait until the spare warps' stores of the last tile have read the staging tile (on the
        // first use the barrier is fresh and the wait for the phase before it, parity 1, returns at once), then
        // convert into it.
        let c = self.b.read(counter);
        let one = self.b.i32(1);
        let next = self.b.add(c, one);
        let parity = self.b.binary(BinaryOp::And, next, one);
        self.b.op(Op::MbarrierWait { bar: drained, parity });
        let view = match self.partition_one(cutec_sema::Method::PartitionC, mine_view.clone(), tiling.shape, e, span)? {
            Value::Tensor(v) => v,
            _ => return self.internal(span, "a partition that is not a tensor"),
        };
        self.store_call(acc, &view, span)?;
        let after = self.b.add(tile.index, one);
        let last = self.b.compare(CompareOp::Eq, after, tile.count);
        // The last tile: this warpgroup applies `f` to its part and stores it (a named barrier per warpgroup,
        // 1 + its rank in the MMA, as the epilogue without `map` uses).
        self.b.open_block();
        {
            let super::epilogue::WarpgroupBarrier { id, threads, lane, first, decl } =
                self.warpgroup_barrier(tiling, span)?;
            self.b.op(Op::NamedBarrier { id, threads, barrier: Some(decl) });
            let n = i64::from(tiling.shape.n);
            let place = self.mma_place(tiling);
            let mine_map = map.with_part(|x| self.warpgroup_part(place, x, n, span))?;
            self.map_pass(mine_view, (64, n), lane, 128, &mine_map, span)?;
            self.b.op(Op::FenceProxyAsync);
            self.b.op(Op::NamedBarrier { id, threads, barrier: Some(decl) });
            let part = self.warpgroup_part(place, d, n, span)?;
            self.b.open_block();
            self.part_stores(mine_view, &part, n, span)?;
            self.b.op(Op::BulkWait { pending: 0, read: true });
            let body = self.b.close_block();
            self.b.push(Stmt::If { cond: first, accept: body, reject: cutec_ir::Block::new() });
        }
        let mine_last = self.b.close_block();
        // Any other tile: hand it to the spare warps.
        self.b.open_block();
        self.b.op(Op::MbarrierArrive { bar: staged });
        let handed = self.b.close_block();
        self.b.push(Stmt::If { cond: last, accept: mine_last, reject: handed });
        self.b.write(counter, next);
        // The spare warps, in the producer's region: the same counter, their own copy of it.
        self.b.open_block();
        {
            let tid = self.b.thread_idx_x();
            let five = self.b.i32(5);
            let warp = self.b.binary(BinaryOp::Shr, tid, five);
            let zero = self.b.i32(0);
            let spare = self.b.compare(CompareOp::Gt, warp, zero);
            self.b.open_block();
            let c = self.b.read(spare_counter);
            let after = self.b.add(tile.index, one);
            self.b.open_block();
            {
                let parity = self.b.binary(BinaryOp::And, c, one);
                self.b.op(Op::MbarrierWait { bar: staged, parity });
                let thirty_two = self.b.i32(32);
                let index = self.b.sub(tid, thirty_two);
                self.map_pass(staging, (rows, cols), index, SPARE_THREADS, map, span)?;
                self.b.op(Op::FenceProxyAsync);
                let loc = self.b.loc();
                let spare = self.b.kernel_mut().reserve_named_barriers(1, SPARE_THREADS as u32, "spare_warps", loc);
                let Some((decl, spare_id)) = spare else {
                    return self.internal(span, "no named barrier left for the spare warps");
                };
                let id = self.b.i32(spare_id as i32);
                let threads = self.b.i32(SPARE_THREADS as i32);
                self.b.op(Op::NamedBarrier { id, threads, barrier: Some(decl) });
                let storer = self.b.compare(CompareOp::Eq, index, zero);
                self.b.open_block();
                let n = i64::from(tiling.shape.n);
                for mi in 0..i64::from(tiling.wm) {
                    for ni in 0..i64::from(tiling.wn) {
                        let at = || (Value::Const(mi), Value::Const(ni));
                        let s = self.mma_part(staging.clone(), (64, n), at(), span)?;
                        let g = self.mma_part(d.clone(), (64, n), at(), span)?;
                        self.part_stores(&s, &g, n, span)?;
                    }
                }
                // The stores have read the staging tile: the consumers may write the next one.
                self.b.op(Op::BulkWait { pending: 0, read: true });
                self.b.op(Op::MbarrierArrive { bar: drained });
                let body = self.b.close_block();
                self.b.push(Stmt::If { cond: storer, accept: body, reject: cutec_ir::Block::new() });
            }
            let work = self.b.close_block();
            let not_last = self.b.compare(CompareOp::Ne, after, tile.count);
            self.b.push(Stmt::If { cond: not_last, accept: work, reject: cutec_ir::Block::new() });
            let next = self.b.add(c, one);
            self.b.write(spare_counter, next);
            let body = self.b.close_block();
            self.b.push(Stmt::If { cond: spare, accept: body, reject: cutec_ir::Block::new() });
        }
        let region = self.b.close_block();
        let role = Role { kind: cutec_ir::RoleKind::Producer, first: 0, count: 1 };
        let at = self.b.loc();
        self.b.push(Stmt::Roles(vec![RoleRegion { role, regs: None, body: region, at }]));
        Ok(())
    }
}

//! Hopper's asynchronous copies and their barriers, written by hand: `tma_load(src, dst, bar = b)`,
//! `tma_store(src, dst)`, `tma_store_wait<N>()`, the mbarrier operations, `elect_one()` and the proxy fence.
//!
//! **Tensor maps are derived, never written.** A TMA copy moves a *box* of a kernel argument between global and
//! shared memory, described by a tensor map the runtime encodes at launch (`cuTensorMapEncodeTiled`) from the
//! argument and passes as a 128-byte `__grid_constant__` parameter. The lowering derives the map from the two
//! views of the copy and checks, element by element, that the hardware would move exactly what the views say:
//!
//! - the global view's coordinates in the argument ([`super::bounds::Coords`]) must cover a box: every element
//!   steps along the argument's modes by constants, and the elements are exactly the grid `0..box[m]` per mode;
//! - TMA dimension 0 is the argument's mode of stride 1; the others follow in the order of their strides in the
//!   shared-memory tile;
//! - the shared-memory view, before its swizzle, must put element `i` where TMA writes it: at the box's
//!   row-major position `c0 + box0 * (c1 + box1 * ...)`. Its swizzle must be one TMA applies (32, 64 or 128 bytes:
//!   CuTe's `Swizzle<b, 4 - log2(bytes), 3>` on elements, the hardware's `Swizzle<b, 4, 3>` on byte addresses),
//!   with rows of exactly that many bytes; since the hardware swizzles absolute address bits, the tile must start
//!   at a multiple of the swizzle's period (the allocation is aligned to it) and then both swizzles agree.
//!
//! Elements of a box outside the argument are filled with zeros by loads and skipped by stores (the hardware
//! does it), so TMA copies need no predicate: a ragged tile is correct as is.

use super::value::{TensorView, Value};
use super::{LResult, Lower};
use crate::error::LowerError;
use cutec_diagnostics::Span;
use cutec_grammar::ast::{self, ExprKind};
use cutec_ir::{AddrSpace, Expr, Handle, Op, Type};
use cutec_manifest as mf;
use cutec_sema::{Builtin, Scalar, SymInt};

/// TMA's limit on each box extent.
const MAX_BOX: i64 = cutec_target::TMA_MAX_BOX as i64;
/// The most elements a tile checked element by element may have (a 5-D box of 256^5 is not a sensible tile).
const MAX_CHECKED_ELEMENTS: i64 = 1 << 20;
/// TMA needs the shared-memory side aligned to 128 bytes without a swizzle.
const SMEM_ALIGN: i64 = 128;
/// The most boxes one copy is split into (a tile of 256 columns of `bf16` in 128-byte swizzle rows takes 4).
const MAX_BOXES: i64 = 64;
/// TMA needs the global address aligned to 16 bytes.
const GLOBAL_ALIGN: u32 = 16;

/// One copy's tensor map (without its name) and where the copy starts.
struct Plan {
    map: mf::TensorMapParam,
    /// The box's origin along each TMA dimension, innermost first.
    coords: Vec<SymInt>,
}

/// The boxes of one copy: each one's plan and the part of the shared-memory tile it fills.
type Boxes = Vec<(Plan, TensorView)>;
/// Why a copy is not boxes one swizzle row wide: `None` where no mode could be sliced so, else the mode, the
/// slice's width and the first slice's problem.
type NoSplit = Option<(usize, i64, String)>;

impl Lower<'_> {
    /// The Hopper builtins whose operands are places (mbarriers) or views whose tensor map is derived here;
    /// `None` for other builtins.
    pub(super) fn hopper_call(&mut self, e: &ast::Expr, b: Builtin, args: &[ast::Arg]) -> Option<LResult<Value>> {
        let by_hand = args.iter().any(|a| a.name.as_ref().is_some_and(|n| n.name == "bar"));
        Some(match b {
            Builtin::MbarrierInit
            | Builtin::MbarrierArrive
            | Builtin::MbarrierArriveExpectTx
            | Builtin::MbarrierWait => self.mbarrier_call(e, b, args),
            Builtin::TmaLoad if by_hand => self.tma_load_call(e, args),
            Builtin::TmaLoad => self.tma_load_plain(e, args),
            Builtin::TmaStore => self.tma_store_call(e, args),
            Builtin::PrefetchTensormap => self.prefetch_tensormap_call(e, args),
            Builtin::TmaStoreWait => self.pending_groups(e).map(|pending| {
                self.b.op(Op::BulkWait { pending, read: true });
                Value::Unit
            }),
            Builtin::ElectOne => {
                self.at(e.span);
                match self.b.op(Op::ElectOne) {
                    Some(h) => Ok(Value::Scalar(h, Scalar::Bool)),
                    None => self.internal(e.span, "`elect.sync` gave no value"),
                }
            }
            Builtin::Gemm => self.gemm_call(e, args),
            Builtin::BarrierSync => self.barrier_sync_call(e, args),
            Builtin::WgmmaWait => self.wgmma_wait_call(e),
            Builtin::Setmaxnreg => self.setmaxnreg_call(e),
            Builtin::Store => self.store_args(e, args),
            Builtin::ClusterSync => {
                self.at(e.span);
                self.b.op(Op::ClusterBarrier);
                // Only one that every thread surely executes counts for `map_shared`: at the kernel body's top
                // level (one in a loop may run zero times, one under a condition not at all).
                self.cluster_synced |= self.frames.len() == 1 && self.block_depth == 1;
                Ok(Value::Unit)
            }
            Builtin::FenceProxyAsync => {
                self.at(e.span);
                self.b.op(Op::FenceProxyAsync);
                Ok(Value::Unit)
            }
            Builtin::MapShared => self.map_shared_call(e, args),
            _ => return None,
        })
    }

    /// E0319 unless `rank` is provably the rank of a CTA of the kernel's cluster (`0 <= rank < cluster size`):
    /// `mapa` of any other rank is undefined behaviour, not an error the hardware reports.
    fn require_cta_rank(&mut self, rank: Handle<Expr>, span: Span) -> LResult<()> {
        let size = self.b.kernel().cluster.map(|c| i64::from(c[0]) * i64::from(c[1]) * i64::from(c[2]));
        let r = self.sym_value(rank, 1);
        let ok = size.is_some_and(|n| self.proves_nonneg(&r) && self.proves_below(&r, &SymInt::Const(n)));
        if ok {
            return Ok(());
        }
        self.fail(span, LowerError::CtaRank { cluster: size })
    }

    /// `map_shared(t, cta)`: the view `t` of this CTA's shared memory, in the CTA of rank `cta` of the cluster
    /// (`mapa.shared::cluster` of its base; offsets, swizzle and bounds are the same, since every CTA lays out
    /// its shared memory alike).
    fn map_shared_call(&mut self, e: &ast::Expr, args: &[ast::Arg]) -> LResult<Value> {
        let (Some(t), Some(cta)) = (args.first(), args.get(1)) else {
            return self.internal(e.span, "`map_shared` without its operands");
        };
        let (view, rank) = (self.expr(&t.value)?, self.expr(&cta.value)?);
        let rank = self.scalar(&rank, cutec_sema::Scalar::Int, cta.span)?;
        self.require_cta_rank(rank, cta.span)?;
        self.at(e.span);
        // A CTA of the cluster may not have started yet, and its shared memory is not its own until it has:
        // `cluster_sync()` first (CUDA's programming guide, "Distributed Shared Memory"; compute-sanitizer's
        // racecheck reports the write otherwise).
        if !self.cluster_synced {
            return self.fail(e.span, LowerError::DsmemBeforeClusterSync);
        }
        match view {
            Value::Tensor(v) if v.space == AddrSpace::Shared => {
                let base = self.b.map_shared(v.base, rank);
                Ok(Value::Tensor(TensorView { base, space: AddrSpace::SharedCluster, param: None, ..v }))
            }
            other => {
                let what = match &other {
                    Value::Tensor(v) if v.space == AddrSpace::SharedCluster => "already another CTA's shared memory",
                    Value::Tensor(v) if v.space == AddrSpace::Global => "a tensor in global memory",
                    Value::Tensor(_) => "a tensor in registers",
                    _ => "not a tensor",
                };
                self.fail(t.span, LowerError::NotShared { what })
            }
        }
    }

    /// `barrier_sync(id, threads)`: a named barrier. Its operands' rules (the id 1..=15, the count a constant
    /// multiple of 32 within the block) are proved on the IR by `check-operands` (E0331), like those of barriers
    /// a pass generates.
    fn barrier_sync_call(&mut self, e: &ast::Expr, args: &[ast::Arg]) -> LResult<Value> {
        let (Some(id), Some(threads)) = (args.first(), args.get(1)) else {
            return self.internal(e.span, "`barrier_sync` without its operands");
        };
        let (vi, vt) = (self.expr(&id.value)?, self.expr(&threads.value)?);
        let id = self.scalar(&vi, Scalar::Int, id.span)?;
        let threads = self.scalar(&vt, Scalar::Int, threads.span)?;
        self.at(e.span);
        self.b.op(Op::NamedBarrier { id, threads, barrier: None });
        Ok(Value::Unit)
    }

    /// `store(src, dst)`.
    fn store_args(&mut self, e: &ast::Expr, args: &[ast::Arg]) -> LResult<Value> {
        let (Some(src), Some(dst)) = (args.first(), args.get(1)) else {
            return self.internal(e.span, "`store` without its tensors");
        };
        // `map = f`: the checker resolved `f`, a device function `fn(f32) -> f32` (`fn(f32, f32) -> f32` beside
        // `with = x`).
        let named = |n: &str| args.iter().find(|a| a.name.as_ref().is_some_and(|x| x.name == n));
        let f = match named("map") {
            Some(a) => match self.resolution(a.value.id) {
                Some(cutec_sema::Resolution::Function(m, item)) => {
                    self.check_map_elementwise((*m, *item), a.span)?;
                    Some((*m, *item))
                }
                _ => return self.internal(a.span, "`map` of `store` that names no function"),
            },
            None => None,
        };
        let (s, d) = (self.expr(&src.value)?, self.expr(&dst.value)?);
        let (Value::Tensor(s), Value::Tensor(mut d)) = (s, d) else {
            return self.unsupported(e.span, "`store` of values that are not tensors");
        };
        let with = match named("with") {
            Some(a) => match self.expr(&a.value)? {
                Value::Tensor(x) => Some((self.map_operand(x, &d, a.span)?, a.span)),
                _ => return self.unsupported(a.span, "`with` that is not a tensor"),
            },
            None => None,
        };
        let mut map = f.map(|f| super::epilogue_map::Map { f, with: with.as_ref().map(|(x, _)| x.clone()) });
        self.at(e.span);
        // `store(acc, tile)` of a whole accumulator to the whole tile it computes: each thread stores its values
        // where `partition_c` puts them.
        let static_size = |t: &TensorView| t.layout.size().ok().and_then(|s| s.static_value());
        if let Some(&tiling) = self.mma_accumulators.get(&s.base)
            && s.offset == SymInt::Const(0)
            && static_size(&d) == Some(64 * i64::from(tiling.wm) * i64::from(tiling.shape.n * tiling.wn))
        {
            if self.tma_epilogue_fits(&d, tiling) {
                let at = with.as_ref().map_or(e.span, |(_, at)| *at);
                return self.tma_epilogue(&s, &d, tiling, map.as_ref(), at, e).map(|()| Value::Unit);
            }
            d = self.partition_c(d, tiling, e, dst.span)?;
            // The operand is partitioned like the tile: each thread's element `i` pairs with its value `i`.
            if let Some(m) = map.as_mut()
                && let Some(x) = m.with.take()
            {
                m.with = Some(self.partition_c(x, tiling, e, dst.span)?);
            }
        }
        if let Some(m) = map {
            // From registers: the mapped values into a new register array (the source, an accumulator say, may
            // be read again after the `store`), which is then stored.
            let mapped = self.map_registers(&s, d.elem, &m, e.span)?;
            self.store_call(&mapped, &d, e.span)?;
            return Ok(Value::Unit);
        }
        self.store_call(&s, &d, e.span)?;
        Ok(Value::Unit)
    }

    /// `mbarrier_init(bar, count)` (with the fence that makes it visible to TMA and, after a barrier, to the
    /// other threads), `mbarrier_arrive(bar)`, `mbarrier_arrive_expect_tx(bar, bytes)`, `mbarrier_wait(bar, parity)`.
    fn mbarrier_call(&mut self, e: &ast::Expr, b: Builtin, args: &[ast::Arg]) -> LResult<Value> {
        let Some(first) = args.first() else {
            return self.internal(e.span, "an mbarrier call without its barrier");
        };
        let bar = self.mbarrier_ptr(&first.value)?;
        let mut ints = Vec::new();
        // `mbarrier_arrive(bar, cta = r)`: the barrier at the same place in CTA r of the cluster.
        let remote = match args.iter().find(|a| a.name.as_ref().is_some_and(|n| n.name == "cta")) {
            Some(a) => {
                let v = self.expr(&a.value)?;
                let r = self.scalar(&v, Scalar::Int, a.span)?;
                self.require_cta_rank(r, a.span)?;
                Some(r)
            }
            None => None,
        };
        for a in args[1..].iter().filter(|a| a.name.is_none()) {
            let v = self.expr(&a.value)?;
            ints.push(self.scalar(&v, Scalar::Int, a.span)?);
        }
        let int = |i: usize| ints.get(i).copied();
        self.at(e.span);
        let op = match (b, int(0)) {
            (Builtin::MbarrierInit, Some(count)) => Op::MbarrierInit { bar, count },
            (Builtin::MbarrierArrive, _) => match remote {
                Some(cta) => Op::MbarrierArriveRemote { bar, cta },
                None => Op::MbarrierArrive { bar },
            },
            (Builtin::MbarrierArriveExpectTx, Some(bytes)) => Op::MbarrierArriveExpectTx { bar, bytes },
            (Builtin::MbarrierWait, Some(parity)) => {
                // Only the parity's low bit counts.
                let parity = match self.b.kernel().exprs.get(parity) {
                    Some(Expr::Literal(cutec_ir::Literal::Int { value, .. })) => self.b.i32((value & 1) as i32),
                    _ => {
                        let one = self.b.i32(1);
                        self.b.binary(cutec_ir::BinaryOp::And, parity, one)
                    }
                };
                Op::MbarrierWait { bar, parity }
            }
            _ => return self.internal(e.span, "an mbarrier call with missing operands"),
        };
        let init = matches!(op, Op::MbarrierInit { .. });
        self.b.op(op);
        if init {
            self.b.op(Op::FenceMbarrierInit);
        }
        Ok(Value::Unit)
    }

    /// The shared-memory address of an mbarrier: an element `bars[i]` of a `u64` tensor in shared memory. (That
    /// each is waited on and arrived on, E0315, is the IR's `check-sync`.)
    fn mbarrier_ptr(&mut self, e: &ast::Expr) -> LResult<Handle<Expr>> {
        let not_one = |this: &mut Self| this.fail(e.span, LowerError::NotAnMbarrier);
        let ExprKind::Index { base, indices } = &e.kind else { return not_one(self) };
        let Value::Tensor(t) = self.expr(base)? else { return not_one(self) };
        if t.space != AddrSpace::Shared || t.elem != Scalar::U64 {
            return not_one(self);
        }
        let coord = self.index_coord(indices)?;
        let coord = self.coord_of(&coord, e.span)?;
        let (shape, stride) = (t.layout.shape().clone(), t.layout.stride().clone());
        let idx = self.crd2idx(&coord, &shape, &stride, e.span)?;
        let idx = self.idx_add(&t.offset, &idx, e.span)?;
        self.offset_ptr(&t, &idx, cutec_ir::Scalar::I64, e.span)
    }

    /// `tma_load(src, dst, bar = b)`: copies the box `src` of a kernel argument into `dst` in shared memory and
    /// signals its bytes on `b`. The value is `dst`.
    fn tma_load_call(&mut self, e: &ast::Expr, args: &[ast::Arg]) -> LResult<Value> {
        let mut positional = args.iter().filter(|a| a.name.is_none());
        let (Some(src), Some(dst)) = (positional.next(), positional.next()) else {
            return self.internal(e.span, "`tma_load` without its tensors");
        };
        let named = |n: &str| args.iter().find(|a| a.name.as_ref().is_some_and(|x| x.name == n));
        let Some(bar) = named("bar") else {
            return self.internal(e.span, "`tma_load` by hand without its mbarrier");
        };
        // A mask of CTA ranks of the cluster: the box lands in each.
        let multicast = match named("multicast") {
            Some(m) => {
                let v = self.expr(&m.value)?;
                Some(self.scalar(&v, Scalar::Int, m.span)?)
            }
            None => None,
        };
        let (g, s) = (self.expr(&src.value)?, self.expr(&dst.value)?);
        let bar = self.mbarrier_ptr(&bar.value)?;
        let (Value::Tensor(g), Value::Tensor(s)) = (g, s) else {
            return self.unsupported(e.span, "`tma_load` into a new buffer without `pipelined`");
        };
        self.at(e.span);
        let plan = self.tma_plan(&g, &s, e.span)?;
        let (map, coords) = self.tensor_map(plan, &g, Some(false), e.span)?;
        let dst = self.tile_start(&s, e.span)?;
        self.b.op(Op::TmaLoad { dst, map, coords, bar, multicast });
        Ok(Value::Tensor(s))
    }

    /// `tma_load(src, layout)`: a new shared-memory tile of `layout` (swizzled or not) and an unscheduled copy of
    /// the box `src` into it ([`Op::TmaLoadUnscheduled`]); the scheduling passes give it its barrier, and in a
    /// `pipelined` loop its ring of stages. The value is the tile.
    fn tma_load_plain(&mut self, e: &ast::Expr, args: &[ast::Arg]) -> LResult<Value> {
        let mut multicast = None;
        for a in args.iter().filter(|a| a.name.is_some()) {
            match a.name.as_ref().map(|n| n.name.as_str()) {
                Some("multicast") if multicast.is_none() => multicast = Some(a),
                _ => return self.unsupported(a.span, "this named argument of `tma_load` without `bar`"),
            }
        }
        let (Some(src), Some(layout)) = (args.first(), args.get(1)) else {
            return self.internal(e.span, "`tma_load` without its operands");
        };
        let g = self.expr(&src.value)?;
        let l = self.expr(&layout.value)?;
        let Value::Tensor(g) = g else {
            return self.internal(src.span, "`tma_load` of a value that is not a tensor");
        };
        self.at(e.span);
        let s = match l {
            Value::Composed(c) => self.allocate_swizzled(g.elem, cutec_sema::Space::Smem, &c, e.span)?,
            Value::Tensor(t) => return self.tma_load_into(e, multicast, g, t, layout),
            other => {
                let layout = self.layout_of(&other, layout.span)?;
                self.allocate(g.elem, cutec_sema::Space::Smem, layout, e.span)?
            }
        };
        if let Some(m) = multicast {
            return self.tma_load_multicast(e, m, g, s);
        }
        self.unscheduled_loads(&g, &s, None, e.span)?;
        Ok(Value::Tensor(s))
    }

    /// `tma_load(src, s)` of a shared-memory tensor `s`: the box lands in `s` itself (its allocation, layout and
    /// swizzle), and the value is `s`. Every thread first fences its own accesses to `s` against the copy (the
    /// async proxy) and a CTA barrier orders them before thread 0 issues it, since `s` may have been read or
    /// written before; `complete-copies` then waits for the copy before anything after it. In a `pipelined` loop,
    /// whose copies get a ring of fresh stages, a tensor made elsewhere cannot be one: E0324.
    fn tma_load_into(
        &mut self,
        e: &ast::Expr,
        multicast: Option<&ast::Arg>,
        g: TensorView,
        s: TensorView,
        dst: &ast::Arg,
    ) -> LResult<Value> {
        if s.space != AddrSpace::Shared {
            let problem = "`tma_load` copies into shared memory, and this tensor is not in it".into();
            let help = Some("pass a tensor made by `make_tensor<T, smem>(..)`, or a layout for a new tile");
            return self.fail(dst.span, LowerError::TmaNotABox { problem, help });
        }
        if self.in_pipelined {
            return self.fail(
                dst.span,
                LowerError::Schedule {
                    problem: "a `tma_load` of a `pipelined` loop into an existing shared-memory tensor".into(),
                    label: "the loop gives each of its copies a ring of new tiles, which this tensor is not".into(),
                    help: "pass a layout, `tma_load(view, layout)`, and use the tile it returns".into(),
                },
            );
        }
        self.b.op(Op::FenceProxyAsync);
        self.b.barrier();
        if let Some(m) = multicast {
            return self.tma_load_multicast(e, m, g, s);
        }
        self.unscheduled_loads(&g, &s, None, e.span)?;
        Ok(Value::Tensor(s))
    }

    /// The unscheduled copies of the global tile `g` into the shared-memory tile `s`: one per box
    /// ([`Lower::tma_boxes`]), each with the multicast mask `mask`.
    fn unscheduled_loads(
        &mut self,
        g: &TensorView,
        s: &TensorView,
        mask: Option<Handle<Expr>>,
        span: Span,
    ) -> LResult<()> {
        for (plan, piece) in self.tma_boxes(g, s, span)? {
            let (map, coords) = self.tensor_map(plan, g, Some(false), span)?;
            let dst = self.tile_start(&piece, span)?;
            self.at(span);
            self.b.op(Op::TmaLoadUnscheduled { dst, map, coords, multicast: mask });
        }
        Ok(())
    }

    /// The boxes that copy the global tile `g` to or from the shared-memory tile `s`, each with the part of `s`
    /// it fills: the whole tile where one tensor map describes it ([`Lower::tma_plan`]); otherwise, where a mode
    /// of the tile is wider than one row of its swizzle (a box row is at most the swizzle's span: 64 `bf16` for
    /// 128 bytes), slices of that mode one row wide, in order, each a box of one and the same map. This is how
    /// an MN-major tile of 256 columns of N is loaded: 4 boxes of 64 columns, each landing on its own atoms, as
    /// CUTLASS's TMA partitioning does. Each slice is checked element by element like a whole tile; E0309 with
    /// the whole tile's problem when no split works.
    fn tma_boxes(&mut self, g: &TensorView, s: &TensorView, span: Span) -> LResult<Boxes> {
        let problem = match self.box_plan(g, s, span)? {
            Ok(plan) => return Ok(vec![(plan, s.clone())]),
            Err(problem) => problem,
        };
        let error = match self.swizzle_row_slices(g, s, span)? {
            Ok(pieces) => return Ok(pieces),
            Err(None) => LowerError::TmaNotABox { problem, help: None },
            // The whole tile's problem is then only that it is wider than a box row.
            Err(Some((m, row, slice))) => LowerError::TmaNotABox {
                problem: format!(
                    "a box row is at most the swizzle's span, so this copy is boxes of {row} elements along mode \
                     {m} of the tile, but {slice}"
                ),
                help: Some(
                    "each box lands on consecutive elements of the tile: stack an MN-major tile's atoms along K \
                     first, `tile_to_shape(atom, shape, (2, 1))`",
                ),
            },
        };
        self.fail(span, error)
    }

    /// The copy of `g` to `s` as slices of one mode, each one swizzle row wide and a box of the same map (see
    /// [`Lower::tma_boxes`]); otherwise, where a mode could be sliced so, the mode, the slice's width and why its
    /// first slice that is not a box is not one.
    fn swizzle_row_slices(&mut self, g: &TensorView, s: &TensorView, span: Span) -> LResult<Result<Boxes, NoSplit>> {
        let Some(sw) = &s.swizzle else { return Ok(Err(None)) };
        let elem = self.tma_elem(s.elem, span)?;
        let row = (16i64 << sw.bits()) / i64::from(elem.size_bytes());
        let extents = |t: &TensorView| -> Option<Vec<i64>> {
            (0..t.layout.rank())
                .map(|i| t.layout.mode(i).ok().and_then(|m| m.size().ok()).and_then(|n| n.static_value()))
                .collect()
        };
        // Element i of `g` is element i of `s`: slicing both alike keeps that only where their modes agree.
        let (Some(ext), Some(ext_g)) = (extents(s), extents(g)) else { return Ok(Err(None)) };
        if ext != ext_g || row < 1 {
            return Ok(Err(None));
        }
        let mut why = None;
        for m in 0..ext.len() {
            let count = ext[m] / row;
            if ext[m] <= row || ext[m] % row != 0 || count > MAX_BOXES {
                continue;
            }
            let shape = ext.iter().enumerate().map(|(i, &x)| Value::Const(if i == m { row } else { x })).collect();
            let tiler = self.tiler_of(&Value::Tuple(shape), span)?;
            let mut pieces = Vec::new();
            for j in 0..count {
                let at = (0..ext.len()).map(|i| Value::Const(if i == m { j } else { 0 })).collect();
                let coord = self.coord_of(&Value::Tuple(at), span)?;
                let piece_g = self.local_tile(g, &tiler, coord.clone(), span)?;
                let piece_s = self.local_tile(s, &tiler, coord, span)?;
                match self.box_plan(&piece_g, &piece_s, span)? {
                    Ok(plan) if pieces.first().is_none_or(|(p, _): &(Plan, TensorView)| p.map == plan.map) => {
                        pieces.push((plan, piece_s));
                    }
                    Ok(_) => {
                        why.get_or_insert((m, row, format!("box {j} needs another tensor map than box 0")));
                        break;
                    }
                    Err(problem) => {
                        why.get_or_insert((m, row, format!("in box {j}, {problem}")));
                        break;
                    }
                }
            }
            if pieces.len() as i64 == count {
                return Ok(Ok(pieces));
            }
        }
        Ok(Err(why))
    }

    /// `tma_load(g, layout, multicast = n)`: the n CTAs of the kernel's cluster load the same tile; each copies
    /// the slice of rows of its rank (`block_rank_in_cluster`) into every CTA of the cluster. The IR copy is the
    /// slice's, with the mask of all n CTAs; that the tile is the same in every CTA of the cluster is proved by
    /// `pipeline-loops`, which schedules it.
    fn tma_load_multicast(&mut self, e: &ast::Expr, m: &ast::Arg, g: TensorView, s: TensorView) -> LResult<Value> {
        let n = match self.expr(&m.value)? {
            Value::Const(n) => n,
            _ => {
                let problem = "the multicast count must be known at compile time: it is the number of CTAs of \
                               the kernel's cluster"
                    .into();
                return self.fail(m.value.span, LowerError::NotConstant { problem });
            }
        };
        let cluster = self.b.kernel().cluster.map(|[x, y, z]| i64::from(x) * i64::from(y) * i64::from(z));
        // A multicast to one CTA is a plain copy (a kernel written for clusters of CLUSTER_M = 1).
        if n == 1 && cluster.unwrap_or(1) == 1 {
            self.unscheduled_loads(&g, &s, None, e.span)?;
            return Ok(Value::Tensor(s));
        }
        if cluster != Some(n) || n < 2 {
            return self.fail(m.value.span, LowerError::MulticastCount { n, cluster, rows: None });
        }
        let (rows, cols) = match super::mma::static_dims2(&s) {
            Some((r, c)) if r % n == 0 => (r, c),
            Some((r, _)) => return self.fail(m.value.span, LowerError::MulticastCount { n, cluster, rows: Some(r) }),
            None => {
                let what = format!("a multicast tile that is not 2-D (each of the {n} CTAs loads a part of its rows)");
                return self.unsupported(m.span, what);
            }
        };
        let rank = self.b.special(cutec_ir::SpecialReg::ClusterCtaRank);
        let tiler = self.tiler_of(&Value::Tuple(vec![Value::Const(rows / n), Value::Const(cols)]), e.span)?;
        let coord = self.coord_of(&Value::Tuple(vec![Value::Scalar(rank, Scalar::Int), Value::Const(0)]), e.span)?;
        let slice_s = self.local_tile(&s, &tiler, coord.clone(), e.span)?;
        let slice_g = self.local_tile(&g, &tiler, coord, e.span)?;
        let mask = self.b.i32(((1i64 << n) - 1) as i32);
        self.unscheduled_loads(&slice_g, &slice_s, Some(mask), e.span)?;
        Ok(Value::Tensor(s))
    }

    /// `tma_store(src, dst)`: copies `src` in shared memory to the box `dst` of a kernel argument, as its own
    /// bulk group.
    fn tma_store_call(&mut self, e: &ast::Expr, args: &[ast::Arg]) -> LResult<Value> {
        if let Some(a) = args.iter().find(|a| a.name.is_some()) {
            return self.unsupported(a.span, "a named argument of `tma_store`");
        }
        let (Some(src), Some(dst)) = (args.first(), args.get(1)) else {
            return self.internal(e.span, "`tma_store` without its tensors");
        };
        let (s, g) = (self.expr(&src.value)?, self.expr(&dst.value)?);
        let (Value::Tensor(s), Value::Tensor(g)) = (s, g) else {
            return self.internal(e.span, "`tma_store` of values that are not tensors");
        };
        self.at(e.span);
        self.tma_store_views(&s, &g, e.span)?;
        Ok(Value::Unit)
    }

    /// The TMA store of the shared-memory tile `s` to the box `g` of a kernel argument, as its own bulk group.
    pub(super) fn tma_store_views(&mut self, s: &TensorView, g: &TensorView, span: Span) -> LResult<()> {
        let plan = self.tma_plan(g, s, span)?;
        let (map, coords) = self.tensor_map(plan, g, Some(true), span)?;
        let src = self.tile_start(s, span)?;
        self.b.op(Op::TmaStore { src, map, coords });
        self.b.op(Op::BulkCommit);
        Ok(())
    }

    /// `prefetch_tensormap(g, s)`: `prefetch.tensormap` of the map a TMA copy between the global tile `g` and the
    /// shared-memory tile `s` uses. The map is derived as the copy derives it ([`Lower::tma_plan`]), and maps are
    /// shared by equality, so the prefetch and the copies name one kernel parameter; where the box starts is
    /// not part of the map.
    fn prefetch_tensormap_call(&mut self, e: &ast::Expr, args: &[ast::Arg]) -> LResult<Value> {
        let (Some(g), Some(s)) = (args.first(), args.get(1)) else {
            return self.internal(e.span, "`prefetch_tensormap` without its tensors");
        };
        let (g, s) = (self.expr(&g.value)?, self.expr(&s.value)?);
        let (Value::Tensor(g), Value::Tensor(s)) = (g, s) else {
            return self.internal(e.span, "`prefetch_tensormap` of values that are not tensors");
        };
        self.at(e.span);
        let plan = self.tma_plan(&g, &s, e.span)?;
        // Neither a read nor a write of the tensor: the copies say how it is accessed.
        let (map, _) = self.tensor_map(plan, &g, None, e.span)?;
        self.b.op(Op::PrefetchTensorMap { map });
        Ok(Value::Unit)
    }

    /// The address of the first element of a shared-memory tile whose offset [`Lower::tma_plan`] showed to be
    /// a multiple of the swizzle's period (so the swizzle leaves it in place).
    fn tile_start(&mut self, s: &TensorView, span: Span) -> LResult<Handle<Expr>> {
        if s.offset == SymInt::Const(0) {
            return Ok(s.base);
        }
        let elem = self.tma_elem(s.elem, span)?;
        let i = self.materialize(&s.offset, span)?;
        Ok(self.b.offset(s.base, i, Type::Scalar(elem)))
    }

    /// The IR scalar of a TMA copy's elements (any type: TMA moves bytes).
    fn tma_elem(&mut self, s: Scalar, span: Span) -> LResult<cutec_ir::Scalar> {
        match s {
            Scalar::U64 => Ok(cutec_ir::Scalar::I64),
            _ => self.ir_scalar(s, span),
        }
    }

    /// The kernel parameter of the tensor map `plan.map` (one per distinct map) and the box origin as `i32` IR
    /// values; `store` is what the copy does to the argument (for the manifest's `access`), `None` for no access.
    fn tensor_map(
        &mut self,
        plan: Plan,
        g: &TensorView,
        store: Option<bool>,
        span: Span,
    ) -> LResult<(Handle<Expr>, Vec<Handle<Expr>>)> {
        let coords = match store {
            Some(_) => plan.coords.iter().map(|c| self.materialize(c, span)).collect::<LResult<Vec<_>>>()?,
            None => Vec::new(),
        };
        if let Some(p) = g.param {
            if let Some(store) = store {
                self.tma_uses.push((p, store));
            }
            if let Some(a) = self.param_align.get_mut(p) {
                *a = (*a).max(GLOBAL_ALIGN);
            }
        }
        let same = |m: &mf::TensorMapParam| mf::TensorMapParam { name: String::new(), ..m.clone() } == plan.map;
        if let Some((_, h)) = self.tensor_maps.iter().find(|(m, _)| same(m)) {
            return Ok((*h, coords));
        }
        let taken = |n: &str| self.b.kernel().params.iter().any(|p| p.name == n);
        let mut k = self.tensor_maps.iter().filter(|(m, _)| m.tensor == plan.map.tensor).count();
        let mut name = format!("{}_tma{k}", plan.map.tensor);
        while taken(&name) {
            k += 1;
            name = format!("{}_tma{k}", plan.map.tensor);
        }
        // The bytes one box delivers, which `check-protocol` counts against the mbarrier's `expect_tx`.
        let index = self.b.kernel().params.len() as u32;
        let elems: u64 = plan.map.box_shape.iter().map(|&n| u64::from(n)).product();
        let elem = self.tma_elem(g.elem, span)?;
        let bytes = elems.saturating_mul(u64::from(elem.size_bytes()));
        self.b.kernel_mut().tma_box_bytes.push((index, bytes));
        let h = self.b.param(cutec_ir::Param {
            name: name.clone(),
            ty: Type::Ptr(AddrSpace::Param),
            align: 64,
            noalias: true,
            readonly: true,
        });
        self.tensor_maps.push((mf::TensorMapParam { name, ..plan.map }, h));
        Ok((h, coords))
    }

    /// The tensor map that moves the elements of the global view `g` to and from the shared-memory view `s`
    /// (element `i` of one is element `i` of the other, as in `copy`), checked element by element.
    fn tma_plan(&mut self, g: &TensorView, s: &TensorView, span: Span) -> LResult<Plan> {
        match self.box_plan(g, s, span)? {
            Ok(plan) => Ok(plan),
            Err(problem) => self.fail(span, LowerError::TmaNotABox { problem, help: None }),
        }
    }

    /// [`Lower::tma_plan`] without the diagnostic: `Ok(Err(problem))` where no tensor map describes the copy
    /// (E0309's message), so that a caller may try the copy as several boxes first.
    fn box_plan(&mut self, g: &TensorView, s: &TensorView, span: Span) -> LResult<Result<Plan, String>> {
        if s.space != AddrSpace::Shared || g.space != AddrSpace::Global {
            return Ok(Err("a TMA copy moves a tile of a kernel argument to or from shared memory".into()));
        }
        let c = match (&g.bounds, g.param) {
            (super::bounds::Bounds::Tracked(c), Some(p)) => ((**c).clone(), p),
            (super::bounds::Bounds::Lost(l), _) => {
                return Ok(Err(format!("the coordinates of this view in `{}` are lost: {}", l.param, l.why)));
            }
            _ => return Ok(Err("the global side of a TMA copy must be a tile of a kernel argument".into())),
        };
        let (c, p) = c;
        let arg = self.argument_layout(p, span)?;
        let rank = arg.rank();
        let leaves = arg.leaves();
        if leaves.len() != rank || rank > 5 {
            let msg = format!("TMA describes tensors of 1 to 5 modes that are single integers; `{}` is {arg}", c.param);
            return Ok(Err(msg));
        }
        let Some(unit) = leaves.iter().position(|(_, d)| d.static_value() == Some(1)) else {
            return Ok(Err(format!("TMA needs a mode of stride 1 in `{}`, whose layout is {arg}", c.param)));
        };
        let elem = self.tma_elem(s.elem, span)?;
        let e = i64::from(elem.size_bytes());
        let size = |l: &cutec_layout::Layout| l.size().ok().and_then(|s| s.static_value());
        let (Some(n), Some(ns)) = (size(&g.layout), size(&s.layout)) else {
            return Ok(Err("the tiles of a TMA copy must have static shapes".into()));
        };
        if n != ns {
            return Ok(Err(format!("the global tile has {n} elements and the shared-memory tile {ns}")));
        }
        if n > MAX_CHECKED_ELEMENTS {
            return Ok(Err(format!("a TMA tile of {n} elements is over the limit of {MAX_CHECKED_ELEMENTS}")));
        }
        let Some(crd) = c.element_coords() else {
            return Ok(Err(format!("the tile's elements do not step along `{}`'s modes by constants", c.param)));
        };
        let Ok(offsets) = s.layout.indices() else {
            return Ok(Err("the shared-memory tile of a TMA copy must have a static layout".into()));
        };
        // The box: the extent of the coordinates along each mode.
        let mut boxd = vec![1i64; rank];
        for (m, xs) in crd.iter().enumerate() {
            let (lo, hi) = (xs.iter().copied().min().unwrap_or(0), xs.iter().copied().max().unwrap_or(0));
            if lo != 0 {
                return Ok(Err(format!("the tile steps backwards along mode {m} of `{}`", c.param)));
            }
            boxd[m] = hi + 1;
            if boxd[m] > MAX_BOX {
                let msg = format!(
                    "the tile spans {} elements along mode {m} of `{}`; a TMA box spans at most {MAX_BOX}",
                    boxd[m], c.param
                );
                return Ok(Err(msg));
            }
        }
        if boxd.iter().product::<i64>() != n {
            let msg = format!("the tile's {n} elements do not fill a box of `{}`: they span {boxd:?}", c.param);
            return Ok(Err(msg));
        }
        // TMA dimension 0 is the contiguous mode; the others in the order the shared-memory tile strides them.
        let unit_step = |m: usize| (0..n as usize).find(|&i| (0..rank).all(|k| crd[k][i] == i64::from(k == m)));
        let mut outer: Vec<(i64, usize)> = Vec::new();
        for m in (0..rank).filter(|&m| m != unit) {
            let key = if boxd[m] > 1 {
                unit_step(m).and_then(|i| offsets.get(i).copied()).unwrap_or(i64::MAX)
            } else {
                i64::MAX
            };
            outer.push((key, m));
        }
        outer.sort();
        let order: Vec<usize> = std::iter::once(unit).chain(outer.iter().map(|&(_, m)| m)).collect();
        // Element i must be where TMA puts it: at its row-major position in the box (before the swizzle, which
        // both sides then apply alike).
        if offsets.len() != n as usize {
            return Ok(Err("the shared-memory tile of a TMA copy must have a static layout".into()));
        }
        for (i, &at) in offsets.iter().enumerate() {
            let (mut lin, mut scale) = (0i64, 1i64);
            for &m in &order {
                lin += crd[m][i] * scale;
                scale *= boxd[m];
            }
            if at != lin {
                let coord: Vec<String> = (0..rank).map(|m| crd[m][i].to_string()).collect();
                let msg = format!(
                    "element {i} of the tile, at ({}) from the tile's origin in `{}`, is element {at} of the \
                     shared-memory tile, but TMA puts it at element {lin} (the box {:?}, innermost first)",
                    coord.join(", "),
                    c.param,
                    order.iter().map(|&m| boxd[m]).collect::<Vec<_>>()
                );
                return Ok(Err(msg));
            }
        }
        let inner_bytes = boxd[unit] * e;
        if inner_bytes % 16 != 0 {
            let msg = format!(
                "the box's innermost extent is {inner_bytes} bytes ({} elements along mode {unit} of `{}`); TMA \
                 needs a multiple of 16 bytes",
                boxd[unit], c.param
            );
            return Ok(Err(msg));
        }
        let (swizzle, period) = match &s.swizzle {
            None => (mf::TmaSwizzle::None, SMEM_ALIGN),
            Some(sw) => {
                let log_e = i64::from(elem.size_bytes().trailing_zeros());
                let mode = match sw.bits() {
                    1 => mf::TmaSwizzle::B32,
                    2 => mf::TmaSwizzle::B64,
                    _ => mf::TmaSwizzle::B128,
                };
                let row = 16i64 << sw.bits();
                if sw.shift() != 3 || sw.base() + log_e != 4 || !(1..=3).contains(&sw.bits()) {
                    let msg = format!(
                        "the shared-memory tile's swizzle {sw} is not one TMA applies: for {}-byte elements those \
                         are Swizzle<1|2|3, {}, 3> (SW32, SW64, SW128)",
                        e,
                        4 - log_e
                    );
                    return Ok(Err(msg));
                }
                if inner_bytes != row {
                    let msg = format!(
                        "a {row}-byte swizzle needs rows of exactly {row} bytes, but the box's innermost extent is \
                         {inner_bytes} bytes"
                    );
                    return Ok(Err(msg));
                }
                (mode, 128i64 << sw.bits())
            }
        };
        // The tile must start at a multiple of the period, so that the swizzle of the view (on offsets) and the
        // hardware's (on addresses) agree; the allocation is aligned to it.
        let div = self.divisor(&s.offset);
        let off_ok = div == i64::MAX || (div.saturating_mul(e)) % period == 0;
        if !off_ok {
            let msg = format!(
                "the shared-memory tile starts at {} of its buffer, which is not known to be a multiple of {} \
                 elements ({period} bytes), as TMA needs",
                self.describe_offset(&s.offset),
                period / e
            );
            return Ok(Err(msg));
        }
        self.align_allocation(s.base, period as u32);
        self.check_shared_limit(AddrSpace::Shared, span)?;
        let mut coords = Vec::with_capacity(rank);
        for &m in &order {
            match c.origin(m) {
                Some(x) => coords.push(x),
                None => return Ok(Err(format!("the tile's origin along mode {m} of `{}` is not known", c.param))),
            }
        }
        let map = mf::TensorMapParam {
            name: String::new(),
            tensor: c.param.clone(),
            modes: order.clone(),
            box_shape: order.iter().map(|&m| boxd[m] as u32).collect(),
            swizzle,
            // CUTLASS's defaults for tiles read once per CTA.
            l2_promotion: mf::TmaL2Promotion::B128,
            oob_fill: mf::TmaOobFill::Zero,
        };
        Ok(Ok(Plan { map, coords }))
    }

    /// Raises the alignment of the shared-memory allocation `base` points to.
    pub(super) fn align_allocation(&mut self, base: Handle<Expr>, align: u32) {
        let kernel = self.b.kernel_mut();
        if let Some(Expr::AllocPtr(a)) = kernel.exprs.get(base).cloned()
            && let Some(alloc) = kernel.allocs.get_mut(a)
        {
            alloc.align = alloc.align.max(align);
        }
    }

    /// The declared layout of kernel parameter `p`.
    fn argument_layout(&mut self, p: usize, span: Span) -> LResult<cutec_layout::Layout> {
        let info = self.kernel_info;
        match info.params.get(p).map(|p| &p.ty) {
            Some(cutec_sema::Type::Tensor(t)) if let Some(l) = &t.layout.value => self.sym_layout(l, span),
            _ => self.internal(span, "a TMA copy of a parameter that is not a tensor"),
        }
    }
}

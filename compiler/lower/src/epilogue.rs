//! The epilogue `store(acc, tile)` picks for a whole accumulator stored to the whole tile of a kernel argument
//! that TMA can describe: through shared memory, as `gemm_sm90_manual.cute` writes it by hand. Each warpgroup
//! converts its part of the accumulator into a 128-byte-swizzled staging tile (`stmatrix` for 16-bit elements,
//! pairs of fp8 values in 16-bit shared stores for 8-bit ones: few bank conflicts either way), waits for its 128
//! threads (a named barrier per warpgroup, 1 + its rank in the MMA), makes the writes visible to the asynchronous
//! proxy, and one thread stores the part with TMA, one swizzle row of 128 bytes (64 or 128 columns) at a time, then waits until the stores have read the staging tile (so that the tile may be
//! written again, and the CTA may exit): at once, or in the loop over tiles of a `persistent` kernel before the
//! next tile's epilogue writes it, and after the loop. Elements outside the argument are not written (TMA clips
//! the boxes).
//!
//! Where the whole staging tile would not fit beside the ring of the kernel's pipelined loop (4 stages of an fp8
//! GEMM's 48 KiB), each warpgroup stages its part in pieces of the widest whole number of swizzle rows that fits,
//! one after the other: piece j is the accumulator's values of columns j * P .. (contiguous in its value order),
//! written once the stores of the piece before have read the staging tile.
//!
//! Compared with one predicated store per pair of values (the other epilogue, which `store(acc,
//! mma.partition_c(tile))` asks for), it writes 128-byte lines and issues a few instructions; measured on
//! gemm_sm90_manual it is worth 10 to 30 % of the whole GEMM (docs/perf-notes.md, variant v1). What it needs
//! at launch: C's rows a multiple of 16 bytes (the runtime refuses other shapes, E0422).
//!
//! For an fp8 C the register epilogue is worse still: one byte per store instruction (the accumulator holds two
//! adjacent columns per row), so fp8 tiles take this one too.

use super::mma::MmaTiling;
use super::value::{TensorView, Value};
use super::{LResult, Lower};
use cutec_diagnostics::Span;
use cutec_grammar::ast;
use cutec_ir::{AddrSpace, BinaryOp, CompareOp, Expr, Handle, Op, Stmt, WgmmaShape};
use cutec_layout::{ComposedLayout, Int, IntTuple, Layout, Swizzle};
use cutec_sema::{Method, Scalar, SymInt};

/// Bytes of one TMA store's row: one 128-byte swizzle row.
const ROW_BYTES: i64 = 128;

/// Columns of one TMA store (one swizzle row) for elements of `elem`.
fn chunk(elem: Scalar) -> i64 {
    ROW_BYTES / i64::from(elem.bits() / 8)
}

impl Lower<'_> {
    /// Records the shared memory the ring of the pipelined loop `body` of `stages` stages will add, as
    /// `pipeline-loops` computes it (the largest of the kernel's rings).
    pub(super) fn note_ring(&mut self, body: &cutec_ir::Block, stages: u32) {
        let bytes = cutec_ir::passes::schedule::ring_bytes(self.b.kernel(), body, stages);
        self.ring = self.ring.max(Some(bytes).filter(|b| *b > 0));
    }

    /// The columns of the pieces a warpgroup stages its `n` columns in, of `bytes`-byte elements, `wgs`
    /// warpgroups: all of them at once (`n`) where that staging fits beside the ring and the kernel's other
    /// shared memory, otherwise the widest whole number of swizzle rows that does (two pieces of 128 columns
    /// leave a 4-stage fp8 ring room, as `examples/gemm_fp8_manual.cute` does by hand).
    fn staging_piece(&self, n: i64, bytes: i64, wgs: i64) -> i64 {
        let Some(ring) = self.ring else { return n };
        // And up to 1024 bytes to align the staging tile for its 128-byte swizzle.
        let ring = ring + 1024;
        let before = self.b.kernel().shared_bytes() + ring;
        let fits = |cols: i64| before + (64 * cols * bytes * wgs) as u64 <= u64::from(cutec_ir::MAX_SHARED_BYTES);
        let row = ROW_BYTES / bytes.max(1);
        let mut cols = n;
        while !fits(cols) && cols % 2 == 0 && (cols / 2) % row == 0 {
            cols /= 2;
        }
        cols
    }

    /// Whether `store(acc, d)` of an accumulator of `tiling` can go through shared memory and TMA: `d` is a
    /// 16-bit or fp8 tile of a kernel argument whose coordinates are known, in whole swizzle rows (64 or 128
    /// columns).
    pub(super) fn tma_epilogue_fits(&self, d: &TensorView, tiling: MmaTiling) -> bool {
        let cols = i64::from(tiling.shape.n * tiling.wn);
        d.space == AddrSpace::Global
            && d.param.is_some()
            && matches!(d.bounds, super::bounds::Bounds::Tracked(_))
            && matches!(d.elem, Scalar::BF16 | Scalar::F16 | Scalar::E4M3 | Scalar::E5M2)
            && d.layout.rank() == 2
            && cols % chunk(d.elem) == 0
            && self.warpgroup_split().is_none()
    }

    /// `store(acc, d)` through a swizzled staging tile and TMA (see the module documentation).
    pub(super) fn tma_epilogue(
        &mut self,
        acc: &TensorView,
        d: &TensorView,
        tiling: MmaTiling,
        map: Option<&super::epilogue_map::Map>,
        with_at: Span,
        e: &ast::Expr,
    ) -> LResult<()> {
        let span = e.span;
        let n = i64::from(tiling.shape.n);
        // The spare warps read a global operand one tile later than the program says: `finish` proves the
        // kernel never writes its argument (E0326). One in shared memory or registers may be rewritten for the
        // next tile meanwhile: the warpgroups apply such a map themselves, in program order.
        // The spare warps take the whole tile; the warpgroups stage theirs in pieces where the whole would not
        // fit beside the ring, and then apply `map` themselves, piece by piece (the spare warps would need the
        // whole tile staged).
        let wgs = i64::from(tiling.wm * tiling.wn);
        let piece = self.staging_piece(n, i64::from(d.elem.bits() / 8).max(1), wgs);
        let beside = piece == n
            && map.is_some_and(|m| {
                self.map_beside_mainloop()
                    && m.with.as_ref().is_none_or(|x| x.space == AddrSpace::Global && x.param.is_some())
            });
        let (rows, cols) = (64 * i64::from(tiling.wm), piece * i64::from(tiling.wn));
        // `tile_to_shape(SW128_K<T>, (rows, cols))`: the byte atom Sw<3,4,3> o (8,128):(128,1) in elements,
        // Sw<3,3,3> o (8,64):(64,1) for 16-bit ones and itself for 8-bit ones.
        let chunk = chunk(d.elem);
        let int = |v: i64| IntTuple::Int(Int::Static(v));
        let atom = self.layout_result(
            Layout::new(IntTuple::Tuple(vec![int(8), int(chunk)]), IntTuple::Tuple(vec![int(chunk), int(1)])),
            span,
        )?;
        let tiled = self.layout_result(
            cutec_layout::tile_to_shape(&atom, &IntTuple::Tuple(vec![int(rows), int(cols)]), None),
            span,
        )?;
        let base = if chunk == 128 { 4 } else { 3 };
        let swizzle = self.layout_result(Swizzle::new(3, base, 3), span)?;
        self.name_hint = Some("epilogue".to_string());
        let staging =
            self.allocate_swizzled(d.elem, cutec_sema::Space::Smem, &ComposedLayout::new(swizzle, tiled), span)?;
        // This warpgroup's parts of the staging tile, of `d` and of the map's operand.
        let place = self.mma_place(tiling);
        let mine = self.warpgroup_part(place, &staging, piece, span)?;
        let part = self.warpgroup_part(place, d, n, span)?;
        if let Some(m) = map
            && beside
        {
            if let Some(p) = m.with.as_ref().and_then(|x| x.param) {
                self.map_reads_beside.push((p, with_at));
            }
            return self.map_epilogue_beside(acc, &staging, &mine, d, tiling, m, e);
        }
        let WarpgroupBarrier { id, threads, lane, first, decl } = self.warpgroup_barrier(tiling, span)?;
        // In the loop over tiles of a persistent kernel the storing thread waits for the last tile's stores to
        // have read the staging tile only when it is written again, so its warpgroup starts the next tile's
        // mainloop without waiting for them (as gemm_sm90_manual.cute does); the kernel waits for the last ones
        // after the loop.
        let deferred = self.tile.is_some();
        if deferred {
            self.tile_store_wait = true;
        }
        let map = match map {
            Some(m) => Some(m.with_part(|x| self.warpgroup_part(place, x, n, span))?),
            None => None,
        };
        // Piece j: columns j * piece .. of the warpgroup's part, which are the accumulator's `piece / 2` values
        // from j * piece / 2 (the values of a 64 x N accumulator are (2, 2, N / 8), eight columns at a time).
        let shape = WgmmaShape { n: piece as u32, ..tiling.shape };
        let int = |v: i64| IntTuple::Int(Int::Static(v));
        let values =
            self.layout_result(Layout::compact(IntTuple::Tuple(vec![int(2), int(2), int(piece / 8)])), span)?;
        for j in 0..n / piece {
            if j > 0 || deferred {
                // The stores that last read the staging tile have read it.
                self.b.if_then(first, |b| {
                    b.op(Op::BulkWait { pending: 0, read: true });
                });
            }
            // Every thread of the warpgroup is past the previous reads of the staging tile (its storing thread
            // waited for them) before any writes it.
            self.b.op(Op::NamedBarrier { id, threads, barrier: Some(decl) });
            let view = match self.partition_one(Method::PartitionC, mine.clone(), shape, e, span)? {
                Value::Tensor(v) => v,
                _ => return self.internal(span, "a partition that is not a tensor"),
            };
            let values_j = TensorView { layout: values.clone(), offset: SymInt::Const(j * piece / 2), ..acc.clone() };
            let at = || (Value::Const(0), Value::Const(j));
            self.store_call(&values_j, &view, span)?;
            if let Some(m) = &map {
                let m = m.with_part(|x| self.mma_part(x.clone(), (64, piece), at(), span))?;
                // Every value of the piece is written before its threads apply `f` to it (each to other values).
                self.b.op(Op::NamedBarrier { id, threads, barrier: Some(decl) });
                self.map_pass(&mine, (64, piece), lane, 128, &m, span)?;
            }
            // The writes above are read by TMA, another proxy.
            self.b.op(Op::FenceProxyAsync);
            self.b.op(Op::NamedBarrier { id, threads, barrier: Some(decl) });
            self.b.open_block();
            let g = self.mma_part(part.clone(), (64, piece), at(), span)?;
            self.part_stores(&mine, &g, piece, span)?;
            if !deferred && j + 1 == n / piece {
                // The stores have read the staging tile: it may be written again, and the CTA may exit.
                self.b.op(Op::BulkWait { pending: 0, read: true });
            }
            let body = self.b.close_block();
            self.b.push(Stmt::If { cond: first, accept: body, reject: cutec_ir::Block::new() });
        }
        Ok(())
    }

    /// The part of a whole tile `t` (of an MMA's accumulator shape) that the warpgroup at `place` in the MMA
    /// owns, 64 x `n`: the whole of `t` for an MMA of one warpgroup (no place).
    pub(super) fn warpgroup_part(
        &mut self,
        place: Option<(Handle<Expr>, Handle<Expr>)>,
        t: &TensorView,
        n: i64,
        span: Span,
    ) -> LResult<TensorView> {
        match place {
            Some((mi, ni)) => {
                let at = (Value::Scalar(mi, Scalar::Int), Value::Scalar(ni, Scalar::Int));
                self.mma_part(t.clone(), (64, n), at, span)
            }
            None => Ok(t.clone()),
        }
    }

    /// The named barrier of this thread's warpgroup in an MMA over `tiling` (1 + its rank, 128 threads), the
    /// thread's index in the warpgroup, and whether it is the warpgroup's first (the one that stores).
    pub(super) fn warpgroup_barrier(&mut self, tiling: MmaTiling, span: Span) -> LResult<WarpgroupBarrier> {
        let wgs = tiling.wm * tiling.wn;
        let loc = self.b.loc();
        let Some((decl, first_id)) = self.b.kernel_mut().reserve_named_barriers(wgs, 128, "epilogue", loc) else {
            return self.internal(span, "no named barrier left for the epilogue's warpgroups");
        };
        let tid = self.b.thread_idx_x();
        let seven = self.b.i32(7);
        let wg = self.b.binary(BinaryOp::Shr, tid, seven);
        let count = self.b.i32(wgs as i32);
        let rank = self.b.rem(wg, count);
        let one = self.b.i32(first_id as i32);
        let id = self.b.add(rank, one);
        let threads = self.b.i32(128);
        let mask = self.b.i32(127);
        let lane = self.b.binary(BinaryOp::And, tid, mask);
        let zero = self.b.i32(0);
        let first = self.b.compare(CompareOp::Eq, lane, zero);
        Ok(WarpgroupBarrier { id, threads, lane, first, decl })
    }

    /// The TMA stores of a warpgroup's part `s` of a staging tile into its part `g` of the tile (`n` columns),
    /// one swizzle row of 128 bytes at a time.
    pub(super) fn part_stores(&mut self, s: &TensorView, g: &TensorView, n: i64, span: Span) -> LResult<()> {
        let chunk = chunk(s.elem);
        for j in 0..n / chunk {
            let at = || (Value::Const(0), Value::Const(j));
            let sv = self.mma_part(s.clone(), (64, chunk), at(), span)?;
            let gv = self.mma_part(g.clone(), (64, chunk), at(), span)?;
            self.tma_store_views(&sv, &gv, span)?;
        }
        Ok(())
    }
}

/// See [`Lower::warpgroup_barrier`].
pub(super) struct WarpgroupBarrier {
    pub id: Handle<Expr>,
    pub threads: Handle<Expr>,
    pub lane: Handle<Expr>,
    pub first: Handle<Expr>,
    /// The declaration of the warpgroups' named barriers, from the kernel's pool.
    pub decl: Handle<cutec_ir::schedule::Barrier>,
}

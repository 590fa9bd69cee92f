//! Warpgroup MMAs written by hand: `tiled_mma(wgmma<64, N, 16, bf16, bf16, f32>, (1, 1, 1))`, its accumulator
//! `mma.fragment_c((64, N))`, the thread's part of a C tile `mma.partition_c(t)`, the A operand in registers
//! `mma.fragment_a((64, K))` and `mma.partition_a(t)`, `gemm(mma, a, b, acc)` (one asynchronous group of
//! `wgmma.mma_async`, one per k-step of the tiles), `wgmma_wait<N>()`, `setmaxnreg<N>()`, and `store(acc, t)`
//! (converts and writes, predicated like any access).
//!
//! **The accumulator** of an m64nNk16 wgmma is `N / 2` `f32` per thread of the warpgroup, in CuTe's C layout
//! `((4, 8, 4), (2, 2, N/8)) : ((128, 1, 16), (64, 8, 512))` from (thread, value) to the column-major index of
//! the 64 x N tile (PTX ISA, "Matrix fragments for wgmma .m64nNk16", accumulator D): warp `w` holds rows
//! `16w..16w+15`, lane `l` rows `16w + l/4` and `+8`, columns `8j + 2(l%4)` and `+1`. `fragment_c` is a
//! register array of those values (compact, so `fill`, element-wise math and `store` work on it), and
//! `partition_c(t)` is `composition(t, C)[thread % 128, _]`: the same values' places in `t`.
//!
//! **A in registers** ("RS"): CuTe's `ALayout_64x16` is the C layout of a 64 x 16 tile, so `fragment_a((64, K))`
//! and `partition_a(t)` are `fragment_c` and `partition_c` with K for N (`cutec_layout::wgmma_a_register_layout`),
//! of the input type: each k-step is 8 consecutive values of a thread, the instruction's 4 registers. Which
//! register arrays have that layout is recorded when they are made (`Lower::wgmma_fragments`), so `gemm` takes
//! as A only a whole one for its K (E0316), and a converted accumulator (`make_fragment_like<bf16>(acc)`).
//!
//! **Descriptors are derived, never written**: the shared-memory layout of each operand (its swizzle included)
//! is matched against the layouts the hardware reads (`cutec_layout::gmma`), which gives the descriptor's fixed
//! fields and each k-step's start; the start address is the operand's pointer.

use super::value::{TensorView, Value};
use super::{LResult, Lower};
use crate::error::LowerError;
use cutec_diagnostics::Span;
use cutec_grammar::ast;
use cutec_ir::entry_registers;
use cutec_ir::{AddrSpace, Expr, GmmaDesc, Handle, Op, WgmmaShape, WgmmaStep};
use cutec_layout::{Int, IntTuple, Layout};
use cutec_sema::{Method, Scalar, SymInt, Type};

/// The static extents of a 2-D tensor's modes, `None` for another tensor.
pub(crate) fn static_dims2(t: &TensorView) -> Option<(i64, i64)> {
    let d = |i| t.layout.mode(i).ok().and_then(|m| m.size().ok()).and_then(|s| s.static_value());
    match (t.layout.rank(), d(0), d(1)) {
        (2, Some(r), Some(c)) => Some((r, c)),
        _ => None,
    }
}

/// A tiled MMA: its atom's shape and its warpgroups, `wm` along M by `wn` along N.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct MmaTiling {
    pub shape: WgmmaShape,
    pub wm: u32,
    pub wn: u32,
}

/// The checker's scalar of a wgmma's A.
fn input_scalar(shape: WgmmaShape) -> Scalar {
    lang_scalar(shape.input)
}

/// The checker's scalar of a wgmma input type (`f16`, `bf16`, `e4m3`, `e5m2`).
fn lang_scalar(s: cutec_ir::Scalar) -> Scalar {
    match s {
        cutec_ir::Scalar::BF16 => Scalar::BF16,
        cutec_ir::Scalar::E4M3 => Scalar::E4M3,
        cutec_ir::Scalar::E5M2 => Scalar::E5M2,
        _ => Scalar::F16,
    }
}

/// The bytes of an element of a shared-memory operand (its `K` step is 32 bytes of them).
fn operand_bytes(elem: Scalar) -> i64 {
    match elem {
        Scalar::F32 => 4,
        Scalar::E4M3 | Scalar::E5M2 => 1,
        _ => 2,
    }
}

impl Lower<'_> {
    /// Whether the value `h` is the same in every thread of a warpgroup (of a one-dimensional CTA): it depends on
    /// the thread only through `thread_idx.x / (128 k)` or `thread_idx.x >> (7 + k)`. Variables count as uniform
    /// here, loads and other operations' results do not: this early check only refuses the obvious cases in source
    /// terms while lowering, and picks the epilogue's stores (plain stores where a warpgroup may be split, so that
    /// the compiler never chooses an instruction the proof then refuses); the proof is the IR's
    /// `check-collectives` pass
    /// ([`cutec_ir::analysis::uniformity`]), which refuses what this lets through.
    pub(super) fn warpgroup_uniform(&self, h: Handle<Expr>, depth: u32) -> bool {
        use cutec_ir::{BinaryOp, SpecialReg};
        let k = self.b.kernel();
        let Some(e) = k.exprs.get(h) else { return false };
        if depth > 64 {
            return false;
        }
        let literal = |x: Handle<Expr>| match k.exprs.get(x) {
            Some(Expr::Literal(cutec_ir::Literal::Int { value, .. })) => Some(*value),
            _ => None,
        };
        let is_tid =
            |x: Handle<Expr>| matches!(k.exprs.get(x), Some(Expr::Special(SpecialReg::ThreadIdx(cutec_ir::Dim::X))));
        match *e {
            Expr::Special(SpecialReg::ThreadIdx(_) | SpecialReg::LaneId) => false,
            Expr::Special(_) | Expr::Literal(_) | Expr::Param(_) | Expr::AllocPtr(_) | Expr::ReadVar(_) => true,
            // An operation's result: `elect.sync` differs by lane, and a load may differ between threads (another
            // thread may store between two loads of one address), as the IR's proof holds too.
            Expr::OpResult(_) => false,
            Expr::Binary { op: BinaryOp::Div, lhs, rhs } if is_tid(lhs) => {
                literal(rhs).is_some_and(|c| c > 0 && c % 128 == 0)
            }
            Expr::Binary { op: BinaryOp::Shr, lhs, rhs } if is_tid(lhs) => {
                literal(rhs).is_some_and(|c| (7..32).contains(&c))
            }
            _ => {
                let mut all = true;
                e.for_each_operand(|x| all &= self.warpgroup_uniform(x, depth + 1));
                all
            }
        }
    }

    /// Where the code being lowered may run on part of a warpgroup only: the innermost enclosing condition (or
    /// loop bounds) that may differ between its threads, else an earlier `return`, or a `break`/`continue` earlier
    /// in an enclosing loop's body, taken by some of its threads only; with what to say there.
    pub(super) fn warpgroup_split(&self) -> Option<(Span, &'static str)> {
        if let Some(&split) = self.divergent.last() {
            return Some(split);
        }
        if let Some(exit) = self.loop_exits.iter().flatten().next() {
            return Some((*exit, "some threads of the warpgroup may skip the rest of the loop's body here"));
        }
        self.left_early.map(|r| (r, "some threads of the warpgroup may have left the kernel here"))
    }

    /// E0312 at `span` when the warpgroup may be split there (see [`Lower::warpgroup_split`]).
    fn require_whole_warpgroup(&mut self, span: Span, what: &str) -> LResult<()> {
        let Some((at, why)) = self.warpgroup_split() else { return Ok(()) };
        self.fail(span, LowerError::WarpgroupDivergent { what: what.to_owned(), at, why })
    }

    /// The wgmma shape and the warpgroups of a tiled MMA the lowering supports: an m64nNk16 atom of `bf16` or
    /// `f16`, or m64nNk32 of fp8 (`e4m3`/`e5m2` in any mix), with `f32` accumulators, tiled `(wm, wn, 1)` over
    /// `wm * wn` warpgroups (at most 4).
    fn mma_shape(&mut self, id: ast::NodeId, span: Span) -> LResult<MmaTiling> {
        let Type::TiledMma(t) = self.type_of(id).clone() else {
            return self.internal(span, "a tiled MMA expected");
        };
        let atom = t.atom;
        let fp8 = |s: Scalar| match s {
            Scalar::E4M3 => Some(cutec_ir::Scalar::E4M3),
            Scalar::E5M2 => Some(cutec_ir::Scalar::E5M2),
            _ => None,
        };
        let (input, input_b, k) = match (atom.a, atom.b, fp8(atom.a), fp8(atom.b)) {
            (Scalar::BF16, Scalar::BF16, ..) => (cutec_ir::Scalar::BF16, cutec_ir::Scalar::BF16, 16),
            (Scalar::F16, Scalar::F16, ..) => (cutec_ir::Scalar::F16, cutec_ir::Scalar::F16, 16),
            (_, _, Some(a), Some(b)) => (a, b, 32),
            _ => return self.unsupported(span, format!("a wgmma of `{}` x `{}`", atom.a, atom.b)),
        };
        if atom.c != Scalar::F32 {
            return self.unsupported(span, format!("a wgmma accumulating in `{}`", atom.c));
        }
        let (wm, wn) = match t.tiling[..] {
            [Some(m), Some(n), Some(1)] if m >= 1 && n >= 1 && m * n <= 4 => (m as u32, n as u32),
            [Some(m), Some(n), Some(1)] if m >= 1 && n >= 1 => {
                return self.unsupported(span, "a tiled MMA over more than 4 warpgroups");
            }
            _ => return self.unsupported(span, "a tiled MMA tiled along K, or of a tiling not known at compile time"),
        };
        match (atom.m, atom.n, atom.k) {
            (Some(64), Some(n), Some(kk)) if kk == k && n % 8 == 0 && (8..=256).contains(&n) => {
                Ok(MmaTiling { shape: WgmmaShape { m: 64, n: n as u32, k: k as u32, input, input_b }, wm, wn })
            }
            _ => self.unsupported(
                span,
                format!("a wgmma shape other than m64nNk{k} with N a multiple of 8 up to 256 for these inputs"),
            ),
        }
    }

    /// The calling thread's warpgroup's place `(mi, ni)` in a tiled MMA over several warpgroups: warpgroup
    /// `w = (thread_idx.x / 128) % (wm * wn)` takes rows `64 mi..` and columns `N ni..` with `mi = w % wm`,
    /// `ni = w / wm`. Any `wm * wn` consecutive warpgroups (a whole CTA of them, or a role of them, wherever it
    /// starts) take each place once. `None` for one warpgroup.
    pub(super) fn mma_place(&mut self, t: MmaTiling) -> Option<(Handle<Expr>, Handle<Expr>)> {
        let w = t.wm * t.wn;
        if w == 1 {
            return None;
        }
        let tid = self.b.thread_idx_x();
        let seven = self.b.i32(7);
        let wg = self.b.binary(cutec_ir::BinaryOp::Shr, tid, seven);
        let count = self.b.i32(w as i32);
        let w = self.b.rem(wg, count);
        if t.wn == 1 {
            return Some((w, self.b.i32(0)));
        }
        if t.wm == 1 {
            return Some((self.b.i32(0), w));
        }
        let wm = self.b.i32(t.wm as i32);
        Some((self.b.rem(w, wm), self.b.div(w, wm)))
    }

    /// The part `(mi, ni)` of `rows x cols` tiles of `t` (`local_tile(t, (rows, cols), (mi, ni))`).
    pub(super) fn mma_part(
        &mut self,
        t: TensorView,
        tile: (i64, i64),
        at: (Value, Value),
        span: Span,
    ) -> LResult<TensorView> {
        let tiler = self.tiler_of(&Value::Tuple(vec![Value::Const(tile.0), Value::Const(tile.1)]), span)?;
        let coord = self.coord_of(&Value::Tuple(vec![at.0, at.1]), span)?;
        self.local_tile(&t, &tiler, coord, span)
    }

    /// E0354 unless the warpgroups that run a tiled MMA over `t.wm * t.wn` warpgroups are that many: those of
    /// the enclosing role, else those of the CTA (less the producer of a `warp_specialized` kernel).
    fn check_mma_warpgroups(&mut self, t: MmaTiling, span: Span) -> LResult<()> {
        use crate::error::MmaThreads;
        let want = t.wm * t.wn;
        if want == 1 {
            return Ok(());
        }
        let threads = match self.current_role {
            Some(r) => MmaThreads::Warpgroups { warpgroups: r.count, whose: "its role has" },
            None => match self.b.kernel().block_size {
                None => MmaThreads::Unknown,
                Some(b) => match b[0].saturating_mul(b[1]).saturating_mul(b[2]) {
                    n if n % 128 == 0 && self.b.kernel().warp_specialized => MmaThreads::Warpgroups {
                        warpgroups: (n / 128).saturating_sub(1),
                        whose: "the consumers of this warp-specialized block are",
                    },
                    n if n % 128 == 0 => MmaThreads::Warpgroups { warpgroups: n / 128, whose: "the block has" },
                    _ => MmaThreads::Block(b),
                },
            },
        };
        match threads {
            MmaThreads::Warpgroups { warpgroups, .. } if warpgroups == want => Ok(()),
            threads => self.fail(span, crate::error::LowerError::MmaWarpgroups { want, threads }),
        }
    }

    /// `mma.fragment_c(shape)`, `mma.fragment_a(shape)`, `mma.partition_c(t)` and `mma.partition_a(t)`.
    pub(super) fn method_call(&mut self, e: &ast::Expr, receiver: &ast::Expr, args: &[ast::Arg]) -> LResult<Value> {
        let method = match self.resolution(e.id) {
            Some(cutec_sema::Resolution::Method(m)) => *m,
            _ => return self.unsupported(e.span, "this method"),
        };
        let tiling = self.mma_shape(receiver.id, receiver.span)?;
        let shape = tiling.shape;
        let (rows, wide) = (64 * i64::from(tiling.wm), i64::from(shape.n * tiling.wn));
        let Some(arg) = args.first() else { return self.internal(e.span, "a method without argument") };
        let v = self.expr(&arg.value)?;
        self.at(e.span);
        if matches!(method, Method::FragmentA | Method::PartitionA) && tiling.wm * tiling.wn > 1 {
            return self.unsupported(e.span, "an A fragment of a tiled MMA over several warpgroups");
        }
        match method {
            Method::FragmentC | Method::FragmentA => {
                let size = match &v {
                    Value::Tuple(items) => match items.as_slice() {
                        [Value::Const(r), Value::Const(c)] => Some((*r, *c)),
                        _ => None,
                    },
                    _ => None,
                };
                let cols = size.filter(|&(r, _)| r == if method == Method::FragmentC { rows } else { 64 });
                let cols = cols.map(|(_, c)| c);
                let (elem, cols) = if method == Method::FragmentC {
                    let Some(_) = cols.filter(|&c| c == wide) else {
                        let msg = format!("an accumulator of another shape than ({rows}, {wide})");
                        return self.unsupported(arg.span, msg);
                    };
                    self.check_mma_warpgroups(tiling, e.span)?;
                    (Scalar::F32, i64::from(shape.n))
                } else {
                    let Some(k) = cols.filter(|&k| cutec_layout::wgmma_a_register_layout(k).is_ok()) else {
                        let msg = "an A fragment of another shape than (64, K) with K a multiple of 16 up to 256";
                        return self.unsupported(arg.span, msg);
                    };
                    (input_scalar(shape), k)
                };
                // The values of a thread, in the order of the layout's value mode (2, 2, cols / 8).
                let values = Layout::compact(IntTuple::Tuple(vec![
                    IntTuple::Int(Int::Static(2)),
                    IntTuple::Int(Int::Static(2)),
                    IntTuple::Int(Int::Static(cols / 8)),
                ]));
                let values = self.layout_result(values, e.span)?;
                let t = self.allocate(elem, cutec_sema::Space::Rmem, values, e.span)?;
                self.wgmma_fragments.insert(t.base, cols as u32);
                if method == Method::FragmentC {
                    self.mma_accumulators.insert(t.base, tiling);
                }
                Ok(Value::Tensor(t))
            }
            Method::PartitionC if tiling.wm * tiling.wn > 1 => {
                let Value::Tensor(t) = v else { return self.internal(arg.span, "a tensor expected") };
                self.partition_c(t, tiling, e, arg.span).map(Value::Tensor)
            }
            Method::PartitionC | Method::PartitionA => {
                let Value::Tensor(t) = v else { return self.internal(arg.span, "a tensor expected") };
                self.partition_one(method, t, shape, e, arg.span)
            }
            _ => self.unsupported(e.span, "this tiled MMA method"),
        }
    }

    /// `partition_c(t)` (or `partition_a`) of one warpgroup's 64-row tile `t`: the calling thread's values' places.
    pub(super) fn partition_one(
        &mut self,
        method: Method,
        t: TensorView,
        shape: WgmmaShape,
        e: &ast::Expr,
        span: Span,
    ) -> LResult<Value> {
        let size = t.layout.size().ok().and_then(|s| s.static_value());
        let rows = t.layout.mode(0).ok().and_then(|m| m.size().ok()).and_then(|s| s.static_value());
        let cols = size.filter(|_| rows == Some(64)).map(|s| s / 64);
        let tv = match method {
            Method::PartitionC => cols
                .filter(|&n| n == i64::from(shape.n))
                .and_then(|n| cutec_layout::wgmma_accumulator_layout(n).ok())
                .ok_or(format!("partitioning a C tile of another shape than (64, {})", shape.n)),
            _ => cols.and_then(|k| cutec_layout::wgmma_a_register_layout(k).ok()).ok_or(
                "partitioning an A tile of another shape than (64, K) with K a multiple of 16 up to 256".to_string(),
            ),
        };
        let tv = match tv {
            Ok(l) => l,
            Err(what) => return self.unsupported(span, what),
        };
        // `composition(t, TV)[thread % 128, _]`: the places in `t` of the calling thread's values.
        let composed = self.layout_apply(
            cutec_layout::LayoutOp::Composition,
            &[],
            &[Value::Tensor(t), Value::Layout(tv)],
            true,
            e.span,
        )?;
        let tid = self.b.thread_idx_x();
        let k = self.b.i32(127);
        let lane = self.b.binary(cutec_ir::BinaryOp::And, tid, k);
        let tile = match &composed {
            Value::Tensor(tile) => Some(tile.clone()),
            _ => None,
        };
        let view =
            self.index(composed, Value::Tuple(vec![Value::Scalar(lane, Scalar::Int), Value::Wildcard]), e.span)?;
        match (view, tile) {
            (Value::Tensor(v), Some(tile)) => Ok(Value::Tensor(self.record_warp_fragment(v, tile, lane, e.span)?)),
            (view, _) => Ok(view),
        }
    }

    /// `partition_c(t)` of a tiled MMA over several warpgroups: the calling warpgroup's part of `t` (see
    /// [`Lower::mma_place`]), partitioned like one warpgroup's.
    pub(super) fn partition_c(
        &mut self,
        t: TensorView,
        tiling: MmaTiling,
        e: &ast::Expr,
        span: Span,
    ) -> LResult<TensorView> {
        let (rows, cols) = (64 * i64::from(tiling.wm), i64::from(tiling.shape.n * tiling.wn));
        if static_dims2(&t) != Some((rows, cols)) {
            return self.unsupported(span, format!("partitioning a C tile of another shape than ({rows}, {cols})"));
        }
        let part = match self.mma_place(tiling) {
            Some((mi, ni)) => {
                let at = (Value::Scalar(mi, Scalar::Int), Value::Scalar(ni, Scalar::Int));
                self.mma_part(t, (64, i64::from(tiling.shape.n)), at, span)?
            }
            None => t,
        };
        match self.partition_one(Method::PartitionC, part, tiling.shape, e, span)? {
            Value::Tensor(v) => Ok(v),
            _ => self.internal(span, "a partition that is not a tensor"),
        }
    }

    /// E0316 unless `t` is a whole register array laid out as the wgmma A fragment of a 64 x `k` tile of
    /// `elem` (see [`Lower::wgmma_fragments`]).
    fn check_a_fragment(&mut self, t: &TensorView, elem: Scalar, k: i64, span: Span) -> LResult<()> {
        let cols = self.wgmma_fragments.get(&t.base).copied();
        let whole = t.offset == SymInt::Const(0)
            && cols.is_some_and(|c| t.layout.size().ok().and_then(|s| s.static_value()) == Some(i64::from(c / 2)));
        let (message, label) = match cols {
            _ if !whole => (
                "the A operand in registers is not laid out as a wgmma A fragment".to_string(),
                "a register tensor not made by `fragment_a` (or a part of one)".to_string(),
            ),
            _ if t.elem != elem => (
                format!("the A fragment holds `{}` values; this wgmma multiplies `{elem}`", t.elem),
                format!("`{}` values", t.elem),
            ),
            Some(c) if i64::from(c) != k => (
                format!("the A fragment is for a 64 x {c} tile, but B has K = {k}"),
                format!("a fragment of a 64 x {c} tile"),
            ),
            _ => return Ok(()),
        };
        self.fail(span, LowerError::AFragment { problem: message, label, k, elem: elem.to_string() })
    }

    /// `gemm(mma, a, b, acc)`: `wgmma.fence`, one `wgmma.mma_async` per k-step of the (64, BK) tile `a` and the
    /// (N, BK) tile `b` in shared memory, `wgmma.commit_group`. With `a` a register fragment (`fragment_a`), A
    /// comes from registers instead.
    pub(super) fn gemm_call(&mut self, e: &ast::Expr, args: &[ast::Arg]) -> LResult<Value> {
        let positional: Vec<&ast::Arg> = args.iter().filter(|a| a.name.is_none()).collect();
        let [mma, a, b, acc] = positional[..] else {
            return self.internal(e.span, "`gemm` takes four arguments");
        };
        let accumulate = match args.iter().find(|a| a.name.as_ref().is_some_and(|n| n.name == "accumulate")) {
            Some(x) => {
                let v = self.expr(&x.value)?;
                Some(self.scalar(&v, Scalar::Bool, x.span)?)
            }
            None => None,
        };
        let tiling = self.mma_shape(mma.value.id, mma.span)?;
        let shape = tiling.shape;
        self.require_whole_warpgroup(e.span, "`gemm`")?;
        let (va, vb, vacc) = (self.expr(&a.value)?, self.expr(&b.value)?, self.expr(&acc.value)?);
        let (Value::Tensor(mut ta), Value::Tensor(mut tb), Value::Tensor(tacc)) = (va, vb, vacc) else {
            return self.internal(e.span, "`gemm` of values that are not tensors");
        };
        self.at(e.span);
        // Over several warpgroups: each multiplies its rows of A by its columns of B into its accumulator.
        if let Some((mi, ni)) = self.mma_place(tiling) {
            self.check_mma_warpgroups(tiling, e.span)?;
            if ta.space == AddrSpace::Local {
                return self.unsupported(a.span, "A in registers for a tiled MMA over several warpgroups");
            }
            let (rows, cols) = (64 * i64::from(tiling.wm), i64::from(shape.n * tiling.wn));
            let (Some((ra, ka)), Some((rb, kb))) = (static_dims2(&ta), static_dims2(&tb)) else {
                let msg = "the operands of a tiled MMA over several warpgroups must be 2-D tiles of static shape";
                return self.fail(e.span, LowerError::WgmmaOperand { problem: msg.to_string() });
            };
            if ra != rows || rb != cols {
                let msg = format!(
                    "this tiled MMA multiplies a ({rows}, K) tile of A by an ({cols}, K) tile of B; the operands are \
                     ({ra}, {ka}) and ({rb}, {kb})"
                );
                return self.fail(e.span, LowerError::WgmmaOperand { problem: msg });
            }
            let zero = || Value::Const(0);
            if tiling.wm > 1 {
                ta = self.mma_part(ta, (64, ka), (Value::Scalar(mi, Scalar::Int), zero()), a.span)?;
            }
            if tiling.wn > 1 {
                tb = self.mma_part(tb, (i64::from(shape.n), kb), (Value::Scalar(ni, Scalar::Int), zero()), b.span)?;
            }
        }
        let elem = input_scalar(shape);
        // A in registers ("RS") or in shared memory like B ("SS").
        let a_regs = ta.space == AddrSpace::Local;
        if a_regs && elem.is_fp8() {
            return self.unsupported(a.span, "an fp8 A operand in registers (wgmma RS of e4m3/e5m2)");
        }
        let mut operands = vec![(&tb, b.span, "B", lang_scalar(shape.input_b))];
        if !a_regs {
            operands.insert(0, (&ta, a.span, "A", elem));
        }
        for (t, span, what, elem) in operands {
            if t.space != AddrSpace::Shared || t.elem != elem {
                let msg = format!("the {what} operand of this wgmma must be a `{elem}` tensor in shared memory");
                return self.fail(span, LowerError::WgmmaOperand { problem: msg });
            }
        }
        let accumulator = tacc.space == AddrSpace::Local
            && tacc.elem == Scalar::F32
            && tacc.offset == SymInt::Const(0)
            && tacc.layout.size().ok().and_then(|s| s.static_value()) == Some(i64::from(shape.n / 2));
        if !accumulator {
            let msg = format!("the accumulator must be a whole `mma.fragment_c((64, {}))`", shape.n);
            return self.fail(acc.span, LowerError::WgmmaOperand { problem: msg });
        }
        let (desc_b, steps_b) = self.operand_descriptor(&tb, i64::from(shape.n), b.span)?;
        // Per k-step: A's pointer and descriptor (none: the step's 8 values in the A fragment's registers).
        let mut steps_a: Vec<(Handle<Expr>, Option<GmmaDesc>)> = Vec::with_capacity(steps_b.len());
        if a_regs {
            self.check_a_fragment(&ta, elem, 16 * steps_b.len() as i64, a.span)?;
            let ty = cutec_ir::Type::Scalar(self.ir_scalar(elem, a.span)?);
            for j in 0..steps_b.len() {
                let at = self.b.i32(8 * j as i32);
                steps_a.push((self.b.offset(ta.base, at, ty), None));
            }
        } else {
            let (desc_a, starts) = self.operand_descriptor(&ta, 64, a.span)?;
            if starts.len() != steps_b.len() {
                let msg = format!("A has {} k-steps of {} and B {}", starts.len(), shape.k, steps_b.len());
                return self.fail(e.span, LowerError::WgmmaOperand { problem: msg });
            }
            for sa in starts {
                steps_a.push((self.operand_ptr(&ta, sa, e.span)?, Some(desc_a)));
            }
        }
        let one = self.b.bool(true);
        self.b.op(Op::WgmmaFence);
        // The k-steps of the tile, one group on the accumulator (one asm statement in codegen).
        let a_desc = steps_a.first().and_then(|(_, d)| *d);
        let mut steps = Vec::with_capacity(steps_b.len());
        for (j, ((a, _), sb)) in steps_a.into_iter().zip(&steps_b).enumerate() {
            let b = self.operand_ptr(&tb, *sb, e.span)?;
            // `accumulate = false` makes the first k-step overwrite the accumulator (scale-d 0); the others add.
            let scale_d = if j == 0 { accumulate.unwrap_or(one) } else { one };
            steps.push(WgmmaStep { a, b, scale_d });
        }
        let n_steps = steps.len();
        // The group's token: what it reads (A, B) and writes (the accumulator) asynchronously.
        let group = {
            use cutec_ir::effects::Resource;
            let k = self.b.kernel();
            let alloc = |p| Resource::of(k, p).alloc();
            let mut reads: Vec<_> = steps.iter().flat_map(|s| [alloc(s.a), alloc(s.b)]).flatten().collect();
            reads.sort_by_key(|a| a.index());
            reads.dedup();
            let writes = alloc(tacc.base).into_iter().collect();
            let loc = self.b.loc();
            self.b.kernel_mut().groups.append(cutec_ir::schedule::WgmmaGroup { reads, writes }, loc)
        };
        self.b.op(Op::Wgmma { shape, acc: tacc.base, a_desc, b_desc: desc_b, steps });
        self.b.op(Op::WgmmaCommit { group: Some(group) });
        // The warpgroups that run this `gemm`: those of the tiled MMA; of the role it is in; or of the block (but
        // the producer of a `warp_specialized` kernel, to which `specialize-warps` gives no MMA).
        let warpgroups = match (tiling.wm * tiling.wn, self.current_role) {
            (w, _) if w > 1 => Some(w),
            (_, Some(role)) => Some(role.count),
            (_, None) => match self.b.kernel().block_size {
                Some([x, 1, 1]) if x % 128 == 0 => Some(x / 128 - u32::from(self.b.kernel().warp_specialized)),
                _ => None,
            },
        };
        match warpgroups {
            Some(w) => self.count_mma(shape.n, shape.k, n_steps, w),
            None => self.flops.early_exit(),
        }
        Ok(Value::Unit)
    }

    /// The address of k-step `step` (bytes from the tile's first element, before any swizzle) of an operand
    /// whose offset is a multiple of its swizzle's period.
    fn operand_ptr(&mut self, t: &TensorView, step: i64, span: Span) -> LResult<Handle<Expr>> {
        let bytes = operand_bytes(t.elem);
        let idx = SymInt::op(cutec_sema::SymOp::Add, t.offset.clone(), SymInt::Const(step / bytes));
        let i = self.materialize(&idx, span)?;
        let elem = self.ir_scalar(t.elem, span)?;
        Ok(self.b.offset(t.base, i, cutec_ir::Type::Scalar(elem)))
    }

    /// The descriptor of an (mn, K) operand tile and the start of each k-step in bytes from the tile's first
    /// element, derived from its layout; the tile's buffer is aligned to the swizzle's period.
    fn operand_descriptor(&mut self, t: &TensorView, mn: i64, span: Span) -> LResult<(GmmaDesc, Vec<i64>)> {
        let bytes = operand_bytes(t.elem);
        let tile = match &t.swizzle {
            Some(sw) => cutec_layout::ComposedLayout::new(*sw, t.layout.clone()),
            None => cutec_layout::gmma::unswizzled(t.layout.clone()),
        };
        let d = match cutec_layout::gmma::operand_descriptor(&tile, bytes, mn, 32 / bytes) {
            Ok(d) => d,
            Err(why) => {
                return self.fail(
                    span,
                    LowerError::WgmmaOperand { problem: format!("this operand cannot feed a wgmma: {why}") },
                );
            }
        };
        if d.starts.len() != 1 {
            let msg = format!("the operand has {} blocks of {mn} rows; a wgmma takes one", d.starts.len());
            return self.fail(span, LowerError::WgmmaOperand { problem: msg });
        }
        let period = d.alignment;
        let div = self.divisor(&t.offset);
        if div != i64::MAX && (div.saturating_mul(bytes)) % period != 0 {
            let msg = format!(
                "the operand starts at {} of its buffer, which is not known to be a multiple of {} elements \
                 ({period} bytes), as its swizzle needs",
                self.describe_offset(&t.offset),
                period / bytes
            );
            return self.fail(span, LowerError::WgmmaOperand { problem: msg });
        }
        self.align_allocation(t.base, period as u32);
        self.check_shared_limit(AddrSpace::Shared, span)?;
        let desc = GmmaDesc {
            lbo: d.desc.lbo_bytes as u32,
            sbo: d.desc.sbo_bytes as u32,
            swizzle: d.desc.swizzle,
            mn_major: d.major == cutec_layout::gmma::Major::MN,
        };
        Ok((desc, d.k_step_offsets(0).to_vec()))
    }

    /// `setmaxnreg<N>()`: `.inc` when N is over the registers a thread has at entry, `.dec` otherwise.
    pub(super) fn setmaxnreg_call(&mut self, e: &ast::Expr) -> LResult<Value> {
        let n = self.generic_ints(e)?.first().copied().unwrap_or(0);
        let Some([x, y, z]) = self.b.kernel().block_size else {
            return self.unsupported(e.span, "`setmaxnreg` in a kernel whose block size is not a constant");
        };
        let threads = x * y * z;
        if threads % 128 != 0 {
            return self.unsupported(e.span, "`setmaxnreg` in a kernel whose threads are not whole warpgroups");
        }
        let Ok(regs) = u32::try_from(n) else { return self.internal(e.span, "a negative count") };
        self.require_whole_warpgroup(e.span, "`setmaxnreg`")?;
        self.at(e.span);
        self.b.op(Op::Setmaxnreg { regs, inc: regs > entry_registers(threads) });
        Ok(Value::Unit)
    }

    /// The `N` of `wgmma_wait<N>()` or `tma_store_wait<N>()`: the checker allows 0..=63 only, so anything else
    /// is reported, never clamped.
    pub(super) fn pending_groups(&mut self, e: &ast::Expr) -> LResult<u32> {
        let n = self.generic_ints(e)?.first().copied().unwrap_or(0);
        match u32::try_from(n) {
            Ok(n) if n <= 63 => Ok(n),
            _ => self.internal(e.span, format!("{n} pending groups, outside 0..=63")),
        }
    }

    /// `wgmma_wait<N>()`.
    pub(super) fn wgmma_wait_call(&mut self, e: &ast::Expr) -> LResult<Value> {
        let n = self.pending_groups(e)?;
        self.require_whole_warpgroup(e.span, "`wgmma_wait`")?;
        self.at(e.span);
        self.b.op(Op::WgmmaWait { pending: n });
        Ok(Value::Unit)
    }

    /// `store(src, dst)`: every element of `src` converted to `dst`'s element type and stored (predicated where
    /// `dst` may leave its tensor).
    pub(super) fn store_call(&mut self, src: &TensorView, dst: &TensorView, span: Span) -> LResult<()> {
        let n = src.layout.size().ok().and_then(|s| s.static_value());
        let m = dst.layout.size().ok().and_then(|s| s.static_value());
        let (Some(n), Some(m)) = (n, m) else { return self.unsupported(span, "`store` of tensors of dynamic size") };
        if n != m {
            return self.fail(span, LowerError::StoreSizeMismatch { from: n, to: m });
        }
        // `copy` converting on the way: it finds the vector accesses (pairs of accumulators are adjacent columns
        // of C) and predicates tiles at the edge once.
        self.transfer(src, dst, span)
    }
}

//! `stmatrix` for the stores of a warpgroup's fragment into shared memory: `store(acc, mma.partition_c(sc))`
//! with 16-bit elements in `sc` writes four 8 x 8 matrices per warp instruction instead of one 32-bit store per
//! pair of elements (16 instructions instead of 64 for a 64 x 256 accumulator: fewer instructions for the SM,
//! and for LLVM, whose dead-store and strength-reduction passes are quadratic in the stores of a block).
//!
//! The copy is chosen, never written: it is used where it writes exactly the elements `copy` would, which is
//! checked element by element on the partitioned tile for every thread of the warpgroup. The rest takes
//! `copy`'s vector path.
//!
//! `stmatrix.sync.aligned.m8n8.x4.shared.b16` (PTX ISA, "Warp-level matrix store instruction: stmatrix"): lane
//! `l` gives four registers, register `j` holding row `l / 4`, columns `2 (l % 4)` and `+1` of matrix `j`, and
//! the address of row `l % 8` of matrix `l / 8`, each row 16 contiguous, 16-byte-aligned bytes.

use super::copy::Affine;
use super::value::{CoordV, TensorView};
use super::{LResult, Lower};
use cutec_diagnostics::Span;
use cutec_ir::{AddrSpace, BinaryOp, Expr, Handle, Op, Type};
use cutec_layout::Layout;
use cutec_sema::SymInt;

/// The thread's view `tile[thread, _]` that `mma.partition_c` made: what `stmatrix` needs to know of the other
/// threads' elements. Recorded by the view's offset (a fresh IR value); `layout` tells a view derived from it
/// (a slice keeps the offset of its first element) from the view itself.
#[derive(Clone, Debug)]
pub(crate) struct WarpFragment {
    pub layout: Layout,
    /// Mode 0: the warpgroup's 128 threads; the other modes: each thread's values.
    pub tile: TensorView,
    /// The thread's index in the warpgroup (`thread_idx.x % 128`).
    pub thread: Handle<Expr>,
}

/// Threads in a warpgroup, lanes in a warp, values per `stmatrix.x4` per lane.
const THREADS: i64 = 128;
const LANES: i64 = 32;
const GROUP: usize = 8;

impl Lower<'_> {
    /// Records that `view` is `tile[thread, _]` (see [`WarpFragment`]); its offset becomes an IR value of its
    /// own if it is not one, which identifies it.
    pub(super) fn record_warp_fragment(
        &mut self,
        mut view: TensorView,
        tile: TensorView,
        thread: Handle<Expr>,
        span: Span,
    ) -> LResult<TensorView> {
        if !matches!(view.offset, SymInt::Value { .. }) {
            let div = self.divisor(&view.offset);
            let h = self.materialize(&view.offset, span)?;
            view.offset = self.sym_value(h, div);
        }
        if let SymInt::Value { id, .. } = view.offset {
            self.warp_fragments.insert(id, WarpFragment { layout: view.layout.clone(), tile, thread });
        }
        Ok(view)
    }

    /// The copy of `src` (registers) into `dst` as `stmatrix.x4` instructions, when they write exactly what
    /// the element-wise copy writes; `false` (nothing emitted) otherwise.
    pub(super) fn try_stmatrix(
        &mut self,
        src: &TensorView,
        dst: &TensorView,
        (so, d_o): (&[Affine], &[Affine]),
        (elem, to_elem): (cutec_ir::Scalar, cutec_ir::Scalar),
        span: Span,
    ) -> LResult<bool> {
        // A warp collective: every lane must run it, so not under a condition that may split a warp.
        if dst.space != AddrSpace::Shared || src.space != AddrSpace::Local || to_elem.size_bytes() != 2 {
            return Ok(false);
        }
        if self.warpgroup_split().is_some() || so.is_empty() || !so.len().is_multiple_of(GROUP) {
            return Ok(false);
        }
        let SymInt::Value { id, .. } = dst.offset else { return Ok(false) };
        let Some(frag) = self.warp_fragments.get(&id).cloned() else { return Ok(false) };
        if frag.layout != dst.layout || so.iter().chain(d_o).any(|a| !a.terms.is_empty()) {
            return Ok(false);
        }
        let Some(plan) = self.stmatrix_plan(&frag.tile, d_o) else { return Ok(false) };
        let (Ok(step_odd), Ok(step_high)) = (i32::try_from(plan.step_odd), i32::try_from(plan.step_high)) else {
            return Ok(false);
        };
        // Lane l addresses row l % 8 of matrix l / 8: the row thread `4 (l % 8)` of its warp holds, at the
        // matrix's first value.
        let b = &mut self.b;
        let t = frag.thread;
        let (c96, c7, c2, c3) = (b.i32(96), b.i32(7), b.i32(2), b.i32(3));
        let warp = b.binary(BinaryOp::And, t, c96);
        let row = b.binary(BinaryOp::And, t, c7);
        let row = b.binary(BinaryOp::Shl, row, c2);
        let row_thread = b.binary(BinaryOp::Or, warp, row);
        let matrix = b.binary(BinaryOp::Shr, t, c3);
        let matrix = b.binary(BinaryOp::And, matrix, c3);
        let (c1, k_row, k_col) = (b.i32(1), b.i32(step_odd), b.i32(step_high));
        let odd = b.binary(BinaryOp::And, matrix, c1);
        let odd = b.mul(odd, k_row);
        let high = b.binary(BinaryOp::Shr, matrix, c1);
        let high = b.mul(high, k_col);
        let within = b.add(odd, high);
        let row_thread = self.sym_value(row_thread, 4);
        let threads = &plan.threads;
        let thread_part = self.crd2idx(&CoordV::Int(row_thread), threads.shape(), threads.stride(), span)?;
        let within = self.sym_value(within, SymInt::gcd(plan.step_odd.max(1), plan.step_high.max(1)));
        let start = self.idx_add(&frag.tile.offset, &thread_part, span)?;
        let start = self.idx_add(&start, &within, span)?;
        let pair = Type::vector(elem, 2);
        for (q, group) in so.chunks(GROUP).enumerate() {
            let idx = self.idx_add(&start, &SymInt::Const(d_o[q * GROUP].konst), span)?;
            let ptr = self.offset_ptr(&frag.tile, &idx, to_elem, span)?;
            let mut values = Vec::with_capacity(4);
            for j in 0..4 {
                // Element by element from the registers (a register array accessed only so is promoted to
                // scalars, without the vector shuffling a two-element access costs LLVM), converted as a pair
                // (`cvt.rn.bf16x2.f32`).
                let mut parts = Vec::with_capacity(2);
                for a in &group[2 * j..2 * j + 2] {
                    let from = self.affine_ptr(src, a, elem, span)?;
                    parts.push(self.b.load(from, Type::Scalar(elem), elem.size_bytes()));
                }
                let v = self.b.compose(pair, parts);
                values.push(if to_elem == elem { v } else { self.b.convert(v, to_elem) });
            }
            self.b.op(Op::Stmatrix { ptr, values });
        }
        Ok(true)
    }

    /// Whether `stmatrix.x4` writes each group of 8 values of every thread of `tile` where `d_o` puts them, and
    /// the offsets of a group's matrices from its first (`d_o[8q + 2j] = d_o[8q] + (j % 2) step_odd + (j / 2)
    /// step_high`, the same for every group).
    fn stmatrix_plan(&self, tile: &TensorView, d_o: &[Affine]) -> Option<StmatrixPlan> {
        let threads = tile.layout.mode(0).ok()?;
        if threads.size().ok()?.static_value() != Some(THREADS) || tile.base_align < 16 {
            return None;
        }
        // Where thread t's value i lands, relative to the tile's offset: the swizzle commutes with adding an
        // offset that is a multiple of its period.
        let period = tile.swizzle.as_ref().map_or(1, cutec_layout::Swizzle::period);
        let align = period.max(8);
        let div = self.divisor(&tile.offset);
        if div != i64::MAX && div % align != 0 {
            return None;
        }
        let thread_offsets: Vec<i64> = (0..THREADS).map(|t| threads.index(t)).collect::<Result<_, _>>().ok()?;
        let at = |t: i64, i: usize| -> i64 {
            let x = thread_offsets[t as usize].wrapping_add(d_o[i].konst);
            match &tile.swizzle {
                Some(sw) => sw.apply(x),
                None => x,
            }
        };
        let groups = d_o.len() / GROUP;
        let step_odd = d_o[2].konst - d_o[0].konst;
        let step_high = d_o[4].konst - d_o[0].konst;
        for q in 0..groups {
            let first = q * GROUP;
            for j in 0..4usize {
                let expect = d_o[first].konst + (j as i64 % 2) * step_odd + (j as i64 / 2) * step_high;
                if d_o[first + 2 * j].konst != expect {
                    return None;
                }
                let v = first + 2 * j;
                for w in 0..THREADS / LANES {
                    let rows: Vec<i64> = (0..8).map(|r| at(w * LANES + 4 * r, v)).collect();
                    if rows.iter().any(|r| r.rem_euclid(8) != 0) {
                        return None;
                    }
                    for l in 0..LANES {
                        let t = w * LANES + l;
                        let here = at(t, v);
                        if here != rows[(l / 4) as usize] + 2 * (l % 4) || at(t, v + 1) != here + 1 {
                            return None;
                        }
                    }
                }
            }
        }
        Some(StmatrixPlan { threads, step_odd, step_high })
    }
}

/// How a group's four matrices lie from its first value (see [`Lower::stmatrix_plan`]).
struct StmatrixPlan {
    /// The tile's thread mode.
    threads: Layout,
    step_odd: i64,
    step_high: i64,
}

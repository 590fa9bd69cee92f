//! `pipeline-loops`: a `for` loop marked `pipelined(stages = S)` becomes a ring of S stages.
//!
//! The loop's body starts with (or contains, at its top level) unscheduled copies `tma.load.unscheduled %tile,
//! %map[coords]` into tiles of shared memory that the rest of the body reads. Each tile's allocation grows to
//! S stages (each stage aligned as the tile asks, so a swizzled tile keeps its phase), and iteration `i` of the
//! loop uses stage `g % S` of every tile, where `g = base + i` counts the iterations of every entry of the loop
//! (a kernel variable `$ring`, so that a loop entered again, inside an outer loop, continues the phases). Per
//! stage, `full[s]` (1 arrival and the copies' bytes) says the stage has landed and `empty[s]` (one arrival per
//! consumer warp) that it has been read; iteration `g` waits on `full` for the phase parity `(g / S) & 1`, and
//! the copy of iteration `g` waits on `empty` for the parity `(g / S + 1) & 1` (on the first pass over the ring
//! the barrier is fresh and the wait for the phase before it returns at once).
//!
//! When the body issues wgmma groups, they stay one deep in flight: after the body, `wgmma.wait_group 1` makes
//! the previous iteration's group complete, and that iteration's stage is released then; after the loop,
//! `wgmma.wait_group 0` and the last stage. Otherwise the body's reads are done at its end, and its stage is
//! released there.
//!
//! Who issues the copies: thread 0, S - 1 iterations ahead (a prologue of S - 1 before the loop, one at the end
//! of each iteration), or, in a `warp_specialized` kernel, a `producer` region placed before the loop that loops
//! over every iteration ahead of the consumers, bounded only by the ring (`specialize-warps` gives it its
//! warpgroup and registers). Trip counts of 0, 1 and fewer than S are correct: every copy is guarded by the trip
//! count.

use super::emit::Gen;
use super::{Kernel, Refusal, mbarriers, new_var, refuse, threads_1d};
use crate::arena::{Handle, Loc};
use crate::expr::{BinaryOp, CompareOp, Expr};
use crate::module::{Module, Var};
use crate::op::Op;
use crate::passes::hazards::{Hazard, HazardError, Uneven};
use crate::passes::{Analyses, Pass, PassError};
use crate::schedule::{Filler, Release};
use crate::stmt::{Block, Role, RoleRegion, Stmt};
use crate::visit::{ForLoop, Out, Rewrite, walk_block};
use std::collections::{HashMap, HashSet};

pub struct PipelineLoops;

pub(super) const PASS: &str = "pipeline-loops";

impl Pass for PipelineLoops {
    fn name(&self) -> &'static str {
        PASS
    }
    fn description(&self) -> &'static str {
        "give the tma_loads of loops marked pipelined(stages = S) a ring of S stages with full and empty mbarriers"
    }
    fn run(&self, module: &mut Module, analyses: &mut Analyses) -> Result<(), PassError> {
        // Which values every thread of the CTA agrees on, in each kernel with a pipelined loop, over the whole body
        // before any change (the handles stay valid: the pass only appends expressions, and renumbers at the end).
        let mut uniform_sets = Vec::new();
        for (i, k) in module.kernels.iter().enumerate() {
            let mut pipelined = false;
            k.body.visit(&mut |s| pipelined |= matches!(s, Stmt::For { stages: Some(_), .. }));
            let uniform: Option<HashSet<_>> = match pipelined {
                true => analyses
                    .uniformity(module, i)
                    .map(|u| k.exprs.handles().filter(|h| u.expr(*h).granule.is_none()).collect()),
                false => None,
            };
            uniform_sets.push(uniform);
        }
        for (k, uniform) in module.kernels.iter_mut().zip(uniform_sets) {
            let Some(uniform) = uniform else { continue };
            super::exits::check(PASS, k, &uniform)?;
            let body = std::mem::take(&mut k.body);
            let mut prefix = Block::new();
            let at = Where { depth: 0, in_role: false, split: false, top_loop: false };
            let mut pipeliner = Pipeliner { k, prefix: &mut prefix, at, uniform: &uniform, beside: None };
            let body = pipeliner.block(body)?;
            // A ring the cluster's CTAs share: no CTA exits while another may still copy into it or release
            // its stages.
            let shared = prefix.stmts().iter().any(|s| matches!(s, Stmt::Op { op: Op::ClusterBarrier, .. }));
            let mut whole = prefix;
            whole.append(body);
            if shared {
                whole.push(Stmt::Op { result: None, op: Op::ClusterBarrier }, k.loc);
            }
            k.body = whole;
            crate::passes::compact::compact(k);
        }
        Ok(())
    }
}

/// Where a block is: its nesting, inside a role region or not, and whether the threads of the CTA may
/// disagree on reaching it (a condition or loop bounds not proved the same in every thread).
#[derive(Clone, Copy)]
struct Where {
    depth: usize,
    in_role: bool,
    split: bool,
    /// The block is the body of a `for` at the kernel's top level (a loop over tiles, say).
    top_loop: bool,
}

/// The rewrite of the pipelined loops: the barriers' initialisations go to `prefix`, the kernel's first
/// statements; `at` is where the block being rewritten is; `uniform` holds the values every thread of the CTA
/// agrees on; `beside` the producer's copies of the tiles beside the pipelined loop of the block being rewritten
/// (in a warp-specialized kernel), which that loop's schedule takes.
struct Pipeliner<'a> {
    k: &'a mut Kernel,
    prefix: &'a mut Block,
    at: Where,
    uniform: &'a HashSet<Handle<Expr>>,
    beside: Option<Block>,
}

impl Pipeliner<'_> {
    /// Rewrites `block` at `inner`, then comes back to where it was.
    fn nested(&mut self, block: Block, inner: Where) -> Result<Block, PassError> {
        let (at, beside) = (std::mem::replace(&mut self.at, inner), self.beside.take());
        let out = self.block(block);
        (self.at, self.beside) = (at, beside);
        out
    }

    /// Where the blocks of a statement at `self.at` are: one deeper, inside a role if it is one, split if its
    /// condition or bounds (`bounds`) may differ between threads, the body of a top-level loop if it is one.
    fn inner(&self, bounds: &[Handle<Expr>], role: bool, is_for: bool) -> Where {
        let split = self.at.split || bounds.iter().any(|h| !self.uniform.contains(h));
        let top_loop = self.at.depth == 0 && is_for;
        Where { depth: self.at.depth + 1, in_role: self.at.in_role || role, split, top_loop }
    }
}

impl Rewrite for Pipeliner<'_> {
    type Error = PassError;

    fn block(&mut self, block: Block) -> Result<Block, PassError> {
        // In a warp-specialized kernel, copies beside the pipelined loop go to its producer too.
        let block = if !self.at.in_role && super::tiles::applies(self.k, &block) {
            let (block, producer) = super::tiles::rewrite(self.k, block, self.prefix, self.k.loc)?;
            self.beside = Some(producer);
            block
        } else {
            block
        };
        walk_block(self, block)
    }

    fn for_(&mut self, f: ForLoop, mut out: Out<'_>) -> Result<(), PassError> {
        let loc = out.loc();
        let Some(stages) = f.stages else {
            let inner = self.inner(&[f.start, f.end], false, true);
            let body = self.nested(f.body, inner)?;
            out.push(ForLoop { body, ..f }.into());
            return Ok(());
        };
        let k = &*self.k;
        if self.at.in_role {
            return Err(refuse(PASS, k, loc, Refusal::PipelinedInRole));
        }
        // A loop that runs no iteration has nothing to pipeline; a ring for it would be barriers nobody waits on.
        let literal = |h| match k.exprs.get(h) {
            Some(Expr::Literal(crate::expr::Literal::Int { value, .. })) => Some(*value),
            _ => None,
        };
        if let (Some(a), Some(b)) = (literal(f.start), literal(f.end))
            && a >= b
        {
            return Err(refuse(PASS, k, loc, Refusal::NoIteration { start: a, end: b }));
        }
        // Thread 0 issues every copy and all threads wait for them: all must run the same iterations.
        if self.at.split || !self.uniform.contains(&f.start) || !self.uniform.contains(&f.end) {
            let why = if self.at.split { Refusal::NotReachedByAll } else { Refusal::BoundsDiffer };
            return Err(refuse(PASS, k, loc, why));
        }
        // The producer's loop only issues copies: a statement of the body that every thread runs would miss
        // warpgroup 0.
        if k.warp_specialized
            && let Some(at) = super::placement::per_thread_in_ring(k, &f.body)
        {
            return Err(refuse(PASS, k, at, Refusal::PerThreadInRing));
        }
        let ForLoop { var, start, end, step, unroll, body, .. } = f;
        let inner = Where { depth: self.at.depth + 1, top_loop: false, ..self.at };
        let body = self.nested(body, inner)?;
        let (depth, top_loop) = (self.at.depth, self.at.top_loop);
        let lp = Loop { var, start, end, step, unroll, stages, body, loc, depth, top_loop };
        let beside = self.beside.take();
        out.append(pipeline(self.k, lp, self.prefix, beside)?);
        Ok(())
    }

    fn if_(&mut self, cond: Handle<Expr>, accept: Block, reject: Block, mut out: Out<'_>) -> Result<(), PassError> {
        let inner = self.inner(&[cond], false, false);
        let accept = self.nested(accept, inner)?;
        let reject = self.nested(reject, inner)?;
        out.push(Stmt::If { cond, accept, reject });
        Ok(())
    }

    fn while_(&mut self, header: Block, cond: Handle<Expr>, body: Block, mut out: Out<'_>) -> Result<(), PassError> {
        let inner = self.inner(&[cond], false, false);
        let header = self.nested(header, inner)?;
        let body = self.nested(body, inner)?;
        out.push(Stmt::While { header, cond, body });
        Ok(())
    }

    fn roles(&mut self, regions: Vec<RoleRegion>, mut out: Out<'_>) -> Result<(), PassError> {
        let inner = self.inner(&[], true, false);
        let mut rewritten = Vec::with_capacity(regions.len());
        for r in regions {
            let body = self.nested(r.body, inner)?;
            rewritten.push(RoleRegion { body, ..r });
        }
        out.push(Stmt::Roles(rewritten));
        Ok(())
    }
}

/// A loop to pipeline.
struct Loop {
    var: Handle<Var>,
    start: Handle<Expr>,
    end: Handle<Expr>,
    step: i64,
    unroll: crate::stmt::Unroll,
    stages: u32,
    body: Block,
    loc: Loc,
    depth: usize,
    /// In the body of a `for` at the kernel's top level.
    top_loop: bool,
}

/// One copy of the loop: its tile's allocation, where it lands in the tile, its map and coordinates, and with
/// multicast its mask and the number of CTAs it lands in (each of which copies a slice of the tile). A tile
/// wider than a box (an MN-major tile of B wider than its swizzle's rows) is filled by several copies, each into
/// its own slice.
pub(super) struct Copy {
    pub(super) tile: Handle<crate::module::Alloc>,
    /// The index of the tile in the ring's stages.
    pub(super) stage: usize,
    pub(super) dst: Handle<Expr>,
    pub(super) map: Handle<Expr>,
    pub(super) coords: Vec<Handle<Expr>>,
    pub(super) multicast: Option<(Handle<Expr>, u32)>,
    pub(super) loc: Loc,
}

/// A ring's tiles: each allocation's stage length in elements, its element type and its address.
struct Stage {
    alloc: Handle<crate::module::Alloc>,
    elems: i64,
    elem: crate::types::Scalar,
    ptr: Handle<Expr>,
}

/// `beside`: what the producer of a warp-specialized kernel runs first, for the copies beside the loop
/// ([`tiles`](super::tiles)).
fn pipeline(k: &mut Kernel, lp: Loop, prefix: &mut Block, beside: Option<Block>) -> Result<Block, PassError> {
    let s = i64::from(lp.stages);
    let loc = lp.loc;
    if s < 2 {
        return Err(refuse(PASS, k, loc, Refusal::TooFewStages { stages: s }));
    }
    let Some(threads) = threads_1d(k) else {
        return Err(refuse(PASS, k, loc, Refusal::PipelinedBlockNot1d));
    };
    let ws = k.warp_specialized;
    // The producer's region goes where the loop is: at the top level, or in a top-level loop (over tiles, say),
    // which `specialize-warps` then runs in both roles.
    if ws && !(lp.depth == 0 || lp.top_loop) {
        return Err(refuse(PASS, k, loc, Refusal::ProducerLoopNested));
    }
    if ws && (!threads.is_multiple_of(128) || threads < 256) {
        return Err(refuse(PASS, k, loc, Refusal::ProducerBlock { threads }));
    }
    // The copies: at the top level of the body, each into its own tile.
    let (mut copies, rest) = take_copies(k, lp.body, loc)?;
    if copies.is_empty() {
        return Err(refuse(PASS, k, loc, Refusal::NoCopies));
    }
    // Every iteration commits the same number of wgmma groups, at least one, when it commits any: the ring
    // releases a stage after the next iteration's group (`check-schedule` proves it again on the result).
    let asynchronous = has_wgmma(&rest);
    match crate::passes::hazards::groups_per_pass(&rest, loc) {
        Err((why, at)) if asynchronous || why == Uneven::Exit => return Err(hazard(k, why, at, loc)),
        _ => {}
    }
    let defined = defined_in(&rest, &copies);
    for c in &copies {
        for &x in c.coords.iter().chain([&c.dst]) {
            cloneable(k, x, &defined, lp.var)
                .map_err(|why| refuse(PASS, k, c.loc, Refusal::CopyCoordinates { why }))?;
            if c.multicast.is_some() {
                cluster_uniform(k, x, &mut HashSet::new())
                    .map_err(|why| refuse(PASS, k, c.loc, Refusal::MulticastNotUniform { why }))?;
            }
        }
    }
    let cluster = k.cluster.map_or(1, |[x, y, z]| x * y * z);
    let multicast = copies.iter().filter_map(|c| c.multicast).map(|(_, n)| n).max();
    if let Some(n) = multicast
        && n != cluster
    {
        return Err(refuse(PASS, k, loc, Refusal::MulticastPart { n, cluster }));
    }
    // Remote releases: every CTA's consumers release each CTA's stage, since each CTA's copies land in all.
    let peers = if multicast.is_some() { cluster } else { 1 };
    // Bytes per stage: what the barrier expects.
    let mut bytes = 0u64;
    for c in &copies {
        bytes += super::box_bytes(PASS, k, c.map, c.loc)? * u64::from(c.multicast.map_or(1, |(_, n)| n));
    }
    // The stages: each tile's allocation S times, every stage aligned as the tile asks.
    let mut before = k.shared_bytes();
    let mut stages = Vec::new();
    for i in 0..copies.len() {
        let c = &copies[i];
        if let Some(at) = stages.iter().position(|st: &Stage| st.alloc == c.tile) {
            copies[i].stage = at;
            continue;
        }
        super::slices::slices_cover(k, &copies, c.tile)?;
        let (tile, at) = (copies[i].tile, copies[i].loc);
        // The tile's one stage was counted with the kernel's other shared memory.
        before = before.saturating_sub(k.allocs.get(tile).map_or(0, |a| a.size_bytes()));
        let elems = super::grow_to_stages(PASS, k, tile, s, at)?;
        let elem = k.allocs.get(tile).map_or(crate::types::Scalar::F32, |a| a.elem);
        let ptr = k.exprs.append(Expr::AllocPtr(tile), loc);
        stages.push(Stage { alloc: tile, elems, elem, ptr });
        copies[i].stage = stages.len() - 1;
    }
    let full = mbarriers(k, "ring_full", lp.stages, loc);
    let empty = mbarriers(k, "ring_empty", lp.stages, loc);
    let shared = k.shared_bytes();
    if shared > u64::from(cutec_target::MAX_SHARED_BYTES) {
        let ring = shared.saturating_sub(before);
        return Err(refuse(PASS, k, loc, Refusal::RingTooLarge { stages: s, bytes, ring, before, shared }));
    }
    let ring = new_var(k, "ring", loc);
    // One arrival per consumer warp: every warp runs the loop, but the producer's in a warp-specialized kernel.
    let consumer_warps = if ws { (threads - 128) / 32 } else { threads / 32 } * peers;
    // The kernel's first statements: the counter, the barriers, and a barrier that publishes them.
    {
        let mut g = Gen::new(k, loc);
        let zero = g.int(0);
        g.write(ring, zero);
        let tid = g.thread_x();
        let first = g.cmp_c(CompareOp::Eq, tid, 0);
        g.if_(first, |g| {
            for st in 0..s {
                let i = g.int(st);
                let f = g.offset(full, i, crate::types::Scalar::I64);
                let one = g.int(1);
                g.op(Op::MbarrierInit { bar: f, count: one });
                let e = g.offset(empty, i, crate::types::Scalar::I64);
                let n = g.int(i64::from(consumer_warps));
                g.op(Op::MbarrierInit { bar: e, count: n });
            }
            g.op(Op::FenceMbarrierInit);
        });
        if peers > 1 {
            // Every CTA's barriers are initialised before any CTA of the cluster arrives on them or copies into
            // its stages.
            g.op(Op::ClusterBarrier);
        } else {
            g.barrier();
        }
        prefix.append(g.finish());
    }
    let bytes = i64::try_from(bytes).unwrap_or(i64::MAX);
    let release = |g: &mut Gen<'_>, e: Handle<Expr>| {
        if peers > 1 {
            for r in 0..i64::from(peers) {
                let cta = g.int(r);
                g.op(Op::MbarrierArriveRemote { bar: e, cta });
            }
        } else {
            g.op(Op::MbarrierArrive { bar: e });
        }
    };
    let ring_ = Ring {
        s,
        full,
        empty,
        bytes,
        stages: &stages,
        copies: &copies,
        defined: &defined,
        var: lp.var,
        start: lp.start,
        step: lp.step,
    };
    let full_barrier = super::declare_mbarriers(PASS, k, full, 1, u64::try_from(bytes).unwrap_or(u64::MAX), loc)?;
    let empty_barrier = super::declare_mbarriers(PASS, k, empty, consumer_warps, 0, loc)?;
    k.rings.append(
        crate::schedule::Ring {
            tiles: stages.iter().map(|st| st.alloc).collect(),
            stages: lp.stages,
            full: full_barrier,
            empty: empty_barrier,
            filler: if ws { Filler::Producer } else { Filler::Thread0 },
            release: if asynchronous { Release::AfterGroup } else { Release::EndOfIteration },
        },
        loc,
    );
    let mut g = Gen::new(k, loc);
    // The trip count n = max(0, ceil((end - start) / step)) and the ring's position at entry.
    let span = g.bin(BinaryOp::Sub, lp.end, lp.start);
    let trips = if lp.step == 1 {
        span
    } else {
        let up = g.bin_c(BinaryOp::Add, span, lp.step - 1);
        g.bin_c(BinaryOp::Div, up, lp.step)
    };
    let positive = g.cmp_c(CompareOp::Gt, span, 0);
    let zero = g.int(0);
    let n = g.select(positive, trips, zero);
    let base = g.read(ring);
    if ws {
        // The producer: one thread issues every copy, as far ahead as the ring lets it.
        let j = new_var(g.k, "ring_j", loc);
        let body = g.block(|g| {
            if let Some(first) = beside {
                g.append(first);
            }
            let base = g.read(ring);
            let tid = g.thread_x();
            let first = g.cmp_c(CompareOp::Eq, tid, 0);
            g.if_(first, |g| {
                let zero = g.int(0);
                let copies = g.block(|g| {
                    let jv = g.read(j);
                    ring_.fill(g, base, jv);
                });
                g.push(Stmt::For {
                    var: j,
                    start: zero,
                    end: n,
                    step: 1,
                    unroll: crate::stmt::Unroll::Disable,
                    stages: None,
                    body: copies,
                });
            });
            let next = g.bin(BinaryOp::Add, base, n);
            g.write(ring, next);
        });
        let role = Role { kind: crate::schedule::RoleKind::Producer, first: 0, count: 1 };
        g.push(Stmt::Roles(vec![RoleRegion { role, regs: None, body, at: loc }]));
    } else {
        // The prologue: the first S - 1 copies.
        let tid = g.thread_x();
        let first = g.cmp_c(CompareOp::Eq, tid, 0);
        g.if_(first, |g| {
            for j in 0..s - 1 {
                let jv = g.int(j);
                let ok = g.cmp(CompareOp::Lt, jv, n);
                g.if_(ok, |g| ring_.fill(g, base, jv));
            }
        });
    }
    // The consumers' loop.
    let body = g.block(|g| {
        let kv = g.read(lp.var);
        let from = g.bin(BinaryOp::Sub, kv, lp.start);
        let i = if lp.step == 1 { from } else { g.bin_c(BinaryOp::Div, from, lp.step) };
        let at = g.bin(BinaryOp::Add, base, i);
        let st = g.bin_c(BinaryOp::Rem, at, s);
        let pass = g.bin_c(BinaryOp::Div, at, s);
        let parity = g.bin_c(BinaryOp::And, pass, 1);
        let mut memo = HashMap::new();
        for x in &stages {
            let off = g.bin_c(BinaryOp::Mul, st, x.elems);
            let p = g.offset(x.ptr, off, x.elem);
            // Every address of the tile in the body now means this stage's.
            for (h, e) in g.k.exprs.iter() {
                if *e == Expr::AllocPtr(x.alloc) {
                    memo.insert(h, p);
                }
            }
        }
        let f = g.offset(full, st, crate::types::Scalar::I64);
        g.op(Op::MbarrierWait { bar: f, parity });
        let rest = super::substitute(g.k, rest, &mut memo);
        g.append(rest);
        let lane = g.lane();
        let lane0 = g.cmp_c(CompareOp::Eq, lane, 0);
        if asynchronous {
            // The previous group is complete: its stage may be filled again.
            g.op(Op::WgmmaWait { pending: 1 });
            let later = g.cmp_c(CompareOp::Gt, i, 0);
            g.if_(later, |g| {
                g.if_(lane0, |g| {
                    let prev = g.bin_c(BinaryOp::Sub, at, 1);
                    let ps = g.bin_c(BinaryOp::Rem, prev, s);
                    let e = g.offset(empty, ps, crate::types::Scalar::I64);
                    release(g, e);
                });
            });
        } else {
            // One lane of each warp releases the stage once the whole warp has read it: `elect.sync` converges
            // the warp first (lane 0 alone could run iterations ahead of lanes still spinning in the wait, and
            // release a stage they have not read; as `tiles.rs` does).
            let elected = g.k.exprs.append(Expr::OpResult(crate::types::Type::I1), loc);
            g.push(Stmt::Op { result: Some(elected), op: Op::ElectOne });
            g.if_(elected, |g| {
                let e = g.offset(empty, st, crate::types::Scalar::I64);
                release(g, e);
            });
        }
        if !ws {
            // The copy S - 1 iterations ahead, into the stage released last.
            let j = g.bin_c(BinaryOp::Add, i, s - 1);
            let tid = g.thread_x();
            let first = g.cmp_c(CompareOp::Eq, tid, 0);
            g.if_(first, |g| {
                let ok = g.cmp(CompareOp::Lt, j, n);
                g.if_(ok, |g| ring_.fill(g, base, j));
            });
        }
    });
    let consumers =
        Stmt::For { var: lp.var, start: lp.start, end: lp.end, step: lp.step, unroll: lp.unroll, stages: None, body };
    if asynchronous {
        // The last group completes inside the branch that ran the loop: where a loop that ran no iteration
        // joins it, no wgmma is in flight. (Waiting after the join makes ptxas serialize every wgmma of the
        // loop, C7514: it sees the accumulators read on the path that skipped the loop.) The branch tests the
        // loop's own entry condition, `start < end`, rather than n > 0, its equal: LLVM then folds the loop's
        // entry test into the branch, where with n > 0 it kept a second path that skips the loop, joined before
        // the wait (C7515 with two consumer warpgroups in gemm_splitk).
        let some = if lp.step > 0 { g.cmp(CompareOp::Lt, lp.start, lp.end) } else { g.cmp_c(CompareOp::Gt, n, 0) };
        g.if_(some, |g| {
            g.push(consumers);
            g.op(Op::WgmmaWait { pending: 0 });
            let lane = g.lane();
            let lane0 = g.cmp_c(CompareOp::Eq, lane, 0);
            g.if_(lane0, |g| {
                let last = g.bin(BinaryOp::Add, base, n);
                let last = g.bin_c(BinaryOp::Sub, last, 1);
                let ls = g.bin_c(BinaryOp::Rem, last, s);
                let e = g.offset(empty, ls, crate::types::Scalar::I64);
                release(g, e);
            });
        });
    } else {
        g.push(consumers);
    }
    let next = g.bin(BinaryOp::Add, base, n);
    g.write(ring, next);
    Ok(g.finish())
}

/// E0346 at `at` in the pipelined loop at `ring`: its groups are not committed evenly (`why`).
fn hazard(k: &Kernel, why: Uneven, at: Loc, ring: Loc) -> PassError {
    let tiles = "the loop's tiles".to_string();
    let e = HazardError { hazard: Hazard::StageInUse { tiles, why, unwaited: false }, at, ring };
    PassError::at(PASS, k, at, crate::passes::PassErrorKind::Hazard(Box::new(e)))
}

/// What a copy into the ring needs.
struct Ring<'a> {
    s: i64,
    full: Handle<Expr>,
    empty: Handle<Expr>,
    bytes: i64,
    stages: &'a [Stage],
    copies: &'a [Copy],
    defined: &'a HashSet<Handle<Expr>>,
    var: Handle<Var>,
    start: Handle<Expr>,
    step: i64,
}

impl Ring<'_> {
    /// The copies of iteration `j` (from the loop's entry, at ring position `base + j`): wait until its stage is
    /// empty, expect its bytes, copy.
    fn fill(&self, g: &mut Gen<'_>, base: Handle<Expr>, j: Handle<Expr>) {
        let at = g.bin(BinaryOp::Add, base, j);
        let st = g.bin_c(BinaryOp::Rem, at, self.s);
        let pass = g.bin_c(BinaryOp::Div, at, self.s);
        let next = g.bin_c(BinaryOp::Add, pass, 1);
        let parity = g.bin_c(BinaryOp::And, next, 1);
        let e = g.offset(self.empty, st, crate::types::Scalar::I64);
        g.op(Op::MbarrierWait { bar: e, parity });
        let f = g.offset(self.full, st, crate::types::Scalar::I64);
        let bytes = g.int(self.bytes);
        g.op(Op::MbarrierArriveExpectTx { bar: f, bytes });
        // The loop variable's value at iteration j.
        let by = g.bin_c(BinaryOp::Mul, j, self.step);
        let kv = g.bin(BinaryOp::Add, self.start, by);
        let mut memo = HashMap::new();
        for c in self.copies {
            let x = &self.stages[c.stage];
            let coords = c.coords.iter().map(|&h| clone_at(g, h, self.defined, self.var, kv, &mut memo)).collect();
            let off = g.bin_c(BinaryOp::Mul, st, x.elems);
            let stage = g.offset(x.ptr, off, x.elem);
            // A multicast copy lands at its slice of the stage (`take_copies` saw `offset @tile, i`).
            let dst = match g.k.exprs.get(c.dst).cloned() {
                Some(Expr::Offset { index, elem, .. }) => {
                    let index = clone_at(g, index, self.defined, self.var, kv, &mut memo);
                    g.expr(Expr::Offset { base: stage, index, elem })
                }
                _ => stage,
            };
            g.op(Op::TmaLoad { dst, map: c.map, coords, bar: f, multicast: c.multicast.map(|(m, _)| m) });
        }
    }
}

/// The unscheduled copies at the top level of `body` (taken out), and the rest of it; E0324 for a copy deeper
/// in it.
fn take_copies(k: &Kernel, body: Block, loc: Loc) -> Result<(Vec<Copy>, Block), PassError> {
    let (stmts, locs) = body.into_parts();
    let mut copies = Vec::new();
    let mut rest = Block::new();
    for (s, at) in stmts.into_iter().zip(locs) {
        if let Stmt::Op { op: Op::TmaLoadUnscheduled { dst, map, coords, multicast }, .. } = &s {
            let whole = matches!(k.exprs.get(*dst), Some(Expr::AllocPtr(_)));
            let slice = matches!(k.exprs.get(*dst), Some(Expr::Offset { base, .. })
                if matches!(k.exprs.get(*base), Some(Expr::AllocPtr(_))));
            let tile = match super::alloc_of(k, *dst) {
                // A slice is checked with the other copies of its tile (`slices_cover`).
                Some(a) if whole || slice => a,
                _ => {
                    return Err(refuse(PASS, k, at, Refusal::CopyIntoPart));
                }
            };
            let multicast = match multicast {
                None => None,
                Some(m) => match k.exprs.get(*m) {
                    Some(Expr::Literal(crate::expr::Literal::Int { value, .. })) if *value > 0 => {
                        Some((*m, (*value as u64).count_ones()))
                    }
                    _ => {
                        let what = "a multicast copy whose mask is not known at compile time";
                        return Err(super::internal(PASS, k, at, what, "this copy"));
                    }
                },
            };
            copies.push(Copy { tile, stage: 0, dst: *dst, map: *map, coords: coords.clone(), multicast, loc: at });
            continue;
        }
        let mut nested = None;
        for b in s.blocks() {
            b.visit(&mut |x| {
                if nested.is_none() && matches!(x, Stmt::Op { op: Op::TmaLoadUnscheduled { .. }, .. }) {
                    nested = Some(());
                }
            });
        }
        if nested.is_some() {
            return Err(refuse(PASS, k, if at == Loc::NONE { loc } else { at }, Refusal::CopyNested));
        }
        rest.push(s, at);
    }
    Ok((copies, rest))
}

/// The values the loop's body defines (its own and its copies' coordinates are among them).
fn defined_in(rest: &Block, _copies: &[Copy]) -> HashSet<Handle<Expr>> {
    let mut set = HashSet::new();
    rest.visit(&mut |s| {
        if let Some(h) = s.defines() {
            set.insert(h);
        }
    });
    set
}

/// Whether `h` is the same in every CTA of a cluster but for its rank: it reads no thread or lane index, no
/// loaded value, and `block_idx` along a dimension the cluster spans only divided by a multiple of the cluster's
/// extent there (a cluster is an aligned group of consecutive blocks, so `block_idx.x / 2` is the same in both
/// CTAs of a cluster of 2 along x).
fn cluster_uniform(k: &Kernel, h: Handle<Expr>, seen: &mut HashSet<Handle<Expr>>) -> Result<(), String> {
    use crate::expr::SpecialReg as S;
    if !seen.insert(h) {
        return Ok(());
    }
    let span = k.cluster.unwrap_or([1, 1, 1]);
    let literal = |x: Handle<Expr>| match k.exprs.get(x) {
        Some(Expr::Literal(crate::expr::Literal::Int { value, .. })) => Some(*value),
        _ => None,
    };
    match k.exprs.get(h) {
        Some(Expr::Binary { op: BinaryOp::Div, lhs, rhs })
            if matches!(k.exprs.get(*lhs), Some(Expr::Special(S::BlockIdx(d)))
                if literal(*rhs).is_some_and(|c| c > 0 && c % i64::from(span[d.index()]) == 0)) =>
        {
            Ok(())
        }
        Some(Expr::Special(S::ThreadIdx(_) | S::LaneId)) => Err("depend on the thread".to_string()),
        Some(Expr::Special(S::BlockIdx(d))) if span[d.index()] > 1 => {
            Err(format!("depend on block_idx.{}, which differs between the CTAs of the cluster", d.name()))
        }
        Some(Expr::OpResult(_)) => Err("depend on a loaded value".to_string()),
        Some(e) => {
            let mut r = Ok(());
            e.for_each_operand(|o| {
                if r.is_ok() {
                    r = cluster_uniform(k, o, seen);
                }
            });
            r
        }
        None => Err("are not known".to_string()),
    }
}

/// Whether `h` can be computed at another iteration: from values fixed before the loop and its variable.
fn cloneable(k: &Kernel, h: Handle<Expr>, defined: &HashSet<Handle<Expr>>, var: Handle<Var>) -> Result<(), String> {
    if !defined.contains(&h) {
        return Ok(());
    }
    match k.exprs.get(h) {
        Some(Expr::ReadVar(v)) if *v == var => Ok(()),
        Some(Expr::ReadVar(v)) => {
            let name = k.vars.get(*v).map_or("?", |v| v.name.as_str());
            Err(format!("read the variable `{name}`, which the loop's iterations may change"))
        }
        Some(Expr::OpResult(_)) => Err("depend on a value loaded in the loop".to_string()),
        Some(e) => {
            let mut r = Ok(());
            e.for_each_operand(|o| {
                if r.is_ok() {
                    r = cloneable(k, o, defined, var);
                }
            });
            r
        }
        None => Err("are not known".to_string()),
    }
}

/// `h` computed with `kv` for the loop variable (see [`cloneable`]).
fn clone_at(
    g: &mut Gen<'_>,
    h: Handle<Expr>,
    defined: &HashSet<Handle<Expr>>,
    var: Handle<Var>,
    kv: Handle<Expr>,
    memo: &mut HashMap<Handle<Expr>, Handle<Expr>>,
) -> Handle<Expr> {
    if !defined.contains(&h) {
        return h;
    }
    if let Some(&x) = memo.get(&h) {
        return x;
    }
    let Some(mut e) = g.k.exprs.get(h).cloned() else { return h };
    let x = match e {
        Expr::ReadVar(v) if v == var => kv,
        _ => {
            e.map_operands(|o| clone_at(g, o, defined, var, kv, memo));
            g.expr(e)
        }
    };
    memo.insert(h, x);
    x
}

/// Whether `block` issues wgmma groups.
fn has_wgmma(block: &Block) -> bool {
    let mut found = false;
    block.visit(&mut |s| found |= matches!(s, Stmt::Op { op: Op::WgmmaCommit { .. }, .. }));
    found
}

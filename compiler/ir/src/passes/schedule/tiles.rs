//! Part of `pipeline-loops`: the copies of a `warp_specialized` kernel that stand beside its pipelined loop, in
//! the same block (a tile of a bias or of scales, loaded once per output tile, before the loop over k).
//!
//! The producer issues them too, and the consumers wait for them only where they first read the tile, so the
//! copy lands while the mainloop runs instead of in front of the epilogue. In a loop over tiles the consumers
//! may still read tile t's copy while the producer already loads tile t + 1's, so each tile gets two stages, used
//! in turn, with a `full` barrier per stage (one arrival and the copies' bytes) and an `empty` barrier per stage
//! (one arrival per consumer warp, after the consumers' last read). A counter `$tile_copy`, kept by every thread,
//! numbers the block's executions: execution `c` uses stage `c % 2`; the consumers wait for the phase parity
//! `(c / 2) & 1` of `full`, and the producer for the parity `(c / 2 + 1) & 1` of `empty` (on each stage's first
//! use the barrier is fresh and that wait returns at once).
//!
//! The producer issues them at their place in the block: before the loop's copies, in the same region, so a
//! tile's copy waits only for the release of the tile two executions before it, long done.

use super::emit::Gen;
use super::ring::PASS;
use super::{Kernel, Refusal, mbarriers, new_var, refuse, threads_1d};
use crate::arena::{Handle, Loc};
use crate::expr::{BinaryOp, CompareOp, Expr};
use crate::module::{Alloc, Var};
use crate::op::Op;
use crate::passes::PassError;
use crate::stmt::{Block, Stmt};
use crate::types::{Scalar, Type};
use std::collections::{HashMap, HashSet};

/// How many stages each tile gets: the tile being read and the next one landing.
const STAGES: i64 = 2;

/// Whether `block` is one whose copies this rewrites: a `warp_specialized` kernel's block that holds a pipelined
/// loop and unscheduled copies at its top level.
pub(super) fn applies(k: &Kernel, block: &Block) -> bool {
    let stmts = block.stmts();
    k.warp_specialized
        && stmts.iter().any(|s| matches!(s, Stmt::For { stages: Some(_), .. }))
        && stmts.iter().any(|s| matches!(s, Stmt::Op { op: Op::TmaLoadUnscheduled { .. }, .. }))
}

/// A copy beside the loop: its tile, map, coordinates and place.
struct TileCopy {
    tile: Handle<Alloc>,
    map: Handle<Expr>,
    coords: Vec<Handle<Expr>>,
    loc: Loc,
}

/// The block with its copies (see [`applies`]) taken out, and what the producer runs for them, which
/// `pipeline-loops` places at the start of the loop's producer region: the consumers wait before their first
/// read of any of the tiles and release after their last. The barriers' initialisation goes to `prefix`, ahead
/// of the ring's, whose CTA or cluster barrier publishes them. E0324 for a copy after the pipelined loop (the
/// producer issues it before the loop's copies).
pub(super) fn rewrite(k: &mut Kernel, block: Block, prefix: &mut Block, loc: Loc) -> Result<(Block, Block), PassError> {
    let (stmts, locs) = block.into_parts();
    let mut copies = Vec::new();
    let mut first = None;
    let mut kept = Vec::new();
    let mut seen_loop = false;
    for (i, (s, at)) in stmts.into_iter().zip(locs).enumerate() {
        seen_loop |= matches!(s, Stmt::For { stages: Some(_), .. });
        if let Stmt::Op { op: Op::TmaLoadUnscheduled { dst, map, coords, multicast }, .. } = &s {
            if seen_loop {
                return Err(refuse(PASS, k, at, Refusal::TileCopyAfterLoop));
            }
            if multicast.is_some() {
                return Err(refuse(PASS, k, at, Refusal::TileMulticast));
            }
            let tile = match k.exprs.get(*dst) {
                Some(Expr::AllocPtr(a)) => *a,
                _ => {
                    return Err(refuse(PASS, k, at, Refusal::TileCopyIntoPart));
                }
            };
            if copies.iter().any(|c: &TileCopy| c.tile == tile) {
                return Err(refuse(PASS, k, at, Refusal::TileCopiedTwice));
            }
            copies.push(TileCopy { tile, map: *map, coords: coords.clone(), loc: at });
            first.get_or_insert(i);
            continue;
        }
        kept.push((s, at));
    }
    let first = first.unwrap_or(0);
    let Some(threads) = threads_1d(k) else {
        return Err(refuse(PASS, k, loc, Refusal::SpecializedBlockNot1d));
    };
    let consumer_warps = i64::from(threads.saturating_sub(128) / 32);
    let mut bytes = 0u64;
    for c in &copies {
        bytes += super::box_bytes(PASS, k, c.map, c.loc)?;
    }
    // Each tile twice.
    let mut tiles = Vec::new();
    for c in &copies {
        let elems = super::grow_to_stages(PASS, k, c.tile, STAGES, c.loc)?;
        let elem = k.allocs.get(c.tile).map_or(Scalar::F32, |a| a.elem);
        tiles.push((c.tile, elems, elem));
    }
    let full = mbarriers(k, "tile_full", STAGES as u32, loc);
    let empty = mbarriers(k, "tile_empty", STAGES as u32, loc);
    let full_barrier = super::declare_mbarriers(PASS, k, full, 1, bytes, loc)?;
    let empty_barrier = super::declare_mbarriers(PASS, k, empty, consumer_warps as u32, 0, loc)?;
    k.rings.append(
        crate::schedule::Ring {
            tiles: tiles.iter().map(|&(t, _, _)| t).collect(),
            stages: STAGES as u32,
            full: full_barrier,
            empty: empty_barrier,
            filler: crate::schedule::Filler::Producer,
            release: crate::schedule::Release::EndOfIteration,
        },
        loc,
    );
    let counter = new_var(k, "tile_copy", loc);
    {
        let mut g = Gen::new(k, loc);
        let zero = g.int(0);
        g.write(counter, zero);
        let tid = g.thread_x();
        let thread0 = g.cmp_c(CompareOp::Eq, tid, 0);
        g.if_(thread0, |g| {
            for st in 0..STAGES {
                let i = g.int(st);
                let f = g.offset(full, i, Scalar::I64);
                let one = g.int(1);
                g.op(Op::MbarrierInit { bar: f, count: one });
                let e = g.offset(empty, i, Scalar::I64);
                let n = g.int(consumer_warps);
                g.op(Op::MbarrierInit { bar: e, count: n });
            }
            g.op(Op::FenceMbarrierInit);
        });
        prefix.append(g.finish());
    }
    // What the producer runs, at the start of its region for the loop.
    let at = copies.first().map_or(loc, |c| c.loc);
    let producer = {
        let mut g = Gen::new(k, at);
        let c = g.read(counter);
        let st = g.bin_c(BinaryOp::Rem, c, STAGES);
        let pass = g.bin_c(BinaryOp::Div, c, STAGES);
        let next = g.bin_c(BinaryOp::Add, pass, 1);
        let parity = g.bin_c(BinaryOp::And, next, 1);
        let tid = g.thread_x();
        let thread0 = g.cmp_c(CompareOp::Eq, tid, 0);
        g.if_(thread0, |g| {
            let e = g.offset(empty, st, Scalar::I64);
            g.op(Op::MbarrierWait { bar: e, parity });
            let f = g.offset(full, st, Scalar::I64);
            let total = g.int(i64::try_from(bytes).unwrap_or(i64::MAX));
            g.op(Op::MbarrierArriveExpectTx { bar: f, bytes: total });
            for (c, &(tile, elems, elem)) in copies.iter().zip(&tiles) {
                g.loc = c.loc;
                let base = g.expr(Expr::AllocPtr(tile));
                let off = g.bin_c(BinaryOp::Mul, st, elems);
                let dst = g.offset(base, off, elem);
                g.op(Op::TmaLoad { dst, map: c.map, coords: c.coords.clone(), bar: f, multicast: None });
            }
        });
        g.loc = at;
        let next = g.bin_c(BinaryOp::Add, c, 1);
        g.write(counter, next);
        g.finish()
    };
    // The consumers: this execution's stage of every tile, in place of the tile.
    let (before, after): (Vec<_>, Vec<_>) = kept.into_iter().enumerate().partition(|(i, _)| *i < first);
    let mut g = Gen::new(k, at);
    for (_, (s, l)) in before {
        g.loc = l;
        g.push(s);
    }
    g.loc = at;
    let c = g.read(counter);
    let st = g.bin_c(BinaryOp::Rem, c, STAGES);
    let pass = g.bin_c(BinaryOp::Div, c, STAGES);
    let parity = g.bin_c(BinaryOp::And, pass, 1);
    let mut memo = HashMap::new();
    let mut derived = HashSet::new();
    for &(tile, elems, elem) in &tiles {
        let base = g.expr(Expr::AllocPtr(tile));
        let off = g.bin_c(BinaryOp::Mul, st, elems);
        let p = g.offset(base, off, elem);
        derived.insert(p);
        for (h, e) in g.k.exprs.iter() {
            if *e == Expr::AllocPtr(tile) && h != base {
                memo.insert(h, p);
            }
        }
    }
    let rest = {
        let (s, l): (Vec<_>, Vec<_>) = after.into_iter().map(|(_, x)| x).unzip();
        super::substitute(g.k, Block::from_parts(s, l), &mut memo)
    };
    // The statements that read a tile: those that use an address derived from a stage, other than by computing
    // another address (the consumers wait before the first and release after the last).
    let (stmts, locs) = rest.into_parts();
    let mut reads = Vec::new();
    for s in &stmts {
        if let Stmt::Emit(h) = *s {
            let mut from_tile = false;
            s.for_each_use(&g.k.exprs, |o| from_tile |= derived.contains(&o));
            if from_tile {
                derived.insert(h);
            }
            reads.push(false);
            continue;
        }
        let mut uses = false;
        s.for_each_operand(|o| uses |= derived.contains(&o));
        for b in s.blocks() {
            b.visit(&mut |x| x.for_each_use(&g.k.exprs, |o| uses |= derived.contains(&o)));
        }
        reads.push(uses);
    }
    let first_read = reads.iter().position(|&r| r).unwrap_or(stmts.len());
    let last_read = reads.iter().rposition(|&r| r).map_or(stmts.len(), |i| i + 1);
    let n = stmts.len();
    for (i, (s, l)) in stmts.into_iter().zip(locs).enumerate() {
        if i == first_read {
            wait(&mut g, full, st, parity, at);
        }
        if i == last_read {
            release(&mut g, empty, st, counter, c, at);
        }
        g.loc = l;
        g.push(s);
    }
    // No statement reads the tiles (the wait still pairs with the producer's copy), or the last one ends the block.
    if first_read == n {
        wait(&mut g, full, st, parity, at);
    }
    if last_read == n {
        release(&mut g, empty, st, counter, c, at);
    }
    Ok((g.finish(), producer))
}

/// The consumers' wait for stage `st`'s copies.
fn wait(g: &mut Gen<'_>, full: Handle<Expr>, st: Handle<Expr>, parity: Handle<Expr>, at: Loc) {
    g.loc = at;
    let f = g.offset(full, st, Scalar::I64);
    g.op(Op::MbarrierWait { bar: f, parity });
}

/// The consumers' release of stage `st` and the counter's step. One lane of each warp arrives, chosen by
/// `elect.sync`, which the whole warp reaches first: every lane has passed the wait and done its reads. (Lane 0
/// arriving by itself could run ahead of lanes still spinning in the wait: two releases later the producer has
/// filled the stage again, and those lanes, seeing the barrier two phases on with the parity they wait for,
/// would wait forever. `check-protocol` finds that schedule.)
fn release(g: &mut Gen<'_>, empty: Handle<Expr>, st: Handle<Expr>, counter: Handle<Var>, c: Handle<Expr>, at: Loc) {
    g.loc = at;
    let elected = g.k.exprs.append(Expr::OpResult(Type::I1), at);
    g.push(Stmt::Op { result: Some(elected), op: Op::ElectOne });
    g.if_(elected, |g| {
        let e = g.offset(empty, st, Scalar::I64);
        g.op(Op::MbarrierArrive { bar: e });
    });
    let next = g.bin_c(BinaryOp::Add, c, 1);
    g.write(counter, next);
}

//! `specialize-warps`: a `warp_specialized` kernel runs on a producer warpgroup and consumer warpgroups.
//!
//! `pipeline-loops` has written the producer's region (warpgroup 0: thread 0 issues every copy of the
//! pipelined loop). This pass splits the rest of the kernel's top level: what comes before the last CTA
//! barrier ahead of the producer (the barriers' initialisations) runs on every thread as before; the values
//! computed after it that do not depend on the consumers' work stay at the top level, where both roles see
//! them; everything else (the accumulators' setup, the consumers' loop, the epilogue) becomes the `consumer`
//! region on warpgroups 1 to C. A top-level `for` whose body holds the producer region (a loop over tiles around
//! the pipelined loop) is distributed: the producer runs the same loop over its region, with the values it needs
//! computed again under new names, and the consumers run it over the rest of the body. The producer keeps 40 registers per thread (`setmaxnreg.dec`), the consumers
//! share the rest of the SM's 64K (`setmaxnreg.inc`, in steps of 8, at most 256): 232 for two consumer
//! warpgroups, as CUTLASS's kernels use.

use super::placement::{Placement, Placer, replicate};
use super::{Kernel, Refusal, refuse, threads_1d};
use crate::analysis::range::Ranges;
use crate::arena::Handle;
use crate::arena::Loc;
use crate::expr::Expr;
use crate::module::{Module, Var};
use crate::op::Op;
use crate::passes::{Analyses, Pass, PassError};
use crate::schedule::RoleKind;
use crate::stmt::{Block, Role, RoleRegion, Stmt, role_chains};
use std::collections::{HashMap, HashSet};

pub struct SpecializeWarps;

const PASS: &str = "specialize-warps";

/// The producer's registers per thread: it only issues copies.
const PRODUCER_REGISTERS: u32 = 40;

impl Pass for SpecializeWarps {
    fn name(&self) -> &'static str {
        PASS
    }
    fn description(&self) -> &'static str {
        "split warp_specialized kernels into the producer warpgroup and consumer warpgroups, with their registers"
    }
    fn run(&self, module: &mut Module, analyses: &mut Analyses) -> Result<(), PassError> {
        let info = crate::passes::module_info(self, module, analyses)?.clone();
        for (k, kinfo) in module.kernels.iter_mut().zip(&info.kernels).filter(|(k, _)| k.warp_specialized) {
            let before = k.clone();
            let conditions = specialize(k)?;
            producer_only(&before, kinfo, &conditions)?;
        }
        Ok(())
    }
}

/// E0324 for a statement of the consumers' work that only threads of warpgroup 0 would run (under a condition
/// the consumers' threads never meet, `if thread_idx.x == 0 { .. }`): it would run on no thread. `conditions` are
/// those of the `if`s [`placement`](super::placement) left to the consumers only; proved with the ranges of the
/// conditions over the consumers' threads and over the block's, in the kernel as it was before the split.
fn producer_only(
    k: &Kernel,
    info: &crate::valid::KernelInfo,
    conditions: &[(Handle<Expr>, crate::arena::Loc)],
) -> Result<(), PassError> {
    let threads = threads_1d(k).unwrap_or(0);
    let mut ranges = Ranges::new(k, info);
    let cta = ranges.cta();
    let consumers = ranges.role(cta, &Role { kind: RoleKind::Consumer, first: 1, count: threads / 128 - 1 });
    for &(cond, at) in conditions {
        if ranges.of(consumers, cond).as_exact() == Some(0) && ranges.of(cta, cond).as_exact() != Some(0) {
            return Err(refuse(PASS, k, at, Refusal::ProducerOnly));
        }
    }
    Ok(())
}

/// Everything before the last CTA barrier ahead of the producer runs on every thread: the index after it in
/// `before` (the statements before the first producer region).
fn split_point(before: &[Stmt]) -> usize {
    before
        .iter()
        .rposition(|s| matches!(s, Stmt::Barrier(_) | Stmt::Op { op: Op::ClusterBarrier, .. }))
        .map_or(0, |i| i + 1)
}

/// Whether `s` is a loop whose body holds the producer region `pipeline-loops` wrote (a loop over tiles around
/// the pipelined loop).
fn producer_loop(s: &Stmt) -> bool {
    matches!(s, Stmt::For { body, .. } if producer_loop_body(body))
}

fn producer_loop_body(body: &Block) -> bool {
    body.stmts().iter().any(is_producer)
}

/// Whether `s` is a role chain with the producer's region in it.
fn is_producer(s: &Stmt) -> bool {
    matches!(s, Stmt::Roles(regions) if regions.iter().any(|r| r.role.kind == RoleKind::Producer))
}

/// Splits the body of a loop around a producer region into the producer's body (the values it needs, computed
/// again under new names, then the region's statements, and copies of the statements every thread runs: see
/// [`placement`](super::placement)) and the consumers' (everything but the region). `Err` when the producer needs
/// a value only the consumers compute: for its copies (`None`), or for a statement every thread runs (`Some`: where,
/// and why it cannot be placed).
fn distribute(
    k: &mut Kernel,
    body: Block,
    var: Handle<Var>,
    placer: &mut Placer,
) -> Result<(Block, Block), Option<(Loc, Refusal)>> {
    let (stmts, locs) = body.into_parts();
    // Variables the consumers' statements write in the body (not the loop's own).
    let mut written: HashSet<Handle<Var>> = HashSet::new();
    for s in &stmts {
        if matches!(s, Stmt::Roles(_)) {
            continue;
        }
        written.extend(s.writes_var());
        for b in s.blocks() {
            b.visit(&mut |x| written.extend(x.writes_var()));
        }
    }
    written.remove(&var);
    let mut memo: HashMap<Handle<Expr>, Handle<Expr>> = HashMap::new();
    let mut consumer_only: HashSet<Handle<Expr>> = HashSet::new();
    let mut producer = Block::new();
    let mut consumer = Block::new();
    for (s, at) in stmts.into_iter().zip(locs) {
        match s {
            Stmt::Roles(regions) if regions.iter().any(|r| r.role.kind == RoleKind::Producer) => {
                for RoleRegion { body, .. } in regions {
                    let mut bad = false;
                    body.visit(&mut |x| x.for_each_use(&k.exprs, |o| bad |= consumer_only.contains(&o)));
                    if bad {
                        return Err(None);
                    }
                    let body = super::substitute(k, body, &mut memo);
                    producer.append(body);
                }
            }
            Stmt::Emit(h) => {
                let e = k.exprs.get(h).cloned();
                // A variable the consumers write, which the producer does not compute too.
                let read = match e {
                    Some(Expr::ReadVar(v)) => Some(v),
                    _ => None,
                };
                let reads_written = read.is_some_and(|v| !placer.readable(v, written.contains(&v)));
                let mut depends = false;
                if let Some(e) = &e {
                    e.for_each_operand(|o| depends |= consumer_only.contains(&o) && !memo.contains_key(&o));
                }
                if reads_written || depends || matches!(e, Some(Expr::OpResult(_))) {
                    consumer_only.insert(h);
                    placer.emit(k, h);
                } else if let Some(mut e) = e {
                    // The producer computes it too, under its own name.
                    if let Some(v) = read {
                        placer.read_by_producer(v, at);
                    }
                    e.map_operands(|o| memo.get(&o).copied().unwrap_or(o));
                    let copy = k.exprs.append(e, at);
                    memo.insert(h, copy);
                    producer.push(Stmt::Emit(copy), at);
                }
                consumer.push(Stmt::Emit(h), at);
            }
            s => {
                let unavailable = |h| consumer_only.contains(&h) && !memo.contains_key(&h);
                match placer.place(k, &s, at, unavailable, |v| written.contains(&v)) {
                    Placement::Stuck => return Err(Some((at, Refusal::PerThreadNeedsConsumers))),
                    Placement::Mixed(inner) => return Err(Some((inner, Refusal::PerThreadInWork))),
                    Placement::Everywhere => producer.append(replicate(k, &s, at, &mut memo)),
                    Placement::Consumers => {}
                }
                s.defines().into_iter().for_each(|h| {
                    consumer_only.insert(h);
                });
                let mut inner = Vec::new();
                for b in s.blocks() {
                    b.visit(&mut |x| inner.extend(x.defines()));
                }
                consumer_only.extend(inner);
                consumer.push(s, at);
            }
        }
    }
    Ok((producer, consumer))
}

/// Puts the copies `pending` before the statements of the producer region `into`; forgets the values they define,
/// which later regions cannot reach.
fn take_pending(into: &mut Block, pending: &mut Block, memo: &mut HashMap<Handle<Expr>, Handle<Expr>>) {
    let mut body = std::mem::take(pending);
    body.append(std::mem::take(into));
    *into = body;
    memo.clear();
}

/// The consumers' registers per thread when `consumers` warpgroups share what the producer leaves.
pub fn consumer_registers(consumers: u32) -> u32 {
    let left = cutec_target::SM_REGISTERS - 128 * PRODUCER_REGISTERS;
    let per = left / (128 * consumers.max(1)) / cutec_target::SETMAXNREG_STEP * cutec_target::SETMAXNREG_STEP;
    per.min(cutec_target::SETMAXNREG_MAX)
}

/// Splits `k`'s body into the producer's regions and the consumers' (see the module documentation, and
/// [`placement`](super::placement) for the statements both run). Gives the conditions of the `if`s left to the
/// consumers only, for [`producer_only`].
fn specialize(k: &mut Kernel) -> Result<Vec<(Handle<Expr>, Loc)>, PassError> {
    let loc = k.loc;
    let threads = threads_1d(k).unwrap_or(0);
    let consumers = threads / 128;
    if !threads.is_multiple_of(128) || consumers < 2 {
        return Err(refuse(PASS, k, loc, Refusal::SpecializedBlock { block: k.block_size.unwrap_or([0, 0, 0]) }));
    }
    let consumers = consumers - 1;
    let body = std::mem::take(&mut k.body);
    let (stmts, locs) = body.into_parts();
    let user_role = stmts.iter().any(
        |s| matches!(s, Stmt::Roles(regions) if regions.iter().any(|r| matches!(r.role.kind, RoleKind::Source(_)))),
    );
    let Some(first_region) = stmts.iter().position(|s| matches!(s, Stmt::Roles(_)) || producer_loop(s)) else {
        k.body = Block::from_parts(stmts, locs);
        return Err(refuse(PASS, k, loc, Refusal::NothingToProduce));
    };
    if user_role {
        k.body = Block::from_parts(stmts, locs);
        return Err(refuse(PASS, k, loc, Refusal::RolesByHand));
    }
    let split = split_point(&stmts[..first_region]);
    // The variables the consumers write: a value reading one moves with them.
    let mut written: HashSet<Handle<Var>> = HashSet::new();
    for s in &stmts[split..] {
        if matches!(s, Stmt::Roles(_)) {
            continue;
        }
        written.extend(s.writes_var());
        for b in s.blocks() {
            b.visit(&mut |x| written.extend(x.writes_var()));
        }
    }
    let mut shared = Block::new();
    let mut producers: Vec<RoleRegion> = Vec::new();
    let mut consumer = Block::new();
    let mut moved: HashSet<Handle<Expr>> = HashSet::new();
    let mut trailer = Block::new();
    // The producer's regions count as what writes their variables: none of those is the program's per-thread work.
    let segment = stmts[split..].iter().flat_map(|s| match s {
        Stmt::For { body, .. } if producer_loop_body(body) => body.stmts().iter(),
        s => std::slice::from_ref(s).iter(),
    });
    let mut placer = Placer::for_segment(k, segment);
    // Copies of the statements every thread runs, for the next producer region (or the last); `memo` maps the
    // values they define to the copies'. A region takes them all: values defined in an earlier one are out of reach.
    let mut pending = Block::new();
    let mut memo: HashMap<Handle<Expr>, Handle<Expr>> = HashMap::new();

    let total = stmts.len();
    for (i, (s, at)) in stmts.into_iter().zip(locs).enumerate() {
        if i < split {
            shared.push(s, at);
            continue;
        }
        match s {
            Stmt::For { var, start, end, step, unroll, stages, body } if producer_loop_body(&body) => {
                let mut uses_moved = moved.contains(&start) || moved.contains(&end);
                body.visit(&mut |x| x.for_each_use(&k.exprs, |o| uses_moved |= moved.contains(&o)));
                let (producer_body, consumer_body) = match distribute(k, body, var, &mut placer) {
                    Ok(parts) if !uses_moved => parts,
                    Err(Some((stuck, why))) => {
                        k.body = Block::new();
                        return Err(refuse(PASS, k, stuck, why));
                    }
                    _ => {
                        k.body = Block::new();
                        return Err(refuse(PASS, k, at, Refusal::CopiesNeedConsumers { in_loop: true }));
                    }
                };
                let producer_loop = Stmt::For { var, start, end, step, unroll, stages, body: producer_body };
                let role = Role { kind: RoleKind::Producer, first: 0, count: 1 };
                let mut region = Block::from_parts(vec![producer_loop], vec![at]);
                take_pending(&mut region, &mut pending, &mut memo);
                producers.push(RoleRegion { role, regs: Some(PRODUCER_REGISTERS), body: region, at });
                consumer.push(Stmt::For { var, start, end, step, unroll, stages, body: consumer_body }, at);
            }
            Stmt::Roles(regions) => {
                let mut uses_moved = false;
                for r in &regions {
                    r.body.visit(&mut |x| x.for_each_use(&k.exprs, |o| uses_moved |= moved.contains(&o)));
                }
                if uses_moved {
                    k.body = Block::new();
                    return Err(refuse(PASS, k, at, Refusal::CopiesNeedConsumers { in_loop: false }));
                }
                let regs = Some(PRODUCER_REGISTERS);
                let mut regions: Vec<RoleRegion> = regions.into_iter().map(|r| RoleRegion { regs, at, ..r }).collect();
                if let Some(first) = regions.iter_mut().find(|r| r.role.kind == RoleKind::Producer) {
                    take_pending(&mut first.body, &mut pending, &mut memo);
                }
                producers.extend(regions);
            }
            // The cluster barrier a shared ring ends the kernel with: every thread of both roles reaches it.
            Stmt::Op { op: Op::ClusterBarrier, .. } if i + 1 == total => trailer.push(s, at),
            Stmt::Barrier(_) | Stmt::Op { op: Op::ClusterBarrier, .. } => {
                return Err(refuse(PASS, k, at, Refusal::BarrierAfterSplit));
            }
            Stmt::Emit(h) => {
                let e = k.exprs.get(h);
                let read = match e {
                    Some(Expr::ReadVar(v)) => Some(*v),
                    _ => None,
                };
                let reads_written = read.is_some_and(|v| written.contains(&v));
                let candidate = read.is_some_and(|v| written.contains(&v) && placer.readable(v, true));
                let (mut depends, mut out_of_reach) = (false, false);
                if let Some(e) = e {
                    e.for_each_operand(|o| {
                        depends |= moved.contains(&o);
                        out_of_reach |= moved.contains(&o) && !memo.contains_key(&o);
                    });
                }
                let op_result = matches!(e, Some(Expr::OpResult(_)));
                if reads_written || depends || op_result {
                    if (!reads_written || candidate) && !out_of_reach && !op_result {
                        // From copies of statements every thread runs: the producer computes it too.
                        if let Some(v) = read {
                            placer.read_by_producer(v, at);
                        }
                        pending.append(replicate(k, &Stmt::Emit(h), at, &mut memo));
                    }
                    moved.insert(h);
                    placer.emit(k, h);
                    consumer.push(Stmt::Emit(h), at);
                } else {
                    shared.push(Stmt::Emit(h), at);
                }
            }
            s => {
                let unavailable = |h| moved.contains(&h) && !memo.contains_key(&h);
                match placer.place(k, &s, at, unavailable, |v| written.contains(&v)) {
                    Placement::Stuck => {
                        k.body = Block::new();
                        return Err(refuse(PASS, k, at, Refusal::PerThreadNeedsConsumers));
                    }
                    Placement::Mixed(inner) => {
                        k.body = Block::new();
                        return Err(refuse(PASS, k, inner, Refusal::PerThreadInWork));
                    }
                    Placement::Everywhere => pending.append(replicate(k, &s, at, &mut memo)),
                    Placement::Consumers => {}
                }
                s.defines().into_iter().for_each(|h| {
                    moved.insert(h);
                });
                consumer.push(s, at);
            }
        }
    }
    if let Some(at) = placer.stale_read() {
        k.body = Block::new();
        return Err(refuse(PASS, k, at, Refusal::PerThreadNeedsConsumers));
    }
    if !pending.is_empty() {
        match producers.last_mut() {
            Some(last) => last.body.append(pending),
            None => return Err(super::internal(PASS, k, loc, "no producer region", "this kernel")),
        }
    }
    let regs = consumer_registers(consumers);
    let role = Role { kind: RoleKind::Consumer, first: 1, count: consumers };
    // The producer's regions and the consumers' as role chains: the last producer region and the consumers'
    // form one, entered once by every warp.
    producers.push(RoleRegion { role, regs: Some(regs), body: consumer, at: loc });
    for chain in role_chains(producers) {
        let at = chain.first().map_or(loc, |r| r.at);
        shared.push(Stmt::Roles(chain), at);
    }
    shared.append(trailer);
    k.body = shared;
    Ok(placer.conditions)
}

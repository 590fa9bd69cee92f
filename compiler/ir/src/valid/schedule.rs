//! The schedule's entities ([`crate::schedule`]): what the passes declared is well formed, and the operations
//! that name a declaration agree with it.

use super::ValidationError as E;
use crate::arena::Handle;
use crate::expr::{Expr, Literal};
use crate::module::Kernel;
use crate::schedule::{Barrier, BarrierKind, Owner};
use crate::types::{AddrSpace, Scalar};

/// Every barrier and ring of `k`.
pub fn entities(k: &Kernel) -> Result<(), E> {
    let bad = |what: String, why| E::BadEntity { what, why };
    for (h, b) in k.barriers.iter() {
        let what = || format!("barrier #b{}", h.index());
        match b.kind {
            BarrierKind::Mbarrier { alloc, arrivals, .. } => {
                let a = k.allocs.get(alloc).ok_or(E::AllocOutOfRange(alloc.index()))?;
                if a.space != AddrSpace::Shared || a.elem != Scalar::I64 {
                    return Err(bad(what(), "an mbarrier array is a shared allocation of i64"));
                }
                if arrivals == 0 {
                    return Err(bad(what(), "an mbarrier expects at least one arrival"));
                }
            }
            BarrierKind::Named { first, count, threads } => {
                let ids = first..first.saturating_add(count);
                if first == 0 || ids.end > 16 || count == 0 || threads == 0 || !threads.is_multiple_of(32) {
                    return Err(bad(what(), "a named barrier has ids inside 1..=15 and a multiple of 32 threads"));
                }
                let clash = k.barriers.iter().any(|(o, other)| {
                    o != h
                        && other.owner == Owner::Compiler
                        && b.owner == Owner::Compiler
                        && matches!(other.kind, BarrierKind::Named { first: f, count: c, .. }
                            if f < ids.end && ids.start < f.saturating_add(c))
                });
                if clash {
                    return Err(bad(what(), "the compiler's named barriers have disjoint ids"));
                }
            }
        }
    }
    for (h, g) in k.groups.iter() {
        for &a in g.reads.iter().chain(&g.writes) {
            if !k.allocs.contains(a) {
                return Err(bad(format!("wgmma group #g{}", h.index()), "its tiles and arrays are allocations"));
            }
        }
    }
    for (h, r) in k.rings.iter() {
        let what = || format!("ring #r{}", h.index());
        if r.stages == 0 || r.tiles.is_empty() {
            return Err(bad(what(), "a ring has stages and tiles"));
        }
        for &t in &r.tiles {
            let a = k.allocs.get(t).ok_or(E::AllocOutOfRange(t.index()))?;
            if a.space != AddrSpace::Shared {
                return Err(bad(what(), "a ring's tiles are shared allocations"));
            }
        }
        for b in [r.full, r.empty] {
            let barrier = k.barriers.get(b).ok_or_else(|| bad(what(), "its barriers are declared"))?;
            let BarrierKind::Mbarrier { alloc, .. } = barrier.kind else {
                return Err(bad(what(), "a ring's barriers are mbarrier arrays"));
            };
            if k.allocs.get(alloc).is_none_or(|a| a.len != r.stages) {
                return Err(bad(what(), "a ring's barrier arrays have one mbarrier per stage"));
            }
        }
    }
    Ok(())
}

/// A `bar.sync id, threads of #bN`: the declaration is a named barrier, and the thread count is its count (and
/// a literal id one of its ids; `check-operands` proves the others inside them).
pub fn named_barrier_use(k: &Kernel, id: Handle<Expr>, threads: Handle<Expr>, b: Handle<Barrier>) -> Result<(), E> {
    let literal = |h| match k.exprs.get(h) {
        Some(Expr::Literal(Literal::Int { value, .. })) => u32::try_from(*value).ok(),
        _ => None,
    };
    let bad = E::BadOp { op: "bar.sync", why: "a declared named barrier's operands are its id and thread count" };
    match k.barriers.get(b).map(|d| d.kind) {
        Some(BarrierKind::Named { first, count, threads: t })
            if literal(threads) == Some(t) && literal(id).is_none_or(|i| (first..first + count).contains(&i)) =>
        {
            Ok(())
        }
        _ => Err(bad),
    }
}

/// An `mbarrier.init` or `mbarrier.arrive.expect_tx` on an mbarrier array the compiler declared: a constant count
/// is the declaration's arrivals, constant bytes its bytes per phase (what the checks read from the declaration is
/// what the kernel does).
pub fn mbarrier_use(k: &Kernel, op: &crate::op::Op) -> Result<(), E> {
    use crate::op::Op;
    let (bar, value, init) = match *op {
        Op::MbarrierInit { bar, count } => (bar, count, true),
        Op::MbarrierArriveExpectTx { bar, bytes } => (bar, bytes, false),
        _ => return Ok(()),
    };
    let Some(alloc) = crate::effects::Resource::of(k, bar).alloc() else { return Ok(()) };
    let Some(Expr::Literal(Literal::Int { value, .. })) = k.exprs.get(value) else { return Ok(()) };
    for (_, b) in k.barriers.iter() {
        if let BarrierKind::Mbarrier { alloc: a, arrivals, bytes } = b.kind
            && a == alloc
        {
            let declared = if init { i64::from(arrivals) } else { i64::try_from(bytes).unwrap_or(i64::MAX) };
            if *value != declared {
                let why = if init {
                    "an mbarrier's init count is its declaration's arrivals"
                } else {
                    "the bytes an mbarrier's phase expects are its declaration's"
                };
                return Err(E::BadOp { op: op.name(), why });
            }
        }
    }
    Ok(())
}

/// What the `wgmma.mma_async`s since the last commit read and write, by allocation (see [`group_use`]).
#[derive(Default)]
pub struct Uncommitted {
    reads: Vec<Handle<crate::module::Alloc>>,
    writes: Vec<Handle<crate::module::Alloc>>,
}

/// A `wgmma.mma_async` adds what it reads and writes to `pending`; a `wgmma.commit_group #gN` requires group N
/// to name all of it, and starts again.
pub fn group_use(k: &Kernel, op: &crate::op::Op, pending: &mut Uncommitted) -> Result<(), E> {
    use crate::effects::Resource;
    use crate::op::Op;
    let alloc = |p| Resource::of(k, p).alloc();
    match op {
        Op::Wgmma { acc, steps, .. } => {
            pending.writes.extend(alloc(*acc));
            // A is read from shared memory (a descriptor) or from the thread's registers: a read either way.
            for s in steps {
                pending.reads.extend(alloc(s.b));
                pending.reads.extend(alloc(s.a));
            }
        }
        Op::WgmmaCommit { group } => {
            if let Some(g) = group {
                let g = k.groups.get(*g).ok_or(E::BadOp { op: "wgmma.commit_group", why: "its group is declared" })?;
                let covered = pending.reads.iter().all(|a| g.reads.contains(a))
                    && pending.writes.iter().all(|a| g.writes.contains(a));
                if !covered {
                    return Err(E::BadOp {
                        op: "wgmma.commit_group",
                        why: "its group names every tile and array the wgmmas it commits read and write",
                    });
                }
            }
            *pending = Uncommitted::default();
        }
        _ => {}
    }
    Ok(())
}

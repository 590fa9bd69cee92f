//! Where the statements of a `warp_specialized` body beside its pipelined loop run (issue 32: "per-thread
//! statements run on exactly the threads the program names, or the kernel is refused").
//!
//! The program is written for every thread of the block; `specialize-warps` gives warpgroup 0 to the producer.
//! A statement beside the pipelined loop is then one of:
//! - **the consumers' work** ([`Placement::Consumers`]): it touches a register tensor (the mma's fragments live on
//!   the consumer warpgroups), synchronizes, issues an operation other than a load (asynchronous, collective, an
//!   mbarrier's), or uses a value or variable such work computed. It runs on the consumer warpgroups, which are the mma's threads;
//! - **per-thread work** ([`Placement::Everywhere`]): it writes global or shared memory, per thread, and needs
//!   nothing the consumers compute. The producer runs a copy of it too ([`replicate`]), so that threads 0..127 do
//!   what the program says; loads of global memory such a statement uses are copied with it;
//!   A variable only such statements write (per-thread computations, `s += x[i]` in a loop) the producer computes
//!   too, with copies of its writers ([`Placer::for_segment`] finds them);
//! - neither: per-thread work that uses a value only the consumers compute ([`Placement::Stuck`]: a load of
//!   shared memory, a variable the consumers' work also writes), refused.

use crate::arena::{Handle, Loc};
use crate::effects::{self, Effects, Footprint, Resource};
use crate::expr::Expr;
use crate::module::{Kernel, Var};
use crate::op::Op;
use crate::stmt::{Block, Stmt};
use crate::types::AddrSpace;
use std::collections::{HashMap, HashSet};

/// Where one statement runs.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Placement {
    /// On the consumer warpgroups only.
    Consumers,
    /// On every thread: the producer runs a copy.
    Everywhere,
    /// Per-thread work that needs a value only the consumers compute.
    Stuck,
    /// The consumers' work with a statement nested in it (at the location) that writes memory per thread and is
    /// not their work: the producer would not run it.
    Mixed(Loc),
}

/// What the statements placed so far tell about the rest: the values and variables of the consumers' work.
#[derive(Default)]
pub(super) struct Placer {
    /// Values the consumers' work computes: a statement that uses one is that work too.
    work: HashSet<Handle<Expr>>,
    /// Variables that work writes.
    work_vars: HashSet<Handle<Var>>,
    /// The conditions of the `if`s placed on the consumers only, for the producer-only check: one no consumer
    /// thread meets runs on no thread at all.
    pub conditions: Vec<(Handle<Expr>, Loc)>,
    /// Variables written only by statements that are not the consumers' work: the producer computes them too (a
    /// copy of each writer), unless a writer turns out to need the consumers ([`demoted`](Self::demoted)).
    candidates: HashSet<Handle<Var>>,
    demoted: HashSet<Handle<Var>>,
    /// The candidates the producer's copies read, and where: each must stay a candidate to the end.
    readers: Vec<(Handle<Var>, Loc)>,
}

/// What only the consumers may do: synchronize, start or wait for asynchronous work, join a collective, jump.
const CONSUMER_EFFECTS: Effects =
    Effects::ASYNC.union(Effects::WAIT).union(Effects::BARRIER).union(Effects::COLLECTIVE).union(Effects::CONTROL);

impl Placer {
    /// A placer for the statements `segment` (the part of the body the split places; a loop's body among them is
    /// given by its statements), which finds the variables the producer may compute too.
    pub fn for_segment<'s>(k: &Kernel, segment: impl Iterator<Item = &'s Stmt>) -> Placer {
        let (mut eligible, mut other) = (HashSet::new(), HashSet::new());
        for s in segment {
            let into = if consumers_by_effects(k, s) { &mut other } else { &mut eligible };
            visit(s, &mut |x| into.extend(x.writes_var()));
        }
        Placer { candidates: eligible.difference(&other).copied().collect(), ..Placer::default() }
    }

    /// Whether the producer has the variable `v` (`written`: whether the consumers' part writes it at all).
    pub fn readable(&self, v: Handle<Var>, written: bool) -> bool {
        !written || (self.candidates.contains(&v) && !self.demoted.contains(&v))
    }

    /// Notes that a copy for the producer reads the variable `v` at `at`.
    pub fn read_by_producer(&mut self, v: Handle<Var>, at: Loc) {
        if self.candidates.contains(&v) {
            self.readers.push((v, at));
        }
    }

    /// Where a copy for the producer reads a variable one of whose writers was left to the consumers after all
    /// (placed later in the body than the read, in a loop): the statement cannot be placed.
    pub fn stale_read(&self) -> Option<Loc> {
        self.readers.iter().find(|(v, _)| self.demoted.contains(v)).map(|(_, at)| *at)
    }

    /// Notes an emitted expression placed with the consumers: a value computed from their work is their work.
    pub fn emit(&mut self, k: &Kernel, h: Handle<Expr>) {
        let Some(e) = k.exprs.get(h) else { return };
        let mut work = matches!(e, Expr::ReadVar(v) if self.work_vars.contains(v));
        e.for_each_operand(|o| work |= self.work.contains(&o));
        if work {
            self.work.insert(h);
        }
    }

    /// Where `s` (not an emission) runs. `unavailable(h)` says whether the producer cannot compute `h` (a value
    /// the consumers' statements define), `written(v)` whether the consumers write the variable `v`.
    pub fn place(
        &mut self,
        k: &Kernel,
        s: &Stmt,
        at: Loc,
        unavailable: impl Fn(Handle<Expr>) -> bool,
        written: impl Fn(Handle<Var>) -> bool,
    ) -> Placement {
        let effects = effects::deep(k, s);
        let mut uses = Vec::new();
        let mut reads = Vec::new();
        visit_uses(k, s, &mut |h| uses.push(h), &mut |v| reads.push(v));
        let work = consumers_by_effects(k, s)
            || uses.iter().any(|h| self.work.contains(h))
            || reads.iter().any(|v| self.work_vars.contains(v));
        let writes_memory = effects.writes_space(AddrSpace::Global) || effects.writes_space(AddrSpace::Shared);
        let mut written_here = HashSet::new();
        visit(s, &mut |x| written_here.extend(x.writes_var()));
        // It writes variables the producer may compute too (all their writers are per-thread work).
        let computes = !written_here.is_empty() && written_here.is_subset(&self.candidates);
        if !work && (writes_memory || is_global_load(k, s) || computes) {
            // Its own loops' induction variables are the only variables it may write (or candidates, for a
            // computation), and those it reads must come from before the consumers' part, from itself, or be
            // candidates.
            let own = induction_vars(s);
            let mut writes_other = false;
            visit(s, &mut |x| writes_other |= matches!(x, Stmt::WriteVar { .. }));
            let defined = definitions(s);
            let stuck_value = uses.iter().find(|h| !defined.contains(h) && unavailable(**h));
            let foreign: Vec<_> = reads.iter().copied().filter(|v| !own.contains(v)).collect();
            let stuck_var = foreign.iter().any(|v| !self.readable(*v, written(*v)));
            if (computes || !writes_other) && stuck_value.is_none() && !stuck_var {
                for v in foreign {
                    self.read_by_producer(v, at);
                }
                return Placement::Everywhere;
            }
            if writes_memory {
                return Placement::Stuck;
            }
        }
        // The variables it writes are the consumers' alone from here on.
        self.demoted.extend(written_here.intersection(&self.candidates).copied().collect::<Vec<_>>());
        if work {
            if let Some(inner) = self.per_thread_inside(k, s) {
                return Placement::Mixed(inner);
            }
            self.work.extend(definitions(s));
            visit(s, &mut |x| self.work_vars.extend(x.writes_var()));
        }
        visit_at(s, at, &mut |x, loc| {
            if let Stmt::If { cond, accept, .. } = x
                && !accept.is_empty()
            {
                self.conditions.push((*cond, loc));
            }
        });
        Placement::Consumers
    }
}

impl Placer {
    /// The first statement nested in the compound statement `s` (the consumers' work) that writes memory per
    /// thread and is not their work itself: not under a condition or loop bounds computed from their work, and
    /// storing no value of it.
    fn per_thread_inside(&self, k: &Kernel, s: &Stmt) -> Option<Loc> {
        let mut taint = Placer { work: self.work.clone(), work_vars: self.work_vars.clone(), ..Placer::default() };
        let mut own = Vec::new();
        s.for_each_operand(|h| own.push(h));
        if own.iter().any(|h| taint.work.contains(h)) {
            return None; // all of it runs where the consumers' values are
        }
        s.blocks().find_map(|b| taint.per_thread_in(k, b))
    }

    fn per_thread_in(&mut self, k: &Kernel, b: &Block) -> Option<Loc> {
        for (x, at) in b.iter() {
            if let Stmt::Emit(h) = x {
                self.emit(k, *h);
                continue;
            }
            let mut uses = Vec::new();
            let mut reads = Vec::new();
            visit_uses(k, x, &mut |h| uses.push(h), &mut |v| reads.push(v));
            let effects = effects::deep(k, x);
            let tainted =
                uses.iter().any(|h| self.work.contains(h)) || reads.iter().any(|v| self.work_vars.contains(v));
            let leaf_work = consumers_by_effects(k, x) || tainted;
            if x.blocks().next().is_some() {
                let mut own = Vec::new();
                x.for_each_operand(|h| own.push(h));
                if !own.iter().any(|h| self.work.contains(h)) {
                    for inner in x.blocks() {
                        if let Some(found) = self.per_thread_in(k, inner) {
                            return Some(found);
                        }
                    }
                }
            } else if !leaf_work
                && (effects.writes_space(AddrSpace::Global) || effects.writes_space(AddrSpace::Shared))
                && !into_ring_tile(k, x)
            {
                return Some(at);
            }
            if leaf_work {
                self.work.extend(definitions(x));
                visit(x, &mut |y| self.work_vars.extend(y.writes_var()));
            }
        }
        None
    }
}

/// Whether `s` writes a tile of one of the kernel's rings: what `check-schedule` refuses with E0347, which says more.
fn into_ring_tile(k: &Kernel, s: &Stmt) -> bool {
    let mut found = false;
    visit(s, &mut |x| {
        found |= Footprint::of_stmt(k, x)
            .writes()
            .any(|w| w.resource.alloc().is_some_and(|a| k.rings.iter().any(|(_, r)| r.tiles.contains(&a))))
    });
    found
}

/// Whether `s` is the consumers' work by what it does itself (nested statements included), whatever values it
/// uses: it touches a register tensor, synchronizes, jumps, or issues an operation other than a load.
fn consumers_by_effects(k: &Kernel, s: &Stmt) -> bool {
    let effects = effects::deep(k, s);
    effects.intersects(CONSUMER_EFFECTS)
        || effects.reads_space(AddrSpace::Local)
        || effects.writes_space(AddrSpace::Local)
        || has_operation(s)
}

/// Whether `s` or a statement nested in it is an operation other than a load (an mbarrier's arrival, a copy, a
/// fence...): the schedule's, never a thread's own work, even where its effects are only memory's.
fn has_operation(s: &Stmt) -> bool {
    let mut found = false;
    visit(s, &mut |x| found |= matches!(x, Stmt::Op { op, .. } if !matches!(op, Op::Load { .. })));
    found
}

/// Whether `s` is a load of global (or parameter) memory: per-thread work the producer may repeat.
fn is_global_load(k: &Kernel, s: &Stmt) -> bool {
    matches!(s, Stmt::Op { op: Op::Load { ptr, .. }, .. }
        if matches!(effects::space_of(k, *ptr), Some(AddrSpace::Global | AddrSpace::Param)))
}

/// Calls `f` on `s` and every statement nested in it.
fn visit(s: &Stmt, f: &mut impl FnMut(&Stmt)) {
    f(s);
    for b in s.blocks() {
        b.visit(f);
    }
}

/// Calls `f` on `s` (at `at`) and every statement nested in it, with its location.
fn visit_at(s: &Stmt, at: Loc, f: &mut impl FnMut(&Stmt, Loc)) {
    f(s, at);
    for b in s.blocks() {
        for (x, loc) in b.iter() {
            visit_at(x, loc, f);
        }
    }
}

/// The values `s` and the statements nested in it define.
fn definitions(s: &Stmt) -> HashSet<Handle<Expr>> {
    let mut defined = HashSet::new();
    visit(s, &mut |x| defined.extend(x.defines()));
    defined
}

/// The induction variables of `s` and the loops nested in it.
fn induction_vars(s: &Stmt) -> HashSet<Handle<Var>> {
    let mut vars = HashSet::new();
    visit(s, &mut |x| {
        if let Stmt::For { var, .. } = x {
            vars.insert(*var);
        }
    });
    vars
}

/// Calls `use_` on every value `s` and its nested statements use, `read` on every variable they read.
fn visit_uses(k: &Kernel, s: &Stmt, use_: &mut impl FnMut(Handle<Expr>), read: &mut impl FnMut(Handle<Var>)) {
    visit(s, &mut |x| {
        x.for_each_use(&k.exprs, &mut *use_);
        read_var(k, x).into_iter().for_each(&mut *read);
    });
}

fn read_var(k: &Kernel, s: &Stmt) -> Option<Handle<Var>> {
    s.reads_var(&k.exprs)
}

/// A copy of `s` (at `at`) for the producer: every value it defines defined anew (recorded in `memo`), every
/// operand in `memo` replaced by its copy.
pub(super) fn replicate(k: &mut Kernel, s: &Stmt, at: Loc, memo: &mut HashMap<Handle<Expr>, Handle<Expr>>) -> Block {
    super::replicate(k, Block::from_parts(vec![s.clone()], vec![at]), memo)
}

/// The first statement of a `warp_specialized` kernel's pipelined loop body that writes memory per thread
/// ([`Placement::Everywhere`] there): the loop's body runs on the consumers, and the producer's loop only issues
/// copies, so threads 0..127 would not run it.
///
/// A store into one of the ring's tiles is left to `check-schedule`, whose E0347 says more.
pub(super) fn per_thread_in_ring(k: &Kernel, body: &Block) -> Option<Loc> {
    let mut tiles = HashSet::new();
    body.visit(&mut |s| {
        if let Stmt::Op { op: Op::TmaLoadUnscheduled { dst, .. }, .. } = s {
            tiles.extend(Resource::of(k, *dst).alloc());
        }
    });
    let into_tile = |s: &Stmt| {
        let mut found = false;
        visit(s, &mut |x| {
            found |= Footprint::of_stmt(k, x).writes().any(|w| w.resource.alloc().is_some_and(|a| tiles.contains(&a)))
        });
        found
    };
    let mut placer = Placer::default();
    for (s, at) in body.iter() {
        match s {
            Stmt::Emit(h) => placer.emit(k, *h),
            s => {
                let placed = placer.place(k, s, at, |_| false, |_| false);
                if let Placement::Mixed(inner) = placed {
                    return Some(inner);
                }
                let writes = effects::deep(k, s);
                if placed == Placement::Everywhere
                    && (writes.writes_space(AddrSpace::Global) || writes.writes_space(AddrSpace::Shared))
                    && !into_tile(s)
                {
                    return Some(at);
                }
            }
        }
    }
    None
}

//! Race detection on shared memory, by happens-before with vector clocks (FastTrack's epochs for the accesses:
//! each byte keeps its last write and its last read as (clock slot, clock value, statement)).
//!
//! **Clocks.** Every thread of the running cluster has a slot, and so has every mbarrier (its TMA
//! completions). A thread's own entry advances at each release it does. Barriers (`bar.sync`, named barriers,
//! the cluster barrier) join the clocks of the threads they release; an mbarrier arrival joins the arriving
//! thread's clock into its phase, a TMA completion the copy's epoch, and a wait that returns acquires the
//! completed phase's clock. Warp collectives order nothing ("lockstep is not ordering").
//!
//! **What is a race** (each reported with both statements):
//! - a generic access to a byte whose last write, by another thread or a TMA copy, does not happen before it
//!   (a read of data a TMA load has not been waited for, two threads writing without a barrier);
//! - a generic write to a byte whose last read, by another thread, does not happen before it;
//! - a TMA load over bytes whose last read does not happen before its issue (a ring stage refilled while a
//!   consumer still reads it);
//! - a generic write to bytes an in-flight wgmma group or TMA store still reads (before the `wgmma.wait_group`
//!   or `cp.async.bulk.wait_group.read` that retires it);
//! - an asynchronous read (TMA store source, wgmma operand) of bytes whose generic write is not covered by a
//!   `fence.proxy.async` that happens before the issue (in the issuing thread or reaching it through
//!   synchronisation: a second clock, `fenced`, joined like the first).
//!
//! (`memory.rs` adds the registers: an access to an accumulator or A register of a wgmma group in flight.)
//!
//! Global memory is checked between clusters only (`global_race.rs`): blocks of one cluster may order their
//! global accesses through the cluster barrier, and threads of one block through its barriers, which this
//! module does not follow for global memory.

use crate::error::{InterpError, RaceKind};
use cutec_ir::Loc;
use std::collections::HashMap;

/// A vector clock: entry `i` is what is known of slot `i` (missing entries are 0).
pub(crate) type Clock = Vec<u32>;

pub(crate) fn get(c: &Clock, i: u32) -> u32 {
    c.get(i as usize).copied().unwrap_or(0)
}

fn set(c: &mut Clock, i: u32, v: u32) {
    if c.len() <= i as usize {
        c.resize(i as usize + 1, 0);
    }
    c[i as usize] = v;
}

pub(crate) fn tick(c: &mut Clock, i: u32) {
    let v = get(c, i) + 1;
    set(c, i, v);
}

pub(crate) fn join(into: &mut Clock, from: &Clock) {
    if into.len() < from.len() {
        into.resize(from.len(), 0);
    }
    for (a, b) in into.iter_mut().zip(from) {
        *a = (*a).max(*b);
    }
}

/// The last access of one kind to a byte: who (slot), when (its clock then) and where (interned location).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Epoch {
    slot: u32,
    clock: u32,
    loc: u32,
}

impl Epoch {
    const NONE: Epoch = Epoch { slot: u32::MAX, clock: 0, loc: 0 };
    fn is_none(self) -> bool {
        self.slot == u32::MAX
    }
}

#[derive(Clone, Copy, Debug)]
struct Shadow {
    write: Epoch,
    /// The write was a TMA copy's (asynchronous proxy: needs no fence before an asynchronous read).
    write_async: bool,
    read: Epoch,
}

const EMPTY: Shadow = Shadow { write: Epoch::NONE, write_async: false, read: Epoch::NONE };

/// Bytes an asynchronous operation still reads: a wgmma group's operands or a TMA store's source.
pub(crate) struct InFlight {
    pub cta: usize,
    pub ranges: Vec<(i64, i64)>,
    pub loc: Loc,
}

pub(crate) struct Races {
    locs: Vec<Loc>,
    loc_ids: HashMap<Loc, u32>,
    shadows: Vec<Vec<Shadow>>,
    /// The clock slot of each mbarrier (CTA, offset), after the threads' slots.
    slots: HashMap<(usize, i64), u32>,
    next_slot: u32,
    /// TMA completions per mbarrier slot so far (the value of each completion's epoch).
    tma_seq: HashMap<u32, u32>,
    /// The clock of each mbarrier's current phase (what its arrivals released), and of its completed phases.
    phase: HashMap<(usize, i64), Clock>,
    phase_fenced: HashMap<(usize, i64), Clock>,
    completed: HashMap<(usize, i64, u64), (Clock, Clock)>,
    /// The asynchronous reads in flight, by id, and how many of them read each byte of each CTA's shared
    /// memory (so that a write asks one counter, not every read in flight).
    inflight: HashMap<usize, InFlight>,
    next_inflight: usize,
    inflight_count: Vec<Vec<u16>>,
}

/// Who accesses: a thread's slot and clocks.
pub(crate) struct Who<'a> {
    pub slot: u32,
    pub vc: &'a Clock,
    pub fenced: &'a Clock,
    pub thread: crate::ThreadRef,
}

impl Races {
    pub fn new(ctas: usize, shared_bytes: usize, threads: u32) -> Races {
        Races {
            locs: vec![Loc::NONE],
            loc_ids: HashMap::new(),
            shadows: vec![vec![EMPTY; shared_bytes]; ctas],
            slots: HashMap::new(),
            next_slot: threads,
            tma_seq: HashMap::new(),
            phase: HashMap::new(),
            phase_fenced: HashMap::new(),
            completed: HashMap::new(),
            inflight: HashMap::new(),
            next_inflight: 0,
            inflight_count: vec![vec![0; shared_bytes]; ctas],
        }
    }

    fn intern(&mut self, loc: Loc) -> u32 {
        let next = self.locs.len() as u32;
        *self.loc_ids.entry(loc).or_insert_with(|| {
            self.locs.push(loc);
            next
        })
    }

    fn loc(&self, id: u32) -> Loc {
        self.locs.get(id as usize).copied().unwrap_or(Loc::NONE)
    }

    fn race(&self, kind: RaceKind, earlier: u32, now: Loc, cta: usize, offset: i64, who: &Who<'_>) -> InterpError {
        InterpError::Race { kind, first: self.loc(earlier), second: now, cta: cta as u32, offset, thread: who.thread }
    }

    /// Registers an asynchronous read in flight until [`Races::retire`]; its id.
    pub fn start_inflight(&mut self, mut f: InFlight) -> usize {
        // Adjacent elements as one range: operand tiles are read in long runs.
        f.ranges.sort_unstable();
        let mut merged: Vec<(i64, i64)> = Vec::with_capacity(f.ranges.len());
        for (s, e) in f.ranges.drain(..) {
            match merged.last_mut() {
                Some(last) if s <= last.1 => last.1 = last.1.max(e),
                _ => merged.push((s, e)),
            }
        }
        f.ranges = merged;
        if let Some(counts) = self.inflight_count.get_mut(f.cta) {
            for &(s, e) in &f.ranges {
                let end = (e.max(0) as usize).min(counts.len());
                for c in counts.get_mut(s.max(0) as usize..end).into_iter().flatten() {
                    *c = c.saturating_add(1);
                }
            }
        }
        let id = self.next_inflight;
        self.next_inflight += 1;
        self.inflight.insert(id, f);
        id
    }

    fn inflight_over(&self, cta: usize, b: i64) -> Option<Loc> {
        if self.inflight_count.get(cta).and_then(|c| c.get(b as usize)).is_none_or(|&n| n == 0) {
            return None;
        }
        self.inflight.values().find(|f| f.cta == cta && f.ranges.iter().any(|&(s, e)| s <= b && b < e)).map(|f| f.loc)
    }

    /// A generic read (`write == false`) or write of `len` bytes at `offset` of CTA `cta`'s shared memory.
    pub fn generic(
        &mut self,
        cta: usize,
        offset: i64,
        len: u64,
        write: bool,
        who: &Who<'_>,
        loc: Loc,
    ) -> Result<(), InterpError> {
        let id = self.intern(loc);
        let own = get(who.vc, who.slot);
        for b in offset..offset + len as i64 {
            let Some(s) = self.shadows.get(cta).and_then(|v| v.get(b as usize)).copied() else { continue };
            let w = s.write;
            if !w.is_none() && w.slot != who.slot && get(who.vc, w.slot) < w.clock {
                let kind = match (s.write_async, write) {
                    (true, _) => RaceKind::UnfinishedAsyncWrite,
                    (false, false) => RaceKind::WriteRead,
                    (false, true) => RaceKind::WriteWrite,
                };
                return Err(self.race(kind, w.loc, loc, cta, b, who));
            }
            if write {
                let r = s.read;
                if !r.is_none() && r.slot != who.slot && get(who.vc, r.slot) < r.clock {
                    return Err(self.race(RaceKind::ReadWrite, r.loc, loc, cta, b, who));
                }
                if let Some(reader) = self.inflight_over(cta, b) {
                    let e = InterpError::Race {
                        kind: RaceKind::InFlightRead,
                        first: reader,
                        second: loc,
                        cta: cta as u32,
                        offset: b,
                        thread: who.thread,
                    };
                    return Err(e);
                }
            }
            let e = Epoch { slot: who.slot, clock: own, loc: id };
            if let Some(sh) = self.shadows.get_mut(cta).and_then(|v| v.get_mut(b as usize)) {
                if write {
                    *sh = Shadow { write: e, write_async: false, read: Epoch::NONE };
                } else {
                    sh.read = e;
                }
            }
        }
        Ok(())
    }

    /// An asynchronous read issued by `who` (a TMA store's source, a wgmma operand): every generic write to
    /// the bytes happens before the issue and is covered by a `fence.proxy.async`.
    pub fn async_read(
        &mut self,
        cta: usize,
        ranges: &[(i64, i64)],
        who: &Who<'_>,
        loc: Loc,
    ) -> Result<(), InterpError> {
        for &(start, end) in ranges {
            for b in start..end {
                let Some(s) = self.shadows.get(cta).and_then(|v| v.get(b as usize)).copied() else { continue };
                let w = s.write;
                if w.is_none() || w.slot == who.slot && s.write_async {
                    continue;
                }
                if get(who.vc, w.slot) < w.clock && w.slot != who.slot {
                    let kind = if s.write_async { RaceKind::UnfinishedAsyncWrite } else { RaceKind::WriteRead };
                    return Err(self.race(kind, w.loc, loc, cta, b, who));
                }
                if !s.write_async && get(who.fenced, w.slot) < w.clock {
                    return Err(self.race(RaceKind::MissingProxyFence, w.loc, loc, cta, b, who));
                }
            }
        }
        Ok(())
    }

    /// The bytes an asynchronous read retired by `waiter` has read: recorded as the waiter's reads.
    pub fn retire(&mut self, id: usize, who: &Who<'_>) {
        let Some(f) = self.inflight.remove(&id) else { return };
        if let Some(counts) = self.inflight_count.get_mut(f.cta) {
            for &(s, e) in &f.ranges {
                let end = (e.max(0) as usize).min(counts.len());
                for c in counts.get_mut(s.max(0) as usize..end).into_iter().flatten() {
                    *c = c.saturating_sub(1);
                }
            }
        }
        let e = Epoch { slot: who.slot, clock: get(who.vc, who.slot), loc: self.intern(f.loc) };
        for (start, end) in f.ranges {
            for b in start..end {
                if let Some(sh) = self.shadows.get_mut(f.cta).and_then(|v| v.get_mut(b as usize)) {
                    sh.read = e;
                }
            }
        }
    }

    pub fn slot_of_barrier(&mut self, cta: usize, offset: i64) -> u32 {
        let next = self.next_slot;
        let slot = *self.slots.entry((cta, offset)).or_insert(next);
        if slot == next {
            self.next_slot += 1;
        }
        slot
    }

    /// A TMA load issued by `who` writes `ranges` of CTA `cta` and completes on the mbarrier (cta, bar):
    /// its reads by generic accesses must happen before the issue; the bytes get the completion's epoch, which
    /// the barrier's phase releases when the copy lands ([`Races::tma_landed`]).
    pub fn tma_write(
        &mut self,
        cta: usize,
        bar: i64,
        ranges: &[(i64, i64)],
        who: &Who<'_>,
        loc: Loc,
    ) -> Result<(u32, u32), InterpError> {
        let slot = self.slot_of_barrier(cta, bar);
        let seq = self.tma_seq.entry(slot).or_insert(0);
        *seq += 1;
        let e = Epoch { slot, clock: *seq, loc: self.intern(loc) };
        for &(start, end) in ranges {
            for b in start..end {
                let Some(s) = self.shadows.get(cta).and_then(|v| v.get(b as usize)).copied() else { continue };
                let r = s.read;
                if !r.is_none() && r.slot != who.slot && get(who.vc, r.slot) < r.clock {
                    return Err(self.race(RaceKind::ReadWrite, r.loc, loc, cta, b, who));
                }
                if let Some(reader) = self.inflight_over(cta, b) {
                    return Err(InterpError::Race {
                        kind: RaceKind::InFlightRead,
                        first: reader,
                        second: loc,
                        cta: cta as u32,
                        offset: b,
                        thread: who.thread,
                    });
                }
                if let Some(sh) = self.shadows.get_mut(cta).and_then(|v| v.get_mut(b as usize)) {
                    *sh = Shadow { write: e, write_async: true, read: Epoch::NONE };
                }
            }
        }
        Ok((slot, e.clock))
    }

    /// The TMA copy of epoch (`slot`, `clock`) has landed: the phase of (cta, bar) it completes on releases it.
    pub fn tma_landed(&mut self, cta: usize, bar: i64, (slot, clock): (u32, u32)) {
        let mut c = Clock::new();
        set(&mut c, slot, clock);
        join(self.phase.entry((cta, bar)).or_default(), &c);
    }

    /// An arrival on mbarrier (cta, bar) releases the arriving thread's clocks into the phase.
    pub fn arrive(&mut self, cta: usize, bar: i64, vc: &Clock, fenced: &Clock) {
        join(self.phase.entry((cta, bar)).or_default(), vc);
        join(self.phase_fenced.entry((cta, bar)).or_default(), fenced);
    }

    /// Phase `phase` of (cta, bar) has completed: its clock is kept for the waits that acquire it.
    pub fn complete(&mut self, cta: usize, bar: i64, phase: u64) {
        let c = self.phase.remove(&(cta, bar)).unwrap_or_default();
        let f = self.phase_fenced.remove(&(cta, bar)).unwrap_or_default();
        self.completed.insert((cta, bar, phase), (c, f));
        self.completed.remove(&(cta, bar, phase.wrapping_sub(4)));
    }

    /// A wait that returned having seen phase `phase` of (cta, bar) complete acquires its clocks.
    pub fn acquire(&self, cta: usize, bar: i64, phase: u64, vc: &mut Clock, fenced: &mut Clock) {
        if let Some((c, f)) = self.completed.get(&(cta, bar, phase)) {
            join(vc, c);
            join(fenced, f);
        }
    }
}

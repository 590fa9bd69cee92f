//! The per-thread work of a kernel's check, done once for all its runs. An expression whose operands differ
//! between a group's threads (`lane_id == 0`, a warpgroup's barrier id) is evaluated once per thread, and so is
//! the projection of such a value on a part of the group when it splits; both are done again in every
//! iteration, by every CTA, in every launch and schedule, for the same threads and from the same values (which
//! thread is which does not depend on the launch's parameters). The memo keeps each result with what it was
//! computed from and hands it out again while that is the same:
//!
//! - a group's threads are interned: the same set of threads is the same vector, so they compare by address;
//! - a per-thread vector of values is the same when it is the very same vector (its values never change once
//!   made, and an entry holds every vector it was computed from, so no address is reused while it lives).
//!
//! A result depends on nothing else: the operands' values in those threads, the threads, and the block's shape
//! (the same in every run of the kernel). So does the way a group splits where its threads disagree on
//! values: the parts are kept too. The memo is bounded; past its size it starts again.

use super::value::{Slot, Val};
use crate::arena::Handle;
use crate::expr::Expr;
use crate::hash::{FxMap, FxSet};
use std::rc::Rc;

/// The most operands an expression has.
pub(super) const MAX_OPERANDS: usize = 3;
/// The most entries the memo holds before it starts again (a kernel whose per-thread values change in every
/// iteration would otherwise grow it with every iteration of every run).
const MAX_ENTRIES: usize = 1 << 14;

/// A group's threads (ascending linear ids in its CTA), interned.
pub(super) type Threads = Rc<[u32]>;

#[derive(Clone, Debug)]
struct Eval {
    threads: Threads,
    operands: [Slot; MAX_OPERANDS],
    len: usize,
    slot: Slot,
}

#[derive(Clone, Debug)]
struct Projection {
    vals: Rc<[Val]>,
    keep: Threads,
    slot: Slot,
}

#[derive(Clone, Debug)]
struct Split {
    threads: Threads,
    keys: [Slot; MAX_OPERANDS],
    len: usize,
    parts: Vec<Threads>,
}

#[derive(Debug, Default)]
pub(super) struct Memo {
    threads: FxSet<Threads>,
    /// By expression and threads (address): the last operands and result.
    evals: FxMap<(u32, usize), Eval>,
    /// By per-thread vector (address, first thread) and threads kept (address).
    projections: FxMap<(usize, u32, usize), Projection>,
    /// By threads (address) and the first expression split on: the last values and the parts they gave.
    splits: FxMap<(usize, u32), Split>,
    /// By threads (address) and a key of the thread alone (named by the caller): what it gives them.
    keyed: FxMap<(usize, usize), (Threads, By)>,
}

/// What a key of the thread gives a group's threads: one value, or parts that differ.
#[derive(Clone, Debug)]
pub(super) enum By {
    One(Val),
    Parts(Vec<Threads>),
}

/// Whether two operands are the same: equal values, or the same per-thread vector.
fn same(a: &Slot, b: &Slot) -> bool {
    match (a, b) {
        (Slot::One(x), Slot::One(y)) => x == y,
        (Slot::Each { first: f, vals: v }, Slot::Each { first: g, vals: w }) => f == g && Rc::ptr_eq(v, w),
        _ => false,
    }
}

fn addr<T: ?Sized>(r: &Rc<T>) -> usize {
    Rc::as_ptr(r) as *const () as usize
}

impl Memo {
    /// The interned vector of the threads `threads`.
    pub fn intern(&mut self, threads: Vec<u32>) -> Threads {
        if let Some(t) = self.threads.get(threads.as_slice()) {
            return t.clone();
        }
        if self.threads.len() >= MAX_ENTRIES {
            self.threads.clear();
        }
        let t: Threads = threads.into();
        self.threads.insert(t.clone());
        t
    }

    /// Starts again when full (every handle held elsewhere stays valid: entries only hold clones).
    fn bound(&mut self) {
        if self.evals.len() + self.projections.len() + self.splits.len() + self.keyed.len() >= MAX_ENTRIES {
            self.evals.clear();
            self.projections.clear();
            self.splits.clear();
            self.keyed.clear();
        }
    }

    /// The value of `h` in the threads `threads` from the operands `operands`, if computed from the same ones.
    pub fn eval(&self, h: Handle<Expr>, threads: &Threads, operands: &[&Slot]) -> Option<Slot> {
        let e = self.evals.get(&(h.index() as u32, addr(threads)))?;
        let hit = Rc::ptr_eq(&e.threads, threads)
            && e.len == operands.len()
            && e.operands.iter().zip(operands).all(|(a, b)| same(a, b));
        hit.then(|| e.slot.clone())
    }

    /// Keeps `slot`, the value of `h` in the threads `threads` from `operands` (at most [`MAX_OPERANDS`]).
    pub fn keep_eval(&mut self, h: Handle<Expr>, threads: &Threads, operands: &[&Slot], slot: &Slot) {
        if operands.len() > MAX_OPERANDS {
            return;
        }
        self.bound();
        let mut kept: [Slot; MAX_OPERANDS] = std::array::from_fn(|_| Slot::One(Val::Unknown));
        for (k, o) in kept.iter_mut().zip(operands) {
            *k = (*o).clone();
        }
        let e = Eval { threads: threads.clone(), operands: kept, len: operands.len(), slot: slot.clone() };
        self.evals.insert((h.index() as u32, addr(threads)), e);
    }

    /// The parts (in the order of their first threads' keys) of the threads `threads` split by the values
    /// `keys` of the expressions `hs`, if they were split by the same ones.
    pub fn split(&self, threads: &Threads, hs: &[Handle<Expr>], keys: &[&Slot]) -> Option<Vec<Threads>> {
        let first = hs.first().map_or(u32::MAX, |h| h.index() as u32);
        let s = self.splits.get(&(addr(threads), first))?;
        let hit =
            Rc::ptr_eq(&s.threads, threads) && s.len == keys.len() && s.keys.iter().zip(keys).all(|(a, b)| same(a, b));
        hit.then(|| s.parts.clone())
    }

    /// Keeps `parts`, the split of the threads `threads` by the values `keys` (at most [`MAX_OPERANDS`]) of
    /// the expressions `hs`.
    pub fn keep_split(&mut self, threads: &Threads, hs: &[Handle<Expr>], keys: &[&Slot], parts: &[Threads]) {
        if keys.len() > MAX_OPERANDS {
            return;
        }
        self.bound();
        let mut kept: [Slot; MAX_OPERANDS] = std::array::from_fn(|_| Slot::One(Val::Unknown));
        for (k, o) in kept.iter_mut().zip(keys) {
            *k = (*o).clone();
        }
        let first = hs.first().map_or(u32::MAX, |h| h.index() as u32);
        let s = Split { threads: threads.clone(), keys: kept, len: keys.len(), parts: parts.to_vec() };
        self.splits.insert((addr(threads), first), s);
    }

    /// What the key `tag` gave the threads `threads`, if it was asked before.
    pub fn by_key(&self, threads: &Threads, tag: usize) -> Option<By> {
        let (t, by) = self.keyed.get(&(addr(threads), tag))?;
        Rc::ptr_eq(t, threads).then(|| by.clone())
    }

    /// Keeps what the key `tag` gives the threads `threads`.
    pub fn keep_by_key(&mut self, threads: &Threads, tag: usize, by: &By) {
        self.bound();
        self.keyed.insert((addr(threads), tag), (threads.clone(), by.clone()));
    }

    /// `s` projected on the threads `keep` ([`Slot::project`]), computed once per vector and threads.
    pub fn project(&mut self, s: &Slot, keep: &Threads) -> Slot {
        let Slot::Each { first, vals } = s else { return s.project(keep) };
        let key = (addr(vals), *first, addr(keep));
        if let Some(p) = self.projections.get(&key)
            && Rc::ptr_eq(&p.vals, vals)
            && Rc::ptr_eq(&p.keep, keep)
        {
            return p.slot.clone();
        }
        let slot = s.project(keep);
        self.bound();
        self.projections.insert(key, Projection { vals: vals.clone(), keep: keep.clone(), slot: slot.clone() });
        slot
    }
}

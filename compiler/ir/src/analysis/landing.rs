//! TMA loads land later: a `tma.load` writes its tile asynchronously, and the tile is complete for a thread only
//! once that thread has waited on the mbarrier the load signals (`mbarrier.wait`; PTX ISA, `cp.async.bulk.tensor`
//! and `mbarrier`'s `complete_tx`). A read of the tile before any such wait (a load, a store's overwrite, a
//! wgmma operand, a TMA store's source) races with the copy.
//!
//! A forward analysis over the structured body, per thread ([`super::flow`]), like [`super::proxy`]: each shared-memory allocation a
//! load may still be landing in maps to the mbarrier resource the load signals (and the load). A `tma.load` adds
//! its tile (on the thread that issues it; a branch joins it into every thread's state after the branch, so the
//! threads that did not issue it wait too); an `mbarrier.wait` on a barrier of the same resource (an mbarrier
//! array counts as one: a wait on any of its barriers clears the loads that signal it, so a ring's stages are not
//! told apart, and the analysis reports only accesses that no wait on the load's barrier precedes) clears them;
//! an access to a tile still landing is reported with the load. A cluster barrier (`barrier.cluster`) does not
//! complete a load, nor does a CTA barrier.
//!
//! What it leaves to others: the order of phases (`check-protocol`), and loads into another CTA's memory
//! (multicast lands in the peers, whose waits this thread does not see: their tiles are not tracked).

use crate::arena::{Handle, Loc};
use crate::effects::Resource;
use crate::expr::Expr;
use crate::module::{Alloc, Kernel};
use crate::op::Op;
use crate::stmt::Stmt;
use crate::types::AddrSpace;
use std::collections::BTreeMap;

/// An access to a tile a TMA load may still be writing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unlanded {
    /// The allocation, as the text form names it (`@sa`).
    pub tile: String,
    pub load: Loc,
    pub access: Loc,
    /// What the access is: `a load`, `a store`, `wgmma`, `a TMA store`.
    pub what: &'static str,
}

/// Tiles still landing: each with the barrier resource its load signals and the load.
type State = BTreeMap<Handle<Alloc>, (Resource, Loc)>;

/// The first access of `k` to a tile a TMA load may still be writing.
pub fn check(k: &Kernel) -> Result<(), Unlanded> {
    super::flow::run(&mut Landing { k }, &k.body, State::new()).map(drop)
}

struct Landing<'k> {
    k: &'k Kernel,
}

impl Landing<'_> {
    fn tile(&self, ptr: Handle<Expr>) -> Option<Handle<Alloc>> {
        match Resource::of(self.k, ptr) {
            Resource::Alloc(a) if self.k.allocs.get(a).is_some_and(|a| a.space == AddrSpace::Shared) => Some(a),
            _ => None,
        }
    }

    fn access(&self, state: &State, ptr: Handle<Expr>, at: Loc, what: &'static str) -> Result<(), Unlanded> {
        let Some(t) = self.tile(ptr) else { return Ok(()) };
        match state.get(&t) {
            Some(&(_, load)) => {
                let tile = format!("@{}", self.k.allocs.get(t).map_or("?", |a| a.name.as_str()));
                Err(Unlanded { tile, load, access: at, what })
            }
            None => Ok(()),
        }
    }
}

impl super::flow::Forward for Landing<'_> {
    type State = State;
    type Error = Unlanded;

    fn transfer(&mut self, s: &Stmt, state: &mut State, at: Loc) -> Result<(), Unlanded> {
        match s {
            // A multicast load lands in the peers too, which wait on their own barriers: only this CTA's copy is
            // tracked, the same way.
            Stmt::Op { op: Op::TmaLoad { dst, bar, .. }, .. } => {
                if let Some(t) = self.tile(*dst) {
                    state.insert(t, (Resource::of(self.k, *bar), at));
                }
            }
            Stmt::Op { op: Op::MbarrierWait { bar, .. }, .. } => {
                let waited = Resource::of(self.k, *bar);
                state.retain(|_, (signalled, _)| !signalled.may_alias(waited, self.k));
            }
            Stmt::Op { op: Op::Load { ptr, .. }, .. } => self.access(state, *ptr, at, "a load")?,
            Stmt::Store { ptr, .. } | Stmt::Op { op: Op::Stmatrix { ptr, .. }, .. } => {
                self.access(state, *ptr, at, "a store")?
            }
            Stmt::Op { op: Op::Wgmma { a_desc, steps, .. }, .. } => {
                for step in steps {
                    if a_desc.is_some() {
                        self.access(state, step.a, at, "wgmma")?;
                    }
                    self.access(state, step.b, at, "wgmma")?;
                }
            }
            Stmt::Op { op: Op::TmaStore { src, .. }, .. } => self.access(state, *src, at, "a TMA store")?,
            _ => {}
        }
        Ok(())
    }

    /// A tile still landing on either path is still landing; it keeps the load seen first.
    fn join(into: &mut State, other: &State) {
        for (&t, &v) in other {
            into.entry(t).or_insert(v);
        }
    }
}

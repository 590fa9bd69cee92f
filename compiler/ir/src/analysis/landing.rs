//! TMA loads land later: a `tma.load` writes its tile asynchronously, and the tile is complete for a thread only
//! once that thread has waited on the mbarrier the load signals (`mbarrier.wait`; PTX ISA, `cp.async.bulk.tensor`
//! and `mbarrier`'s `complete_tx`). A read of the tile before any such wait (a load, a store's overwrite, a
//! wgmma operand, a TMA store's source) races with the copy.
//!
//! A forward analysis over the structured body, per thread, like [`super::proxy`]: each shared-memory allocation a
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
use crate::stmt::{Block, Stmt};
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

fn join_into(into: &mut State, other: &State) {
    for (&t, &v) in other {
        into.entry(t).or_insert(v);
    }
}

/// The first access of `k` to a tile a TMA load may still be writing.
pub fn check(k: &Kernel) -> Result<(), Unlanded> {
    let mut walk = Walk { k, loops: Vec::new() };
    walk.block(&k.body, State::new(), Loc::NONE).map(drop)
}

#[derive(Default)]
struct LoopExits {
    breaks: Option<State>,
    continues: Option<State>,
}

struct Walk<'k> {
    k: &'k Kernel,
    loops: Vec<LoopExits>,
}

impl Walk<'_> {
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

    fn block(&mut self, block: &Block, mut state: State, outer: Loc) -> Result<Option<State>, Unlanded> {
        for (s, at) in block.iter() {
            let at = if at == Loc::NONE { outer } else { at };
            match self.stmt(s, state, at)? {
                Some(next) => state = next,
                None => return Ok(None),
            }
        }
        Ok(Some(state))
    }

    fn stmt(&mut self, s: &Stmt, mut state: State, at: Loc) -> Result<Option<State>, Unlanded> {
        match s {
            Stmt::Op { op: Op::TmaLoad { dst, bar, multicast, .. }, .. } => {
                // A multicast load lands in the peers too, which wait on their own barriers: only this CTA's
                // copy is tracked, the same way.
                let _ = multicast;
                if let Some(t) = self.tile(*dst) {
                    state.insert(t, (Resource::of(self.k, *bar), at));
                }
            }
            Stmt::Op { op: Op::MbarrierWait { bar, .. }, .. } => {
                let waited = Resource::of(self.k, *bar);
                state.retain(|_, (signalled, _)| !signalled.may_alias(waited, self.k));
            }
            Stmt::Op { op: Op::Load { ptr, .. }, .. } => self.access(&state, *ptr, at, "a load")?,
            Stmt::Store { ptr, .. } | Stmt::Op { op: Op::Stmatrix { ptr, .. }, .. } => {
                self.access(&state, *ptr, at, "a store")?
            }
            Stmt::Op { op: Op::Wgmma { a_desc, steps, .. }, .. } => {
                for step in steps {
                    if a_desc.is_some() {
                        self.access(&state, step.a, at, "wgmma")?;
                    }
                    self.access(&state, step.b, at, "wgmma")?;
                }
            }
            Stmt::Op { op: Op::TmaStore { src, .. }, .. } => self.access(&state, *src, at, "a TMA store")?,
            Stmt::If { accept, reject, .. } => {
                let a = self.block(accept, state.clone(), at)?;
                let b = self.block(reject, state, at)?;
                return Ok(match (a, b) {
                    (Some(mut a), Some(b)) => {
                        join_into(&mut a, &b);
                        Some(a)
                    }
                    (a, b) => a.or(b),
                });
            }
            Stmt::For { body, .. } => return self.looped(&[body], state, at),
            Stmt::While { header, body, .. } => return self.looped(&[header, body], state, at),
            Stmt::Roles(regions) => {
                let mut out = Some(state.clone());
                for r in regions {
                    if let Some(after) = self.block(&r.body, state.clone(), at)? {
                        match out.as_mut() {
                            Some(o) => join_into(o, &after),
                            None => out = Some(after),
                        }
                    }
                }
                return Ok(out);
            }
            Stmt::Break | Stmt::Continue => {
                if let Some(l) = self.loops.last_mut() {
                    let slot = if matches!(s, Stmt::Break) { &mut l.breaks } else { &mut l.continues };
                    match slot {
                        Some(x) => join_into(x, &state),
                        None => *slot = Some(state),
                    }
                }
                return Ok(None);
            }
            Stmt::Return => return Ok(None),
            Stmt::Emit(_) | Stmt::Op { .. } | Stmt::WriteVar { .. } | Stmt::Barrier(_) => {}
        }
        Ok(Some(state))
    }

    fn looped(&mut self, parts: &[&Block], entry: State, at: Loc) -> Result<Option<State>, Unlanded> {
        let mut head = entry;
        // Each round only adds tiles, of which there are finitely many.
        loop {
            self.loops.push(LoopExits::default());
            let mut state = Some(head.clone());
            for part in parts {
                state = match state {
                    Some(s) => self.block(part, s, at)?,
                    None => None,
                };
            }
            let exits = self.loops.pop().unwrap_or_default();
            let mut next = head.clone();
            for end in [state, exits.continues].into_iter().flatten() {
                join_into(&mut next, &end);
            }
            if next.len() == head.len() {
                let mut out = head;
                if let Some(b) = exits.breaks {
                    join_into(&mut out, &b);
                }
                return Ok(Some(out));
            }
            head = next;
        }
    }
}

//! The two proxies of shared memory: the threads' loads and stores go through the *generic* proxy, TMA and
//! wgmma through the *async* proxy, and a generic write is ordered before an async-proxy read of the same bytes
//! only by a `fence.proxy.async` after it (PTX ISA, "Proxies" and `fence.proxy`; HOPPER.md). Without the fence,
//! wgmma may multiply what was in the tile before the stores, and a TMA store may write it to global memory.
//!
//! A forward analysis over the structured body, per thread (every thread runs the statements it reaches in
//! program order, so the state of the thread that writes is the state at the read when the same thread reads,
//! and at the barrier that hands the tile to the reader otherwise): each shared-memory allocation (or "any shared
//! memory", for a store through a pointer the analysis cannot place) is *clean*, *unfenced* (a generic write since
//! the last fence) or *fenced* (a fence since, not yet followed by a barrier). A store or `stmatrix` makes its
//! resource unfenced, `fence.proxy.async` makes every unfenced one fenced, a barrier (`bar.sync`, the CTA and
//! cluster barriers, an mbarrier arrive or wait) makes fenced ones clean, and an async-proxy read (a wgmma
//! operand in shared memory, a TMA store's source) of an unfenced resource is reported with the write that
//! reaches it. Branches join (unfenced over fenced over clean), loops run to their fixed point, `break` and
//! `continue` carry their state to the loop's exit and head.
//!
//! A fenced resource is accepted at the read: the writer's fence is in its program order before the read, and a
//! reader in another thread needs a barrier after it, which is how every hand-written kernel hands a tile over.

use crate::arena::{Handle, Loc};
use crate::effects::Resource;
use crate::expr::Expr;
use crate::module::{Alloc, Kernel};
use crate::op::Op;
use crate::stmt::{Block, Stmt};
use crate::types::AddrSpace;
use std::collections::BTreeMap;

/// What an async-proxy read may see without a fence: the write, the read, what they touch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unfenced {
    /// The allocation, as the text form names it (`@sa`), or `shared memory` for a write the analysis cannot place.
    pub resource: String,
    pub write: Loc,
    pub read: Loc,
    /// What reads it: `wgmma` or `a TMA store`.
    pub reader: &'static str,
}

/// Where a store lands, as this analysis tells shared memory apart.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Place {
    Alloc(Handle<Alloc>),
    AnyShared,
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Level {
    Fenced,
    Unfenced,
}

/// The resources not clean, each with its level and a write that made it so.
type State = BTreeMap<Place, (Level, Loc)>;

fn join_into(into: &mut State, other: &State) {
    for (&p, &(level, at)) in other {
        let x = into.entry(p).or_insert((level, at));
        if level > x.0 {
            *x = (level, at);
        }
    }
}

/// The first async-proxy read of `k` that a generic write may reach without a `fence.proxy.async`.
pub fn check(k: &Kernel) -> Result<(), Unfenced> {
    let mut walk = Walk { k, loops: Vec::new() };
    walk.block(&k.body, State::new(), Loc::NONE).map(drop)
}

/// The states `break` and `continue` carry out of the innermost loop.
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
    fn place(&self, ptr: Handle<Expr>) -> Option<Place> {
        match Resource::of(self.k, ptr) {
            Resource::Alloc(a) if self.k.allocs.get(a).is_some_and(|a| a.space == AddrSpace::Shared) => {
                Some(Place::Alloc(a))
            }
            Resource::Space(AddrSpace::Shared | AddrSpace::SharedCluster) => Some(Place::AnyShared),
            Resource::Alloc(_) | Resource::Param(_) | Resource::Space(_) | Resource::Any => None,
        }
    }

    /// The state after `block` entered with `state` (`None`: no path falls through its end).
    fn block(&mut self, block: &Block, mut state: State, outer: Loc) -> Result<Option<State>, Unfenced> {
        for (s, at) in block.iter() {
            let at = if at == Loc::NONE { outer } else { at };
            match self.stmt(s, state, at)? {
                Some(next) => state = next,
                None => return Ok(None),
            }
        }
        Ok(Some(state))
    }

    fn read(&self, state: &State, ptr: Handle<Expr>, at: Loc, reader: &'static str) -> Result<(), Unfenced> {
        let Some(place) = self.place(ptr) else { return Ok(()) };
        for p in [place, Place::AnyShared] {
            if let Some(&(Level::Unfenced, write)) = state.get(&p) {
                let resource = match p {
                    Place::Alloc(a) => format!("@{}", self.k.allocs.get(a).map_or("?", |a| a.name.as_str())),
                    Place::AnyShared => "shared memory".to_string(),
                };
                return Err(Unfenced { resource, write, read: at, reader });
            }
        }
        Ok(())
    }

    fn stmt(&mut self, s: &Stmt, mut state: State, at: Loc) -> Result<Option<State>, Unfenced> {
        let sync = |state: &mut State| state.retain(|_, (level, _)| *level == Level::Unfenced);
        match s {
            Stmt::Store { ptr, .. } | Stmt::Op { op: Op::Stmatrix { ptr, .. }, .. } => {
                if let Some(p) = self.place(*ptr) {
                    state.insert(p, (Level::Unfenced, at));
                }
            }
            Stmt::Op { op: Op::FenceProxyAsync, .. } => {
                for (level, _) in state.values_mut() {
                    *level = Level::Fenced;
                }
            }
            Stmt::Barrier(_)
            | Stmt::Op {
                op:
                    Op::NamedBarrier { .. }
                    | Op::ClusterBarrier
                    | Op::MbarrierArrive { .. }
                    | Op::MbarrierArriveExpectTx { .. }
                    | Op::MbarrierArriveRemote { .. }
                    | Op::MbarrierWait { .. },
                ..
            } => sync(&mut state),
            Stmt::Op { op: Op::Wgmma { a_desc, steps, .. }, .. } => {
                for step in steps {
                    if a_desc.is_some() {
                        self.read(&state, step.a, at, "wgmma")?;
                    }
                    self.read(&state, step.b, at, "wgmma")?;
                }
            }
            Stmt::Op { op: Op::TmaStore { src, .. }, .. } => self.read(&state, *src, at, "a TMA store")?,
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
                // Threads of no region skip the chain.
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
            Stmt::Emit(_) | Stmt::Op { .. } | Stmt::WriteVar { .. } => {}
        }
        Ok(Some(state))
    }

    /// A loop whose iteration runs `parts` in order (a `while`'s header, then its body), entered with `entry`: the
    /// head's state is the fixed point of the entry joined with every iteration's end; the loop may exit at its
    /// head (a trip count of 0, the `while`'s test) or through a `break`.
    fn looped(&mut self, parts: &[&Block], entry: State, at: Loc) -> Result<Option<State>, Unfenced> {
        let mut head = entry;
        // Each round only adds places or raises levels, of which there are finitely many.
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
            if next == head {
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

//! The two proxies of shared memory: the threads' loads and stores go through the *generic* proxy, TMA and
//! wgmma through the *async* proxy, and a generic write is ordered before an async-proxy read of the same bytes
//! only by a `fence.proxy.async` after it (PTX ISA, "Proxies" and `fence.proxy`; HOPPER.md). Without the fence,
//! wgmma may multiply what was in the tile before the stores, and a TMA store may write it to global memory.
//!
//! A forward analysis over the structured body ([`super::flow`]), per thread (every thread runs the statements
//! it reaches in program order, so the state of the thread that writes is the state at the read when the same
//! thread reads, and at the barrier that hands the tile to the reader otherwise): each shared-memory allocation (or "any shared
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
use crate::stmt::Stmt;
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

/// The first async-proxy read of `k` that a generic write may reach without a `fence.proxy.async`.
pub fn check(k: &Kernel) -> Result<(), Unfenced> {
    super::flow::run(&mut Proxies { k }, &k.body, State::new()).map(drop)
}

struct Proxies<'k> {
    k: &'k Kernel,
}

impl Proxies<'_> {
    fn place(&self, ptr: Handle<Expr>) -> Option<Place> {
        match Resource::of(self.k, ptr) {
            Resource::Alloc(a) if self.k.allocs.get(a).is_some_and(|a| a.space == AddrSpace::Shared) => {
                Some(Place::Alloc(a))
            }
            Resource::Space(AddrSpace::Shared | AddrSpace::SharedCluster) => Some(Place::AnyShared),
            Resource::Alloc(_) | Resource::Param(_) | Resource::Space(_) | Resource::Any => None,
        }
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
}

impl super::flow::Forward for Proxies<'_> {
    type State = State;
    type Error = Unfenced;

    fn transfer(&mut self, s: &Stmt, state: &mut State, at: Loc) -> Result<(), Unfenced> {
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
            } => state.retain(|_, (level, _)| *level == Level::Unfenced),
            Stmt::Op { op: Op::Wgmma { a_desc, steps, .. }, .. } => {
                for step in steps {
                    if a_desc.is_some() {
                        self.read(state, step.a, at, "wgmma")?;
                    }
                    self.read(state, step.b, at, "wgmma")?;
                }
            }
            Stmt::Op { op: Op::TmaStore { src, .. }, .. } => self.read(state, *src, at, "a TMA store")?,
            _ => {}
        }
        Ok(())
    }

    /// Unfenced over fenced over clean; a place keeps the write that made it so.
    fn join(into: &mut State, other: &State) {
        for (&p, &(level, at)) in other {
            let x = into.entry(p).or_insert((level, at));
            if level > x.0 {
                *x = (level, at);
            }
        }
    }
}

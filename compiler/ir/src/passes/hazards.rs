//! `check-schedule`: the hazards that depend on the schedule's entities ([`crate::schedule`]), proved over the
//! rings the passes declared, on the IR they leave. Changes nothing.
//!
//! - **A stage refilled while a group reads it** (E0346). A ring released after its wgmma groups
//!   ([`Release::AfterGroup`]) frees the stage of iteration `i - 1` after `wgmma.wait_group 1` at the end of
//!   iteration `i`: that wait leaves the last committed group in flight, so it retires iteration `i - 1`'s groups
//!   only if iteration `i` committed one of its own. The proof: on every path through the consumers' loop body
//!   the same number of groups, at least one, is committed (no group under a condition, in an inner loop, or
//!   skipped by an exit), and a `wgmma.wait_group` of at most 1 pending group follows the last commit at the
//!   body's top level, before the stage's release.
//! - **A generic write into a ring's tile** (E0347). TMA (the async proxy) fills the tiles, and wgmma reads
//!   them through the async proxy too; a `store` or `stmatrix` into one races with the copy landing in it (no
//!   wait orders them), or with the group still reading it, and is not ordered before an async-proxy read
//!   without `fence.proxy.async`. The passes write no such store, so every one is the program's: refused.
//!
//! - **A generic write read through the async proxy without a fence** (E0349): a store or `stmatrix` into
//!   shared memory that reaches a wgmma operand or a TMA store's source with no `fence.proxy.async` between them
//!   ([`crate::analysis::proxy`]).
//!
//! - **An access to a tile a TMA load may still be writing** (E0350): a load, store, wgmma operand or TMA store
//!   of the tile on a path from the copy with no wait on the copy's mbarrier between them
//!   ([`crate::analysis::landing`]).
//!
//! `pipeline-loops` refuses the first hazard before it writes anything, at the user's statement
//! ([`groups_per_pass`]); this pass proves it again on what all the passes left, like the other checks.

use super::{Analyses, Pass, PassError, PassErrorKind, Preserved};
use crate::arena::{Handle, Loc};
use crate::codes;
use crate::effects::{Footprint, Resource};
use crate::module::{Alloc, Kernel, Module};
use crate::op::Op;
use crate::schedule::{BarrierKind, Release, Ring};
use crate::stmt::{Block, Stmt};
use cutec_diagnostics::Diagnostic;

pub struct CheckSchedule;

impl Pass for CheckSchedule {
    fn name(&self) -> &'static str {
        "check-schedule"
    }
    fn description(&self) -> &'static str {
        "prove that no ring's stage is refilled while a wgmma group reads it and that only TMA writes a ring's tiles \
         (changes nothing)"
    }
    fn run(&self, module: &mut Module, _: &mut Analyses) -> Result<(), PassError> {
        for k in &module.kernels {
            if let Err(e) = check(k) {
                return Err(PassError::at(self.name(), k, e.at, PassErrorKind::Hazard(Box::new(e))));
            }
        }
        Ok(())
    }
    fn preserves(&self) -> Preserved {
        Preserved::ALL
    }
}

/// Why a loop body does not commit the same number of wgmma groups on every path.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Uneven {
    /// A group committed under a condition: the paths through it commit different numbers.
    Conditional,
    /// A group committed in an inner loop, whose trip count may be 0.
    InLoop,
    /// A group committed in a role region, which some warpgroups skip.
    InRole,
    /// A `break`, `continue` or `return` that skips the rest of the body.
    Exit,
    /// No group at all on some path while the ring waits for groups to retire.
    None,
}

/// What is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Hazard {
    /// The consumers' loop of the ring of `tiles` does not commit its groups evenly (`why`), or does not wait
    /// for them before releasing a stage (`why` is then `None` with `unwaited`).
    StageInUse { tiles: String, why: Uneven, unwaited: bool },
    /// A generic-proxy write into `tile`, a tile of a ring.
    RingTileWrite { tile: String },
    /// A generic write that reaches an async-proxy read of the same shared memory without `fence.proxy.async`
    /// ([`crate::analysis::proxy`]); `at` is the read, `write` the write.
    Unfenced { resource: String, reader: &'static str, write: Loc },
    /// An access (`what`) to `tile` before any wait on the mbarrier the TMA load at `load` signals
    /// ([`crate::analysis::landing`]).
    Unlanded { tile: String, what: &'static str, load: Loc },
}

/// A hazard at `at` (the statement), on the ring declared at `ring`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HazardError {
    pub hazard: Hazard,
    pub at: Loc,
    pub ring: Loc,
}

impl HazardError {
    pub fn code(&self) -> &'static str {
        match self.hazard {
            Hazard::StageInUse { .. } => codes::STAGE_IN_USE,
            Hazard::RingTileWrite { .. } => codes::RING_TILE_WRITE,
            Hazard::Unfenced { .. } => codes::PROXY_FENCE,
            Hazard::Unlanded { .. } => codes::TMA_NOT_LANDED,
        }
    }

    pub fn message(&self) -> String {
        match &self.hazard {
            Hazard::StageInUse { why: Uneven::Exit, .. } => {
                "a `break`, `continue` or `return` in a pipelined loop".to_string()
            }
            Hazard::StageInUse { unwaited: true, .. } => {
                "a ring's stage is released before the wgmma group that reads it has retired".to_string()
            }
            Hazard::StageInUse { .. } => {
                "a pipelined loop's stage may be refilled while a `gemm` still reads it".to_string()
            }
            Hazard::RingTileWrite { tile } => {
                format!("a store into `{tile}`, a tile of a pipelined loop's ring, which only TMA may write")
            }
            Hazard::Unlanded { tile, what, .. } => {
                format!("{what} of `{tile}` before waiting for the TMA load that writes it")
            }
            Hazard::Unfenced { resource, reader, .. } => {
                format!("{reader} reads `{resource}` through the async proxy, after stores with no `fence.proxy.async`")
            }
        }
    }

    fn label(&self) -> &'static str {
        match &self.hazard {
            Hazard::StageInUse { why: Uneven::Conditional, .. } => "a `gemm` under this condition",
            Hazard::StageInUse { why: Uneven::InLoop, .. } => "a `gemm` in this inner loop",
            Hazard::StageInUse { why: Uneven::InRole, .. } => "a `gemm` in this role",
            Hazard::StageInUse { why: Uneven::Exit, .. } => "this leaves the iteration early",
            Hazard::StageInUse { why: Uneven::None, .. } => "this loop's iterations",
            Hazard::RingTileWrite { .. } => "a store of the generic proxy",
            Hazard::Unfenced { .. } => "this may read what was there before the stores",
            Hazard::Unlanded { .. } => "the copy may still be landing here",
        }
    }

    pub fn to_diagnostic(&self) -> Diagnostic {
        let mut d = Diagnostic::error(self.code(), self.message(), self.at.file, self.at.span)
            .with_primary_message(self.label());
        if let Hazard::Unlanded { load, .. } = self.hazard
            && load != self.at
            && load != Loc::NONE
        {
            d = d.with_label(load.file, load.span, "the copy, which signals its mbarrier when it has landed");
        }
        if let Hazard::Unfenced { write, .. } = self.hazard
            && write != self.at
            && write != Loc::NONE
        {
            d = d.with_label(write.file, write.span, "a store that reaches it unfenced");
        }
        if self.ring != self.at && self.ring != Loc::NONE {
            d = d.with_label(self.ring.file, self.ring.span, "the ring of this pipelined loop");
        }
        match &self.hazard {
            Hazard::StageInUse { why: Uneven::Exit, .. } => d
                .with_note(
                    "the compiler releases each stage after the `gemm` of the next iteration and issues the copies \
                     ahead of the loop: an iteration cut short keeps its stage, or leaves a copy in flight",
                )
                .with_help("compute every iteration, and mask what it must not contribute"),
            Hazard::StageInUse { .. } => d
                .with_note(
                    "the compiler keeps one wgmma group in flight: at the end of iteration i it waits for all but \
                     the last group and releases iteration i - 1's stage to the next copy; on an iteration that \
                     commits no group of its own, the group still in flight is iteration i - 1's, which reads the \
                     stage the copy now overwrites",
                )
                .with_help(match self.hazard {
                    Hazard::StageInUse { why: Uneven::InLoop, .. } => {
                        "unroll the inner loop that holds the `gemm` (`unroll`), so that every iteration commits the \
                         same groups"
                    }
                    _ => "call `gemm` on every iteration (mask its contribution instead of skipping it)",
                }),
            Hazard::Unlanded { .. } => d
                .with_note(
                    "TMA writes the tile asynchronously and counts its bytes on the mbarrier it names: the tile is \
                     complete only for a thread that has waited for that barrier's phase, and an access before the \
                     wait races with the copy",
                )
                .with_help("`mbarrier_wait(bar, phase)` on the copy's barrier before the tile's first use"),
            Hazard::Unfenced { .. } => d
                .with_note(
                    "the threads' stores go through the generic proxy, wgmma and TMA read shared memory through the \
                     async proxy, and only `fence.proxy.async` orders the first before the second (PTX ISA, \
                     `fence.proxy`): without it the read may see the tile as it was before the stores",
                )
                .with_help(
                    "call `fence_proxy_async()` after the stores, before the barrier that hands the tile to the \
                     readers (`sync_threads()`)",
                ),
            Hazard::RingTileWrite { .. } => d
                .with_note(
                    "TMA writes the stages through the async proxy and wgmma reads them through it too: a generic \
                     store may land before the copy does, while a group still reads the stage, or unseen by the \
                     group without `fence.proxy.async`",
                )
                .with_help("write a tile of your own (`shared` tensor), or transform the data after copying it out"),
        }
    }
}

/// The hazards of `k`'s rings, and its generic writes that reach async-proxy reads unfenced.
pub fn check(k: &Kernel) -> Result<(), HazardError> {
    for (h, ring) in k.rings.iter() {
        let at = k.rings.loc(h);
        tile_writes(k, &k.body, ring, at)?;
        if ring.release == Release::AfterGroup {
            let Some(full) = barrier_alloc(k, ring.full) else { continue };
            consumer_loops(k, &k.body, full, ring, at)?;
        }
    }
    if let Err(u) = crate::analysis::landing::check(k) {
        let hazard = Hazard::Unlanded { tile: u.tile, what: u.what, load: u.load };
        return Err(HazardError { hazard, at: u.access, ring: Loc::NONE });
    }
    // After the rings': a store into a ring's tile is E0347, whatever fences it.
    if let Err(u) = crate::analysis::proxy::check(k) {
        let hazard = Hazard::Unfenced { resource: u.resource, reader: u.reader, write: u.write };
        return Err(HazardError { hazard, at: u.read, ring: Loc::NONE });
    }
    Ok(())
}

fn barrier_alloc(k: &Kernel, b: Handle<crate::schedule::Barrier>) -> Option<Handle<Alloc>> {
    match k.barriers.get(b)?.kind {
        BarrierKind::Mbarrier { alloc, .. } => Some(alloc),
        BarrierKind::Named { .. } => None,
    }
}

fn tiles_name(k: &Kernel, ring: &Ring) -> String {
    let names: Vec<String> =
        ring.tiles.iter().map(|&t| format!("`{}`", k.allocs.get(t).map_or("?", |a| a.name.as_str()))).collect();
    names.join(", ")
}

/// E0347 for a store or `stmatrix` into a tile of `ring`.
fn tile_writes(k: &Kernel, block: &Block, ring: &Ring, ring_at: Loc) -> Result<(), HazardError> {
    for (s, at) in block.iter() {
        if matches!(s, Stmt::Store { .. } | Stmt::Op { op: Op::Stmatrix { .. }, .. }) {
            for w in Footprint::of_stmt(k, s).writes() {
                if let Resource::Alloc(a) = w.resource
                    && ring.tiles.contains(&a)
                {
                    let tile = k.allocs.get(a).map_or("?", |a| a.name.as_str()).to_string();
                    return Err(HazardError { hazard: Hazard::RingTileWrite { tile }, at, ring: ring_at });
                }
            }
        }
        for b in s.blocks() {
            tile_writes(k, b, ring, ring_at)?;
        }
    }
    Ok(())
}

/// Whether `s` waits on one of the mbarriers of `full`.
fn waits_on(k: &Kernel, s: &Stmt, full: Handle<Alloc>) -> bool {
    matches!(s, Stmt::Op { op: Op::MbarrierWait { bar, .. }, .. } if Resource::of(k, *bar) == Resource::Alloc(full))
}

/// E0346 for a loop of `block` whose body waits on the ring's `full` barriers (the consumers' loop) and does not
/// commit its groups evenly, or releases a stage before waiting for them.
fn consumer_loops(
    k: &Kernel,
    block: &Block,
    full: Handle<Alloc>,
    ring: &Ring,
    ring_at: Loc,
) -> Result<(), HazardError> {
    for (s, at) in block.iter() {
        if let Stmt::For { body, .. } | Stmt::While { body, .. } = s
            && body.stmts().iter().any(|x| waits_on(k, x, full))
        {
            let fail = |why, unwaited, at| HazardError {
                hazard: Hazard::StageInUse { tiles: tiles_name(k, ring), why, unwaited },
                at,
                ring: ring_at,
            };
            match groups_per_pass(body, at) {
                Ok(0) => return Err(fail(Uneven::None, false, at)),
                Ok(_) => {}
                Err((why, where_)) => return Err(fail(why, false, where_)),
            }
            if !waits_after_last_commit(body) {
                return Err(fail(Uneven::None, true, at));
            }
        }
        for b in s.blocks() {
            consumer_loops(k, b, full, ring, ring_at)?;
        }
    }
    Ok(())
}

/// Whether a `wgmma.wait_group` of at most one pending group follows the last statement of `body`'s top level
/// that commits a group.
fn waits_after_last_commit(body: &Block) -> bool {
    let commits = |s: &Stmt| {
        let mut found = false;
        if matches!(s, Stmt::Op { op: Op::WgmmaCommit { .. }, .. }) {
            return true;
        }
        for b in s.blocks() {
            b.visit(&mut |x| found |= matches!(x, Stmt::Op { op: Op::WgmmaCommit { .. }, .. }));
        }
        found
    };
    let stmts = body.stmts();
    let last = stmts.iter().rposition(commits).unwrap_or(0);
    stmts[last..].iter().any(|s| matches!(s, Stmt::Op { op: Op::WgmmaWait { pending: 0 | 1 }, .. }))
}

/// The number of wgmma groups one pass through `block` commits, the same on every path; otherwise why not and
/// the statement where the paths part (`outer` for a statement without a location of its own).
pub fn groups_per_pass(block: &Block, outer: Loc) -> Result<u32, (Uneven, Loc)> {
    count_groups(block, outer, false)
}

/// [`groups_per_pass`]; `inner`: inside a loop nested in the body, where `break` and `continue` stay.
fn count_groups(block: &Block, outer: Loc, inner: bool) -> Result<u32, (Uneven, Loc)> {
    let mut n = 0u32;
    for (s, at) in block.iter() {
        let at = if at == Loc::NONE { outer } else { at };
        match s {
            Stmt::Op { op: Op::WgmmaCommit { .. }, .. } => n = n.saturating_add(1),
            Stmt::If { accept, reject, .. } => {
                let (a, b) = (count_groups(accept, at, inner)?, count_groups(reject, at, inner)?);
                if a != b {
                    return Err((Uneven::Conditional, at));
                }
                n = n.saturating_add(a);
            }
            Stmt::For { .. } | Stmt::While { .. } => {
                for b in s.blocks() {
                    if count_groups(b, at, true)? != 0 {
                        return Err((Uneven::InLoop, at));
                    }
                }
            }
            Stmt::Roles(regions) => {
                for r in regions {
                    if count_groups(&r.body, at, inner)? != 0 {
                        return Err((Uneven::InRole, at));
                    }
                }
            }
            Stmt::Break | Stmt::Continue if inner => {}
            Stmt::Break | Stmt::Continue | Stmt::Return => return Err((Uneven::Exit, at)),
            Stmt::Emit(_) | Stmt::Op { .. } | Stmt::WriteVar { .. } | Stmt::Store { .. } | Stmt::Barrier(_) => {}
        }
    }
    Ok(n)
}

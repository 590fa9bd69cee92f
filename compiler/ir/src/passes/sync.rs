//! `check-sync`: on the IR the other passes leave, the rules that place threads in roles and make mbarriers
//! complete. It runs after the scheduling passes, so the roles and rings they write are held to the same rules as
//! those written by hand (the lowering refuses a source that breaks them with the source's words; this proves
//! them of whatever reaches code generation).
//!
//! | Rule | Code |
//! | --- | --- |
//! | the regions of the kernel's top-level role chains cover every warpgroup of the block | E0313 |
//! | an mbarrier allocation that is initialised is waited on | E0315 |
//! | an mbarrier allocation that is waited on is arrived on (an arrive, an `expect_tx`, a TMA load's bytes) | E0315 |
//!
//! The mbarrier rules are per allocation, not per element (the elements are run-time indices): they catch a
//! barrier nobody uses on one side. Whether each wait's phase completes, with its counts, bytes and parities, is
//! `check-protocol`'s proof.

use super::{Analyses, Pass, PassError, PassErrorKind, Preserved};
use crate::arena::{Handle, Loc};
use crate::codes;
use crate::effects::Resource;
use crate::module::{Alloc, Kernel, Module};
use crate::op::Op;
use crate::stmt::{Block, Stmt};
use cutec_diagnostics::Diagnostic;

pub struct CheckSync;

impl Pass for CheckSync {
    fn name(&self) -> &'static str {
        "check-sync"
    }
    fn description(&self) -> &'static str {
        "prove that the roles cover the block's warpgroups and that every mbarrier is waited on and arrived on \
         (changes nothing)"
    }
    fn run(&self, module: &mut Module, _: &mut Analyses) -> Result<(), PassError> {
        for kernel in &module.kernels {
            if let Some(e) = uncovered_warpgroups(kernel).or_else(|| incomplete_mbarrier(kernel)) {
                return Err(PassError::at(self.name(), kernel, e.at, PassErrorKind::Sync(Box::new(e))));
            }
        }
        Ok(())
    }
    fn preserves(&self) -> Preserved {
        Preserved::ALL
    }
}

/// A rule `check-sync` proves, broken.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SyncRule {
    /// Warpgroups `first..end` of a block of `warpgroups` run no region of the top-level role chains.
    UncoveredWarpgroups { first: u32, end: u32, warpgroups: u32 },
    /// The mbarriers of allocation `name` are initialised and never waited on.
    NeverWaited { name: String },
    /// The mbarriers of allocation `name` are waited on and never arrived on.
    NeverArrived { name: String },
}

/// A broken [`SyncRule`], at the statement that shows it (the first role chain, the initialisation, the wait).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyncError {
    pub rule: SyncRule,
    pub at: Loc,
}

impl SyncError {
    pub fn code(&self) -> &'static str {
        match self.rule {
            SyncRule::UncoveredWarpgroups { .. } => codes::ROLES_DO_NOT_FIT,
            SyncRule::NeverWaited { .. } | SyncRule::NeverArrived { .. } => codes::MBARRIER_NEVER_COMPLETES,
        }
    }

    pub fn message(&self) -> String {
        match &self.rule {
            SyncRule::UncoveredWarpgroups { first, end, .. } if end - first == 1 => {
                format!("warpgroup {first} of the block runs no role")
            }
            SyncRule::UncoveredWarpgroups { first, end, .. } => {
                format!("warpgroups {first}..{end} of the block run no role")
            }
            SyncRule::NeverWaited { name } => format!("no thread waits on `{name}`"),
            SyncRule::NeverArrived { name } => format!("this wait on `{name}` never completes"),
        }
    }

    pub fn to_diagnostic(&self) -> Diagnostic {
        let d = Diagnostic::error(self.code(), self.message(), self.at.file, self.at.span);
        match &self.rule {
            SyncRule::UncoveredWarpgroups { warpgroups, .. } => d
                .with_primary_message(format!("the roles of this chain run on part of the block's {warpgroups}"))
                .with_note(
                    "a warpgroup without a role skips the kernel's work but keeps its registers (and its place in \
                     the block's count of threads): every warpgroup of a role-split block has a role",
                )
                .with_help("give the block fewer threads, or a role more warpgroups"),
            SyncRule::NeverWaited { name } => d
                .with_primary_message(format!(
                    "the mbarriers of `{name}` are initialised here, and waited on by nobody"
                ))
                .with_note(
                    "an mbarrier orders the threads that arrive on it before the threads that wait on it; without a \
                     wait it orders nothing",
                )
                .with_help(format!(
                    "wait on it where its data is used (`mbarrier_wait({name}[s], phase)`), or remove it"
                )),
            SyncRule::NeverArrived { name } => d
                .with_primary_message(format!("nothing ever arrives on `{name}`"))
                .with_note(
                    "an mbarrier's phase completes when its expected arrivals (and transaction bytes) are in; with \
                     none, the waiting threads wait forever",
                )
                .with_help(format!(
                    "arrive on it (`mbarrier_arrive({name}[s])`, `mbarrier_arrive_expect_tx`) or name it in a \
                     `tma_load(.., bar = {name}[s])`"
                )),
        }
    }
}

/// E0313 when the kernel's body has role chains at its top level whose regions leave some warpgroup of the block
/// out. (The validator already holds each region inside the block and a chain's regions apart.)
fn uncovered_warpgroups(kernel: &Kernel) -> Option<SyncError> {
    let warpgroups = match kernel.block_size {
        Some([x, 1, 1]) if x % 128 == 0 => x / 128,
        _ => return None,
    };
    let mut covered = vec![false; warpgroups as usize];
    let mut first_chain = None;
    for (s, loc) in kernel.body.iter() {
        let Stmt::Roles(regions) = s else { continue };
        first_chain = first_chain.or(Some(regions.first().map_or(loc, |r| r.at)));
        for w in regions.iter().flat_map(|r| r.role.warpgroups()) {
            if let Some(c) = covered.get_mut(w as usize) {
                *c = true;
            }
        }
    }
    let at = first_chain?;
    let first = covered.iter().position(|c| !c)? as u32;
    let end = covered[first as usize..].iter().position(|c| *c).map_or(warpgroups, |n| first + n as u32);
    Some(SyncError { rule: SyncRule::UncoveredWarpgroups { first, end, warpgroups }, at })
}

/// What a statement does with an mbarrier.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Use {
    Init,
    Arrive,
    Wait,
}

/// The mbarrier operand of `op` and what it does with it.
fn barrier_use(op: &Op) -> Option<(Handle<crate::expr::Expr>, Use)> {
    Some(match *op {
        Op::MbarrierInit { bar, .. } => (bar, Use::Init),
        Op::MbarrierWait { bar, .. } => (bar, Use::Wait),
        // A TMA load completes its bytes on the barrier (of each CTA it multicasts to, at the same offset); a
        // remote arrive names this CTA's barrier and the peer's rank.
        Op::MbarrierArrive { bar }
        | Op::MbarrierArriveExpectTx { bar, .. }
        | Op::MbarrierArriveRemote { bar, .. }
        | Op::TmaLoad { bar, .. } => (bar, Use::Arrive),
        _ => return None,
    })
}

/// The first initialisation and the first wait of one mbarrier allocation, and whether anything arrives on it.
#[derive(Default)]
struct Uses {
    init: Option<Loc>,
    wait: Option<Loc>,
    arrives: bool,
}

/// E0315 for the first mbarrier allocation (in order of allocation) that is initialised but never waited on, or
/// waited on but never arrived on. A wait or an arrival through a pointer whose allocation is unknown counts for
/// every allocation: nothing is refused that the analysis cannot see.
fn incomplete_mbarrier(kernel: &Kernel) -> Option<SyncError> {
    let mut uses: Vec<Uses> = (0..kernel.allocs.len()).map(|_| Uses::default()).collect();
    fn walk(kernel: &Kernel, b: &Block, uses: &mut [Uses], any: &mut (bool, bool)) {
        for (s, loc) in b.iter() {
            if let Stmt::Op { op, .. } = s
                && let Some((bar, used)) = barrier_use(op)
            {
                match Resource::of(kernel, bar) {
                    Resource::Alloc(a) => {
                        if let Some(u) = uses.get_mut(a.index()) {
                            match used {
                                Use::Init => u.init = u.init.or(Some(loc)),
                                Use::Wait => u.wait = u.wait.or(Some(loc)),
                                Use::Arrive => u.arrives = true,
                            }
                        }
                    }
                    _ => match used {
                        Use::Init => {}
                        Use::Wait => any.0 = true,
                        Use::Arrive => any.1 = true,
                    },
                }
            }
            for inner in s.blocks() {
                walk(kernel, inner, uses, any);
            }
        }
    }
    // Whether some wait, and some arrival, is through a pointer of unknown allocation.
    let mut any = (false, false);
    walk(kernel, &kernel.body, &mut uses, &mut any);
    let (any_wait, any_arrive) = any;
    let name =
        |i: usize| kernel.allocs.iter().nth(i).map_or_else(|| "?".to_string(), |(_, a): (_, &Alloc)| a.name.clone());
    uses.iter().enumerate().find_map(|(i, u)| match (u.init, u.wait, u.arrives) {
        (Some(at), None, _) if !any_wait => Some(SyncError { rule: SyncRule::NeverWaited { name: name(i) }, at }),
        (_, Some(at), false) if !any_arrive => Some(SyncError { rule: SyncRule::NeverArrived { name: name(i) }, at }),
        _ => None,
    })
}

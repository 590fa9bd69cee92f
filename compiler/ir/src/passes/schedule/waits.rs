//! `complete-wgmma`: `gemm` is asynchronous, and a plain program reads its accumulator as if it were not. A
//! statement that touches a register array a wgmma may still be writing (its accumulator) or reading (an A
//! fragment in registers), a store into a shared-memory tile a wgmma reads (its A or B operand), or a `tma_load`
//! without a barrier (which may overwrite the shared-memory tiles a wgmma reads), waits for every group first
//! (`wgmma.wait_group 0`) when a group may be pending there.
//!
//! "May be pending" is a forward analysis over the structured control flow: a `wgmma.commit_group` makes groups
//! pending, `wgmma.wait_group 0` completes them (`wait_group N` with N > 0 leaves some), a branch is pending
//! after it if either side is, and a loop is entered pending if its body ends pending, except that a loop whose
//! body needs a wait for its own groups gets it at the end of the body (so none is pending where the loop exits). The wait goes before the
//! statement of the block being walked that contains the access (before an `if`, not inside it), so it stays
//! where the whole warpgroup runs when the access is under a condition on the thread. A program that already
//! waits where it reads (the hand-written kernels) gets nothing.

use super::Kernel;
use crate::arena::Handle;
use crate::expr::Expr;
use crate::module::{Alloc, Module};
use crate::op::Op;
use crate::passes::{Analyses, Pass, PassError};
use crate::stmt::{Block, RoleRegion, Stmt};
use crate::visit::{ForLoop, Out, Rewrite, rewrite_stmt};
use std::collections::HashSet;

pub struct CompleteWgmma;

impl Pass for CompleteWgmma {
    fn name(&self) -> &'static str {
        "complete-wgmma"
    }
    fn description(&self) -> &'static str {
        "wait for pending wgmma groups before their registers are touched or a barrier-less tma_load overwrites tiles"
    }
    fn run(&self, module: &mut Module, _: &mut Analyses) -> Result<(), PassError> {
        for k in &mut module.kernels {
            let arrays = async_arrays(k);
            if arrays.is_empty() {
                continue;
            }
            let operands = shared_operands(k);
            let body = std::mem::take(&mut k.body);
            let mut w = Waits { k, arrays, operands, pending: false };
            let Ok(body) = w.block(body);
            w.k.body = body;
        }
        Ok(())
    }
}

/// The register arrays wgmma reads or writes asynchronously: accumulators, and A fragments; from the groups the
/// commits declare ([`crate::schedule::WgmmaGroup`]), and from the wgmmas themselves where IR built by hand
/// declares none.
fn async_arrays(k: &Kernel) -> HashSet<Handle<Alloc>> {
    let mut set = declared(k, crate::types::AddrSpace::Local);
    k.body.visit(&mut |s| {
        if let Stmt::Op { op: Op::Wgmma { acc, a_desc, steps, .. }, .. } = s {
            set.extend(super::alloc_of(k, *acc));
            if a_desc.is_none() {
                set.extend(steps.iter().filter_map(|s| super::alloc_of(k, s.a)));
            }
        }
    });
    set
}

/// The allocations of `space` the declared wgmma groups read or write.
fn declared(k: &Kernel, space: crate::types::AddrSpace) -> HashSet<Handle<Alloc>> {
    let in_space = |a: &Handle<Alloc>| k.allocs.get(*a).is_some_and(|x| x.space == space);
    k.groups.iter().flat_map(|(_, g)| g.reads.iter().chain(&g.writes).copied()).filter(in_space).collect()
}

/// The shared-memory tiles wgmma reads: its operands in shared memory (B, and A unless A is in registers), from
/// the declared groups and the wgmmas themselves.
fn shared_operands(k: &Kernel) -> HashSet<Handle<Alloc>> {
    let mut set = declared(k, crate::types::AddrSpace::Shared);
    k.body.visit(&mut |s| {
        if let Stmt::Op { op: Op::Wgmma { a_desc, steps, .. }, .. } = s {
            for step in steps {
                set.extend(super::alloc_of(k, step.b));
                if a_desc.is_some() {
                    set.extend(super::alloc_of(k, step.a));
                }
            }
        }
    });
    set
}

struct Waits<'k> {
    k: &'k mut Kernel,
    arrays: HashSet<Handle<Alloc>>,
    /// The shared-memory tiles wgmma reads: a store into one waits for the groups that may read it.
    operands: HashSet<Handle<Alloc>>,
    /// Whether groups may be pending where the statement being rewritten starts (or the block, on entry).
    pending: bool,
}

impl Waits<'_> {
    /// Whether `s` itself (not its blocks) touches what a pending group may use.
    fn touches(&self, s: &Stmt) -> bool {
        let array = |p: Handle<Expr>| super::alloc_of(self.k, p).is_some_and(|a| self.arrays.contains(&a));
        let operand = |p: Handle<Expr>| super::alloc_of(self.k, p).is_some_and(|a| self.operands.contains(&a));
        match s {
            Stmt::Store { ptr, .. } | Stmt::Op { op: Op::Stmatrix { ptr, .. }, .. } if operand(*ptr) => true,
            Stmt::Op { op: Op::Load { ptr, .. }, .. } | Stmt::Store { ptr, .. } => array(*ptr),
            Stmt::Op { op: Op::TmaLoadUnscheduled { .. }, .. } => true,
            _ => false,
        }
    }

    fn touches_deep(&self, s: &Stmt) -> bool {
        let mut found = self.touches(s);
        for b in s.blocks() {
            b.visit(&mut |x| found |= self.touches(x));
        }
        found
    }

    /// Whether groups may be pending after `b`, entered with `pending` (no change made).
    fn after(&self, b: &Block, mut pending: bool) -> bool {
        for s in b.stmts() {
            pending = self.after_stmt(s, pending);
        }
        pending
    }

    fn after_stmt(&self, s: &Stmt, pending: bool) -> bool {
        match s {
            Stmt::Op { op: Op::WgmmaCommit { .. } | Op::Wgmma { .. }, .. } => true,
            Stmt::Op { op: Op::WgmmaWait { pending: 0 }, .. } => false,
            _ if pending && self.touches_deep(s) => {
                // A wait goes before it: what follows starts from nothing pending.
                self.after_blocks(s, false)
            }
            _ => self.after_blocks(s, pending),
        }
    }

    fn after_blocks(&self, s: &Stmt, pending: bool) -> bool {
        match s {
            Stmt::If { accept, reject, .. } => self.after(accept, pending) || self.after(reject, pending),
            Stmt::For { body, .. } | Stmt::While { body, .. } if self.wait_at_end(body) => pending,
            Stmt::For { body, .. } | Stmt::While { body, .. } => {
                let entry = pending || self.after(body, pending);
                entry || self.after(body, entry)
            }
            Stmt::Roles(regions) => regions.iter().any(|r| self.after(&r.body, pending)),
            _ => pending,
        }
    }

    /// Whether a loop's body that touches what a group it leaves pending uses waits at its end, not at its
    /// start: then no group is in flight where the loop joins the path that skipped it (ptxas serializes every
    /// wgmma of a loop, C7514, when the accumulators are read after such a join without a wait before it).
    fn wait_at_end(&self, body: &Block) -> bool {
        self.after(body, true) && body.stmts().iter().any(|s| self.touches_deep(s))
    }

    /// `block` with the waits it needs, entered with `pending`.
    fn nested(&mut self, block: Block, pending: bool) -> Block {
        let saved = std::mem::replace(&mut self.pending, pending);
        let Ok(out) = self.block(block);
        self.pending = saved;
        out
    }
}

/// The waits a block needs, with `pending` on entry: one before the first statement that touches what a pending
/// group may use; the statements' blocks rewritten with what may be pending where each starts.
impl Rewrite for Waits<'_> {
    type Error = std::convert::Infallible;

    fn block(&mut self, b: Block) -> Result<Block, Self::Error> {
        let (stmts, locs) = b.into_parts();
        let mut out = Block::new();
        let mut pending = self.pending;
        for (s, loc) in stmts.into_iter().zip(locs) {
            if pending && !matches!(s, Stmt::Op { op: Op::WgmmaWait { .. }, .. }) && self.touches_deep(&s) {
                out.push(Stmt::Op { result: None, op: Op::WgmmaWait { pending: 0 } }, loc);
                pending = false;
            }
            let next = self.after_stmt(&s, pending);
            self.pending = pending;
            rewrite_stmt(self, s, Out::new(&mut out, loc))?;
            pending = next;
        }
        Ok(out)
    }

    fn if_(&mut self, cond: Handle<Expr>, accept: Block, reject: Block, mut out: Out<'_>) -> Result<(), Self::Error> {
        let pending = self.pending;
        let accept = self.nested(accept, pending);
        let reject = self.nested(reject, pending);
        out.push(Stmt::If { cond, accept, reject });
        Ok(())
    }

    fn for_(&mut self, f: ForLoop, mut out: Out<'_>) -> Result<(), Self::Error> {
        let pending = self.pending;
        let body = if self.wait_at_end(&f.body) {
            let end = f.body.iter().last().map_or(out.loc(), |(_, l)| l);
            let mut b = self.nested(f.body, pending);
            b.push(Stmt::Op { result: None, op: Op::WgmmaWait { pending: 0 } }, end);
            b
        } else {
            let entry = pending || self.after(&f.body, pending);
            self.nested(f.body, entry)
        };
        out.push(ForLoop { body, ..f }.into());
        Ok(())
    }

    fn while_(&mut self, header: Block, cond: Handle<Expr>, body: Block, mut out: Out<'_>) -> Result<(), Self::Error> {
        let pending = self.pending;
        if self.wait_at_end(&body) {
            let end = body.iter().last().map_or(out.loc(), |(_, l)| l);
            let mut b = self.nested(body, pending);
            b.push(Stmt::Op { result: None, op: Op::WgmmaWait { pending: 0 } }, end);
            out.push(Stmt::While { header, cond, body: b });
        } else {
            let entry = pending || self.after(&body, pending);
            let header = self.nested(header, entry);
            let body = self.nested(body, entry);
            out.push(Stmt::While { header, cond, body });
        }
        Ok(())
    }

    fn roles(&mut self, regions: Vec<RoleRegion>, mut out: Out<'_>) -> Result<(), Self::Error> {
        let pending = self.pending;
        let regions = regions.into_iter().map(|r| RoleRegion { body: self.nested(r.body, pending), ..r }).collect();
        out.push(Stmt::Roles(regions));
        Ok(())
    }
}

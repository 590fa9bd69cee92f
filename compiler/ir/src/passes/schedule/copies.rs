//! `complete-copies`: every `tma_load` without a barrier that `pipeline-loops` left (outside pipelined loops)
//! gets one, waited on right after the copy: the tile is complete before its first use, wherever the copy is.
//!
//! Consecutive copies of a block (with only pure values computed between them) share one barrier: thread 0
//! expects their bytes and issues them, and every thread waits for the barrier's next phase (a variable
//! `$copy_phase` holds its parity, so a copy in a loop waits for each phase in turn). In a loop, a CTA barrier
//! before the copies makes every thread done reading the tiles' previous contents before TMA overwrites them.

use super::emit::Gen;
use super::{Kernel, Refusal, mbarriers, new_var, refuse, threads_1d};
use crate::arena::{Handle, Loc};
use crate::expr::Expr;
use crate::expr::{BinaryOp, CompareOp};
use crate::module::Module;
use crate::op::Op;
use crate::passes::{Analyses, Pass, PassError};
use crate::stmt::{Block, RoleRegion, Stmt};
use crate::visit::{ForLoop, Out, Rewrite, rewrite_stmt};

pub struct CompleteCopies;

const PASS: &str = "complete-copies";

impl Pass for CompleteCopies {
    fn name(&self) -> &'static str {
        PASS
    }
    fn description(&self) -> &'static str {
        "give every other tma_load without a barrier one, waited on before the tile is used"
    }
    fn run(&self, module: &mut Module, _: &mut Analyses) -> Result<(), PassError> {
        for k in &mut module.kernels {
            let mut any = false;
            k.body.visit(&mut |s| any |= matches!(s, Stmt::Op { op: Op::TmaLoadUnscheduled { .. }, .. }));
            if !any {
                continue;
            }
            let body = std::mem::take(&mut k.body);
            let mut complete = Complete { k, prefix: Block::new(), in_loop: false, in_role: false };
            let body = complete.block(body)?;
            let mut prefix = complete.prefix;
            prefix.append(body);
            k.body = prefix;
            crate::passes::compact::compact(k);
        }
        Ok(())
    }
}

/// The rewrite: each run of unscheduled copies (with the pure values between them) gets its barrier; the
/// barriers' initialisations go to `prefix`, which the kernel starts with. `in_loop` and `in_role` say where the
/// block being rewritten is.
struct Complete<'k> {
    k: &'k mut Kernel,
    prefix: Block,
    in_loop: bool,
    in_role: bool,
}

impl Complete<'_> {
    /// Rewrites `block` with `in_loop` or `in_role` set for it (the body of a loop, a role's region).
    fn nested(&mut self, block: Block, in_loop: bool, in_role: bool) -> Result<Block, PassError> {
        let saved = (self.in_loop, self.in_role);
        self.in_loop |= in_loop;
        self.in_role |= in_role;
        let out = self.block(block);
        (self.in_loop, self.in_role) = saved;
        out
    }

    /// The run of copies at `stmts[i..]` (with the pure values between them), completed onto `out`; gives the
    /// index after it.
    fn complete_run(&mut self, stmts: &[Stmt], locs: &[Loc], i: usize, out: &mut Block) -> Result<usize, PassError> {
        let k = &mut *self.k;
        let loc = locs[i];
        if self.in_role || k.warp_specialized {
            let why = if self.in_role { Refusal::UnboundCopyInRole } else { Refusal::UnboundCopyBesideProducer };
            return Err(refuse(PASS, k, loc, why));
        }
        if threads_1d(k).is_none() {
            return Err(refuse(PASS, k, loc, Refusal::UnboundCopyBlockNot1d));
        }
        // The run of copies from here, with the pure values between them.
        let mut copies = Vec::new();
        let mut values = Vec::new();
        let mut j = i;
        while j < stmts.len() {
            match &stmts[j] {
                Stmt::Op { op: Op::TmaLoadUnscheduled { multicast: Some(_), .. }, .. } => {
                    return Err(refuse(PASS, k, locs[j], Refusal::UnboundMulticast));
                }
                Stmt::Op { op: Op::TmaLoadUnscheduled { dst, map, coords, multicast: None }, .. } => {
                    copies.push((*dst, *map, coords.clone(), locs[j]))
                }
                Stmt::Emit(_) => values.push((stmts[j].clone(), locs[j])),
                _ => break,
            }
            j += 1;
        }
        // The values between the copies (their coordinates, and addresses) are pure: they go first.
        let mut bytes = 0u64;
        for (_, map, _, at) in &copies {
            bytes += super::box_bytes(PASS, k, *map, *at)?;
        }
        let bar = mbarriers(k, "copy_bar", 1, loc);
        super::declare_mbarriers(PASS, k, bar, 1, bytes, loc)?;
        let phase = new_var(k, "copy_phase", loc);
        {
            let mut g = Gen::new(k, loc);
            let zero = g.int(0);
            g.write(phase, zero);
            let tid = g.thread_x();
            let first = g.cmp_c(CompareOp::Eq, tid, 0);
            g.if_(first, |g| {
                let one = g.int(1);
                g.op(Op::MbarrierInit { bar, count: one });
                g.op(Op::FenceMbarrierInit);
            });
            g.barrier();
            self.prefix.append(g.finish());
        }
        for (s, at) in values {
            out.push(s, at);
        }
        let mut g = Gen::new(k, loc);
        if self.in_loop {
            g.barrier();
        }
        let tid = g.thread_x();
        let first = g.cmp_c(CompareOp::Eq, tid, 0);
        let total = g.int(i64::try_from(bytes).unwrap_or(i64::MAX));
        g.if_(first, |g| {
            g.op(Op::MbarrierArriveExpectTx { bar, bytes: total });
            for (dst, map, coords, at) in copies {
                g.loc = at;
                g.op(Op::TmaLoad { dst, map, coords, bar, multicast: None });
            }
        });
        g.loc = loc;
        let parity = g.read(phase);
        g.op(Op::MbarrierWait { bar, parity });
        let flipped = g.bin_c(BinaryOp::Xor, parity, 1);
        g.write(phase, flipped);
        out.append(g.finish());
        Ok(j)
    }
}

impl Rewrite for Complete<'_> {
    type Error = PassError;

    /// A block's runs of copies are completed here; every other statement goes through the rewrite (its nested
    /// blocks too).
    fn block(&mut self, block: Block) -> Result<Block, PassError> {
        let (stmts, locs) = block.into_parts();
        let mut out = Block::new();
        let mut i = 0;
        while i < stmts.len() {
            if matches!(stmts[i], Stmt::Op { op: Op::TmaLoadUnscheduled { .. }, .. }) {
                i = self.complete_run(&stmts, &locs, i, &mut out)?;
            } else {
                rewrite_stmt(self, stmts[i].clone(), Out::new(&mut out, locs[i]))?;
                i += 1;
            }
        }
        Ok(out)
    }

    fn for_(&mut self, f: ForLoop, mut out: Out<'_>) -> Result<(), PassError> {
        let body = self.nested(f.body, true, false)?;
        out.push(ForLoop { body, ..f }.into());
        Ok(())
    }

    fn while_(&mut self, header: Block, cond: Handle<Expr>, body: Block, mut out: Out<'_>) -> Result<(), PassError> {
        let header = self.nested(header, true, false)?;
        let body = self.nested(body, true, false)?;
        out.push(Stmt::While { header, cond, body });
        Ok(())
    }

    fn roles(&mut self, regions: Vec<RoleRegion>, mut out: Out<'_>) -> Result<(), PassError> {
        let mut rewritten = Vec::with_capacity(regions.len());
        for r in regions {
            let body = self.nested(r.body, false, true)?;
            rewritten.push(RoleRegion { body, ..r });
        }
        out.push(Stmt::Roles(rewritten));
        Ok(())
    }
}

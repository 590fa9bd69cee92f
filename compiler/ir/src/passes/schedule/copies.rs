//! `complete-copies`: every `tma_load` without a barrier that `pipeline-loops` left (outside pipelined loops)
//! gets one, waited on right after the copy: the tile is complete before its first use, wherever the copy is.
//!
//! Consecutive copies of a block (with only pure values computed between them) share one barrier: thread 0
//! expects their bytes and issues them, and every thread waits for the barrier's next phase (a variable
//! `$copy_phase` holds its parity, so a copy in a loop waits for each phase in turn). In a loop, a CTA barrier
//! before the copies makes every thread done reading the tiles' previous contents before TMA overwrites them.

use super::emit::Gen;
use super::{Kernel, Refusal, mbarriers, new_var, refuse, threads_1d};
use crate::expr::{BinaryOp, CompareOp};
use crate::module::Module;
use crate::op::Op;
use crate::passes::{Analyses, Pass, PassError};
use crate::stmt::{Block, Stmt};

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
            let mut prefix = Block::new();
            let body = complete(k, body, &mut prefix, false, false)?;
            prefix.append(body);
            k.body = prefix;
            crate::passes::compact::compact(k);
        }
        Ok(())
    }
}

fn complete(
    k: &mut Kernel,
    block: Block,
    prefix: &mut Block,
    in_loop: bool,
    in_role: bool,
) -> Result<Block, PassError> {
    let (stmts, locs) = block.into_parts();
    let mut out = Block::new();
    let mut i = 0;
    while i < stmts.len() {
        let loc = locs[i];
        if !matches!(stmts[i], Stmt::Op { op: Op::TmaLoadUnscheduled { .. }, .. }) {
            let mut s = stmts[i].clone();
            let looping = s.is_loop();
            let role = matches!(s, Stmt::Roles(_));
            for b in s.blocks_mut() {
                let inner = std::mem::take(b);
                *b = complete(k, inner, prefix, in_loop || looping, in_role || role)?;
            }
            out.push(s, loc);
            i += 1;
            continue;
        }
        if in_role || k.warp_specialized {
            let why = if in_role { Refusal::UnboundCopyInRole } else { Refusal::UnboundCopyBesideProducer };
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
            prefix.append(g.finish());
        }
        for (s, at) in values {
            out.push(s, at);
        }
        let mut g = Gen::new(k, loc);
        if in_loop {
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
        i = j;
    }
    Ok(out)
}

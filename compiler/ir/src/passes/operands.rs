//! `check-operands`: the proof, on the IR the other passes leave, that every operand of a Hopper instruction lies
//! in the range the hardware defines ([`crate::analysis::range`]). The hardware does not report these: an
//! mbarrier initialised with a count of 0 or a named barrier waiting for more threads than the block has never
//! completes, a multicast mask with no CTA in it lands nowhere. Each rule is refused where the range analysis
//! cannot prove it, with the range it found; it runs last, so what a pass generates is held to the same rules.
//!
//! | Operand | Rule | Code |
//! | --- | --- | --- |
//! | `mbarrier.init` count | `1 ..= 2^20 - 1` (PTX ISA, `mbarrier.init`) | E0330 |
//! | `mbarrier.expect_tx` bytes | `0 ..= 2^20 - 1` (the tx-count's range) | E0330 |
//! | `bar.sync` id | `1 ..= 15` (16 barriers; 0 is `sync_threads`'s) | E0331 |
//! | `bar.sync` threads | a constant multiple of 32, at most the block's threads | E0331 |
//! | `barrier_sync` id | none of the ids the compiler took for its own named barriers (the kernel's pool) | E0348 |
//! | `tma.load` multicast | a cluster, and a mask in `1 ..= 2^size - 1` | E0332 |
//! | `mbarrier.arrive.cluster` rank | `0 ..` the cluster's size | E0319 |
//! | a role's `registers` | at least the registers of its largest wgmma accumulator | E0333 |

use super::{Analyses, Pass, PassError, PassErrorKind, Preserved};
use crate::analysis::range::{Interval, Ranges, Region};
use crate::arena::{Handle, Loc};
use crate::codes;
use crate::expr::Expr;
use crate::module::{Kernel, Module};
use crate::op::Op;
use crate::stmt::{Block, Stmt};
use cutec_diagnostics::Diagnostic;

/// `2^20 - 1`: the largest arrival count of an mbarrier and the largest transaction count.
pub const MBARRIER_MAX: i128 = (1 << 20) - 1;
/// Named barriers `1..=15` (`bar.sync` has 16; 0 is the CTA barrier `sync_threads` uses).
pub const NAMED_BARRIERS: i128 = 15;

pub struct CheckOperands;

impl Pass for CheckOperands {
    fn name(&self) -> &'static str {
        "check-operands"
    }
    fn description(&self) -> &'static str {
        "prove that mbarrier counts, named barriers, multicast masks and register budgets are in range (changes nothing)"
    }
    fn run(&self, module: &mut Module, analyses: &mut Analyses) -> Result<(), PassError> {
        let module = &*module;
        super::module_info(self, module, analyses)?;
        for (i, kernel) in module.kernels.iter().enumerate() {
            let Some(ranges) = super::kernel_ranges(self, module, analyses, i)? else { continue };
            let mut check = Check { kernel, ranges };
            let cta = check.ranges.cta();
            if let Some(e) = register_budget(kernel).or_else(|| check.block(&kernel.body, cta)) {
                return Err(PassError::at(self.name(), kernel, e.at, PassErrorKind::Operand(Box::new(e))));
            }
        }
        Ok(())
    }
    fn preserves(&self) -> Preserved {
        Preserved::ALL
    }
}

/// Which rule an operand breaks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Rule {
    MbarrierCount,
    ExpectTxBytes,
    BarrierId,
    /// A `barrier_sync` of the program whose id may be one of `first..=last`, the ids the compiler took for its
    /// named barriers of `purpose` (`threads` threads each).
    CompilerBarrierId {
        first: u32,
        last: u32,
        threads: u32,
        purpose: String,
        /// The first id the compiler does not use (none past 15: every id is taken).
        free: u32,
    },
    /// The thread count of a named barrier: a constant multiple of 32 up to `block` threads (`None`: 1024).
    BarrierThreads {
        block: Option<u32>,
    },
    /// A multicast mask in a cluster of `cluster` CTAs (`None`: the kernel has no cluster).
    MulticastMask {
        cluster: Option<u32>,
    },
    /// The rank of a remote arrive in a cluster of `cluster` CTAs.
    CtaRank {
        cluster: Option<u32>,
    },
    /// The warpgroups' register budgets (each warpgroup its regions' largest, or the budget at entry outside
    /// any region) add up to `total` registers, more than the SM's `sm`: a `setmaxnreg.inc` would wait forever.
    RegisterBudget {
        total: u64,
        sm: u32,
    },
    /// A role's registers per thread, below the `needed` registers of `count` accumulators that one of its loops
    /// keeps live together (each of its iterations adds to every one), the largest `m64nNk16`.
    RoleRegisters {
        role: String,
        regs: u32,
        needed: u32,
        n: u32,
        count: usize,
    },
}

/// An operand that breaks `rule` (or is not proved to keep it): `range` is what the analysis found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OperandError {
    pub rule: Rule,
    pub range: Interval,
    /// The instruction.
    pub at: Loc,
    /// The operand, when it is computed somewhere else than at the instruction.
    pub operand: Option<Loc>,
}

impl OperandError {
    pub fn code(&self) -> &'static str {
        match self.rule {
            Rule::MbarrierCount | Rule::ExpectTxBytes => codes::MBARRIER_OPERAND,
            Rule::BarrierId | Rule::BarrierThreads { .. } => codes::NAMED_BARRIER,
            Rule::CompilerBarrierId { .. } => codes::BARRIER_ID_TAKEN,
            Rule::MulticastMask { .. } => codes::MULTICAST_MASK,
            Rule::CtaRank { .. } => codes::CTA_RANK,
            Rule::RoleRegisters { .. } => codes::ROLE_REGISTERS,
            Rule::RegisterBudget { .. } => codes::REGISTER_BUDGET,
        }
    }

    /// The rule as one line, for the error's message.
    pub fn message(&self) -> String {
        match &self.rule {
            Rule::MbarrierCount => format!("the arrival count of an mbarrier must be 1 to {MBARRIER_MAX}"),
            Rule::ExpectTxBytes => format!("the transaction bytes an mbarrier expects must be 0 to {MBARRIER_MAX}"),
            Rule::BarrierId => format!("a named barrier's id must be 1 to {NAMED_BARRIERS}"),
            Rule::CompilerBarrierId { first, last, purpose, .. } if first == last => {
                format!("this kernel's {purpose} uses named barrier {first}; a `barrier_sync` cannot share it")
            }
            Rule::CompilerBarrierId { first, last, purpose, .. } => {
                format!(
                    "this kernel's {purpose} uses named barriers {first} to {last}; a `barrier_sync` cannot share them"
                )
            }
            Rule::BarrierThreads { block: Some(b) } => {
                format!("a named barrier's thread count must be a multiple of 32 from 32 to the block's {b}")
            }
            Rule::BarrierThreads { block: None } => {
                "a named barrier's thread count must be a multiple of 32 from 32 to 1024".to_string()
            }
            Rule::MulticastMask { cluster: None } => "a multicast needs a cluster".to_string(),
            Rule::MulticastMask { cluster: Some(n) } => {
                format!("a multicast mask in a cluster of {n} CTAs must be 1 to {}", (1i128 << n) - 1)
            }
            Rule::CtaRank { cluster: None } => "another CTA's mbarrier is named, but the kernel has no cluster".into(),
            Rule::CtaRank { cluster: Some(n) } => {
                format!("the rank of a CTA in a cluster of {n} must be 0 to {}", n - 1)
            }
            Rule::RoleRegisters { role, regs, needed, count: 1, .. } => {
                format!("the role `{role}` has {regs} registers per thread, fewer than its accumulator's {needed}")
            }
            Rule::RoleRegisters { role, regs, needed, count, .. } => {
                format!(
                    "the role `{role}` has {regs} registers per thread, fewer than the {needed} of its {count} accumulators"
                )
            }
            Rule::RegisterBudget { total, sm } => {
                format!("the warpgroups' register budgets add up to {total} registers, more than the SM's {sm}")
            }
        }
    }

    fn label(&self) -> String {
        let range = self.range;
        if let Rule::RoleRegisters { n, needed, count, .. } = self.rule {
            return match count {
                1 => format!("an m64n{n} accumulator of f32 takes {needed} registers per thread"),
                _ => format!(
                    "{count} accumulators of f32 (up to m64n{n}) live in one loop take {needed} registers per thread"
                ),
            };
        }
        if let Rule::RegisterBudget { .. } = self.rule {
            return format!("the largest budget, {} registers per thread", range.hi);
        }
        if let Rule::BarrierThreads { .. } = self.rule
            && range.as_exact().is_none()
        {
            return format!("this may be {range}: it must be known at compile time");
        }
        if let Rule::MulticastMask { cluster: None } = self.rule {
            return "a multicast sends to the CTAs of a cluster, but the launch has no `cluster`".to_string();
        }
        match (range.is_empty(), range.as_exact()) {
            (true, _) => "this has no integer value".to_string(),
            (false, Some(v)) => format!("this is {v}"),
            (false, None) => format!("this may be anything in {range}"),
        }
    }

    pub fn to_diagnostic(&self) -> Diagnostic {
        let (file, span) = (self.at.file, self.at.span);
        let mut d = Diagnostic::error(self.code(), self.message(), file, span);
        d = match self.operand {
            Some(op) if op != self.at => d.with_label(op.file, op.span, self.label()),
            _ => d.with_primary_message(self.label()),
        };
        let note = match &self.rule {
            Rule::MbarrierCount => {
                "PTX ISA, `mbarrier.init`: the count is 1 to 2^20 - 1; with any other the barrier's phase never \
                 completes, or completes when it should not"
            }
            Rule::ExpectTxBytes => {
                "PTX ISA, `mbarrier.expect_tx`: the transaction count is 0 to 2^20 - 1 bytes per phase; split a \
                 larger copy over several barriers or phases"
            }
            Rule::BarrierId => "`bar.sync` has 16 barriers per CTA, and barrier 0 is the one `sync_threads()` uses",
            Rule::CompilerBarrierId { .. } => {
                "threads arriving at one barrier id count together: the compiler's threads and the program's would \
                 complete each other's phases (or wait for a count the other never makes), undefined behaviour the \
                 GPU does not report"
            }
            Rule::BarrierThreads { .. } => {
                "`bar.sync id, n` waits until n threads have arrived, a whole number of warps; threads the block \
                 does not have never arrive, and the CTA hangs"
            }
            Rule::MulticastMask { .. } => {
                "bit r of the mask sends the box to the CTA of rank r in the cluster: a mask with no bit, or a bit \
                 past the cluster, leaves a waiting CTA without its bytes"
            }
            Rule::CtaRank { .. } => "`mapa` of a rank outside the cluster is undefined, not an error the GPU reports",
            Rule::RoleRegisters { .. } => {
                "ptxas cannot give a warpgroup fewer registers than the values it keeps live: it ignores the \
                 `setmaxnreg` (advisory C7507) and the budget this role states is not the one it runs with"
            }
            Rule::RegisterBudget { .. } => {
                "PTX ISA, `setmaxnreg`: `.inc` waits until the registers it asks for are free in the SM's file; \
                 with budgets over the file some warpgroup waits forever"
            }
        };
        d = d.with_note(note);
        let help: Option<String> = match &self.rule {
            Rule::MbarrierCount | Rule::ExpectTxBytes | Rule::BarrierId if self.range.as_exact().is_none() => {
                Some("compute it from constants, or bound it with `min` and `max` so that its range is provable".into())
            }
            Rule::MulticastMask { cluster: None } => {
                Some("add `cluster = (2, 1)` (or the shape you need) to `launch`".into())
            }
            Rule::CompilerBarrierId { free, .. } if *free <= 15 => {
                Some(format!("use an id from {free} to 15: the compiler takes its ids from the lowest"))
            }
            Rule::CompilerBarrierId { .. } => Some(
                "the compiler takes every named barrier here: synchronise with `sync_threads()` or mbarriers".into(),
            ),
            Rule::RoleRegisters { count: 1, .. } => {
                Some("give the role more registers, or a smaller tile per warpgroup".into())
            }
            Rule::RoleRegisters { .. } => Some(
                "keep fewer or smaller accumulators live in one loop (a smaller BN, or the second product in its own \
                 loop), or give the role more registers"
                    .into(),
            ),
            Rule::RegisterBudget { .. } => Some("give the roles fewer registers, or the block fewer warpgroups".into()),
            _ => None,
        };
        match help {
            Some(h) => d.with_help(h),
            None => d,
        }
    }
}

/// E0314 when the warpgroups' register budgets do not fit the SM's register file (`SM_REGISTERS`): each
/// warpgroup counts the largest budget of the regions it runs (`setmaxnreg` to it), or the budget at entry if it
/// runs none. A `setmaxnreg.inc` waits until the registers are free, so a sum over the file waits forever once
/// the others have theirs; the lowering checks the same for roles written by hand, and this proves it for the
/// regions the passes write. Needs the block size (without it the budget at entry is unknown: nothing to prove).
fn register_budget(kernel: &Kernel) -> Option<OperandError> {
    let threads = kernel.block_size?.iter().product::<u32>();
    let entry = kernel.entry_registers()?;
    let mut per_warpgroup = vec![None::<u32>; threads.div_ceil(128) as usize];
    let mut largest: Option<(u32, Loc)> = None;
    fn regions(block: &Block, out: &mut Vec<(u32, u32, u32, Loc)>) {
        for stmt in block.stmts() {
            if let Stmt::Roles(chain) = stmt {
                for region in chain {
                    if let Some(r) = region.regs {
                        out.push((region.role.first, region.role.count, r, region.at));
                    }
                }
            }
            for b in stmt.blocks() {
                regions(b, out);
            }
        }
    }
    let mut found = Vec::new();
    regions(&kernel.body, &mut found);
    for (first, count, regs, loc) in found {
        for w in first..first.saturating_add(count) {
            if let Some(slot) = per_warpgroup.get_mut(w as usize) {
                *slot = Some(slot.map_or(regs, |r: u32| r.max(regs)));
            }
        }
        if largest.is_none_or(|(r, _)| regs > r) {
            largest = Some((regs, loc));
        }
    }
    let (regs, at) = largest?;
    let total: u64 = per_warpgroup.iter().map(|r| u64::from(r.unwrap_or(entry)) * 128).sum();
    let sm = cutec_target::SM_REGISTERS;
    (total > u64::from(sm)).then(|| OperandError {
        rule: Rule::RegisterBudget { total, sm },
        range: Interval::exact(regs.into()),
        at,
        operand: None,
    })
}

struct Check<'k> {
    kernel: &'k Kernel,
    ranges: Ranges<'k>,
}

impl Check<'_> {
    fn block(&mut self, block: &Block, region: Region) -> Option<OperandError> {
        for (stmt, loc) in block.iter() {
            let found = match stmt {
                Stmt::Op { op, .. } => self.op(op, loc, region),
                Stmt::Roles(regions) => {
                    let mut found = None;
                    for r in regions {
                        let inner = self.ranges.role(region, &r.role);
                        if let Some(e) = r.regs.and_then(|n| self.role_registers(r.role.kind.name(), n, &r.body, r.at))
                        {
                            return Some(e);
                        }
                        found = found.or_else(|| self.block(&r.body, inner));
                    }
                    found
                }
                other => {
                    let mut found = None;
                    for b in other.blocks() {
                        found = found.or_else(|| self.block(b, region));
                    }
                    found
                }
            };
            if found.is_some() {
                return found;
            }
        }
        None
    }

    /// The error for `value` unless it lies in `allowed`.
    fn require(
        &mut self,
        rule: Rule,
        value: Handle<Expr>,
        allowed: Interval,
        at: Loc,
        region: Region,
    ) -> Option<OperandError> {
        let range = self.ranges.of(region, value);
        if !range.is_empty() && range.within(allowed) {
            return None;
        }
        // A global operand (a literal) has no place of its own: the instruction's is the one to show.
        let operand = match self.kernel.exprs.get(value) {
            Some(e) if !e.is_global() => Some(self.kernel.exprs.loc(value)).filter(|l| *l != Loc::NONE),
            _ => None,
        };
        Some(OperandError { rule, range, at, operand })
    }

    /// E0348 for a `barrier_sync` of the program whose id may be one the compiler took from the kernel's pool
    /// (`barrier` is `None`); a barrier of the compiler's own is proved inside its declaration's ids.
    fn compiler_ids(
        &mut self,
        id: Handle<Expr>,
        barrier: Option<Handle<crate::schedule::Barrier>>,
        at: Loc,
        region: Region,
    ) -> Option<OperandError> {
        use crate::schedule::{BarrierKind, Owner};
        let range = self.ranges.of(region, id);
        let free = self
            .kernel
            .barriers
            .iter()
            .filter(|(_, b)| b.owner == Owner::Compiler)
            .filter_map(|(_, b)| match b.kind {
                BarrierKind::Named { first, count, .. } => Some(first + count),
                BarrierKind::Mbarrier { .. } => None,
            })
            .max()
            .unwrap_or(1);
        for (h, b) in self.kernel.barriers.iter() {
            let BarrierKind::Named { first, count, threads } = b.kind else { continue };
            if b.owner != Owner::Compiler {
                continue;
            }
            let ids = Interval::new(i128::from(first), i128::from(first + count) - 1);
            let rule = || Rule::CompilerBarrierId {
                first,
                last: first + count - 1,
                threads,
                purpose: b.purpose.clone(),
                free,
            };
            match barrier {
                Some(mine) if mine == h && !range.within(ids) => return self.require(rule(), id, ids, at, region),
                Some(_) => {}
                None if !range.disjoint(ids) => {
                    let operand = match self.kernel.exprs.get(id) {
                        Some(e) if !e.is_global() => Some(self.kernel.exprs.loc(id)).filter(|l| *l != Loc::NONE),
                        _ => None,
                    };
                    return Some(OperandError { rule: rule(), range, at, operand });
                }
                None => {}
            }
        }
        None
    }

    fn cluster_size(&self) -> Option<u32> {
        self.kernel.cluster.map(|c| c.iter().product())
    }

    fn op(&mut self, op: &Op, at: Loc, region: Region) -> Option<OperandError> {
        match *op {
            Op::MbarrierInit { count, .. } => {
                self.require(Rule::MbarrierCount, count, Interval::new(1, MBARRIER_MAX), at, region)
            }
            Op::MbarrierArriveExpectTx { bytes, .. } => {
                self.require(Rule::ExpectTxBytes, bytes, Interval::new(0, MBARRIER_MAX), at, region)
            }
            Op::NamedBarrier { id, threads, barrier } => {
                if let Some(e) = self.require(Rule::BarrierId, id, Interval::new(1, NAMED_BARRIERS), at, region) {
                    return Some(e);
                }
                if let Some(e) = self.compiler_ids(id, barrier, at, region) {
                    return Some(e);
                }
                let block = self.kernel.block_size.map(|b| b.iter().product::<u32>());
                let max = block.map_or(1024, i128::from).min(1024);
                let rule = Rule::BarrierThreads { block };
                let range = self.ranges.of(region, threads);
                match range.as_exact() {
                    Some(n) if n % 32 == 0 && (32..=max).contains(&n) => None,
                    _ => self.require(rule, threads, Interval::EMPTY, at, region),
                }
            }
            Op::TmaLoad { multicast: Some(mask), .. } => {
                let cluster = self.cluster_size();
                let allowed = match cluster {
                    Some(n) if n < 16 => Interval::new(1, (1 << n) - 1),
                    Some(_) => Interval::new(1, (1 << 16) - 1),
                    None => Interval::EMPTY,
                };
                self.require(Rule::MulticastMask { cluster }, mask, allowed, at, region)
            }
            Op::MbarrierArriveRemote { cta, .. } => {
                let cluster = self.cluster_size();
                let allowed = cluster.map_or(Interval::EMPTY, |n| Interval::new(0, i128::from(n) - 1));
                self.require(Rule::CtaRank { cluster }, cta, allowed, at, region)
            }
            _ => None,
        }
    }

    /// E0333 when a role's budget is below the registers its wgmma accumulators keep live: the largest one (`n /
    /// 2` values of `f32` per thread for `m64nNk16`), or the accumulators of one loop together (each iteration
    /// adds to every one, so all are live across it; an accumulator is its register array, counted once): a
    /// bound every correct allocation needs, not an estimate.
    fn role_registers(&self, role: &str, regs: u32, body: &Block, at: Loc) -> Option<OperandError> {
        // Over `b`: the largest n, and each accumulator array with the registers its wgmmas give it.
        let accumulators = |b: &Block| {
            let mut n = 0;
            let mut arrays: std::collections::BTreeMap<usize, u32> = Default::default();
            b.visit(&mut |s| {
                if let Stmt::Op { op: Op::Wgmma { shape, acc, .. }, .. } = s {
                    n = n.max(shape.n);
                    let key = crate::effects::Resource::of(self.kernel, *acc)
                        .alloc()
                        .map_or(usize::MAX - arrays.len(), |a| a.index());
                    let regs = arrays.entry(key).or_default();
                    *regs = (*regs).max(shape.n / 2);
                }
            });
            (n, arrays)
        };
        let (n, _) = accumulators(body);
        let (mut needed, mut count) = (n / 2, usize::from(n > 0));
        let mut loops = Vec::new();
        body.visit(&mut |s| {
            if let Stmt::For { body, .. } | Stmt::While { body, .. } = s {
                loops.push(body.clone());
            }
        });
        for b in &loops {
            let (_, arrays) = accumulators(b);
            let together: u32 = arrays.values().sum();
            if together > needed {
                (needed, count) = (together, arrays.len());
            }
        }
        (regs < needed).then(|| OperandError {
            rule: Rule::RoleRegisters { role: role.to_string(), regs, needed, n, count },
            range: Interval::exact(regs.into()),
            at,
            operand: None,
        })
    }
}

//! One run of the interpreter: every thread of every CTA of one cluster, for one choice of parameters and one
//! schedule, as groups of threads that have executed the same statements so far (a group splits where its
//! threads disagree on a condition, a loop bound or a barrier operand, and never merges).

use std::collections::VecDeque;

use super::memo::{Memo, Threads};
use super::ops::Flight;
use super::value::{Env, Relevant, Shape, Slot, Val, eval};
use super::{Kind, ProtocolError, Schedule, Stop};
use crate::arena::{Handle, Loc};
use crate::expr::{Dim, Expr};
use crate::hash::FxMap;
use crate::module::{Kernel, Var};
use crate::op::Op;
use crate::stmt::{Block, Stmt};
use crate::valid::KernelInfo;

/// An mbarrier: the CTA whose shared memory holds it, its allocation, its byte offset.
pub(super) type BarKey = (usize, u32, i64);

/// An mbarrier's state (SCHEDULING.md §4): the phases completed so far (unbounded), the arrivals the current
/// phase still needs, its transaction count (bytes expected minus bytes landed).
#[derive(Clone, Debug)]
pub(super) struct Mbar {
    pub init: i64,
    pub pending: i64,
    pub tx: i64,
    pub phase: i64,
    pub expected: i64,
    pub landed: i64,
    /// Whether a TMA load has signalled it (waits on it guard data, not a free slot).
    pub tma: bool,
    pub last_tx: Loc,
}

/// What a blocked group waits for.
#[derive(Clone, Copy, Debug)]
pub(super) enum Pending {
    /// Completion of phase `n` of `key` (a wait with parity `n & 1`).
    Mbar {
        key: BarKey,
        n: i64,
        parity: i64,
        at: Loc,
    },
    Named {
        id: i64,
        round: u64,
    },
    Cta {
        round: u64,
    },
    Cluster {
        round: u64,
    },
    /// The warp's `c`-th collective (`.sync.aligned` instructions converge the warp).
    Collective {
        c: u32,
    },
}

#[derive(Clone, Copy, Debug)]
pub(super) enum WhileStage {
    Start,
    Header,
    Cond,
    Body,
}

#[derive(Clone, Debug)]
pub(super) enum Frame<'k> {
    /// `row`: the block's row in the table of statements stepped over (`Relevant::row`; `None`: none, each
    /// statement is looked at).
    Block {
        block: &'k Block,
        next: usize,
        row: Option<u32>,
    },
    For {
        var: Handle<Var>,
        cur: i64,
        end: i64,
        step: i64,
        body: &'k Block,
    },
    While {
        header: &'k Block,
        cond: Handle<Expr>,
        body: &'k Block,
        stage: WhileStage,
    },
    Role(&'k str),
}

#[derive(Clone, Debug)]
pub(super) struct Group<'k> {
    pub(super) cta: usize,
    pub(super) threads: Threads,
    pub(super) env: Env,
    pub(super) stack: Vec<Frame<'k>>,
    pub(super) wait: Option<Pending>,
    pub(super) coll: u32,
    pub(super) done: bool,
    /// The phase of each barrier this group last saw complete (a wait for parity p means the next phase of
    /// parity p from there: the tag of SCHEDULING.md §5).
    pub(super) seen: FxMap<BarKey, i64>,
    pub(super) blocked_at: u64,
    /// The warps its threads are in (bit w: warp w of the CTA; a CTA has at most 4096 threads, 128 warps).
    pub(super) warps: u128,
}

/// The warps of the threads `threads` (see `Group::warps`).
pub(super) fn warps(threads: &[u32]) -> u128 {
    threads.iter().fold(0, |m, &t| m | 1u128 << (t / 32).min(127))
}

pub(super) enum Flow {
    Next,
    Blocked,
    /// The group changed (it split, or entered a block): run it again.
    Again,
}

pub(super) struct Machine<'p, 'k> {
    pub(super) kernel: &'k Kernel,
    info: &'p KernelInfo,
    relevant: &'p Relevant,
    shape: &'p Shape,
    pub(super) schedule: Schedule,
    pub(super) groups: Vec<Group<'k>>,
    pub(super) owner: Vec<Vec<usize>>,
    pub(super) exited: Vec<bool>,
    /// The threads of each CTA that have not exited (kept as groups finish: the CTA barrier waits for them).
    live: Vec<u32>,
    pub(super) mbars: FxMap<BarKey, Mbar>,
    pub(super) named: FxMap<(usize, i64), (i64, u64)>,
    cta_bar: Vec<(u32, u64)>,
    pub(super) cluster_bar: (u32, u64),
    pub(super) flights: VecDeque<Flight<'k>>,
    /// Waits that returned for the phase before a barrier's first (parity 1 on a fresh barrier).
    pub(super) early: Vec<(BarKey, Loc, String)>,
    clock: u64,
    pub(super) work: u64,
    budget: u64,
    /// The per-thread work of every run of the kernel (see [`Memo`]).
    pub(super) memo: &'p mut Memo,
}

impl<'p, 'k> Machine<'p, 'k> {
    pub fn new(
        kernel: &'k Kernel,
        info: &'p KernelInfo,
        relevant: &'p Relevant,
        shape: &'p Shape,
        schedule: Schedule,
        budget: u64,
        memo: &'p mut Memo,
    ) -> Machine<'p, 'k> {
        let ctas = shape.ctas() as usize;
        let threads = shape.threads();
        let env = Env::new(kernel, shape, relevant);
        let all = memo.intern((0..threads).collect());
        let groups: Vec<Group<'k>> = (0..ctas)
            .map(|cta| Group {
                cta,
                threads: all.clone(),
                env: env.clone(),
                stack: vec![Frame::Block { block: &kernel.body, next: 0, row: relevant.row(&kernel.body) }],
                wait: None,
                coll: 0,
                done: false,
                seen: FxMap::default(),
                blocked_at: 0,
                warps: warps(&all),
            })
            .collect();
        let owner = (0..ctas).map(|c| vec![c; threads as usize]).collect();
        Machine {
            kernel,
            info,
            relevant,
            shape,
            schedule,
            groups,
            owner,
            exited: vec![false; ctas],
            live: vec![threads; ctas],
            mbars: FxMap::default(),
            named: FxMap::default(),
            cta_bar: vec![(0, 0); ctas],
            cluster_bar: (0, 0),
            flights: VecDeque::new(),
            early: Vec::new(),
            clock: 0,
            work: 0,
            budget,
            memo,
        }
    }

    /// Runs every group to its end; the first protocol error found, or why the run says nothing.
    pub fn run(&mut self) -> Result<(), Stop> {
        loop {
            let mut progress = false;
            // The groups of the round are those there are now (a split's new groups run from the next).
            let n = self.groups.len();
            for i in 0..n {
                let gi = if self.schedule.reverse { n - 1 - i } else { i };
                progress |= self.run_group(gi)?;
                self.settle();
            }
            if self.groups.iter().all(|g| g.done) {
                return self.finish();
            }
            if !progress {
                match self.flights.pop_front() {
                    Some(f) => self.land(f)?,
                    None => return Err(self.deadlock()),
                }
            }
        }
    }

    fn run_group(&mut self, gi: usize) -> Result<bool, Stop> {
        let mut progress = false;
        loop {
            if self.work > self.budget {
                return Err(Stop::Skip("the interpretation took more steps than its budget"));
            }
            let Some(g) = self.groups.get(gi) else { return Ok(progress) };
            if g.done {
                return Ok(progress);
            }
            if let Some(p) = g.wait {
                if !self.satisfied(gi, p)? {
                    return Ok(progress);
                }
                self.pass(gi, p);
                progress = true;
                continue;
            }
            self.work += 1;
            self.clock += 1;
            match self.step(gi)? {
                Flow::Next | Flow::Again => progress = true,
                Flow::Blocked => {
                    let clock = self.clock;
                    if let Some(g) = self.groups.get_mut(gi) {
                        g.blocked_at = clock;
                    }
                    // Arriving is progress: the arrival may complete a barrier when the round settles (a group
                    // whose only step this round is its arrival, the statements before it stepped over, would
                    // otherwise look stuck).
                    progress = true;
                    // A barrier may be complete already: check again before yielding.
                    continue;
                }
            }
        }
    }

    /// Leaves a wait that is satisfied: the statement is done.
    fn pass(&mut self, gi: usize, p: Pending) {
        let Some(g) = self.groups.get_mut(gi) else { return };
        g.wait = None;
        match p {
            Pending::Mbar { key, n, .. } => {
                g.seen.insert(key, n);
            }
            Pending::Collective { .. } => {
                // `elect.sync` runs again, now that its warp has converged: its result (the lowest live lane)
                // is computed then.
                let elect = matches!(g.stack.last(), Some(Frame::Block { block, next, .. })
                    if matches!(block.stmts().get(*next), Some(Stmt::Op { op: Op::ElectOne, .. })));
                if elect {
                    return;
                }
                g.coll += 1
            }
            Pending::Named { .. } | Pending::Cta { .. } | Pending::Cluster { .. } => {}
        }
        if let Some(Frame::Block { next, .. }) = g.stack.last_mut() {
            *next += 1;
        }
    }

    fn satisfied(&mut self, gi: usize, p: Pending) -> Result<bool, Stop> {
        Ok(match p {
            Pending::Mbar { key, n, parity, at } => {
                let Some(b) = self.mbars.get(&key) else { return Ok(false) };
                let ok = b.phase > n && (b.phase - n) % 2 == 1;
                if ok && b.phase >= n + 3 {
                    let (ph, tma) = (b.phase, b.tma);
                    let why = format!(
                        "this wait for parity {parity} means phase {n} of {}, but the barrier has completed {ph} \
                         phases: it returns for phase {}, and the data of phase {n} was overwritten{}",
                        self.bar_name(key),
                        ph - 1,
                        if tma { "" } else { " or released again" }
                    );
                    return Err(self.error(Kind::Parity, at, gi, why, key));
                }
                if ok && n < 0 {
                    let who = self.who(gi);
                    self.early.push((key, at, who));
                }
                ok
            }
            Pending::Named { id, round } => {
                let cta = self.groups.get(gi).map_or(0, |g| g.cta);
                self.named.get(&(cta, id)).is_some_and(|&(_, g)| g > round)
            }
            Pending::Cta { round } => {
                let cta = self.groups.get(gi).map_or(0, |g| g.cta);
                self.cta_bar.get(cta).is_some_and(|&(_, g)| g > round)
            }
            Pending::Cluster { round } => self.cluster_bar.1 > round,
            Pending::Collective { c } => self.converged(gi, c),
        })
    }

    /// Whether every live thread of the warps of group `gi` has reached its `c`-th collective: whether every
    /// group of its CTA with a thread in one of those warps has (the groups of a CTA own its threads, each
    /// thread one group, so these are the groups of the threads of those warps).
    pub(super) fn converged(&self, gi: usize, c: u32) -> bool {
        let Some(g) = self.groups.get(gi) else { return true };
        self.groups.iter().filter(|o| o.cta == g.cta && o.warps & g.warps != 0).all(|o| {
            let at = matches!(o.wait, Some(Pending::Collective { c: oc }) if oc == c);
            o.done || o.coll > c || (o.coll == c && at)
        })
    }

    /// Completes the CTA and cluster barriers every live thread has arrived at.
    fn settle(&mut self) {
        let live = &self.live;
        for (b, &l) in self.cta_bar.iter_mut().zip(live) {
            if b.0 > 0 && b.0 >= l {
                *b = (0, b.1 + 1);
            }
        }
        let total: u32 = live.iter().sum();
        if self.cluster_bar.0 > 0 && self.cluster_bar.0 >= total {
            self.cluster_bar = (0, self.cluster_bar.1 + 1);
        }
    }

    /// Executes the group's next statement (or the loop logic at the top of its stack).
    fn step(&mut self, gi: usize) -> Result<Flow, Stop> {
        let Some(g) = self.groups.get_mut(gi) else { return Ok(Flow::Next) };
        let Some(top) = g.stack.last_mut() else {
            self.finish_group(gi)?;
            return Ok(Flow::Next);
        };
        match top {
            Frame::Block { block, next, row } => {
                let block: &'k Block = block;
                // Statements that touch neither control nor the protocol (data addresses, stores, loads) are
                // stepped over in one go: one lookup in the table of them.
                let relevant = self.relevant;
                let from = (*next).min(block.len());
                let to = match row.and_then(|r| relevant.resume(r, from)) {
                    Some(to) => to.max(from),
                    None => from + block.stmts()[from..].iter().take_while(|s| relevant.steps_over(s)).count(),
                };
                let skipped = to - from;
                *next = to;
                self.work += (skipped / 16) as u64;
                match block.stmts().get(*next) {
                    Some(stmt) => {
                        let loc = block.iter().nth(*next).map_or(Loc::NONE, |(_, l)| l);
                        self.stmt(gi, stmt, loc)
                    }
                    None => {
                        g.stack.pop();
                        Ok(Flow::Next)
                    }
                }
            }
            Frame::For { var, cur, end, step, body } => {
                if *cur < *end {
                    let (v, b) = (*var, *body);
                    let value = Slot::One(Val::Int(*cur));
                    *cur = cur.saturating_add(*step);
                    g.env.set_var(v, value);
                    g.stack.push(Frame::Block { block: b, next: 0, row: self.relevant.row(b) });
                } else {
                    g.stack.pop();
                }
                Ok(Flow::Next)
            }
            Frame::While { header, cond, body, stage } => {
                let (h, c, b) = (*header, *cond, *body);
                match *stage {
                    WhileStage::Start => {
                        *stage = WhileStage::Header;
                        g.stack.push(Frame::Block { block: h, next: 0, row: self.relevant.row(h) });
                    }
                    WhileStage::Header => *stage = WhileStage::Cond,
                    WhileStage::Body => *stage = WhileStage::Start,
                    WhileStage::Cond => {
                        let Some([v]) = self.uniform(gi, [c])? else { return Ok(Flow::Again) };
                        let row = self.relevant.row(b);
                        let Some(g) = self.groups.get_mut(gi) else { return Ok(Flow::Next) };
                        if v == Val::Int(0) {
                            g.stack.pop();
                        } else if let Some(Frame::While { stage, .. }) = g.stack.last_mut() {
                            *stage = WhileStage::Body;
                            g.stack.push(Frame::Block { block: b, next: 0, row });
                        }
                    }
                }
                Ok(Flow::Next)
            }
            Frame::Role(_) => {
                g.stack.pop();
                Ok(Flow::Next)
            }
        }
    }

    /// Advances past the current statement, then pushes `frames` (innermost last).
    pub(super) fn advance<const N: usize>(&mut self, gi: usize, frames: [Frame<'k>; N]) -> Flow {
        if let Some(g) = self.groups.get_mut(gi) {
            if let Some(Frame::Block { next, .. }) = g.stack.last_mut() {
                *next += 1;
            }
            g.stack.extend(frames);
        }
        Flow::Next
    }

    /// The frame that runs `block` from its start.
    fn enter(&self, block: &'k Block) -> Frame<'k> {
        Frame::Block { block, next: 0, row: self.relevant.row(block) }
    }

    fn stmt(&mut self, gi: usize, stmt: &'k Stmt, loc: Loc) -> Result<Flow, Stop> {
        match stmt {
            Stmt::Emit(h) => {
                if self.relevant.expr(*h) {
                    let g = self.groups.get_mut(gi).ok_or(Stop::Skip("no group"))?;
                    let (slot, n) = eval(self.kernel, self.info, self.shape, &g.env, self.memo, *h, g.cta, &g.threads);
                    self.work += (n / 32) as u64;
                    g.env.set(*h, slot);
                }
                Ok(self.advance(gi, []))
            }
            Stmt::WriteVar { var, value } => {
                if self.relevant.var(*var)
                    && let Some(g) = self.groups.get_mut(gi)
                {
                    let s = g.env.val(*value).clone();
                    g.env.set_var(*var, s);
                }
                Ok(self.advance(gi, []))
            }
            Stmt::Store { .. } => Ok(self.advance(gi, [])),
            Stmt::If { cond, accept, reject } => {
                let Some([v]) = self.uniform(gi, [*cond])? else { return Ok(Flow::Again) };
                let block = match v {
                    Val::Int(0) => reject,
                    Val::Int(_) => accept,
                    _ => return Err(Stop::Skip("a condition depends on a value the check does not know")),
                };
                let frame = self.enter(block);
                Ok(self.advance(gi, [frame]))
            }
            Stmt::For { var, start, end, step, body, .. } => {
                let Some(v) = self.uniform(gi, [*start, *end])? else { return Ok(Flow::Again) };
                let [Val::Int(s), Val::Int(e)] = v else {
                    return Err(Stop::Skip("a loop bound depends on a value the check does not know"));
                };
                let frame = Frame::For { var: *var, cur: s, end: e, step: (*step).max(1), body };
                Ok(self.advance(gi, [frame]))
            }
            Stmt::While { header, cond, body } => {
                let frame = Frame::While { header, cond: *cond, body, stage: WhileStage::Start };
                Ok(self.advance(gi, [frame]))
            }
            Stmt::Break | Stmt::Continue => {
                let brk = matches!(stmt, Stmt::Break);
                let Some(g) = self.groups.get_mut(gi) else { return Ok(Flow::Next) };
                while let Some(f) = g.stack.last_mut() {
                    match f {
                        Frame::For { .. } | Frame::While { .. } if brk => {
                            g.stack.pop();
                            break;
                        }
                        Frame::For { .. } => break,
                        Frame::While { stage, .. } => {
                            *stage = WhileStage::Start;
                            break;
                        }
                        Frame::Block { .. } | Frame::Role(_) => {
                            g.stack.pop();
                        }
                    }
                }
                Ok(Flow::Next)
            }
            Stmt::Return => {
                self.finish_group(gi)?;
                Ok(Flow::Next)
            }
            Stmt::Barrier(_) => {
                let g = self.groups.get(gi).ok_or(Stop::Skip("no group"))?;
                let (cta, n) = (g.cta, g.threads.len() as u32);
                let b = self.cta_bar.get_mut(cta).ok_or(Stop::Skip("no CTA"))?;
                b.0 += n;
                let round = b.1;
                self.block(gi, Pending::Cta { round })
            }
            Stmt::Roles(regions) => {
                // The threads split by the region their warpgroup runs (-1: none of them).
                let shape = self.shape;
                let region_of = |t: u32| {
                    let wg = shape.tid(t, Dim::X) / 128;
                    let runs = |r: &crate::stmt::RoleRegion| {
                        let w = r.role.warpgroups();
                        (i64::from(w.start)..i64::from(w.end)).contains(&wg)
                    };
                    let i = regions.iter().position(runs);
                    Val::Int(i.map_or(-1, |i| i as i64))
                };
                // The key depends on the threads and the regions alone: `regions` (by address) names it.
                let Some(v) = self.split_by(gi, regions.as_ptr() as usize, region_of) else { return Ok(Flow::Again) };
                let region = match v {
                    Val::Int(i) => usize::try_from(i).ok().and_then(|i| regions.get(i)),
                    _ => None,
                };
                let Some(r) = region else { return Ok(self.advance(gi, [])) };
                let frame = self.enter(&r.body);
                Ok(self.advance(gi, [Frame::Role(r.role.kind.name()), frame]))
            }
            Stmt::Op { op, result } => self.op(gi, op, *result, loc),
        }
    }

    /// Marks the group blocked at the current statement.
    pub(super) fn block(&mut self, gi: usize, p: Pending) -> Result<Flow, Stop> {
        if let Some(g) = self.groups.get_mut(gi) {
            g.wait = Some(p);
        }
        Ok(Flow::Blocked)
    }

    /// A group ends: its threads exit; a CTA whose threads have all exited may no longer be written.
    fn finish_group(&mut self, gi: usize) -> Result<(), Stop> {
        let Some(g) = self.groups.get_mut(gi) else { return Ok(()) };
        if !g.done
            && let Some(l) = self.live.get_mut(g.cta)
        {
            *l -= g.threads.len() as u32;
        }
        g.done = true;
        g.stack.clear();
        let cta = g.cta;
        if self.groups.iter().any(|g| g.cta == cta && !g.done) {
            return Ok(());
        }
        if let Some(e) = self.exited.get_mut(cta) {
            *e = true;
        }
        if let Some(f) = self.flights.iter().find(|f| f.targets.contains(&cta)) {
            let key = (cta, f.bar.0, f.bar.1);
            let message = format!(
                "CTA {cta} exits while this load's {} bytes for {} are still landing in its shared memory",
                f.bytes,
                self.bar_name(key)
            );
            let trace = vec![format!("the load: {}", self.say(&f.who)), self.barrier_state(key)];
            return Err(Stop::Error(Box::new(ProtocolError { kind: Kind::Exit, at: f.at, message, trace })));
        }
        Ok(())
    }
}

pub(super) fn unknown() -> Stop {
    Stop::Skip("a barrier operand depends on a value the check does not know")
}

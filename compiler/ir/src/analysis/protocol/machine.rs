//! One run of the interpreter: every thread of every CTA of one cluster, for one choice of parameters and one
//! schedule, as groups of threads that have executed the same statements so far (a group splits where its
//! threads disagree on a condition, a loop bound or a barrier operand, and never merges).

use std::collections::{HashMap, VecDeque};

use super::value::{Base, Env, Relevant, Shape, Slot, Val, eval};
use super::{Kind, ProtocolError, Schedule, Stop};
use crate::arena::{Handle, Loc};
use crate::expr::{Dim, Expr};
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
    Block { block: &'k Block, next: usize },
    For { var: Handle<Var>, cur: i64, end: i64, step: i64, body: &'k Block },
    While { header: &'k Block, cond: Handle<Expr>, body: &'k Block, stage: WhileStage },
    Role(&'k str),
}

#[derive(Clone, Debug)]
pub(super) struct Group<'k> {
    pub(super) cta: usize,
    pub(super) threads: Vec<u32>,
    pub(super) env: Env,
    pub(super) stack: Vec<Frame<'k>>,
    pub(super) wait: Option<Pending>,
    pub(super) coll: u32,
    pub(super) done: bool,
    /// The phase of each barrier this group last saw complete (a wait for parity p means the next phase of
    /// parity p from there: the tag of SCHEDULING.md §5).
    pub(super) seen: HashMap<BarKey, i64>,
    pub(super) blocked_at: u64,
}

/// A TMA load in flight: its bytes land on the barrier `bar` of each CTA of `targets`.
#[derive(Clone, Debug)]
struct Flight {
    targets: Vec<usize>,
    bar: (u32, i64),
    bytes: i64,
    /// Each target barrier's phase when the load was issued.
    phases: Vec<i64>,
    at: Loc,
    who: String,
}

enum Flow {
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
    schedule: Schedule,
    pub(super) groups: Vec<Group<'k>>,
    pub(super) owner: Vec<Vec<usize>>,
    pub(super) exited: Vec<bool>,
    pub(super) mbars: HashMap<BarKey, Mbar>,
    named: HashMap<(usize, i64), (i64, u64)>,
    cta_bar: Vec<(u32, u64)>,
    cluster_bar: (u32, u64),
    flights: VecDeque<Flight>,
    /// Waits that returned for the phase before a barrier's first (parity 1 on a fresh barrier).
    pub(super) early: Vec<(BarKey, Loc, String)>,
    clock: u64,
    pub(super) work: u64,
    budget: u64,
}

impl<'p, 'k> Machine<'p, 'k> {
    pub fn new(
        kernel: &'k Kernel,
        info: &'p KernelInfo,
        relevant: &'p Relevant,
        shape: &'p Shape,
        schedule: Schedule,
        budget: u64,
    ) -> Machine<'p, 'k> {
        let ctas = shape.ctas() as usize;
        let threads = shape.threads();
        let env = Env::new(kernel, shape, relevant);
        let groups: Vec<Group<'k>> = (0..ctas)
            .map(|cta| Group {
                cta,
                threads: (0..threads).collect(),
                env: env.clone(),
                stack: vec![Frame::Block { block: &kernel.body, next: 0 }],
                wait: None,
                coll: 0,
                done: false,
                seen: HashMap::new(),
                blocked_at: 0,
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
            mbars: HashMap::new(),
            named: HashMap::new(),
            cta_bar: vec![(0, 0); ctas],
            cluster_bar: (0, 0),
            flights: VecDeque::new(),
            early: Vec::new(),
            clock: 0,
            work: 0,
            budget,
        }
    }

    /// Runs every group to its end; the first protocol error found, or why the run says nothing.
    pub fn run(&mut self) -> Result<(), Stop> {
        loop {
            let mut progress = false;
            let n = self.groups.len();
            let order: Vec<usize> = if self.schedule.reverse { (0..n).rev().collect() } else { (0..n).collect() };
            for gi in order {
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
                let elect = matches!(g.stack.last(), Some(Frame::Block { block, next })
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

    /// Whether every live thread of the warps of group `gi` has reached its `c`-th collective.
    fn converged(&self, gi: usize, c: u32) -> bool {
        let Some(g) = self.groups.get(gi) else { return true };
        let Some(owner) = self.owner.get(g.cta) else { return true };
        let mut last_warp = u32::MAX;
        for &t in &g.threads {
            let w = t / 32;
            if w == last_warp {
                continue;
            }
            last_warp = w;
            for u in w * 32..(w * 32 + 32).min(owner.len() as u32) {
                let Some(o) = owner.get(u as usize).and_then(|&o| self.groups.get(o)) else { continue };
                let at = matches!(o.wait, Some(Pending::Collective { c: oc }) if oc == c);
                if !o.done && o.coll <= c && !(o.coll == c && at) {
                    return false;
                }
            }
        }
        true
    }

    /// Completes the CTA and cluster barriers every live thread has arrived at.
    fn settle(&mut self) {
        let ctas = self.exited.len();
        let mut live = vec![0u32; ctas];
        for g in self.groups.iter().filter(|g| !g.done) {
            if let Some(l) = live.get_mut(g.cta) {
                *l += g.threads.len() as u32;
            }
        }
        for (b, &l) in self.cta_bar.iter_mut().zip(&live) {
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
            Frame::Block { block, next } => {
                let block: &'k Block = block;
                // Statements that touch neither control nor the protocol (data addresses, stores, loads) are
                // stepped over in one go.
                let relevant = self.relevant;
                let skipped = block.stmts()[(*next).min(block.len())..]
                    .iter()
                    .take_while(|s| match s {
                        Stmt::Emit(h) => !relevant.expr(*h),
                        Stmt::WriteVar { var, .. } => !relevant.var(*var),
                        Stmt::Store { .. } => true,
                        Stmt::Op { op, .. } => super::value::inert_op(op),
                        Stmt::If { .. } | Stmt::For { .. } | Stmt::While { .. } => relevant.inert(s),
                        _ => false,
                    })
                    .count();
                *next += skipped;
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
                    g.stack.push(Frame::Block { block: b, next: 0 });
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
                        g.stack.push(Frame::Block { block: h, next: 0 });
                    }
                    WhileStage::Header => *stage = WhileStage::Cond,
                    WhileStage::Body => *stage = WhileStage::Start,
                    WhileStage::Cond => {
                        let Some(v) = self.uniform(gi, &[c])? else { return Ok(Flow::Again) };
                        let Some(g) = self.groups.get_mut(gi) else { return Ok(Flow::Next) };
                        if v.first() == Some(&Val::Int(0)) {
                            g.stack.pop();
                        } else if let Some(Frame::While { stage, .. }) = g.stack.last_mut() {
                            *stage = WhileStage::Body;
                            g.stack.push(Frame::Block { block: b, next: 0 });
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
    fn advance(&mut self, gi: usize, frames: Vec<Frame<'k>>) -> Flow {
        if let Some(g) = self.groups.get_mut(gi) {
            if let Some(Frame::Block { next, .. }) = g.stack.last_mut() {
                *next += 1;
            }
            g.stack.extend(frames);
        }
        Flow::Next
    }

    fn stmt(&mut self, gi: usize, stmt: &'k Stmt, loc: Loc) -> Result<Flow, Stop> {
        match stmt {
            Stmt::Emit(h) => {
                if self.relevant.expr(*h) {
                    let g = self.groups.get(gi).ok_or(Stop::Skip("no group"))?;
                    let (slot, n) = eval(self.kernel, self.info, self.shape, &g.env, *h, g.cta, &g.threads);
                    self.work += (n / 32) as u64;
                    if let Some(g) = self.groups.get_mut(gi) {
                        g.env.set(*h, slot);
                    }
                }
                Ok(self.advance(gi, vec![]))
            }
            Stmt::WriteVar { var, value } => {
                if self.relevant.var(*var)
                    && let Some(g) = self.groups.get_mut(gi)
                {
                    let s = g.env.val(*value).clone();
                    g.env.set_var(*var, s);
                }
                Ok(self.advance(gi, vec![]))
            }
            Stmt::Store { .. } => Ok(self.advance(gi, vec![])),
            Stmt::If { cond, accept, reject } => {
                let Some(v) = self.uniform(gi, &[*cond])? else { return Ok(Flow::Again) };
                let block = match v.first() {
                    Some(Val::Int(0)) => reject,
                    Some(Val::Int(_)) => accept,
                    _ => return Err(Stop::Skip("a condition depends on a value the check does not know")),
                };
                Ok(self.advance(gi, vec![Frame::Block { block, next: 0 }]))
            }
            Stmt::For { var, start, end, step, body, .. } => {
                let Some(v) = self.uniform(gi, &[*start, *end])? else { return Ok(Flow::Again) };
                let (Some(Val::Int(s)), Some(Val::Int(e))) = (v.first(), v.get(1)) else {
                    return Err(Stop::Skip("a loop bound depends on a value the check does not know"));
                };
                let frame = Frame::For { var: *var, cur: *s, end: *e, step: (*step).max(1), body };
                Ok(self.advance(gi, vec![frame]))
            }
            Stmt::While { header, cond, body } => {
                let frame = Frame::While { header, cond: *cond, body, stage: WhileStage::Start };
                Ok(self.advance(gi, vec![frame]))
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
                let Some(v) = self.split_by(gi, region_of) else { return Ok(Flow::Again) };
                let region = match v {
                    Val::Int(i) => usize::try_from(i).ok().and_then(|i| regions.get(i)),
                    _ => None,
                };
                let Some(r) = region else { return Ok(self.advance(gi, vec![])) };
                Ok(self.advance(gi, vec![Frame::Role(&r.role.name), Frame::Block { block: &r.body, next: 0 }]))
            }
            Stmt::Op { op, result } => self.op(gi, op, *result, loc),
        }
    }

    /// Marks the group blocked at the current statement.
    fn block(&mut self, gi: usize, p: Pending) -> Result<Flow, Stop> {
        if let Some(g) = self.groups.get_mut(gi) {
            g.wait = Some(p);
        }
        Ok(Flow::Blocked)
    }

    fn op(&mut self, gi: usize, op: &'k Op, result: Option<Handle<Expr>>, at: Loc) -> Result<Flow, Stop> {
        let (cta, n) = match self.groups.get(gi) {
            Some(g) => (g.cta, g.threads.len() as i64),
            None => return Ok(Flow::Next),
        };
        match *op {
            Op::MbarrierInit { bar, count } => {
                let Some(v) = self.uniform(gi, &[bar, count])? else { return Ok(Flow::Again) };
                let key = self.key(cta, v.first())?;
                let Some(&Val::Int(count)) = v.get(1) else { return Err(unknown()) };
                let m = Mbar {
                    init: count,
                    pending: count,
                    tx: 0,
                    phase: 0,
                    expected: 0,
                    landed: 0,
                    tma: false,
                    last_tx: Loc::NONE,
                };
                self.mbars.insert(key, m);
                Ok(self.advance(gi, vec![]))
            }
            Op::MbarrierArriveExpectTx { bar, bytes } => {
                let Some(v) = self.uniform(gi, &[bar, bytes])? else { return Ok(Flow::Again) };
                let key = self.key(cta, v.first())?;
                let Some(&Val::Int(bytes)) = v.get(1) else { return Err(unknown()) };
                for _ in 0..n {
                    self.arrive(gi, key, bytes, at)?;
                }
                Ok(self.advance(gi, vec![]))
            }
            Op::MbarrierArrive { bar } => {
                let Some(v) = self.uniform(gi, &[bar])? else { return Ok(Flow::Again) };
                let key = self.key(cta, v.first())?;
                for _ in 0..n {
                    self.arrive(gi, key, 0, at)?;
                }
                Ok(self.advance(gi, vec![]))
            }
            Op::MbarrierArriveRemote { bar, cta: rank } => {
                let Some(v) = self.uniform(gi, &[bar, rank])? else { return Ok(Flow::Again) };
                let Some(&Val::Int(r)) = v.get(1) else { return Err(unknown()) };
                let target = usize::try_from(r).ok().filter(|&r| r < self.exited.len()).ok_or_else(unknown)?;
                let key = self.key(target, v.first())?;
                if self.exited.get(target).copied().unwrap_or(false) {
                    let why = format!("CTA {target} has exited: this arrival on {} lands nowhere", self.bar_name(key));
                    return Err(self.error(Kind::Exit, at, gi, why, key));
                }
                for _ in 0..n {
                    self.arrive(gi, key, 0, at)?;
                }
                Ok(self.advance(gi, vec![]))
            }
            Op::MbarrierWait { bar, parity } => {
                let Some(v) = self.uniform(gi, &[bar, parity])? else { return Ok(Flow::Again) };
                let key = self.key(cta, v.first())?;
                let Some(&Val::Int(p)) = v.get(1) else { return Err(unknown()) };
                let p = p & 1;
                let seen = self.groups.get(gi).and_then(|g| g.seen.get(&key).copied()).unwrap_or(-1);
                // The next phase of parity p from the last one this group saw complete.
                let n = if seen.rem_euclid(2) == p { seen } else { seen + 1 };
                self.block(gi, Pending::Mbar { key, n, parity: p, at })
            }
            Op::TmaLoadUnscheduled { .. } => Err(Stop::Skip("a TMA load without its barrier (not scheduled)")),
            Op::TmaLoad { map, bar, multicast, .. } => {
                let mut ops = vec![map, bar];
                ops.extend(multicast);
                let Some(v) = self.uniform(gi, &ops)? else { return Ok(Flow::Again) };
                let bytes = match v.first() {
                    Some(Val::Ptr { base: Base::Param(i), .. }) => self.kernel.tma_box_bytes(*i),
                    _ => None,
                };
                let Some(bytes) = bytes.and_then(|b| i64::try_from(b).ok()) else {
                    return Err(Stop::Skip("a TMA load's box size is not known"));
                };
                let (_, alloc, off) = self.key(cta, v.get(1))?;
                let targets: Vec<usize> = match v.get(2) {
                    None => vec![cta],
                    Some(Val::Int(mask)) => (0..self.exited.len()).filter(|r| mask >> r & 1 == 1).collect(),
                    Some(_) => return Err(unknown()),
                };
                for _ in 0..n {
                    self.issue(gi, &targets, (alloc, off), bytes, at)?;
                }
                Ok(self.advance(gi, vec![]))
            }
            Op::NamedBarrier { id, threads } => {
                let Some(v) = self.uniform(gi, &[id, threads])? else { return Ok(Flow::Again) };
                let (Some(&Val::Int(id)), Some(&Val::Int(count))) = (v.first(), v.get(1)) else {
                    return Err(unknown());
                };
                let b = self.named.entry((cta, id)).or_insert((0, 0));
                b.0 += n;
                let round = b.1;
                if b.0 >= count {
                    *b = (b.0 - count, b.1 + 1);
                }
                self.block(gi, Pending::Named { id, round })
            }
            Op::ClusterBarrier => {
                self.cluster_bar.0 += n as u32;
                let round = self.cluster_bar.1;
                self.block(gi, Pending::Cluster { round })
            }
            Op::ElectOne => {
                let c = self.groups.get(gi).map_or(0, |g| g.coll);
                // The group itself stands at this collective (`converged` counts a group there by its wait).
                if let Some(g) = self.groups.get_mut(gi) {
                    g.wait = Some(Pending::Collective { c });
                }
                let converged = self.converged(gi, c);
                if let Some(g) = self.groups.get_mut(gi) {
                    g.wait = None;
                }
                if !converged {
                    return self.block(gi, Pending::Collective { c });
                }
                // True in the lowest live lane of each warp.
                let elected = self.groups.get(gi).map(|g| {
                    let owner = self.owner.get(g.cta);
                    let lowest = |t: u32| {
                        (t / 32 * 32..t).all(|u| {
                            owner
                                .and_then(|o| o.get(u as usize))
                                .and_then(|&o| self.groups.get(o))
                                .is_none_or(|o| o.done)
                        })
                    };
                    let v = g.threads.iter().map(|&t| Val::Int(i64::from(lowest(t)))).collect();
                    super::value::collapse(&g.threads, v)
                });
                if let (Some(g), Some(r), Some(s)) = (self.groups.get_mut(gi), result, elected) {
                    g.env.set(r, s);
                    g.coll += 1;
                }
                Ok(self.advance(gi, vec![]))
            }
            Op::Shuffle { .. }
            | Op::Stmatrix { .. }
            | Op::WgmmaFence
            | Op::Wgmma { .. }
            | Op::WgmmaCommit
            | Op::WgmmaWait { .. }
            | Op::Setmaxnreg { .. } => {
                let c = self.groups.get(gi).map_or(0, |g| g.coll);
                self.block(gi, Pending::Collective { c })
            }
            Op::Load { .. }
            | Op::TmaStore { .. }
            | Op::BulkCommit
            | Op::BulkWait { .. }
            | Op::PrefetchTensorMap { .. }
            | Op::FenceMbarrierInit
            | Op::FenceProxyAsync => Ok(self.advance(gi, vec![])),
        }
    }

    /// The barrier a pointer names in CTA `cta`.
    fn key(&self, cta: usize, v: Option<&Val>) -> Result<BarKey, Stop> {
        match v {
            Some(&Val::Ptr { base: Base::Alloc(a), off, rank: None }) => Ok((cta, a, off)),
            _ => Err(Stop::Skip("an mbarrier's address is not known")),
        }
    }

    /// One arrival (with `bytes` expected) on `key`.
    fn arrive(&mut self, gi: usize, key: BarKey, bytes: i64, at: Loc) -> Result<(), Stop> {
        // The barrier's name is formatted only for an error: this runs for every arrival of every launch.
        let Some(b) = self.mbars.get_mut(&key) else {
            let why = format!("{} is not initialised when this thread arrives on it", self.bar_name(key));
            return Err(self.error(Kind::Misuse, at, gi, why, key));
        };
        if b.pending == 0 {
            let (phase, init) = (b.phase, b.init);
            let why = format!(
                "phase {phase} of {} has all its {init} arrivals and waits only for bytes: this is one arrival too \
                 many",
                self.bar_name(key)
            );
            return Err(self.error(Kind::Misuse, at, gi, why, key));
        }
        b.pending -= 1;
        if bytes != 0 {
            b.tx += bytes;
            b.expected += bytes;
            b.last_tx = at;
        }
        complete(b);
        Ok(())
    }

    /// A TMA load by one thread: lands now, or later (the schedule decides).
    fn issue(&mut self, gi: usize, targets: &[usize], bar: (u32, i64), bytes: i64, at: Loc) -> Result<(), Stop> {
        let mut phases = Vec::with_capacity(targets.len());
        for &t in targets {
            let key = (t, bar.0, bar.1);
            if self.exited.get(t).copied().unwrap_or(false) {
                let why = format!("CTA {t} has exited: this load's bytes for {} land in no CTA", self.bar_name(key));
                return Err(self.error(Kind::Exit, at, gi, why, key));
            }
            match self.mbars.get_mut(&key) {
                Some(b) => {
                    b.tma = true;
                    phases.push(b.phase);
                }
                None => {
                    let why = format!("{} is not initialised when this load signals it", self.bar_name(key));
                    return Err(self.error(Kind::Misuse, at, gi, why, key));
                }
            }
        }
        let f = Flight { targets: targets.to_vec(), bar, bytes, phases, at, who: self.who(gi) };
        if self.schedule.late {
            self.flights.push_back(f);
            Ok(())
        } else {
            self.land(f)
        }
    }

    /// The bytes of a load land on its barriers.
    fn land(&mut self, f: Flight) -> Result<(), Stop> {
        for (&t, &issued) in f.targets.iter().zip(&f.phases) {
            let key = (t, f.bar.0, f.bar.1);
            let Some(b) = self.mbars.get(&key) else { continue };
            let over = b.pending == 0 && (b.tx <= 0 || f.bytes > b.tx);
            if b.phase != issued || over {
                let name = self.bar_name(key);
                let Some(b) = self.mbars.get(&key) else { continue };
                let why = if b.phase != issued {
                    format!(
                        "this load was issued in phase {issued} of {name}, but that phase completed before its {} \
                         bytes landed: the phase expected {} bytes and got them from other loads",
                        f.bytes, b.expected
                    )
                } else {
                    format!(
                        "phase {} of {name} expects {} bytes (`expect_tx`), but the loads issued in it deliver \
                         more: {} have landed, and this one brings {}",
                        b.phase, b.expected, b.landed, f.bytes
                    )
                };
                return Err(Stop::Error(Box::new(ProtocolError {
                    kind: Kind::Bytes,
                    at: f.at,
                    message: why,
                    trace: vec![format!("the load: {}", f.who)],
                })));
            }
            let Some(b) = self.mbars.get_mut(&key) else { continue };
            b.tx -= f.bytes;
            b.landed += f.bytes;
            complete(b);
        }
        Ok(())
    }

    /// A group ends: its threads exit; a CTA whose threads have all exited may no longer be written.
    fn finish_group(&mut self, gi: usize) -> Result<(), Stop> {
        let Some(g) = self.groups.get_mut(gi) else { return Ok(()) };
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
            let trace = vec![format!("the load: {}", f.who), self.barrier_state(key)];
            return Err(Stop::Error(Box::new(ProtocolError { kind: Kind::Exit, at: f.at, message, trace })));
        }
        Ok(())
    }
}

/// Completes the barrier's phase when every arrival is in and every expected byte has landed.
fn complete(b: &mut Mbar) {
    if b.pending == 0 && b.tx == 0 {
        b.phase += 1;
        b.pending = b.init;
        b.expected = 0;
        b.landed = 0;
    }
}

pub(super) fn unknown() -> Stop {
    Stop::Skip("a barrier operand depends on a value the check does not know")
}

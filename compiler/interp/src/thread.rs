//! One thread: its registers (expression values and variables), its register arrays, and its continuation, a
//! stack of frames over the structured blocks of the kernel body, so that it can stop at any synchronisation
//! point and resume there.

use crate::error::InterpError;
use crate::machine::{World, thread_ref};
use crate::numeric;
use crate::value::{Mem, Val};
use cutec_ir::{Barrier, Block, Expr, Handle, Kernel, Loc, Op, Scalar, Stmt, Var};

/// Where a thread is in the body.
pub(crate) enum Frame<'k> {
    /// The statements of a block, `pc` the next one.
    Block { block: &'k Block, pc: usize },
    /// A `for` loop whose body is the frame above it (when it runs).
    For { var: Handle<Var>, end: i64, step: i64, ty: Scalar, body: &'k Block },
    /// A `while` loop: the header or (`in_body`) the body is the frame above it.
    While { header: &'k Block, cond: Handle<Expr>, body: &'k Block, in_body: bool },
}

/// What a blocked thread waits for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Blocked<'k> {
    /// `bar.sync id[, count]`: `count` threads, or every thread of the CTA that has not exited.
    Bar { id: u32, count: Option<u32> },
    /// `barrier.cluster`.
    Cluster,
    /// `mbarrier.wait` for the phase of parity `parity` of the mbarrier at `offset` in CTA `cta`'s shared memory.
    Mbarrier { cta: usize, offset: i64, parity: u32 },
    /// A warp or warpgroup collective: the operation, executed once its lanes have all reached it.
    Collective { op: &'k Op, result: Option<Handle<Expr>> },
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct BlockedAt<'k> {
    pub what: Blocked<'k>,
    pub loc: Loc,
    /// The order of arrival, which decides who a counted barrier releases first.
    pub arrival: u64,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum State<'k> {
    Ready,
    Blocked(BlockedAt<'k>),
    Done,
}

pub(crate) struct Thread<'k> {
    pub cta: usize,
    pub tid: [u32; 3],
    /// The index in the CTA, `x + y * bx + z * bx * by`: warp `linear / 32`, lane `linear % 32`.
    pub linear: u32,
    pub vals: Vec<Val>,
    pub vars: Vec<Val>,
    /// The register arrays, by allocation index (empty for the others), zeroed at the start.
    pub locals: Vec<Vec<u8>>,
    pub frames: Vec<Frame<'k>>,
    pub state: State<'k>,
    /// The thread's slot in the cluster's vector clocks (`race.rs`), its clock and what its proxy fences cover.
    pub slot: u32,
    pub vc: crate::race::Clock,
    pub fenced: crate::race::Clock,
    /// In-flight asynchronous reads (indices into `Races::inflight`) not yet committed, and the committed
    /// groups, oldest first: of wgmma and of TMA stores.
    pub wgmma_open: Vec<usize>,
    pub wgmma_groups: std::collections::VecDeque<Vec<usize>>,
    pub bulk_open: Vec<usize>,
    pub bulk_groups: std::collections::VecDeque<Vec<usize>>,
    /// The register arrays (accumulators, A fragments) of wgmma groups in flight: not committed, then by group.
    pub regs_open: Vec<RegisterUse>,
    pub regs_groups: std::collections::VecDeque<Vec<RegisterUse>>,
    /// The registers per thread the last `setmaxnreg` set (`None`: the kernel's at entry).
    pub registers: Option<u32>,
}

/// Bytes `start..end` of register array `alloc`, used by the wgmma at `loc` until its group is retired.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct RegisterUse {
    pub alloc: u32,
    pub start: i64,
    pub end: i64,
    pub loc: Loc,
}

impl Thread<'_> {
    /// The wgmma that still uses byte range `start..end` of register array `alloc`, if one does.
    pub fn register_in_flight(&self, alloc: u32, start: i64, end: i64) -> Option<Loc> {
        self.regs_open
            .iter()
            .chain(self.regs_groups.iter().flatten())
            .find(|u| u.alloc == alloc && u.start < end && start < u.end)
            .map(|u| u.loc)
    }
}

impl<'k> Thread<'k> {
    pub fn new(kernel: &'k Kernel, cta: usize, tid: [u32; 3], block: [u32; 3]) -> Thread<'k> {
        let linear = tid[0] + tid[1] * block[0] + tid[2] * block[0] * block[1];
        let slot = cta as u32 * block[0] * block[1] * block[2] + linear;
        let mut vc = crate::race::Clock::new();
        crate::race::tick(&mut vc, slot);
        let locals = kernel
            .allocs
            .iter()
            .map(
                |(_, a)| {
                    if a.space == cutec_ir::AddrSpace::Local { vec![0; a.size_bytes() as usize] } else { Vec::new() }
                },
            )
            .collect();
        Thread {
            cta,
            tid,
            linear,
            vals: vec![Val::Undef; kernel.exprs.len()],
            vars: vec![Val::Undef; kernel.vars.len()],
            locals,
            frames: vec![Frame::Block { block: &kernel.body, pc: 0 }],
            state: State::Ready,
            slot,
            vc,
            fenced: crate::race::Clock::new(),
            wgmma_open: Vec::new(),
            wgmma_groups: std::collections::VecDeque::new(),
            bulk_open: Vec::new(),
            bulk_groups: std::collections::VecDeque::new(),
            regs_open: Vec::new(),
            regs_groups: std::collections::VecDeque::new(),
            registers: None,
        }
    }

    /// Retires the asynchronous reads of the groups beyond the `pending` newest.
    fn retire_groups(&mut self, world: &mut World<'k>, wgmma: bool, pending: u32) {
        loop {
            let groups = if wgmma { &mut self.wgmma_groups } else { &mut self.bulk_groups };
            if groups.len() <= pending as usize {
                break;
            }
            let Some(group) = groups.pop_front() else { break };
            let who = crate::race::Who {
                slot: self.slot,
                vc: &self.vc,
                fenced: &self.fenced,
                thread: thread_ref(world, self.cta, self.tid),
            };
            if let Some(r) = world.races.as_mut() {
                for id in group {
                    r.retire(id, &who);
                }
            }
        }
    }

    pub fn lane(&self) -> u32 {
        self.linear % 32
    }

    fn block_on(&mut self, what: Blocked<'k>, loc: Loc) {
        self.state = State::Blocked(BlockedAt { what, loc, arrival: 0 });
    }

    /// Runs until the thread blocks or exits.
    pub fn run(&mut self, world: &mut World<'k>) -> Result<(), InterpError> {
        self.state = State::Ready;
        while self.state == State::Ready {
            let Some(frame) = self.frames.last_mut() else {
                self.state = State::Done;
                break;
            };
            let (stmt, loc) = match frame {
                Frame::Block { block, pc } => match block.iter().nth(*pc) {
                    Some(s) => {
                        *pc += 1;
                        s
                    }
                    None => {
                        self.frames.pop();
                        self.end_of_block(world)?;
                        continue;
                    }
                },
                // A loop frame on top: its body or header has just been left by `continue`.
                Frame::For { .. } | Frame::While { .. } => {
                    self.next_iteration(world)?;
                    continue;
                }
            };
            world.steps += 1;
            if world.steps > world.max_steps {
                return Err(InterpError::StepLimit { limit: world.max_steps });
            }
            self.exec(world, stmt, loc)?;
        }
        Ok(())
    }

    /// A block has ended: a loop's body or header goes on to the loop's next step.
    fn end_of_block(&mut self, world: &mut World<'k>) -> Result<(), InterpError> {
        if matches!(self.frames.last(), Some(Frame::For { .. } | Frame::While { .. })) {
            self.next_iteration(world)?;
        }
        Ok(())
    }

    /// The loop frame on top goes on: a `for` steps its variable and runs its body again or ends; a `while`
    /// runs its header after its body, and its body or nothing after its header.
    fn next_iteration(&mut self, world: &mut World<'k>) -> Result<(), InterpError> {
        match self.frames.pop() {
            Some(Frame::For { var, end, step, ty, body }) => {
                let v = numeric::int_value(ty, self.var_bits(var)?).wrapping_add(step);
                self.vars[var.index()] = Val::Bits(numeric::int_bits(ty, v));
                if v < end {
                    self.frames.push(Frame::For { var, end, step, ty, body });
                    self.frames.push(Frame::Block { block: body, pc: 0 });
                }
            }
            Some(Frame::While { header, cond, body, in_body }) => {
                if in_body {
                    self.frames.push(Frame::While { header, cond, body, in_body: false });
                    self.frames.push(Frame::Block { block: header, pc: 0 });
                } else if self.bits(world, cond, Loc::NONE)? & 1 == 1 {
                    self.frames.push(Frame::While { header, cond, body, in_body: true });
                    self.frames.push(Frame::Block { block: body, pc: 0 });
                }
            }
            Some(other) => self.frames.push(other),
            None => {}
        }
        Ok(())
    }

    fn var_bits(&self, var: Handle<Var>) -> Result<u64, InterpError> {
        match self.vars.get(var.index()) {
            Some(Val::Bits(b)) => Ok(*b),
            _ => Err(crate::machine::undef_error(Loc::NONE, "a loop variable")),
        }
    }

    /// The bits of scalar `h`.
    pub fn bits(&self, world: &World<'k>, h: Handle<Expr>, loc: Loc) -> Result<u64, InterpError> {
        match self.value(world, h, loc)? {
            Val::Bits(b) => Ok(b),
            other => Err(InterpError::Internal { loc, message: format!("expected a scalar, found {other:?}") }),
        }
    }

    /// The integer value of `h` (`i1`, `i32` or `i64`), sign-extended.
    pub fn int(&self, world: &World<'k>, h: Handle<Expr>, loc: Loc) -> Result<i64, InterpError> {
        let bits = self.bits(world, h, loc)?;
        let ty = world.info.expr_types.get(h.index()).and_then(|t| t.scalar()).unwrap_or(Scalar::I64);
        Ok(numeric::int_value(ty, bits))
    }

    pub fn thread_ref(&self, world: &World<'k>) -> crate::ThreadRef {
        thread_ref(world, self.cta, self.tid)
    }

    fn exec(&mut self, world: &mut World<'k>, stmt: &'k Stmt, loc: Loc) -> Result<(), InterpError> {
        match stmt {
            Stmt::Emit(h) => {
                let v = self.eval(world, *h, loc)?;
                self.vals[h.index()] = v;
            }
            Stmt::Op { result, op } => self.op(world, op, *result, loc)?,
            Stmt::WriteVar { var, value } => {
                let v = self.value(world, *value, loc)?;
                self.vars[var.index()] = v;
            }
            Stmt::Store { ptr, value, .. } => {
                let p = self.ptr(world, *ptr, loc)?;
                let ty = world.info.ty(*value);
                let v = self.value(world, *value, loc)?;
                crate::memory::store(world, self, p, ty, &v, loc)?;
            }
            Stmt::If { cond, accept, reject } => {
                let taken = if self.bits(world, *cond, loc)? & 1 == 1 { accept } else { reject };
                self.frames.push(Frame::Block { block: taken, pc: 0 });
            }
            Stmt::For { var, start, end, step, body, .. } => {
                let ty = world.kernel.vars.get(*var).and_then(|v| v.ty.scalar()).unwrap_or(Scalar::I32);
                let (s, e) = (self.int(world, *start, loc)?, self.int(world, *end, loc)?);
                self.vars[var.index()] = Val::Bits(numeric::int_bits(ty, s));
                if s < e {
                    self.frames.push(Frame::For { var: *var, end: e, step: *step, ty, body });
                    self.frames.push(Frame::Block { block: body, pc: 0 });
                }
            }
            Stmt::While { header, cond, body } => {
                self.frames.push(Frame::While { header, cond: *cond, body, in_body: false });
                self.frames.push(Frame::Block { block: header, pc: 0 });
            }
            Stmt::Break => {
                while let Some(f) = self.frames.pop() {
                    if matches!(f, Frame::For { .. } | Frame::While { .. }) {
                        break;
                    }
                }
            }
            Stmt::Continue => {
                while matches!(self.frames.last(), Some(Frame::Block { .. })) {
                    self.frames.pop();
                }
                // A `while`'s `continue` is in its body: the header runs next.
            }
            Stmt::Return => {
                self.frames.clear();
                self.state = State::Done;
            }
            Stmt::Barrier(Barrier::Cta) => self.block_on(Blocked::Bar { id: 0, count: None }, loc),
            Stmt::Roles(regions) => {
                let warpgroup = self.linear / 128;
                if let Some(r) = regions.iter().find(|r| r.role.warpgroups().contains(&warpgroup)) {
                    self.frames.push(Frame::Block { block: &r.body, pc: 0 });
                }
            }
        }
        Ok(())
    }

    fn op(
        &mut self,
        world: &mut World<'k>,
        op: &'k Op,
        result: Option<Handle<Expr>>,
        loc: Loc,
    ) -> Result<(), InterpError> {
        match op {
            Op::Load { ptr, ty, .. } => {
                let p = self.ptr(world, *ptr, loc)?;
                let v = crate::memory::load(world, self, p, *ty, loc)?;
                if let Some(r) = result {
                    self.vals[r.index()] = v;
                }
            }
            Op::Shuffle { .. } | Op::ElectOne | Op::Stmatrix { .. } | Op::Wgmma { .. } => {
                self.block_on(Blocked::Collective { op, result }, loc)
            }
            Op::NamedBarrier { id, threads, .. } => {
                let id = self.int(world, *id, loc)?;
                let count = self.int(world, *threads, loc)?;
                if !(0..16).contains(&id) || count <= 0 || count % 32 != 0 {
                    let message = format!("bar.sync {id}, {count}: ids are 0..15 and counts multiples of 32");
                    return Err(InterpError::Collective { loc, thread: self.thread_ref(world), message });
                }
                self.block_on(Blocked::Bar { id: id as u32, count: Some(count as u32) }, loc)
            }
            Op::ClusterBarrier => self.block_on(Blocked::Cluster, loc),
            Op::MbarrierWait { bar, parity } => {
                let p = self.ptr(world, *bar, loc)?;
                let parity = (self.int(world, *parity, loc)? & 1) as u32;
                let (cta, offset) = crate::ops::mbarrier_at(world, self, p, loc)?;
                crate::ops::mbarrier_state(world, self, cta, offset, loc)?;
                self.block_on(Blocked::Mbarrier { cta, offset, parity }, loc);
            }
            Op::MbarrierInit { .. }
            | Op::MbarrierArrive { .. }
            | Op::MbarrierArriveExpectTx { .. }
            | Op::MbarrierArriveRemote { .. }
            | Op::TmaLoad { .. }
            | Op::TmaStore { .. } => crate::ops::exec(world, self, op, loc)?,
            Op::TmaLoadUnscheduled { .. } => {
                let message = "an unscheduled TMA copy after the pass pipeline".to_string();
                return Err(InterpError::Internal { loc, message });
            }
            // A no-op for the values; its rules checked (PTX `setmaxnreg`): a count that is a multiple of 8 in
            // 24..=256, `.inc` never below the registers the thread has, `.dec` never above.
            Op::Setmaxnreg { regs, inc } => {
                let current = self.registers.or(world.kernel.entry_registers());
                let wrong = if !(24..=256).contains(regs) || regs % 8 != 0 {
                    Some("the count is a multiple of 8 in 24..=256".to_string())
                } else {
                    match current {
                        Some(c) if *inc && *regs < c => Some(format!(".inc to fewer registers than its {c}")),
                        Some(c) if !*inc && *regs > c => Some(format!(".dec to more registers than its {c}")),
                        _ => None,
                    }
                };
                if let Some(why) = wrong {
                    let message = format!("{} {regs}: {why}", op.name());
                    return Err(InterpError::Collective { loc, thread: self.thread_ref(world), message });
                }
                self.registers = Some(*regs);
            }
            // The asynchronous reads of a group stay in flight until a wait retires it (`race.rs`).
            Op::BulkCommit => {
                let open = std::mem::take(&mut self.bulk_open);
                self.bulk_groups.push_back(open);
            }
            Op::WgmmaCommit { .. } => {
                let open = std::mem::take(&mut self.wgmma_open);
                self.wgmma_groups.push_back(open);
                let regs = std::mem::take(&mut self.regs_open);
                self.regs_groups.push_back(regs);
            }
            Op::BulkWait { pending, .. } => self.retire_groups(world, false, *pending),
            Op::WgmmaWait { pending } => {
                self.retire_groups(world, true, *pending);
                while self.regs_groups.len() > *pending as usize {
                    self.regs_groups.pop_front();
                }
            }
            // Covers every generic access that happens before it; later ones are in the next epoch.
            Op::FenceProxyAsync => {
                self.fenced = self.vc.clone();
                crate::race::tick(&mut self.vc, self.slot);
            }
            // Operations complete when issued (see the crate documentation): nothing left to order.
            Op::PrefetchTensorMap { .. } | Op::FenceMbarrierInit | Op::WgmmaFence => {}
        }
        Ok(())
    }

    /// The pointer `h`.
    pub fn ptr(&self, world: &World<'k>, h: Handle<Expr>, loc: Loc) -> Result<crate::value::Ptr, InterpError> {
        match self.value(world, h, loc)? {
            Val::Ptr(p) => Ok(p),
            other => Err(InterpError::Internal { loc, message: format!("expected a pointer, found {other:?}") }),
        }
    }

    /// The CTA (index in the running cluster) whose shared memory `mem` is.
    pub fn shared_cta(&self, world: &World<'k>, mem: Mem, loc: Loc) -> Result<usize, InterpError> {
        match mem {
            Mem::Shared { cta: None, .. } => Ok(self.cta),
            Mem::Shared { cta: Some(rank), .. } if (rank as usize) < world.ctas.len() => Ok(rank as usize),
            Mem::Shared { cta: Some(rank), .. } => Err(InterpError::Collective {
                loc,
                thread: self.thread_ref(world),
                message: format!("CTA rank {rank} is outside the cluster of {} CTAs", world.ctas.len()),
            }),
            other => Err(InterpError::Internal { loc, message: format!("{other:?} is not shared memory") }),
        }
    }
}

//! Statements and blocks: structured control flow over the expressions.

use crate::arena::{Arena, Handle, Loc};
use crate::expr::Expr;
use crate::module::Var;
use crate::op::Op;

/// A sequence of statements, each with its source location (a side vector, as in the arenas).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Block {
    stmts: Vec<Stmt>,
    locs: Vec<Loc>,
}

impl Block {
    pub fn new() -> Block {
        Block::default()
    }
    pub fn push(&mut self, stmt: Stmt, loc: Loc) {
        self.stmts.push(stmt);
        self.locs.push(loc);
    }
    /// Inserts a statement at `index` (at the end if `index` is past it).
    pub fn insert(&mut self, index: usize, stmt: Stmt, loc: Loc) {
        let index = index.min(self.stmts.len());
        self.stmts.insert(index, stmt);
        self.locs.insert(index, loc);
    }
    /// Appends every statement of `other`, with its location.
    pub fn append(&mut self, other: Block) {
        self.stmts.extend(other.stmts);
        self.locs.extend(other.locs);
    }
    pub fn len(&self) -> usize {
        self.stmts.len()
    }
    pub fn is_empty(&self) -> bool {
        self.stmts.is_empty()
    }
    pub fn stmts(&self) -> &[Stmt] {
        &self.stmts
    }
    pub fn iter(&self) -> impl Iterator<Item = (&Stmt, Loc)> {
        self.stmts.iter().zip(self.locs.iter().copied())
    }
    /// Statements and locations, for passes that rebuild a block.
    pub fn into_parts(self) -> (Vec<Stmt>, Vec<Loc>) {
        (self.stmts, self.locs)
    }
    pub fn from_parts(stmts: Vec<Stmt>, locs: Vec<Loc>) -> Block {
        debug_assert_eq!(stmts.len(), locs.len());
        Block { stmts, locs }
    }
    pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut Stmt> {
        self.stmts.iter_mut()
    }
    /// The last statement.
    pub fn last_mut(&mut self) -> Option<&mut Stmt> {
        self.stmts.last_mut()
    }
    /// Calls `f` on every statement of the block and of the blocks nested in it, in program order (a
    /// statement before the statements of its blocks).
    pub fn visit(&self, f: &mut impl FnMut(&Stmt)) {
        for s in &self.stmts {
            f(s);
            for b in s.blocks() {
                b.visit(f);
            }
        }
    }
}

/// How a `for` loop should be unrolled.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub enum Unroll {
    /// The back end decides.
    #[default]
    Auto,
    /// Replace the loop by one copy of its body per iteration: the `unroll` pass does it when the bounds are
    /// literals, otherwise the back end is asked to (`llvm.loop.unroll.full`). Register arrays indexed by the
    /// induction variable need this: only constant indices keep them in registers.
    Full,
    /// `unroll(N)`: N copies of the body per iteration of the remaining loop. The `unroll` pass unrolls it fully
    /// when the literal trip count is at most N; otherwise the back end does it (`llvm.loop.unroll.count`).
    Count(u32),
    /// Never unroll.
    Disable,
}

/// A CTA-wide synchronisation.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Barrier {
    /// `bar.sync 0` (`barrier.cta.sync.aligned.all 0`): every thread of the CTA waits; orders shared memory.
    Cta,
}

/// Which warpgroups run a [`RoleRegion`] of a [`Stmt::Roles`] chain: warpgroups `first..first + count` of the CTA (warpgroup
/// `w` is threads `128 w..128 w + 127` of a one-dimensional block): the compiler's producer or consumers, or a
/// `role` of the source.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct Role {
    pub kind: crate::schedule::RoleKind,
    pub first: u32,
    pub count: u32,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Stmt {
    /// Evaluates a non-global expression here; its value is available to the rest of this block and the blocks
    /// nested in it.
    Emit(Handle<Expr>),
    /// Performs an operation with effects here (a load, a shuffle, a TMA copy...). Its value, if it has one, is
    /// the expression `result` (an [`Expr::OpResult`]), available like an emitted expression's.
    Op {
        result: Option<Handle<Expr>>,
        op: Op,
    },
    /// `var = value`.
    WriteVar {
        var: Handle<Var>,
        value: Handle<Expr>,
    },
    /// Stores a scalar or vector `value` at `ptr`, aligned to `align` bytes.
    Store {
        ptr: Handle<Expr>,
        value: Handle<Expr>,
        align: u32,
    },
    If {
        cond: Handle<Expr>,
        accept: Block,
        reject: Block,
    },
    /// `for (var = start; var < end; var += step) body` with a positive literal `step`. `start` and `end` are
    /// evaluated once, before the loop; the body never writes `var`. `stages` is `pipelined(stages = S)`:
    /// software-pipeline the loop S deep (no pass implements it yet: the pipeline rejects it).
    For {
        var: Handle<Var>,
        start: Handle<Expr>,
        end: Handle<Expr>,
        step: i64,
        unroll: Unroll,
        stages: Option<u32>,
        body: Block,
    },
    /// `while cond { body }`: each iteration runs `header`, then leaves the loop unless `cond` (emitted by the
    /// header) is true, then runs `body`. Values of the header are available in the body; `continue` goes to
    /// the header.
    While {
        header: Block,
        cond: Handle<Expr>,
        body: Block,
    },
    /// Leaves the innermost loop.
    Break,
    /// Goes to the next iteration of the innermost loop.
    Continue,
    /// Ends the thread's execution of the kernel.
    Return,
    Barrier(Barrier),
    /// A chain of role regions: each thread runs at most one of them, the region of the role its warpgroup
    /// belongs to (the regions' warpgroups are pairwise disjoint and inside the block; the validator checks it),
    /// and the threads of no region skip them all. It is one construct, not consecutive regions, because it is
    /// entered once by whole warps: codegen emits one chain of tests, each region entered only from its own
    /// (see the codegen's `warpgroups`), which is what lets ptxas keep a region's warp-uniform values in
    /// uniform registers.
    Roles(Vec<RoleRegion>),
}

/// One region of a [`Stmt::Roles`] chain: run only by the warpgroups of `role`, after `setmaxnreg` sets their
/// register budget to `regs` per thread (if given: `.inc` over the budget at entry, `.dec` under it). `at` is
/// where it comes from (the `role` of the source, or the statement a pass made it for), for diagnostics.
#[derive(Clone, Debug, PartialEq)]
pub struct RoleRegion {
    pub role: Role,
    pub regs: Option<u32>,
    pub body: Block,
    pub at: crate::arena::Loc,
}

impl RoleRegion {
    /// Whether the warpgroups of `self` and `other` overlap (then no chain holds both).
    pub fn overlaps(&self, other: &RoleRegion) -> bool {
        self.role.overlaps(&other.role)
    }
}

impl Role {
    /// Warpgroups `first..first + count`, as a range.
    pub fn warpgroups(&self) -> std::ops::Range<u32> {
        self.first..self.first.saturating_add(self.count)
    }

    /// Whether the warpgroups of the two roles overlap.
    pub fn overlaps(&self, other: &Role) -> bool {
        let (a, b) = (self.warpgroups(), other.warpgroups());
        a.start < b.end && b.start < a.end
    }
}

/// `regions` as role chains in order: each chain takes the following regions while they are disjoint from the
/// ones it holds (so regions of one warpgroup, written one after the other, run one after the other).
pub fn role_chains(regions: Vec<RoleRegion>) -> Vec<Vec<RoleRegion>> {
    let mut chains: Vec<Vec<RoleRegion>> = Vec::new();
    for r in regions {
        match chains.last_mut() {
            Some(chain) if !chain.iter().any(|c| c.overlaps(&r)) => chain.push(r),
            _ => chains.push(vec![r]),
        }
    }
    chains
}

impl Stmt {
    /// The blocks nested in this statement, in program order. Every walker recurses through this (or
    /// [`blocks_mut`](Self::blocks_mut)), and it names every statement kind: a new block-holding statement does
    /// not compile until it says where its blocks are.
    pub fn blocks(&self) -> impl DoubleEndedIterator<Item = &Block> {
        let (a, b, regions): (_, _, &[RoleRegion]) = match self {
            Stmt::If { accept, reject, .. } => (Some(accept), Some(reject), &[]),
            Stmt::While { header, body, .. } => (Some(header), Some(body), &[]),
            Stmt::For { body, .. } => (Some(body), None, &[]),
            Stmt::Roles(regions) => (None, None, regions),
            Stmt::Emit(_)
            | Stmt::Op { .. }
            | Stmt::WriteVar { .. }
            | Stmt::Store { .. }
            | Stmt::Break
            | Stmt::Continue
            | Stmt::Return
            | Stmt::Barrier(_) => (None, None, &[]),
        };
        a.into_iter().chain(b).chain(regions.iter().map(|r| &r.body))
    }

    /// [`blocks`](Self::blocks), mutably.
    pub fn blocks_mut(&mut self) -> impl DoubleEndedIterator<Item = &mut Block> {
        let (a, b, regions): (_, _, &mut [RoleRegion]) = match self {
            Stmt::If { accept, reject, .. } => (Some(accept), Some(reject), &mut []),
            Stmt::While { header, body, .. } => (Some(header), Some(body), &mut []),
            Stmt::For { body, .. } => (Some(body), None, &mut []),
            Stmt::Roles(regions) => (None, None, regions),
            Stmt::Emit(_)
            | Stmt::Op { .. }
            | Stmt::WriteVar { .. }
            | Stmt::Store { .. }
            | Stmt::Break
            | Stmt::Continue
            | Stmt::Return
            | Stmt::Barrier(_) => (None, None, &mut []),
        };
        a.into_iter().chain(b).chain(regions.iter_mut().map(|r| &mut r.body))
    }

    /// Whether `break` and `continue` in this statement's blocks refer to it.
    pub fn is_loop(&self) -> bool {
        match self {
            Stmt::For { .. } | Stmt::While { .. } => true,
            Stmt::Emit(_)
            | Stmt::Op { .. }
            | Stmt::WriteVar { .. }
            | Stmt::Store { .. }
            | Stmt::If { .. }
            | Stmt::Break
            | Stmt::Continue
            | Stmt::Return
            | Stmt::Barrier(_)
            | Stmt::Roles(_) => false,
        }
    }

    /// The expression this statement defines: an emitted one, or an operation's result.
    pub fn defines(&self) -> Option<Handle<Expr>> {
        match *self {
            Stmt::Emit(h) => Some(h),
            Stmt::Op { result, .. } => result,
            Stmt::WriteVar { .. }
            | Stmt::Store { .. }
            | Stmt::If { .. }
            | Stmt::For { .. }
            | Stmt::While { .. }
            | Stmt::Break
            | Stmt::Continue
            | Stmt::Return
            | Stmt::Barrier(_)
            | Stmt::Roles(_) => None,
        }
    }

    /// The variable this statement writes (not in nested blocks): `var = ..`, or a `for`'s induction variable.
    pub fn writes_var(&self) -> Option<Handle<Var>> {
        match *self {
            Stmt::WriteVar { var, .. } | Stmt::For { var, .. } => Some(var),
            Stmt::Emit(_)
            | Stmt::Op { .. }
            | Stmt::Store { .. }
            | Stmt::If { .. }
            | Stmt::While { .. }
            | Stmt::Break
            | Stmt::Continue
            | Stmt::Return
            | Stmt::Barrier(_)
            | Stmt::Roles(_) => None,
        }
    }

    /// The variable this statement reads: only the emission of a `read $v` reads one (every other statement
    /// reads variables through such emissions).
    pub fn reads_var(&self, exprs: &Arena<Expr>) -> Option<Handle<Var>> {
        let Stmt::Emit(h) = self else { return None };
        match exprs.get(*h) {
            Some(Expr::ReadVar(v)) => Some(*v),
            _ => None,
        }
    }

    /// Replaces every expression operand `h` of this statement (not of nested blocks, and not the expression it
    /// defines) by `f(h)`. The condition of a `while` counts as an operand, though its header computes it.
    pub fn map_operands(&mut self, mut f: impl FnMut(Handle<Expr>) -> Handle<Expr>) {
        match self {
            Stmt::Emit(h) => *h = f(*h),
            Stmt::Op { op, .. } => op.map_operands(f),
            Stmt::WriteVar { value, .. } => *value = f(*value),
            Stmt::Store { ptr, value, .. } => {
                *ptr = f(*ptr);
                *value = f(*value);
            }
            Stmt::If { cond, .. } | Stmt::While { cond, .. } => *cond = f(*cond),
            Stmt::For { start, end, .. } => {
                *start = f(*start);
                *end = f(*end);
            }
            Stmt::Break | Stmt::Continue | Stmt::Return | Stmt::Barrier(_) | Stmt::Roles(_) => {}
        }
    }

    /// Calls `f` on every expression operand of this statement (not of nested blocks, and not the expression it
    /// defines; for `Emit`, the emitted expression itself).
    pub fn for_each_operand(&self, mut f: impl FnMut(Handle<Expr>)) {
        match *self {
            Stmt::Emit(h) => f(h),
            Stmt::Op { ref op, .. } => op.for_each_operand(f),
            Stmt::WriteVar { value, .. } => f(value),
            Stmt::Store { ptr, value, .. } => {
                f(ptr);
                f(value);
            }
            Stmt::If { cond, .. } | Stmt::While { cond, .. } => f(cond),
            Stmt::For { start, end, .. } => {
                f(start);
                f(end);
            }
            Stmt::Break | Stmt::Continue | Stmt::Return | Stmt::Barrier(_) | Stmt::Roles(_) => {}
        }
    }

    /// The expressions this statement uses: for `Emit`, the emitted expression's operands; otherwise its
    /// operands (see [`for_each_operand`](Self::for_each_operand)).
    pub fn for_each_use(&self, exprs: &crate::Arena<Expr>, f: impl FnMut(Handle<Expr>)) {
        // Delegation, not a catch-all: `for_each_operand` names every statement kind.
        if let Stmt::Emit(h) = *self {
            if let Some(e) = exprs.get(h) {
                e.for_each_operand(f);
            }
        } else {
            self.for_each_operand(f);
        }
    }
}

//! Statements and blocks: structured control flow over the expressions.

use crate::arena::{Handle, Loc};
use crate::expr::Expr;
use crate::module::Var;

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
    /// Never unroll.
    Disable,
}

/// A CTA-wide synchronisation.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Barrier {
    /// `bar.sync 0` (`barrier.cta.sync.aligned.all 0`): every thread of the CTA waits; orders shared memory.
    Cta,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Stmt {
    /// Evaluates a non-global expression here; its value is available to the rest of this block and the blocks
    /// nested in it.
    Emit(Handle<Expr>),
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
    /// evaluated once, before the loop; the body never writes `var`.
    For {
        var: Handle<Var>,
        start: Handle<Expr>,
        end: Handle<Expr>,
        step: i64,
        unroll: Unroll,
        body: Block,
    },
    /// Leaves the innermost `For`.
    Break,
    /// Goes to the next iteration of the innermost `For`.
    Continue,
    /// Ends the thread's execution of the kernel.
    Return,
    Barrier(Barrier),
}

impl Stmt {
    /// Replaces every expression operand `h` of this statement (not of nested blocks) by `f(h)`.
    pub fn map_operands(&mut self, mut f: impl FnMut(Handle<Expr>) -> Handle<Expr>) {
        match self {
            Stmt::Emit(h) => *h = f(*h),
            Stmt::WriteVar { value, .. } => *value = f(*value),
            Stmt::Store { ptr, value, .. } => {
                *ptr = f(*ptr);
                *value = f(*value);
            }
            Stmt::If { cond, .. } => *cond = f(*cond),
            Stmt::For { start, end, .. } => {
                *start = f(*start);
                *end = f(*end);
            }
            Stmt::Break | Stmt::Continue | Stmt::Return | Stmt::Barrier(_) => {}
        }
    }

    /// Calls `f` on every expression operand of this statement (not of nested blocks).
    pub fn for_each_operand(&self, mut f: impl FnMut(Handle<Expr>)) {
        match *self {
            Stmt::Emit(h) => f(h),
            Stmt::WriteVar { value, .. } => f(value),
            Stmt::Store { ptr, value, .. } => {
                f(ptr);
                f(value);
            }
            Stmt::If { cond, .. } => f(cond),
            Stmt::For { start, end, .. } => {
                f(start);
                f(end);
            }
            Stmt::Break | Stmt::Continue | Stmt::Return | Stmt::Barrier(_) => {}
        }
    }
}

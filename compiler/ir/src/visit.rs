//! The one walk that rebuilds a block: a mutable visitor ([`Rewrite`]) that the passes and the text parser share,
//! in the manner of syn's `Fold` or rustc's `MutVisitor`.
//!
//! A rewrite takes a block by value and builds its replacement statement by statement. One exhaustive `match`
//! ([`rewrite_stmt`]) dispatches every statement kind, and it is the only place that knows, for each kind, where
//! its operands, its definitions, its variable and its blocks are and in which order the program evaluates them:
//! operands first, then what the statement defines or writes, then its blocks, except that a `while`'s header
//! runs before its condition (the header emits it). A new statement kind does not compile until that match says
//! what to do with it; every rewrite then sees it through the defaults below.
//!
//! A rewrite overrides only what it changes: the leaf hooks ([`operand`](Rewrite::operand),
//! [`result`](Rewrite::result), [`var`](Rewrite::var)), the scoping of nested blocks ([`block`](Rewrite::block)),
//! or the statements of one kind, each of which pushes its replacement onto the block being built (nothing to
//! delete the statement, several to splice). Kinds no pass changes as a whole (operations, stores, jumps,
//! barriers) have no hook of their own: their parts still go through the leaf hooks and [`block`](Rewrite::block).

use crate::arena::{Handle, Loc};
use crate::expr::Expr;
use crate::module::Var;
use crate::stmt::{Block, RoleRegion, Stmt, Unroll};

/// The fields of a [`Stmt::For`], as [`Rewrite::for_`] receives them.
#[derive(Clone, Debug, PartialEq)]
pub struct ForLoop {
    pub var: Handle<Var>,
    pub start: Handle<Expr>,
    pub end: Handle<Expr>,
    pub step: i64,
    pub unroll: Unroll,
    pub stages: Option<u32>,
    pub body: Block,
}

impl From<ForLoop> for Stmt {
    fn from(f: ForLoop) -> Stmt {
        let ForLoop { var, start, end, step, unroll, stages, body } = f;
        Stmt::For { var, start, end, step, unroll, stages, body }
    }
}

/// Where a statement's replacement goes: the block being built, and the statement's location, which what replaces
/// it keeps.
pub struct Out<'a> {
    block: &'a mut Block,
    loc: Loc,
}

impl<'a> Out<'a> {
    /// Where the replacement of a statement at `loc` goes: onto `block` (for a rewrite whose
    /// [`block`](Rewrite::block) sends some statements through [`rewrite_stmt`] and handles others itself).
    pub fn new(block: &'a mut Block, loc: Loc) -> Out<'a> {
        Out { block, loc }
    }

    /// Pushes a statement at the replaced statement's location.
    pub fn push(&mut self, stmt: Stmt) {
        self.block.push(stmt, self.loc);
    }
    /// Appends the statements of `block`, each at its own location (a splice).
    pub fn append(&mut self, block: Block) {
        self.block.append(block);
    }
    /// The replaced statement's location.
    pub fn loc(&self) -> Loc {
        self.loc
    }
}

/// A rewrite of blocks (see the module documentation). Every method has a default that rebuilds what it is
/// given unchanged, its parts rewritten through the other methods; start one with [`block`](Rewrite::block).
/// A statement hook pushes what replaces the statement onto `out`: nothing deletes it, several splice.
pub trait Rewrite {
    /// Why the rewrite stops (`std::convert::Infallible` for one that cannot fail).
    type Error;

    /// An expression a statement uses: an operand, or the expression an `Emit` emits.
    fn operand(&mut self, h: Handle<Expr>) -> Handle<Expr> {
        h
    }

    /// The result an operation defines.
    fn result(&mut self, h: Handle<Expr>) -> Handle<Expr> {
        h
    }

    /// A variable a statement writes: `$v = ..`'s, or a `for`'s induction variable.
    fn var(&mut self, v: Handle<Var>) -> Handle<Var> {
        v
    }

    /// A block: the top-level one and every nested one. Override to open a scope around it.
    fn block(&mut self, block: Block) -> Result<Block, Self::Error> {
        walk_block(self, block)
    }

    /// `Emit(h)`.
    fn emit(&mut self, h: Handle<Expr>, mut out: Out<'_>) -> Result<(), Self::Error> {
        out.push(Stmt::Emit(self.operand(h)));
        Ok(())
    }

    /// `var = value`.
    fn write_var(&mut self, var: Handle<Var>, value: Handle<Expr>, mut out: Out<'_>) -> Result<(), Self::Error> {
        let value = self.operand(value);
        out.push(Stmt::WriteVar { var: self.var(var), value });
        Ok(())
    }

    /// `if cond { accept } else { reject }`.
    fn if_(&mut self, cond: Handle<Expr>, accept: Block, reject: Block, mut out: Out<'_>) -> Result<(), Self::Error> {
        let cond = self.operand(cond);
        let accept = self.block(accept)?;
        out.push(Stmt::If { cond, accept, reject: self.block(reject)? });
        Ok(())
    }

    /// A `for` loop.
    fn for_(&mut self, f: ForLoop, mut out: Out<'_>) -> Result<(), Self::Error> {
        let ForLoop { var, start, end, step, unroll, stages, body } = f;
        let (start, end) = (self.operand(start), self.operand(end));
        let var = self.var(var);
        out.push(Stmt::For { var, start, end, step, unroll, stages, body: self.block(body)? });
        Ok(())
    }

    /// A `while` loop: its header, then its condition (which the header emits), then its body.
    fn while_(&mut self, header: Block, cond: Handle<Expr>, body: Block, mut out: Out<'_>) -> Result<(), Self::Error> {
        let header = self.block(header)?;
        let cond = self.operand(cond);
        out.push(Stmt::While { header, cond, body: self.block(body)? });
        Ok(())
    }

    /// A chain of role regions.
    fn roles(&mut self, regions: Vec<RoleRegion>, mut out: Out<'_>) -> Result<(), Self::Error> {
        let mut rewritten = Vec::with_capacity(regions.len());
        for RoleRegion { role, regs, body, at } in regions {
            rewritten.push(RoleRegion { role, regs, body: self.block(body)?, at });
        }
        out.push(Stmt::Roles(rewritten));
        Ok(())
    }
}

/// The default of [`Rewrite::block`]: each statement through [`rewrite_stmt`], into a new block.
pub fn walk_block<R: Rewrite + ?Sized>(r: &mut R, block: Block) -> Result<Block, R::Error> {
    let (stmts, locs) = block.into_parts();
    let mut out = Block::new();
    for (stmt, loc) in stmts.into_iter().zip(locs) {
        rewrite_stmt(r, stmt, Out { block: &mut out, loc })?;
    }
    Ok(out)
}

/// Rewrites one statement onto `out`: the one exhaustive match of every rewrite.
pub fn rewrite_stmt<R: Rewrite + ?Sized>(r: &mut R, stmt: Stmt, mut out: Out<'_>) -> Result<(), R::Error> {
    match stmt {
        Stmt::Emit(h) => return r.emit(h, out),
        Stmt::Op { result, mut op } => {
            op.map_operands(|h| r.operand(h));
            out.push(Stmt::Op { result: result.map(|h| r.result(h)), op });
        }
        Stmt::WriteVar { var, value } => return r.write_var(var, value, out),
        Stmt::Store { ptr, value, align } => {
            let ptr = r.operand(ptr);
            out.push(Stmt::Store { ptr, value: r.operand(value), align });
        }
        Stmt::If { cond, accept, reject } => return r.if_(cond, accept, reject, out),
        Stmt::For { var, start, end, step, unroll, stages, body } => {
            return r.for_(ForLoop { var, start, end, step, unroll, stages, body }, out);
        }
        Stmt::While { header, cond, body } => return r.while_(header, cond, body, out),
        Stmt::Roles(regions) => return r.roles(regions, out),
        stmt @ (Stmt::Break | Stmt::Continue | Stmt::Return | Stmt::Barrier(_)) => out.push(stmt),
    }
    Ok(())
}

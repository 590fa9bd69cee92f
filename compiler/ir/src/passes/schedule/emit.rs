//! Writing statements from a pass: expressions appended to the kernel's arena and emitted in order, as the
//! lowering's builder does, into a block the pass then places.

use crate::arena::{Handle, Loc};
use crate::expr::{BinaryOp, CompareOp, Dim, Expr, Literal, SpecialReg};
use crate::module::{Kernel, Var};
use crate::op::Op;
use crate::stmt::{Barrier, Block, Stmt};
use crate::types::{Scalar, Type};

/// A block being written at location `loc`.
pub(super) struct Gen<'k> {
    pub k: &'k mut Kernel,
    stmts: Vec<Stmt>,
    locs: Vec<Loc>,
    pub loc: Loc,
}

type H = Handle<Expr>;

impl<'k> Gen<'k> {
    pub fn new(k: &'k mut Kernel, loc: Loc) -> Gen<'k> {
        Gen { k, stmts: Vec::new(), locs: Vec::new(), loc }
    }

    /// The block written so far.
    pub fn finish(self) -> Block {
        Block::from_parts(self.stmts, self.locs)
    }

    pub fn push(&mut self, s: Stmt) {
        self.stmts.push(s);
        self.locs.push(self.loc);
    }

    /// Appends `e` and emits it unless it is global.
    pub fn expr(&mut self, e: Expr) -> H {
        let global = e.is_global();
        let h = self.k.exprs.append(e, self.loc);
        if !global {
            self.push(Stmt::Emit(h));
        }
        h
    }

    pub fn int(&mut self, v: i64) -> H {
        self.expr(Expr::Literal(Literal::Int { value: v, ty: Scalar::I32 }))
    }
    pub fn bin(&mut self, op: BinaryOp, lhs: H, rhs: H) -> H {
        self.expr(Expr::Binary { op, lhs, rhs })
    }
    /// `lhs op c` for a constant `c`.
    pub fn bin_c(&mut self, op: BinaryOp, lhs: H, c: i64) -> H {
        let c = self.int(c);
        self.bin(op, lhs, c)
    }
    pub fn cmp(&mut self, op: CompareOp, lhs: H, rhs: H) -> H {
        self.expr(Expr::Compare { op, lhs, rhs })
    }
    pub fn cmp_c(&mut self, op: CompareOp, lhs: H, c: i64) -> H {
        let c = self.int(c);
        self.cmp(op, lhs, c)
    }
    pub fn select(&mut self, cond: H, accept: H, reject: H) -> H {
        self.expr(Expr::Select { cond, accept, reject })
    }
    pub fn read(&mut self, v: Handle<Var>) -> H {
        self.expr(Expr::ReadVar(v))
    }
    pub fn write(&mut self, var: Handle<Var>, value: H) {
        self.push(Stmt::WriteVar { var, value });
    }
    pub fn op(&mut self, op: Op) {
        self.push(Stmt::Op { result: None, op });
    }
    pub fn barrier(&mut self) {
        self.push(Stmt::Barrier(Barrier::Cta));
    }
    pub fn thread_x(&mut self) -> H {
        self.expr(Expr::Special(SpecialReg::ThreadIdx(Dim::X)))
    }
    pub fn lane(&mut self) -> H {
        self.expr(Expr::Special(SpecialReg::LaneId))
    }
    /// `base + index` elements of `elem`.
    pub fn offset(&mut self, base: H, index: H, elem: Scalar) -> H {
        self.expr(Expr::Offset { base, index, elem: Type::Scalar(elem) })
    }

    /// `if cond { what }`, `what` written by `f`.
    pub fn if_(&mut self, cond: H, f: impl FnOnce(&mut Gen<'_>)) {
        let outer = (std::mem::take(&mut self.stmts), std::mem::take(&mut self.locs));
        f(self);
        let inner =
            Block::from_parts(std::mem::replace(&mut self.stmts, outer.0), std::mem::replace(&mut self.locs, outer.1));
        self.push(Stmt::If { cond, accept: inner, reject: Block::new() });
    }

    /// The statements `f` writes, as a block (for a loop's or a region's body).
    pub fn block(&mut self, f: impl FnOnce(&mut Gen<'_>)) -> Block {
        let outer = (std::mem::take(&mut self.stmts), std::mem::take(&mut self.locs));
        f(self);
        Block::from_parts(std::mem::replace(&mut self.stmts, outer.0), std::mem::replace(&mut self.locs, outer.1))
    }

    /// Appends the statements of `b`.
    pub fn append(&mut self, b: Block) {
        let (stmts, locs) = b.into_parts();
        self.stmts.extend(stmts);
        self.locs.extend(locs);
    }
}

/// A name for a new allocation or variable that no other of the kernel has: `base`, else `base.1`, ...
pub(super) fn fresh_name(taken: impl Fn(&str) -> bool, base: &str) -> String {
    let mut name = base.to_string();
    let mut n = 1;
    while taken(&name) {
        name = format!("{base}.{n}");
        n += 1;
    }
    name
}

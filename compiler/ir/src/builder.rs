//! A builder for kernels: appends expressions, emits them where they are built, and nests blocks.
//!
//! The builder never fails and never panics: it records what it is told, and the validator judges the result.
//! It keeps a cache of literal and parameter expressions so each appears once in the arena, and makes variable
//! and allocation names unique (inlining may declare `r` many times), which the printer relies on.

use crate::arena::{Handle, Loc};
use crate::expr::{BinaryOp, CompareOp, Dim, Expr, Literal, MathFn, ShuffleMode, SpecialReg, UnaryOp};
use crate::module::{Alloc, Kernel, Param, Var};
use crate::op::Op;
use crate::stmt::{Barrier, Block, Role, RoleRegion, Stmt, Unroll};
use crate::types::{AddrSpace, Scalar, Type};
use crate::valid::types::resolve;
use std::collections::{HashMap, HashSet};

pub struct KernelBuilder {
    kernel: Kernel,
    /// The blocks being built, innermost last; the first is the kernel body.
    blocks: Vec<Block>,
    loc: Loc,
    /// Types of the expressions so far (`None` when ill-typed: the validator will say why).
    types: Vec<Option<Type>>,
    /// The same with a placeholder for unknown types, in the shape [`resolve`] reads.
    dense: Vec<Type>,
    literals: HashMap<Literal, Handle<Expr>>,
    names: HashSet<String>,
    /// Special-register reads, hoisted to the start of the body so one read serves the whole kernel.
    specials: HashMap<SpecialReg, Handle<Expr>>,
    /// Statements pushed so far, nested ones included: what the lowering charges against the statement budget
    /// before it expands a construct (see [`KernelBuilder::pushed`]).
    pushed: usize,
}

impl KernelBuilder {
    pub fn new(name: impl Into<String>) -> KernelBuilder {
        KernelBuilder {
            kernel: Kernel::new(name),
            blocks: vec![Block::new()],
            loc: Loc::NONE,
            types: Vec::new(),
            dense: Vec::new(),
            literals: HashMap::new(),
            names: HashSet::new(),
            specials: HashMap::new(),
            pushed: 0,
        }
    }

    /// The location given to the nodes built from now on.
    pub fn set_loc(&mut self, loc: Loc) {
        self.loc = loc;
    }
    pub fn loc(&self) -> Loc {
        self.loc
    }
    /// How many statements were pushed so far, nested ones included (the kernel's size before unrolling, up to
    /// blocks built and then dropped).
    pub fn pushed(&self) -> usize {
        self.pushed
    }
    pub fn kernel(&self) -> &Kernel {
        &self.kernel
    }
    /// The kernel's fields the builder does not manage (block size, interface, location).
    pub fn kernel_mut(&mut self) -> &mut Kernel {
        &mut self.kernel
    }

    /// The finished kernel. Blocks still open are flattened into their parents, so an unbalanced use of
    /// [`open_block`](Self::open_block) loses no statements.
    pub fn finish(mut self) -> Kernel {
        while self.blocks.len() > 1 {
            let (stmts, locs) = self.close_block().into_parts();
            if let Some(parent) = self.blocks.last_mut() {
                stmts.into_iter().zip(locs).for_each(|(s, l)| parent.push(s, l));
            }
        }
        self.kernel.body = self.blocks.pop().unwrap_or_default();
        self.kernel
    }

    /// The type of an expression built so far, `None` if it is ill-typed.
    pub fn ty(&self, h: Handle<Expr>) -> Option<Type> {
        self.types.get(h.index()).copied().flatten()
    }

    // ---- declarations ----

    /// A kernel parameter; gives the expression that reads it.
    pub fn param(&mut self, param: Param) -> Handle<Expr> {
        let index = self.kernel.params.len() as u32;
        self.kernel.params.push(param);
        self.expr(Expr::Param(index))
    }
    /// A global pointer parameter, `noalias`, aligned to `align` bytes.
    pub fn ptr_param(&mut self, name: &str, align: u32) -> Handle<Expr> {
        let ty = Type::Ptr(AddrSpace::Global);
        self.param(Param { name: name.into(), ty, align, noalias: true, readonly: false })
    }
    pub fn scalar_param(&mut self, name: &str, ty: Scalar) -> Handle<Expr> {
        self.param(Param { name: name.into(), ty: Type::Scalar(ty), align: 1, noalias: false, readonly: false })
    }

    pub fn var(&mut self, name: &str, ty: Type) -> Handle<Var> {
        let name = self.unique(name);
        self.kernel.vars.append(Var { name, ty }, self.loc)
    }

    /// A static allocation; gives its base address.
    pub fn alloc(&mut self, name: &str, space: AddrSpace, elem: Scalar, len: u32, align: u32) -> Handle<Expr> {
        let name = self.unique(name);
        let a = self.kernel.allocs.append(Alloc { name, space, elem, len, align }, self.loc);
        self.expr(Expr::AllocPtr(a))
    }

    fn unique(&mut self, name: &str) -> String {
        let mut candidate = name.to_string();
        let mut n = 1;
        while !self.names.insert(candidate.clone()) {
            candidate = format!("{name}.{n}");
            n += 1;
        }
        candidate
    }

    // ---- expressions ----

    /// Appends an expression and, unless it is global, emits it in the current block.
    pub fn expr(&mut self, e: Expr) -> Handle<Expr> {
        if let Expr::Literal(l) = e {
            if let Some(&h) = self.literals.get(&l) {
                return h;
            }
            let h = self.append(e);
            self.literals.insert(l, h);
            return h;
        }
        let global = e.is_global();
        let h = self.append(e);
        if !global {
            self.push(Stmt::Emit(h));
        }
        h
    }

    fn append(&mut self, e: Expr) -> Handle<Expr> {
        let h = self.kernel.exprs.next_handle();
        // An ill-typed operand makes its users unknown too; the validator reports the first culprit.
        let mut ok = true;
        e.for_each_operand(|op| ok &= op < h && self.ty(op).is_some());
        let ty = if ok { resolve(&self.kernel, h, &e, &self.dense).ok() } else { None };
        self.dense.push(ty.unwrap_or(Type::I1));
        self.types.push(ty);
        self.kernel.exprs.append(e, self.loc)
    }

    /// A literal; an fp8 one (which the IR does not have) is the `f32` literal converted where it is asked for.
    pub fn lit(&mut self, l: Literal) -> Handle<Expr> {
        if let Literal::Float { value, ty } = l
            && ty.is_fp8()
        {
            let f = self.expr(Expr::Literal(Literal::Float { value, ty: Scalar::F32 }));
            return self.convert(f, ty);
        }
        self.expr(Expr::Literal(l))
    }
    pub fn i32(&mut self, v: i32) -> Handle<Expr> {
        self.lit(Literal::i32(v))
    }
    pub fn i64(&mut self, v: i64) -> Handle<Expr> {
        self.lit(Literal::i64(v))
    }
    pub fn f32(&mut self, v: f32) -> Handle<Expr> {
        self.lit(Literal::f32(v))
    }
    pub fn bool(&mut self, v: bool) -> Handle<Expr> {
        self.lit(Literal::Bool(v))
    }
    /// Reads a special register. The read is emitted at the start of the kernel body (it has no operands, so
    /// it may go anywhere) and shared by every later request for the same register.
    pub fn special(&mut self, reg: SpecialReg) -> Handle<Expr> {
        if let Some(&h) = self.specials.get(&reg) {
            return h;
        }
        let h = self.append(Expr::Special(reg));
        let at = self.specials.len();
        if let Some(body) = self.blocks.first_mut() {
            body.insert(at, Stmt::Emit(h), self.loc);
        }
        self.specials.insert(reg, h);
        h
    }
    pub fn thread_idx_x(&mut self) -> Handle<Expr> {
        self.special(SpecialReg::ThreadIdx(Dim::X))
    }
    pub fn block_idx_x(&mut self) -> Handle<Expr> {
        self.special(SpecialReg::BlockIdx(Dim::X))
    }
    pub fn read(&mut self, var: Handle<Var>) -> Handle<Expr> {
        self.expr(Expr::ReadVar(var))
    }
    pub fn unary(&mut self, op: UnaryOp, value: Handle<Expr>) -> Handle<Expr> {
        self.expr(Expr::Unary { op, value })
    }
    pub fn binary(&mut self, op: BinaryOp, lhs: Handle<Expr>, rhs: Handle<Expr>) -> Handle<Expr> {
        self.expr(Expr::Binary { op, lhs, rhs })
    }
    pub fn add(&mut self, lhs: Handle<Expr>, rhs: Handle<Expr>) -> Handle<Expr> {
        self.binary(BinaryOp::Add, lhs, rhs)
    }
    pub fn sub(&mut self, lhs: Handle<Expr>, rhs: Handle<Expr>) -> Handle<Expr> {
        self.binary(BinaryOp::Sub, lhs, rhs)
    }
    pub fn mul(&mut self, lhs: Handle<Expr>, rhs: Handle<Expr>) -> Handle<Expr> {
        self.binary(BinaryOp::Mul, lhs, rhs)
    }
    pub fn div(&mut self, lhs: Handle<Expr>, rhs: Handle<Expr>) -> Handle<Expr> {
        self.binary(BinaryOp::Div, lhs, rhs)
    }
    pub fn rem(&mut self, lhs: Handle<Expr>, rhs: Handle<Expr>) -> Handle<Expr> {
        self.binary(BinaryOp::Rem, lhs, rhs)
    }
    pub fn compare(&mut self, op: CompareOp, lhs: Handle<Expr>, rhs: Handle<Expr>) -> Handle<Expr> {
        self.expr(Expr::Compare { op, lhs, rhs })
    }
    pub fn select(&mut self, cond: Handle<Expr>, accept: Handle<Expr>, reject: Handle<Expr>) -> Handle<Expr> {
        self.expr(Expr::Select { cond, accept, reject })
    }
    pub fn convert(&mut self, value: Handle<Expr>, to: Scalar) -> Handle<Expr> {
        self.expr(Expr::Convert { value, to })
    }
    pub fn math(&mut self, fun: MathFn, args: &[Handle<Expr>]) -> Handle<Expr> {
        let Some(&arg) = args.first() else {
            // No argument: an ill-formed node the validator reports (arity), never a panic here.
            let zero = self.i32(0);
            return self.expr(Expr::Math { fun, arg: zero, arg1: Some(zero), arg2: Some(zero) });
        };
        self.expr(Expr::Math { fun, arg, arg1: args.get(1).copied(), arg2: args.get(2).copied() })
    }
    pub fn offset(&mut self, base: Handle<Expr>, index: Handle<Expr>, elem: Type) -> Handle<Expr> {
        self.expr(Expr::Offset { base, index, elem })
    }
    /// A load statement; gives its result.
    pub fn load(&mut self, ptr: Handle<Expr>, ty: Type, align: u32) -> Handle<Expr> {
        self.op_value(Op::Load { ptr, ty, align })
    }
    /// A shuffle statement; gives its result.
    pub fn shuffle(&mut self, mode: ShuffleMode, value: Handle<Expr>, lane: Handle<Expr>) -> Handle<Expr> {
        self.op_value(Op::Shuffle { mode, value, lane })
    }
    /// An operation statement; gives its result if the operation has one.
    pub fn op(&mut self, op: Op) -> Option<Handle<Expr>> {
        let result = op.has_result().then(|| {
            // An operand of unknown type gives an `i32` placeholder: the validator reports the operand.
            let ty = op.result_type(|h| self.ty(h)).unwrap_or(Type::I32);
            self.append(Expr::OpResult(ty))
        });
        self.push(Stmt::Op { result, op });
        result
    }
    /// An operation that has a value (a load, a shuffle); gives it.
    fn op_value(&mut self, op: Op) -> Handle<Expr> {
        let ty = op.result_type(|h| self.ty(h)).unwrap_or(Type::I32);
        let result = self.append(Expr::OpResult(ty));
        self.push(Stmt::Op { result: Some(result), op });
        result
    }
    pub fn extract(&mut self, vector: Handle<Expr>, lane: u32) -> Handle<Expr> {
        self.expr(Expr::Extract { vector, lane })
    }
    pub fn map_shared(&mut self, ptr: Handle<Expr>, cta: Handle<Expr>) -> Handle<Expr> {
        self.expr(Expr::MapShared { ptr, cta })
    }
    pub fn compose(&mut self, ty: Type, parts: Vec<Handle<Expr>>) -> Handle<Expr> {
        self.expr(Expr::Compose { ty, parts })
    }

    // ---- statements ----

    /// Appends a statement to the current block.
    pub fn push(&mut self, stmt: Stmt) {
        self.pushed = self.pushed.saturating_add(1);
        let loc = self.loc;
        if let Some(b) = self.blocks.last_mut() {
            b.push(stmt, loc);
        }
    }
    /// Appends the statements of `block` to the current block.
    pub fn append_block(&mut self, block: Block) {
        if let Some(b) = self.blocks.last_mut() {
            b.append(block);
        }
    }
    pub fn write(&mut self, var: Handle<Var>, value: Handle<Expr>) {
        self.push(Stmt::WriteVar { var, value });
    }
    pub fn store(&mut self, ptr: Handle<Expr>, value: Handle<Expr>, align: u32) {
        self.push(Stmt::Store { ptr, value, align });
    }
    pub fn barrier(&mut self) {
        self.push(Stmt::Barrier(Barrier::Cta));
    }
    pub fn ret(&mut self) {
        self.push(Stmt::Return);
    }
    pub fn break_(&mut self) {
        self.push(Stmt::Break);
    }
    pub fn continue_(&mut self) {
        self.push(Stmt::Continue);
    }

    /// Starts a nested block; statements go there until [`close_block`](Self::close_block).
    pub fn open_block(&mut self) {
        self.blocks.push(Block::new());
    }
    /// Ends the innermost nested block and gives it back (an empty block if none is open).
    pub fn close_block(&mut self) -> Block {
        if self.blocks.len() > 1 { self.blocks.pop().unwrap_or_default() } else { Block::new() }
    }

    pub fn if_else(&mut self, cond: Handle<Expr>, accept: impl FnOnce(&mut Self), reject: impl FnOnce(&mut Self)) {
        let loc = self.loc;
        self.open_block();
        accept(self);
        let a = self.close_block();
        self.open_block();
        reject(self);
        let r = self.close_block();
        self.loc = loc;
        self.push(Stmt::If { cond, accept: a, reject: r });
    }
    pub fn if_then(&mut self, cond: Handle<Expr>, accept: impl FnOnce(&mut Self)) {
        self.if_else(cond, accept, |_| {});
    }

    /// `for var in start..end step step { body(var's value) }`; declares the variable (`i32` or `i64`, the
    /// type of `start`).
    pub fn for_range(
        &mut self,
        name: &str,
        start: Handle<Expr>,
        end: Handle<Expr>,
        step: i64,
        unroll: Unroll,
        body: impl FnOnce(&mut Self, Handle<Expr>),
    ) {
        let loc = self.loc;
        let ty = self.ty(start).unwrap_or(Type::I32);
        let var = self.var(name, ty);
        self.open_block();
        let i = self.read(var);
        body(self, i);
        let b = self.close_block();
        self.loc = loc;
        self.push(Stmt::For { var, start, end, step, unroll, stages: None, body: b });
    }

    /// `while cond { body }`: `header` builds the condition, evaluated before each iteration.
    pub fn while_loop(&mut self, header: impl FnOnce(&mut Self) -> Handle<Expr>, body: impl FnOnce(&mut Self)) {
        let loc = self.loc;
        self.open_block();
        let cond = header(self);
        let h = self.close_block();
        self.open_block();
        body(self);
        let b = self.close_block();
        self.loc = loc;
        self.push(Stmt::While { header: h, cond, body: b });
    }

    /// A warpgroup region of a warp-specialized kernel, a chain of its own.
    pub fn warpgroup(&mut self, role: Role, regs: Option<u32>, body: impl FnOnce(&mut Self)) {
        let loc = self.loc;
        self.open_block();
        body(self);
        let b = self.close_block();
        self.loc = loc;
        self.push(Stmt::Roles(vec![RoleRegion { role, regs, body: b, at: loc }]));
    }

    /// Adds `region` to the role chain the current block ends with, if there is one and its regions run on
    /// other warpgroups; otherwise starts a chain. (Roles written one after the other form one chain.)
    pub fn push_role_region(&mut self, region: RoleRegion) {
        if let Some(b) = self.blocks.last_mut()
            && let Some(Stmt::Roles(chain)) = b.last_mut()
            && !chain.iter().any(|r| r.overlaps(&region))
        {
            chain.push(region);
            self.pushed = self.pushed.saturating_add(1);
            return;
        }
        self.push(Stmt::Roles(vec![region]));
    }
}

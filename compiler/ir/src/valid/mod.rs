//! The validator: checks every invariant the passes and back ends rely on, once, and hands them the analysis
//! ([`KernelInfo`]) they may trust.
//!
//! Checked, in this order:
//! 1. **Declarations**: parameter types and alignments, allocations (space, element, length, alignment), the
//!    static CTA size.
//! 2. **Expressions**, in arena order: every handle in range, every operand an *earlier* expression, operand
//!    types as [`types::resolve`] defines them. Gives each expression its type.
//! 3. **Statements**, walking the body: every non-global expression is defined at most once, by an `Emit` or, for
//!    an operation's result, by its operation statement, and global ones never; every use (by an emitted
//!    expression or a statement) comes after its definition in the same block or an enclosing one (a `while`'s
//!    header encloses its condition and body); operations have operands of their types (`ops.rs`); stores write
//!    global, shared or local memory with a legal type and alignment; conditions are `i1`; loop variables are
//!    integers the body never writes; `break`/`continue` are inside a loop; warpgroup register budgets are what
//!    `setmaxnreg` accepts; no store goes through a pointer derived from a `readonly` parameter (back ends tell
//!    LLVM it is never written).
//!
//! 4. **The schedule's entities** (`schedule.rs`, [`crate::schedule`]): handles in range, barriers' allocations
//!    shared `i64` arrays, rings' barriers arrays of their stages, named barriers' ids and counts in the
//!    hardware's ranges and one count per id of the compiler's, every `bar.sync` of a declared barrier with its
//!    id and count, and every `mbarrier.init` and `mbarrier.arrive.expect_tx` with a constant operand on a
//!    declared mbarrier array with the declaration's arrivals and bytes; a `wgmma.commit_group #gN` closes
//!    wgmmas that read and write only what group N names.
//!
//! A kernel that passes validation cannot make a back end panic. Errors are compiler bugs (the lowering built bad
//! IR), reported as an internal error with the location of the offending node.

pub mod lint;
mod ops;
mod schedule;
pub mod types;

use crate::arena::{Handle, Loc};
use crate::expr::Expr;
use crate::module::{Kernel, Module, Var};
use crate::op::Op;
use crate::stmt::{Block, Role, Stmt};
use crate::types::{AddrSpace, Scalar, Type};
use cutec_diagnostics::Diagnostic;

/// What the validator learned about a kernel.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct KernelInfo {
    /// The type of every expression, indexed by handle.
    pub expr_types: Vec<Type>,
    /// Static shared memory in bytes.
    pub shared_bytes: u64,
}

impl KernelInfo {
    pub fn ty(&self, h: Handle<Expr>) -> Type {
        self.expr_types[h.index()]
    }
}

/// Per-kernel analyses, in the order of `Module::kernels`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ModuleInfo {
    pub kernels: Vec<KernelInfo>,
    /// The warnings of the pass pipeline's checks (filled by `run_pipeline`; empty from `validate`).
    pub warnings: Vec<cutec_diagnostics::Diagnostic>,
}

/// What is wrong with a piece of IR.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ValidationError {
    #[error("parameter {0} does not exist")]
    ParamOutOfRange(u32),
    #[error("allocation {0} does not exist")]
    AllocOutOfRange(usize),
    #[error("variable {0} does not exist")]
    VarOutOfRange(usize),
    #[error("expression {0:?} does not exist")]
    ExprOutOfRange(Handle<Expr>),
    #[error("expression {user:?} uses {operand:?}, which is not an earlier expression")]
    ForwardOperand { user: Handle<Expr>, operand: Handle<Expr> },
    #[error("literal {0:?} has a type that does not match its kind")]
    BadLiteral(Handle<Expr>),
    #[error("expression {expr:?} has an operand of type {found}, expected {expected}")]
    OperandType { expr: Handle<Expr>, found: Type, expected: &'static str },
    #[error("expression {expr:?} mixes types {left} and {right}")]
    Mismatch { expr: Handle<Expr>, left: Type, right: Type },
    #[error("expression {expr:?} has {found} operands, expected {expected}")]
    Arity { expr: Handle<Expr>, expected: usize, found: usize },
    #[error("type {ty} is not supported: {why}")]
    BadType { ty: Type, why: &'static str },
    #[error("bad memory access of {ty} aligned to {align} (in {expr:?}): {why}")]
    BadAccess { expr: Option<Handle<Expr>>, ty: Type, align: u32, why: &'static str },
    #[error("{what} is not valid: {why}")]
    BadDecl { what: String, why: &'static str },
    #[error("expression {0:?} is global and cannot be emitted")]
    EmitGlobal(Handle<Expr>),
    #[error("expression {0:?} is emitted twice")]
    EmittedTwice(Handle<Expr>),
    #[error("expression {0:?} is used before it is emitted, or outside the block that emits it")]
    UseBeforeDef(Handle<Expr>),
    #[error("expression {expr:?} has type {found}, expected {expected}")]
    StmtType { expr: Handle<Expr>, found: Type, expected: String },
    #[error("a store through {0} memory")]
    StoreToReadOnly(&'static str),
    #[error("a store through parameter `{0}`, which is marked readonly")]
    StoreThroughReadonlyParam(String),
    #[error("the body of a loop writes its induction variable {0:?}")]
    WritesLoopVar(Handle<Var>),
    #[error("a loop's step must be positive, found {0}")]
    BadStep(i64),
    #[error("`break` or `continue` outside a loop")]
    JumpOutsideLoop,
    #[error("expression {0:?} is an operation's result and cannot be emitted")]
    EmitResult(Handle<Expr>),
    #[error("operation `{op}` names result {result:?}, which is not an unused operation result of type {expected}")]
    BadResult { op: &'static str, result: Handle<Expr>, expected: String },
    #[error("operation `{0}` has a value and must name its result")]
    MissingResult(&'static str),
    #[error("`{op}` is not valid: {why}")]
    BadOp { op: &'static str, why: &'static str },
    #[error("a warpgroup's register budget must be a multiple of 8 from 24 to 256, found {0}")]
    BadRegisterBudget(u32),
    #[error("a warpgroup region in a kernel whose block is not a constant, one-dimensional number of warpgroups")]
    WarpgroupsWithoutBlock,
    #[error("a warpgroup region over {count} warpgroups from warpgroup {first}, in a block of {warpgroups}")]
    NoSuchWarpgroups { first: u32, count: u32, warpgroups: u32 },
    #[error("a role chain without regions")]
    EmptyRoleChain,
    #[error("{what} is not valid: {why}")]
    BadEntity { what: String, why: &'static str },
    #[error("the regions of roles `{first}` and `{second}` share warpgroups, but one chain holds both")]
    OverlappingRoles { first: String, second: String },
}

/// A [`ValidationError`] in a kernel, at a location.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("invalid IR in kernel `{kernel}`: {error}")]
pub struct KernelError {
    pub kernel: String,
    pub loc: Loc,
    pub error: ValidationError,
}

impl KernelError {
    /// An internal-compiler-error diagnostic (`E0399`).
    pub fn to_diagnostic(&self) -> Diagnostic {
        Diagnostic::error(crate::codes::INTERNAL, self.to_string(), self.loc.file, self.loc.span)
            .with_note("this is a bug in cutec: the lowering produced IR its validator rejects")
    }
}

/// Validates every kernel of `module`.
pub fn validate(module: &Module) -> Result<ModuleInfo, KernelError> {
    let kernels = module.kernels.iter().map(validate_kernel).collect::<Result<_, _>>()?;
    Ok(ModuleInfo { kernels, warnings: Vec::new() })
}

/// Validates one kernel.
pub fn validate_kernel(kernel: &Kernel) -> Result<KernelInfo, KernelError> {
    let fail = |loc: Loc, error: ValidationError| KernelError { kernel: kernel.name.clone(), loc, error };
    declarations(kernel).map_err(|e| fail(kernel.loc, e))?;
    schedule::entities(kernel).map_err(|e| fail(kernel.loc, e))?;
    let mut expr_types = Vec::with_capacity(kernel.exprs.len());
    for (h, e) in kernel.exprs.iter() {
        let t = types::resolve(kernel, h, e, &expr_types).map_err(|e| fail(kernel.exprs.loc(h), e))?;
        expr_types.push(t);
    }
    // The parameter each pointer derives from (through offsets): stores must not reach a readonly one.
    let mut roots: Vec<Option<u32>> = Vec::with_capacity(kernel.exprs.len());
    for (_, e) in kernel.exprs.iter() {
        roots.push(match *e {
            Expr::Param(i) => Some(i),
            Expr::Offset { base, .. } => roots.get(base.index()).copied().flatten(),
            _ => None,
        });
    }
    let mut flow = Flow {
        kernel,
        types: &expr_types,
        roots: &roots,
        defined: vec![false; kernel.exprs.len()],
        emitted: vec![false; kernel.exprs.len()],
        scope: Vec::new(),
        loop_vars: Vec::new(),
        loops: 0,
        uncommitted: schedule::Uncommitted::default(),
    };
    flow.block(&kernel.body).map_err(|(loc, e)| fail(loc, e))?;
    Ok(KernelInfo { expr_types, shared_bytes: kernel.shared_bytes() })
}

fn declarations(kernel: &Kernel) -> Result<(), ValidationError> {
    let bad = |what: String, why| ValidationError::BadDecl { what, why };
    for p in &kernel.params {
        match p.ty {
            Type::Ptr(AddrSpace::Global) => {
                if !p.align.is_power_of_two() {
                    return Err(bad(format!("parameter `{}`", p.name), "its alignment must be a power of two"));
                }
            }
            // A TMA tensor map: 128 bytes passed by value, 64-byte aligned.
            Type::Ptr(AddrSpace::Param) => {
                if p.align != 64 {
                    return Err(bad(format!("parameter `{}`", p.name), "a tensor map (ptr<param>) is 64-byte aligned"));
                }
            }
            Type::Ptr(_) => {
                return Err(bad(format!("parameter `{}`", p.name), "pointer parameters point to global or param"));
            }
            Type::Vector { .. } => return Err(bad(format!("parameter `{}`", p.name), "vector parameters")),
            Type::Scalar(_) => {}
        }
    }
    for (_, a) in kernel.allocs.iter() {
        let what = || format!("allocation `{}`", a.name);
        if !matches!(a.space, AddrSpace::Shared | AddrSpace::Local) {
            return Err(bad(what(), "allocations live in shared or local memory"));
        }
        if a.elem == Scalar::I1 || a.len == 0 {
            return Err(bad(what(), "allocations hold at least one non-i1 element"));
        }
        if !a.align.is_power_of_two() || a.align < a.elem.size_bytes() {
            return Err(bad(what(), "the alignment must be a power of two, at least the element size"));
        }
    }
    if let Some(b) = kernel.block_size
        && (b.contains(&0) || b.iter().map(|&d| d as u64).product::<u64>() > u64::from(cutec_target::MAX_BLOCK_THREADS))
    {
        return Err(bad("the block size".into(), "each dimension is at least 1 and the product at most 1024"));
    }
    Ok(())
}

type FlowResult = Result<(), (Loc, ValidationError)>;

/// The statement walk: scoping of emitted expressions and the statement rules.
struct Flow<'a> {
    kernel: &'a Kernel,
    types: &'a [Type],
    roots: &'a [Option<u32>],
    /// Whether an expression is in scope at the current point.
    defined: Vec<bool>,
    emitted: Vec<bool>,
    /// Expressions emitted in the enclosing blocks, innermost last (to take them out of scope on block exit).
    scope: Vec<Handle<Expr>>,
    /// Induction variables of the enclosing `for` loops.
    loop_vars: Vec<Handle<Var>>,
    /// How many loops (`for` and `while`) enclose the current point.
    loops: u32,
    /// What the `wgmma.mma_async`s since the last `wgmma.commit_group` read and write (`schedule::group_use`).
    uncommitted: schedule::Uncommitted,
}

impl Flow<'_> {
    fn block(&mut self, block: &Block) -> FlowResult {
        let mark = self.scope.len();
        self.stmts(block)?;
        for h in self.scope.drain(mark..) {
            self.defined[h.index()] = false;
        }
        Ok(())
    }

    fn use_expr(&self, h: Handle<Expr>) -> Result<Type, ValidationError> {
        let e = self.kernel.exprs.get(h).ok_or(ValidationError::ExprOutOfRange(h))?;
        if !e.is_global() && !self.defined[h.index()] {
            return Err(ValidationError::UseBeforeDef(h));
        }
        Ok(self.types[h.index()])
    }

    fn expect(&self, h: Handle<Expr>, ok: impl Fn(Type) -> bool, expected: &str) -> Result<Type, ValidationError> {
        let t = self.use_expr(h)?;
        if !ok(t) {
            return Err(ValidationError::StmtType { expr: h, found: t, expected: expected.to_string() });
        }
        Ok(t)
    }

    fn stmt(&mut self, stmt: &Stmt, loc: Loc) -> FlowResult {
        // Errors of nested blocks carry their own locations; this statement's carry `loc`.
        match *stmt {
            Stmt::If { ref accept, ref reject, .. } => {
                self.check_stmt(stmt).map_err(|e| (loc, e))?;
                self.block(accept)?;
                self.block(reject)
            }
            Stmt::For { var, ref body, .. } => {
                self.check_stmt(stmt).map_err(|e| (loc, e))?;
                self.loop_vars.push(var);
                self.loops += 1;
                let r = self.block(body);
                self.loops -= 1;
                self.loop_vars.pop();
                r
            }
            Stmt::While { ref header, cond, ref body } => {
                // The header's values stay in scope for the condition and the body: one scope around both.
                let mark = self.scope.len();
                self.loops += 1;
                let r = self.stmts(header).and_then(|()| {
                    self.expect(cond, |t| t == Type::I1, "i1").map_err(|e| (loc, e))?;
                    self.block(body)
                });
                self.loops -= 1;
                for h in self.scope.drain(mark..) {
                    self.defined[h.index()] = false;
                }
                r
            }
            Stmt::Roles(ref regions) => {
                self.check_stmt(stmt).map_err(|e| (loc, e))?;
                regions.iter().try_for_each(|r| self.block(&r.body))
            }
            Stmt::Emit(_)
            | Stmt::Op { .. }
            | Stmt::WriteVar { .. }
            | Stmt::Store { .. }
            | Stmt::Break
            | Stmt::Continue
            | Stmt::Return
            | Stmt::Barrier(_) => self.check_stmt(stmt).map_err(|e| (loc, e)),
        }
    }

    /// The statements of a block, without a scope of their own.
    fn stmts(&mut self, block: &Block) -> FlowResult {
        for (stmt, loc) in block.iter() {
            self.stmt(stmt, loc)?;
        }
        Ok(())
    }

    /// Defines `h` here: it is in scope until the end of the current block.
    fn define(&mut self, h: Handle<Expr>) {
        self.defined[h.index()] = true;
        self.scope.push(h);
    }

    /// The rules of one statement, not of its nested blocks.
    fn check_stmt(&mut self, stmt: &Stmt) -> Result<(), ValidationError> {
        match *stmt {
            Stmt::Emit(h) => {
                let e = self.kernel.exprs.get(h).ok_or(ValidationError::ExprOutOfRange(h))?;
                if e.is_global() {
                    return Err(ValidationError::EmitGlobal(h));
                }
                if let Expr::OpResult(_) = e {
                    return Err(ValidationError::EmitResult(h));
                }
                if std::mem::replace(&mut self.emitted[h.index()], true) {
                    return Err(ValidationError::EmittedTwice(h));
                }
                let mut result = Ok(());
                e.for_each_operand(|op| {
                    if result.is_ok() {
                        result = self.use_expr(op).map(drop);
                    }
                });
                result?;
                self.define(h);
            }
            Stmt::Op { result, ref op } => {
                let value = ops::check(op, &mut |h| self.use_expr(h))?;
                if let Op::NamedBarrier { id, threads, barrier: Some(b) } = *op {
                    schedule::named_barrier_use(self.kernel, id, threads, b)?;
                }
                schedule::mbarrier_use(self.kernel, op)?;
                schedule::group_use(self.kernel, op, &mut self.uncommitted)?;
                match (result, value) {
                    (None, None) => {}
                    (None, Some(_)) => return Err(ValidationError::MissingResult(op.name())),
                    (Some(r), value) => {
                        let expected =
                            value.map_or("(none: this operation has no value)".to_string(), |t| t.to_string());
                        let ok = value.is_some()
                            && self.kernel.exprs.get(r) == Some(&Expr::OpResult(value.unwrap_or(Type::I1)))
                            && !self.emitted[r.index()];
                        if !ok {
                            return Err(ValidationError::BadResult { op: op.name(), result: r, expected });
                        }
                        self.emitted[r.index()] = true;
                        self.define(r);
                    }
                }
            }
            Stmt::WriteVar { var, value } => {
                let v = self.kernel.vars.get(var).ok_or(ValidationError::VarOutOfRange(var.index()))?;
                if self.loop_vars.contains(&var) {
                    return Err(ValidationError::WritesLoopVar(var));
                }
                self.expect(value, |t| t == v.ty, &v.ty.to_string())?;
            }
            Stmt::Store { ptr, value, align } => {
                let p = self.expect(ptr, |t| matches!(t, Type::Ptr(_)), "a pointer")?;
                if let Type::Ptr(space) = p
                    && !types::storable(space)
                {
                    return Err(ValidationError::StoreToReadOnly(space.name()));
                }
                if let Some(Some(i)) = self.roots.get(ptr.index())
                    && let Some(p) = self.kernel.params.get(*i as usize)
                    && p.readonly
                {
                    return Err(ValidationError::StoreThroughReadonlyParam(p.name.clone()));
                }
                let t = self.use_expr(value)?;
                types::check_access(t, align).map_err(|why| ValidationError::BadAccess {
                    expr: Some(value),
                    ty: t,
                    align,
                    why,
                })?;
            }
            Stmt::If { cond, .. } => {
                self.expect(cond, |t| t == Type::I1, "i1")?;
            }
            Stmt::For { var, start, end, step, .. } => {
                let v = self.kernel.vars.get(var).ok_or(ValidationError::VarOutOfRange(var.index()))?;
                if !v.ty.is_int() || !matches!(v.ty, Type::Scalar(_)) {
                    return Err(ValidationError::BadDecl {
                        what: format!("loop variable `{}`", v.name),
                        why: "loop variables are i32 or i64",
                    });
                }
                self.expect(start, |t| t == v.ty, &v.ty.to_string())?;
                self.expect(end, |t| t == v.ty, &v.ty.to_string())?;
                if step <= 0 {
                    return Err(ValidationError::BadStep(step));
                }
            }
            Stmt::Break | Stmt::Continue => {
                if self.loops == 0 {
                    return Err(ValidationError::JumpOutsideLoop);
                }
            }
            // Checked by `stmt` (the header's scope covers the condition).
            Stmt::While { .. } | Stmt::Return | Stmt::Barrier(_) => {}
            Stmt::Roles(ref regions) => {
                if regions.is_empty() {
                    return Err(ValidationError::EmptyRoleChain);
                }
                for (i, region) in regions.iter().enumerate() {
                    let Role { first, count, .. } = region.role;
                    if let Some(r) = region.regs
                        && !cutec_target::setmaxnreg_takes(r)
                    {
                        return Err(ValidationError::BadRegisterBudget(r));
                    }
                    // Codegen picks `setmaxnreg.inc` or `.dec` against the registers at entry, which the block
                    // size gives; and the region's warpgroups must exist.
                    let warpgroups = match self.kernel.block_size {
                        Some([x, 1, 1]) if x % 128 == 0 => x / 128,
                        _ => return Err(ValidationError::WarpgroupsWithoutBlock),
                    };
                    if count == 0 || first.checked_add(count).is_none_or(|end| end > warpgroups) {
                        return Err(ValidationError::NoSuchWarpgroups { first, count, warpgroups });
                    }
                    // A thread runs at most one region of a chain: codegen tests them as one `else if` chain.
                    if let Some(other) = regions[..i].iter().find(|o| o.overlaps(region)) {
                        let (a, b) = (other.role.kind.name().to_string(), region.role.kind.name().to_string());
                        return Err(ValidationError::OverlappingRoles { first: a, second: b });
                    }
                }
            }
        }
        Ok(())
    }
}

//! The statement budget, charged before the work it bounds is done.
//!
//! The `unroll` pass refuses a kernel of more than [`MAX_STMTS`] statements (E0321), but only once the kernel is
//! built: a chain of device functions each calling the next twice inlines 2^24 bodies first (minutes and gigabytes
//! before the error), and a `copy` of a 128x128 tile expands to tens of thousands of statements. So the lowering
//! charges the budget before it inlines a call or expands a copy: the statements built so far
//! ([`cutec_ir::KernelBuilder::pushed`]) plus what the construct will add must fit, or the construct is an E0321
//! at its own span and is not expanded.
//!
//! A call's size is its function's **inlined size**: its statements (nested ones included, each counting one)
//! plus the inlined size of every function it calls, computed bottom-up over the call graph (sema refuses
//! recursion, so the graph is acyclic) and remembered per function. A source statement makes at least one IR
//! statement where it does anything, so this counts what the inlined body will be, without building it.

use crate::error::{Charge, LowerError};
use crate::{LResult, Lower};
use cutec_diagnostics::Span;
use cutec_grammar::ast::{self, ExprKind, StmtKind};
use cutec_ir::passes::MAX_STMTS;
use cutec_sema::{ModuleId, Resolution};
use std::collections::HashMap;

/// A device function: its defining module and item index.
pub(crate) type FnKey = (ModuleId, usize);

/// What the budget remembers between calls.
#[derive(Default)]
pub(crate) struct Budget {
    /// The inlined size of each function computed so far.
    sizes: HashMap<FnKey, u64>,
    /// Set by the first refusal: the rest of the kernel is not lowered (each refused construct would otherwise
    /// redo the work of finding out, once per call or copy in the file).
    pub exhausted: bool,
}

impl Lower<'_> {
    /// Refuses (E0321 at `span`) a construct that would add `stmts` statements to a kernel already holding
    /// [`cutec_ir::KernelBuilder::pushed`] when the total is over [`MAX_STMTS`].
    pub(crate) fn charge(&mut self, stmts: u64, what: Charge, span: Span) -> LResult<()> {
        // Refused once already (a copy's second path, a later call): one error is enough.
        if self.budget.exhausted {
            return Err(crate::Reported);
        }
        let before = self.b.pushed() as u64;
        if before.saturating_add(stmts) <= MAX_STMTS as u64 {
            return Ok(());
        }
        self.budget.exhausted = true;
        self.fail(span, LowerError::OverBudget { what, stmts, before, limit: MAX_STMTS as u64 })
    }

    /// The statements that inlining the function `f` makes: its own and, recursively, those of the functions
    /// it calls (saturating). Iterative, so a long chain of calls cannot overflow the stack.
    pub(crate) fn inlined_size(&mut self, f: FnKey) -> u64 {
        if let Some(&n) = self.budget.sizes.get(&f) {
            return n;
        }
        // Post-order over the call graph: a function is summed once all its callees are.
        let mut stack: Vec<(FnKey, bool)> = vec![(f, false)];
        let mut direct: HashMap<FnKey, (u64, Vec<FnKey>)> = HashMap::new();
        while let Some((g, callees_done)) = stack.pop() {
            if self.budget.sizes.contains_key(&g) {
                continue;
            }
            if callees_done {
                let (own, calls) = direct.remove(&g).unwrap_or_default();
                let total =
                    calls.iter().map(|c| self.budget.sizes.get(c).copied().unwrap_or(0)).fold(own, u64::saturating_add);
                self.budget.sizes.insert(g, total);
                continue;
            }
            if direct.contains_key(&g) {
                // Already on the stack below (only through a cycle, which sema refuses): counted as nothing.
                continue;
            }
            let (own, calls) = self.direct_size(g);
            stack.push((g, true));
            stack.extend(calls.iter().filter(|c| !self.budget.sizes.contains_key(c)).map(|&c| (c, false)));
            direct.insert(g, (own, calls));
        }
        self.budget.sizes.get(&f).copied().unwrap_or(0)
    }

    /// The statements of `f`'s body (nested ones included) and the device functions it calls, once per call.
    fn direct_size(&self, (m, item): FnKey) -> (u64, Vec<FnKey>) {
        let mut walk = Walk { lower: self, module: m, stmts: 0, calls: Vec::new() };
        if let Some(f) = self.function_ast(m, item) {
            walk.block(&f.body);
        }
        (walk.stmts, walk.calls)
    }
}

/// Counts the statements of one function body and collects its calls of device functions.
struct Walk<'a, 'p> {
    lower: &'a Lower<'p>,
    module: ModuleId,
    stmts: u64,
    calls: Vec<FnKey>,
}

impl Walk<'_, '_> {
    fn block(&mut self, b: &ast::Block) {
        for s in &b.stmts {
            self.stmt(s);
        }
    }

    // The parser bounds the nesting of statements and expressions, so these recursions are bounded too.
    fn stmt(&mut self, s: &ast::Stmt) {
        self.stmts = self.stmts.saturating_add(1);
        match &s.kind {
            StmtKind::Let { value, .. } | StmtKind::Expr(value) => self.expr(value),
            StmtKind::Assign { target, value, .. } => {
                self.expr(target);
                self.expr(value);
            }
            StmtKind::For { start, end, body, .. } => {
                self.expr(start);
                self.expr(end);
                self.block(body);
            }
            StmtKind::While { cond, body } => {
                self.expr(cond);
                self.block(body);
            }
            StmtKind::Role { args, body, .. } => {
                args.iter().for_each(|a| self.expr(&a.value));
                self.block(body);
            }
            StmtKind::If { cond, then_block, else_block } => {
                self.expr(cond);
                self.block(then_block);
                if let Some(b) = else_block {
                    self.block(b);
                }
            }
            StmtKind::Return(value) => {
                if let Some(v) = value {
                    self.expr(v);
                }
            }
            StmtKind::Block(b) => self.block(b),
            StmtKind::Break | StmtKind::Continue | StmtKind::Error => {}
        }
    }

    fn expr(&mut self, e: &ast::Expr) {
        match &e.kind {
            ExprKind::Call { callee, args } => {
                if let ExprKind::Name { .. } = callee.kind
                    && let Some(Resolution::Function(m, item)) = self.lower.program.resolution(self.module, callee.id)
                {
                    self.calls.push((*m, *item));
                }
                self.expr(callee);
                args.iter().for_each(|a| self.expr(&a.value));
            }
            ExprKind::MethodCall { receiver, generics, args, .. } => {
                self.expr(receiver);
                generics.iter().for_each(|g| self.expr(g));
                args.iter().for_each(|a| self.expr(&a.value));
            }
            ExprKind::Name { generics, .. } => generics.iter().for_each(|g| self.expr(g)),
            ExprKind::Tuple(items) => items.iter().for_each(|x| self.expr(x)),
            ExprKind::Layout { shape: a, stride: b }
            | ExprKind::Compose { outer: a, inner: b }
            | ExprKind::Binary { lhs: a, rhs: b, .. } => {
                self.expr(a);
                self.expr(b);
            }
            ExprKind::Unary { operand: x, .. } | ExprKind::Field { base: x, .. } | ExprKind::Cast { value: x, .. } => {
                self.expr(x)
            }
            ExprKind::Index { base, indices } => {
                self.expr(base);
                indices.iter().for_each(|x| self.expr(x));
            }
            ExprKind::Int(_)
            | ExprKind::Float(_)
            | ExprKind::Bool(_)
            | ExprKind::Str(_)
            | ExprKind::Wildcard
            | ExprKind::Error => {}
        }
    }
}

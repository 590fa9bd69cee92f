//! `cse`: common subexpression elimination. An emitted expression equal to one already in scope (same operation
//! on the same operands, after earlier replacements) is replaced by it.
//!
//! Scoping follows the IR's: an expression emitted in a block is available in the rest of that block and in the
//! blocks nested after it, so a later duplicate there can use it (a `while`'s header encloses its body). Only
//! expressions without [effects](crate::effects) are merged: a variable read may see a different value, and
//! operations (loads, shuffles) are statements, never merged here. (Merging loads between stores is a job for a
//! memory-aware pass over the dependency graph.)

use super::{Analyses, Pass, PassError};
use crate::arena::Handle;
use crate::effects;
use crate::expr::{Expr, Literal};
use crate::hash::FxMap;
use crate::module::{Kernel, Module};
use crate::stmt::{Block, Stmt};
use crate::visit::{Out, Rewrite, walk_block};
use std::convert::Infallible;

pub struct CommonSubexpressions;

impl Pass for CommonSubexpressions {
    fn name(&self) -> &'static str {
        "cse"
    }
    fn description(&self) -> &'static str {
        "replace a pure expression by an equal one already in scope"
    }
    fn run(&self, module: &mut Module, _: &mut Analyses) -> Result<(), PassError> {
        for k in &mut module.kernels {
            // The first (smallest) handle of each literal value: replacing a literal operand by it keeps every
            // operand earlier than its user.
            let mut literals = FxMap::default();
            for (h, e) in k.exprs.iter() {
                if let Expr::Literal(l) = e {
                    literals.entry(*l).or_insert(h);
                }
            }
            let body = std::mem::take(&mut k.body);
            let mut cse = Cse { alias: vec![None; k.exprs.len()], scopes: Vec::new(), literals, k: &mut *k };
            let Ok(body) = cse.block(body);
            k.body = body;
        }
        Ok(())
    }
}

struct Cse<'k> {
    k: &'k mut Kernel,
    /// alias[i] = the expression that replaces expression i.
    alias: Vec<Option<Handle<Expr>>>,
    /// Pure expressions in scope, innermost block last.
    scopes: Vec<FxMap<Expr, Handle<Expr>>>,
    /// One handle per literal value: passes that make literals (unrolling, folding) make duplicates, and
    /// expressions are equal only if their operand handles are.
    literals: FxMap<Literal, Handle<Expr>>,
}

impl Cse<'_> {
    fn resolve(&self, h: Handle<Expr>) -> Handle<Expr> {
        self.alias.get(h.index()).copied().flatten().unwrap_or(h)
    }

    /// The handle that stands for `h`: its replacement, or the canonical handle of its literal.
    fn canonical(&self, h: Handle<Expr>) -> Handle<Expr> {
        let h = self.resolve(h);
        match self.k.exprs.get(h) {
            Some(Expr::Literal(l)) => self.literals.get(l).copied().unwrap_or(h),
            _ => h,
        }
    }

    fn lookup(&self, e: &Expr) -> Option<Handle<Expr>> {
        self.scopes.iter().rev().find_map(|s| s.get(e).copied())
    }
}

impl Rewrite for Cse<'_> {
    type Error = Infallible;

    fn operand(&mut self, h: Handle<Expr>) -> Handle<Expr> {
        self.canonical(h)
    }

    /// A block in a scope of its own.
    fn block(&mut self, block: Block) -> Result<Block, Infallible> {
        self.scopes.push(FxMap::default());
        let out = walk_block(self, block);
        self.scopes.pop();
        out
    }

    fn emit(&mut self, h: Handle<Expr>, mut out: Out<'_>) -> Result<(), Infallible> {
        let Some(mut e) = self.k.exprs.get(h).cloned() else { return Ok(()) };
        e.map_operands(|op| self.canonical(op));
        self.k.exprs[h] = e.clone();
        if effects::expr(&e).mergeable() && !e.is_global() {
            // `prev < h` holds when handles follow program order (after `compact`); checked, since replacing by
            // a later handle would break the operand order.
            if let Some(prev) = self.lookup(&e).filter(|&p| p < h) {
                if let Some(a) = self.alias.get_mut(h.index()) {
                    *a = Some(prev);
                }
                return Ok(());
            }
            if let Some(scope) = self.scopes.last_mut() {
                scope.insert(e, h);
            }
        }
        out.push(Stmt::Emit(h));
        Ok(())
    }

    /// The header's expressions stay in scope in the body: one scope around both.
    fn while_(&mut self, header: Block, cond: Handle<Expr>, body: Block, mut out: Out<'_>) -> Result<(), Infallible> {
        self.scopes.push(FxMap::default());
        let header = walk_block(self, header)?;
        let cond = self.canonical(cond);
        let body = self.block(body)?;
        self.scopes.pop();
        out.push(Stmt::While { header, cond, body });
        Ok(())
    }
}

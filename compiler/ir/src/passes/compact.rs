//! `compact`: renumbers a kernel's expressions in program order and drops dead ones (and unused variables).
//!
//! Passes that clone code (`unroll`) append to the arena, so handle order drifts away from program order and
//! dead expressions accumulate. After compaction, expressions are numbered in the order the body emits them,
//! each global expression (literal, parameter, allocation address) appears once, just before its first use,
//! and nothing unused is left: the text form reads top to bottom, and snapshots do not change when a pass
//! upstream creates a temporary it later drops.

use super::{Analyses, Pass, PassError};
use crate::arena::{Arena, Handle};
use crate::expr::{Expr, Literal};
use crate::hash::FxMap;
use crate::module::{Kernel, Module, Var};
use crate::visit::Rewrite;
use std::convert::Infallible;

pub struct Compact;

impl Pass for Compact {
    fn name(&self) -> &'static str {
        "compact"
    }
    fn description(&self) -> &'static str {
        "renumber expressions in program order, dropping dead ones"
    }
    fn run(&self, module: &mut Module, _: &mut Analyses) -> Result<(), PassError> {
        module.kernels.iter_mut().for_each(compact);
        Ok(())
    }
}

/// Renumbers `kernel`'s expressions (see the module documentation).
pub fn compact(kernel: &mut Kernel) {
    let old = std::mem::take(&mut kernel.exprs);
    let old_vars = std::mem::take(&mut kernel.vars);
    let mut c = Compactor {
        old: &old,
        new: Arena::new(),
        map: vec![None; old.len()],
        literals: FxMap::default(),
        old_vars: &old_vars,
        vars: Arena::new(),
        var_map: vec![None; old_vars.len()],
    };
    let Ok(body) = c.block(std::mem::take(&mut kernel.body));
    kernel.body = body;
    kernel.exprs = c.new;
    kernel.vars = c.vars;
}

struct Compactor<'a> {
    old: &'a Arena<Expr>,
    new: Arena<Expr>,
    map: Vec<Option<Handle<Expr>>>,
    /// One expression per literal value.
    literals: FxMap<Literal, Handle<Expr>>,
    old_vars: &'a Arena<Var>,
    vars: Arena<Var>,
    var_map: Vec<Option<Handle<Var>>>,
}

impl Compactor<'_> {
    /// The new handle of old expression `h`, copying it (and, on invalid input, its operands) if needed.
    fn get(&mut self, h: Handle<Expr>) -> Handle<Expr> {
        if let Some(Some(n)) = self.map.get(h.index()) {
            return *n;
        }
        let Some(e) = self.old.get(h) else { return h };
        if let Expr::Literal(l) = e
            && let Some(&n) = self.literals.get(l)
        {
            self.map[h.index()] = Some(n);
            return n;
        }
        let mut e = e.clone();
        e.map_operands(|op| self.get(op));
        if let Expr::ReadVar(v) = &mut e {
            *v = self.new_var(*v);
        }
        let n = self.new.append(e, self.old.loc(h));
        if let Some(Expr::Literal(l)) = self.new.get(n) {
            self.literals.insert(*l, n);
        }
        self.map[h.index()] = Some(n);
        n
    }

    /// The new handle of old variable `v`, declaring it on first use.
    fn new_var(&mut self, v: Handle<Var>) -> Handle<Var> {
        if let Some(Some(n)) = self.var_map.get(v.index()) {
            return *n;
        }
        let Some(decl) = self.old_vars.get(v) else { return v };
        let n = self.vars.append(decl.clone(), self.old_vars.loc(v));
        self.var_map[v.index()] = Some(n);
        n
    }
}

/// The walk gives each statement's parts in program order: operands first, so an emitted expression comes after
/// the globals it uses; then the result an operation defines and the variable a statement writes; then nested
/// blocks (a `while`'s header before its condition).
impl Rewrite for Compactor<'_> {
    type Error = Infallible;

    fn operand(&mut self, h: Handle<Expr>) -> Handle<Expr> {
        self.get(h)
    }
    fn result(&mut self, h: Handle<Expr>) -> Handle<Expr> {
        self.get(h)
    }
    fn var(&mut self, v: Handle<Var>) -> Handle<Var> {
        self.new_var(v)
    }
}

//! Statements: bindings, assignments, control flow.

use super::value::{Binding, Value};
use super::{LResult, Lower, Reported};
use crate::error::LowerError;
use cutec_grammar::ast::{self, ExprKind, StmtKind};
use cutec_ir::Unroll;
use cutec_sema::{LoopAttrs, Scalar, Space, Type};

impl Lower<'_> {
    /// Lowers a block; an error in one statement does not stop the next (every problem is reported once).
    pub fn block(&mut self, block: &ast::Block) -> LResult<()> {
        if self.block_depth >= super::MAX_BLOCK_DEPTH {
            // Reported at the first block past the limit only: the blocks around it are as deep.
            if self.block_depth == super::MAX_BLOCK_DEPTH {
                self.block_depth += 1;
                let _: LResult<()> =
                    self.fail(block.span, LowerError::NestingTooDeep { limit: super::MAX_BLOCK_DEPTH });
            }
            return Err(Reported);
        }
        self.block_depth += 1;
        let mut result = Ok(());
        for s in &block.stmts {
            if self.stmt(s).is_err() {
                result = Err(Reported);
            }
        }
        self.block_depth -= 1;
        result
    }

    pub fn stmt(&mut self, s: &ast::Stmt) -> LResult<()> {
        // Past the budget the kernel is refused already; lowering the rest would only redo work.
        if self.budget.exhausted {
            return Err(Reported);
        }
        self.at(s.span);
        match &s.kind {
            StmtKind::Let { id, mutable, name, value, .. } => {
                self.name_hint = Some(name.name.clone());
                let v = self.expr(value);
                self.name_hint = None;
                let binding = match v {
                    Err(Reported) => Binding::Poisoned,
                    Ok(v) if *mutable => self.mutable(*id, &name.name, v, value.span)?,
                    Ok(v) => Binding::Value(Box::new(v)),
                };
                self.frame_mut()?.bindings.insert(*id, binding);
                Ok(())
            }
            StmtKind::Assign { target, op, value } => self.assign(s, target, *op, value),
            StmtKind::Expr(e) => self.expr(e).map(drop),
            StmtKind::If { cond, then_block, else_block } => {
                let c = self.expr(cond)?;
                // A condition known at compile time (const generics) keeps only its branch, as C++'s
                // `if constexpr`: the other is not lowered at all (no tensor map, no allocation for it).
                let known = match &c {
                    Value::Const(v) => Some(*v != 0),
                    Value::Scalar(h, _) => match self.b.kernel().exprs.get(*h) {
                        Some(cutec_ir::Expr::Literal(cutec_ir::Literal::Bool(v))) => Some(*v),
                        _ => None,
                    },
                    _ => None,
                };
                if let Some(taken) = known {
                    self.at(s.span);
                    return match (taken, else_block) {
                        (true, _) => self.block(then_block),
                        (false, Some(b)) => self.block(b),
                        (false, None) => Ok(()),
                    };
                }
                let c = self.scalar(&c, Scalar::Bool, cond.span)?;
                self.at(s.span);
                let splits = !self.warpgroup_uniform(c, 0);
                if splits {
                    self.divergent.push((cond.span, "this condition may differ between the threads of a warpgroup"));
                }
                self.b.open_block();
                // What the condition says holds in the `then` block: accesses there may need no predicate.
                let known = self.facts.len();
                self.learn(c);
                self.flops.enter_condition();
                let a = self.block(then_block);
                self.facts.truncate(known);
                let accept = self.b.close_block();
                self.b.open_block();
                let r = else_block.as_ref().map_or(Ok(()), |b| self.block(b));
                self.flops.leave_condition();
                let reject = self.b.close_block();
                if splits {
                    self.divergent.pop();
                }
                // An `if` is shown by its condition (what a message about the threads it splits points at).
                self.at(cond.span);
                self.b.push(cutec_ir::Stmt::If { cond: c, accept, reject });
                a.and(r)
            }
            StmtKind::For { id, start, end, body, .. } => {
                let (lo, hi) = (self.expr(start)?, self.expr(end)?);
                let attrs = self.loop_attrs(*id);
                let unroll = self.unroll_policy(attrs, &lo, &hi, body);
                let stages = match attrs.pipelined {
                    None => None,
                    Some(Some(s)) => Some(s),
                    Some(None) => {
                        let what = "the number of stages of `pipelined` must be known at compile time";
                        return self.fail(s.span, LowerError::NotConstant { problem: what.into() });
                    }
                };
                let (lo, hi) = (self.scalar(&lo, Scalar::Int, start.span)?, self.scalar(&hi, Scalar::Int, end.span)?);
                self.at(s.span);
                let var = self.b.var(&self.loop_name(s), cutec_ir::Type::I32);
                self.frame_mut()?.bindings.insert(*id, Binding::Var(var, Scalar::Int));
                self.loop_ranges.insert(var, (lo, hi));
                self.epoch += 1;
                // Bounds that differ between the threads of a warpgroup give them different trip counts.
                let splits = !(self.warpgroup_uniform(lo, 0) && self.warpgroup_uniform(hi, 0));
                if splits {
                    let bounds = cutec_diagnostics::Span { start: start.span.start, end: end.span.end };
                    self.divergent.push((bounds, "these bounds may differ between the threads of a warpgroup"));
                }
                self.loop_exits.push(None);
                let trips = self.trip_count(lo, hi);
                self.flops.enter_loop(trips);
                self.b.open_block();
                let inside = self.in_pipelined || stages.is_some();
                let outer = std::mem::replace(&mut self.in_pipelined, inside);
                let r = self.block(body);
                self.in_pipelined = outer;
                let body = self.b.close_block();
                self.flops.leave_loop();
                self.loop_exits.pop();
                if splits {
                    self.divergent.pop();
                }
                self.epoch += 1;
                self.loop_ranges.remove(&var);
                self.at(s.span);
                if let Some(stages) = stages {
                    self.note_ring(&body, stages);
                }
                self.b.push(cutec_ir::Stmt::For { var, start: lo, end: hi, step: 1, unroll, stages, body });
                r
            }
            StmtKind::While { cond, body } => {
                // The condition is computed by the loop's header, again before each iteration.
                self.at(s.span);
                // Variables read in the loop may hold other values than before it (and after it).
                self.epoch += 1;
                // Its trip count is no formula of the dims.
                self.flops.enter_loop(None);
                self.b.open_block();
                let c = self.expr(cond).and_then(|c| self.scalar(&c, Scalar::Bool, cond.span));
                let header = self.b.close_block();
                let c = c?;
                let splits = !self.warpgroup_uniform(c, 0);
                if splits {
                    self.divergent.push((cond.span, "this condition may differ between the threads of a warpgroup"));
                }
                self.b.open_block();
                let known = self.facts.len();
                self.learn(c);
                self.loop_exits.push(None);
                let r = self.block(body);
                self.loop_exits.pop();
                self.facts.truncate(known);
                if splits {
                    self.divergent.pop();
                }
                let body = self.b.close_block();
                self.at(s.span);
                self.epoch += 1;
                self.flops.leave_loop();
                self.b.push(cutec_ir::Stmt::While { header, cond: c, body });
                r
            }
            StmtKind::Return(None) if self.frames.len() == 1 && self.tile.is_some() => {
                let problem = "a `return` in a `persistent` kernel: it would leave the CTA's later tiles undone";
                let help = "put the tile's work under an `if` instead";
                self.fail(s.span, LowerError::Persistent { problem: problem.into(), help: help.into() })
            }
            StmtKind::Return(None) if self.frames.len() == 1 => {
                self.flops.early_exit();
                if !self.divergent.is_empty() && self.left_early.is_none() {
                    self.left_early = Some(s.span);
                }
                self.b.ret();
                Ok(())
            }
            StmtKind::Return(_) => self.unsupported(s.span, "`return` here"),
            StmtKind::Break | StmtKind::Continue => {
                self.flops.early_exit();
                if !self.divergent.is_empty()
                    && let Some(exit @ None) = self.loop_exits.last_mut()
                {
                    *exit = Some(s.span);
                }
                if matches!(s.kind, StmtKind::Break) {
                    self.b.break_();
                } else {
                    self.b.continue_();
                }
                Ok(())
            }
            StmtKind::Block(b) => self.block(b),
            StmtKind::Role { .. } => self.role(s),
            StmtKind::Error => Err(Reported),
        }
    }

    fn loop_name(&self, s: &ast::Stmt) -> String {
        match &s.kind {
            StmtKind::For { var, .. } => var.name.clone(),
            _ => "i".into(),
        }
    }

    /// A `let mut`: a variable initialised with the value.
    fn mutable(&mut self, id: ast::NodeId, name: &str, v: Value, span: cutec_diagnostics::Span) -> LResult<Binding> {
        let s = match self.type_of(id) {
            Type::Scalar(s) => *s,
            other => {
                let other = other.to_string();
                return self.unsupported(span, format!("a mutable binding of type `{other}`"));
            }
        };
        let h = self.scalar(&v, s, span)?;
        let ty = self.ir_scalar(s, span)?;
        let var = self.b.var(name, cutec_ir::Type::Scalar(ty));
        self.write_var(var, h);
        Ok(Binding::Var(var, s))
    }

    fn assign(
        &mut self,
        s: &ast::Stmt,
        target: &ast::Expr,
        op: Option<ast::BinaryOp>,
        value: &ast::Expr,
    ) -> LResult<()> {
        match &target.kind {
            ExprKind::Name { .. } => {
                let Some(cutec_sema::Resolution::Local(id)) = self.resolution(target.id).cloned() else {
                    return self.unsupported(target.span, "assigning to this name");
                };
                let Some(Binding::Var(var, ty)) = self.frame()?.bindings.get(&id).cloned() else {
                    return Err(Reported);
                };
                let mut v = self.expr(value)?;
                self.at(s.span);
                if let Some(op) = op {
                    let old = Value::Scalar(self.read_var(var), ty);
                    v = self.apply_op(op, &old, &v, ty, s.span)?;
                }
                let h = self.scalar(&v, ty, value.span)?;
                self.write_var(var, h);
                Ok(())
            }
            ExprKind::Index { base, indices } => {
                let Value::Tensor(t) = self.expr(base)? else {
                    return self.unsupported(target.span, "assigning to an element of something other than a tensor");
                };
                let coord = match indices.len() {
                    1 => self.expr(&indices[0])?,
                    _ => Value::Tuple(indices.iter().map(|i| self.expr(i)).collect::<LResult<_>>()?),
                };
                let coord = self.coord_of(&coord, target.span)?;
                let v = self.expr(value)?;
                // The element's address and the store carry the target's span (`f[i]`): that is what a
                // diagnostic about the access points at.
                self.at(target.span);
                if let Some(op) = op {
                    if coord.has_underscore() {
                        return self.unsupported(target.span, "a compound assignment to a slice");
                    }
                    let (ptr, align) = self.element_ptr(&t, &coord, target.span)?;
                    let ty = self.ir_scalar(t.elem, target.span)?;
                    let old = Value::Scalar(self.b.load(ptr, cutec_ir::Type::Scalar(ty), align), t.elem);
                    let new = self.apply_op(op, &old, &v, t.elem, s.span)?;
                    let h = self.scalar(&new, t.elem, s.span)?;
                    self.b.store(ptr, h, align);
                    return Ok(());
                }
                self.store_element(&t, &coord, &v, s.span)
            }
            _ => self.unsupported(target.span, "assigning to this"),
        }
    }

    /// The attributes the checker recorded for the `for` loop whose variable is `id` (none if it has none).
    fn loop_attrs(&self, id: ast::NodeId) -> LoopAttrs {
        let m = self.frames.last().map_or(cutec_sema::ModuleId::ROOT, |f| f.module);
        self.program.module(m).and_then(|m| m.loops.get(&id)).copied().unwrap_or_default()
    }

    /// `unroll` on the loop (`unroll(N)`: N copies), or constant bounds and a body that indexes a register
    /// tensor (whose accesses must have constant offsets to stay in registers): unroll fully.
    fn unroll_policy(&self, attrs: LoopAttrs, lo: &Value, hi: &Value, body: &ast::Block) -> Unroll {
        match attrs.unroll {
            Some(None) => return Unroll::Full,
            Some(Some(n)) => return Unroll::Count(n.max(1)),
            None => {}
        }
        let constant = matches!((lo, hi), (Value::Const(_), Value::Const(_)));
        if constant && self.indexes_register_tensor(&body.stmts) { Unroll::Full } else { Unroll::Auto }
    }

    fn indexes_register_tensor(&self, stmts: &[ast::Stmt]) -> bool {
        let mut found = false;
        for s in stmts {
            visit_stmt(s, &mut |e| {
                if let ExprKind::Index { base, .. } = &e.kind
                    && matches!(self.type_of(base.id), Type::Tensor(t) if t.space == Space::Rmem)
                {
                    found = true;
                }
            });
        }
        found
    }
}

/// Calls `f` on every expression of a statement, nested statements included.
pub(crate) fn visit_stmt(s: &ast::Stmt, f: &mut dyn FnMut(&ast::Expr)) {
    let block = |b: &ast::Block, f: &mut dyn FnMut(&ast::Expr)| b.stmts.iter().for_each(|s| visit_stmt(s, f));
    match &s.kind {
        StmtKind::Let { value, .. } => visit_expr(value, f),
        StmtKind::Assign { target, value, .. } => {
            visit_expr(target, f);
            visit_expr(value, f);
        }
        StmtKind::Expr(e) => visit_expr(e, f),
        StmtKind::For { start, end, body, .. } => {
            visit_expr(start, f);
            visit_expr(end, f);
            block(body, f);
        }
        StmtKind::While { cond, body } => {
            visit_expr(cond, f);
            block(body, f);
        }
        StmtKind::Role { args, body, .. } => {
            args.iter().for_each(|a| visit_expr(&a.value, f));
            block(body, f);
        }
        StmtKind::If { cond, then_block, else_block } => {
            visit_expr(cond, f);
            block(then_block, f);
            if let Some(b) = else_block {
                block(b, f);
            }
        }
        StmtKind::Return(Some(e)) => visit_expr(e, f),
        StmtKind::Block(b) => block(b, f),
        _ => {}
    }
}

fn visit_expr(e: &ast::Expr, f: &mut dyn FnMut(&ast::Expr)) {
    f(e);
    match &e.kind {
        ExprKind::Tuple(v) => v.iter().for_each(|x| visit_expr(x, f)),
        ExprKind::Layout { shape, stride } => {
            visit_expr(shape, f);
            visit_expr(stride, f);
        }
        ExprKind::Unary { operand, .. } => visit_expr(operand, f),
        ExprKind::Binary { lhs, rhs, .. } => {
            visit_expr(lhs, f);
            visit_expr(rhs, f);
        }
        ExprKind::Call { callee, args } => {
            visit_expr(callee, f);
            args.iter().for_each(|a| visit_expr(&a.value, f));
        }
        ExprKind::MethodCall { receiver, args, .. } => {
            visit_expr(receiver, f);
            args.iter().for_each(|a| visit_expr(&a.value, f));
        }
        ExprKind::Field { base, .. } => visit_expr(base, f),
        ExprKind::Index { base, indices } => {
            visit_expr(base, f);
            indices.iter().for_each(|x| visit_expr(x, f));
        }
        ExprKind::Cast { value, .. } => visit_expr(value, f),
        _ => {}
    }
}

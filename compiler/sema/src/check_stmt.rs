//! Statements and bodies: `let` (shadowing), assignment (places, mutability, compound operators), loops
//! (`break`/`continue`, loop attributes), conditions, `return` and the missing-return check.

use crate::Resolution;
use crate::body::{Fcx, Mode, collect_bindings};
use crate::builtins::AttrTarget;
use crate::check_expr::{fp8_help, literal_like};
use crate::errors::{BindingKind, SemaError};
use crate::program::Cx;
use crate::types::{Scalar, Space, Type, coerces, promote, scalar_coerces};
use cutec_diagnostics::Span;
use cutec_grammar::ast::{self, BinaryOp, Block, Expr, ExprKind, Stmt, StmtKind};

/// Whether a value of type `from` written as `e` may be stored where `to` is expected: widening conversions,
/// and numeric literals of any numeric type (they were typed from the context already).
fn assignable(e: &Expr, from: &Type, to: &Type) -> bool {
    coerces(from, to)
        || (literal_like(e)
            && from.scalar().is_some_and(Scalar::is_numeric)
            && to.scalar().is_some_and(Scalar::is_numeric))
}

fn narrowing_help(from: &Type, to: &Type) -> Option<String> {
    match (from.scalar(), to.scalar()) {
        (Some(f), Some(t)) if f.is_numeric() && t.is_numeric() => {
            Some(format!("convert it explicitly: `(...) as {t}`"))
        }
        _ => None,
    }
}

/// Whether every path through `b` ends in `return`.
fn block_returns(b: &Block, depth: u32) -> bool {
    depth < crate::body::MAX_DEPTH
        && b.stmts.last().is_some_and(|s| match &s.kind {
            StmtKind::Return(_) => true,
            StmtKind::Block(inner) => block_returns(inner, depth + 1),
            StmtKind::If { then_block, else_block: Some(e), .. } => {
                block_returns(then_block, depth + 1) && block_returns(e, depth + 1)
            }
            _ => false,
        })
}

/// Checks the body of kernel or function `fi`.
pub(crate) fn check_body(cx: &mut Cx<'_>, fi: usize, f: &ast::Function) {
    let m = cx.functions[fi].module;
    let mut fx = Fcx::new(cx, m, Some(fi), Mode::Body);
    collect_bindings(&f.body, &mut fx.all_bindings, 0);
    fx.fold_params();
    fx.block(&f.body);
    let info = &fx.cx.functions[fi];
    let (ret, name) = (info.ret.clone(), info.name.clone());
    if let Some(rt) = &f.ret
        && !info.is_kernel
        && ret != Type::Unit
        && !ret.is_error()
        && !block_returns(&f.body, 0)
    {
        let end = f.body.span.end;
        let span = Span { start: end.saturating_sub(1), end };
        fx.error(SemaError::MissingReturn { name, span, ret_span: rt.span, expected: ret.to_string() });
    }
}

impl<'a> Fcx<'_, 'a> {
    fn ast_fn(&self) -> Option<&'a ast::Function> {
        let f = self.cx.functions.get(self.func?)?;
        match &self.cx.item(f.module, f.item)?.kind {
            ast::ItemKind::Kernel(f) | ast::ItemKind::Fn(f) => Some(f),
            _ => None,
        }
    }

    pub fn block(&mut self, b: &Block) {
        if !self.enter(b.span) {
            return;
        }
        self.push_scope();
        for s in &b.stmts {
            self.stmt(s);
        }
        self.pop_scope();
        self.leave();
    }

    fn condition(&mut self, cond: &Expr, what: &'static str) {
        let t = self.value(cond, None);
        if !t.is_error() && t != Type::BOOL {
            self.error(SemaError::NonBoolCondition { span: cond.span, found: t.to_string(), what });
        }
    }

    fn stmt(&mut self, s: &Stmt) {
        match &s.kind {
            StmtKind::Let { id, mutable, name, ty, value } => {
                let declared = ty.as_ref().map(|t| (self.resolve_type(t), t.span));
                let hint = declared.as_ref().and_then(|(t, _)| t.scalar());
                let vt = self.value(value, hint);
                let bound = match declared {
                    Some((d, span)) => {
                        if !d.is_error() && !assignable(value, &vt, &d) {
                            self.error(SemaError::Mismatch {
                                span: value.span,
                                expected: d.to_string(),
                                found: vt.to_string(),
                                because: Some((self.loc(span), "expected because of this type".to_owned())),
                                help: narrowing_help(&vt, &d),
                            });
                        }
                        d
                    }
                    None => vt,
                };
                self.bind(name, *id, bound, *mutable, false);
                self.fold_binding(*id, value, *mutable);
            }
            StmtKind::Assign { target, op, value } => self.assign(target, *op, value),
            StmtKind::Expr(e) => {
                self.expr(e, None);
            }
            StmtKind::For { id, var, start, end, attrs, body } => {
                // A literal bound takes the type of the other one: `0..n` with `n: i64` counts in i64.
                let (st, et) = if literal_like(start) {
                    let et = self.value(end, None);
                    (self.value(start, et.scalar()), et)
                } else {
                    let st = self.value(start, None);
                    (st.clone(), self.value(end, st.scalar()))
                };
                for (e, t) in [(start, &st), (end, &et)] {
                    if !t.is_error() && !t.is_integer() {
                        let found = t.to_string();
                        self.error(SemaError::Mismatch {
                            span: e.span,
                            expected: "int".into(),
                            found,
                            because: None,
                            help: None,
                        });
                    }
                }
                let var_ty = match (st.scalar(), et.scalar()) {
                    (Some(a), Some(b)) if a.is_integer() && b.is_integer() => promote(a, b).unwrap_or(a),
                    _ => Scalar::Int,
                };
                let (_, loop_attrs) = self.attributes(attrs, AttrTarget::Loop);
                if loop_attrs != Default::default()
                    && let Some(t) = self.cx.tables.get_mut(self.m.index())
                {
                    t.loops.push((*id, loop_attrs));
                }
                self.push_scope();
                self.bind(var, *id, Type::Scalar(var_ty), false, true);
                self.loops += 1;
                self.block(body);
                self.loops -= 1;
                self.pop_scope();
            }
            StmtKind::While { cond, body } => {
                self.condition(cond, "`while`");
                self.loops += 1;
                self.block(body);
                self.loops -= 1;
            }
            StmtKind::Role { id, args, rank, body, .. } => self.role(*id, args, rank.as_ref(), body),
            StmtKind::If { cond, then_block, else_block } => {
                self.condition(cond, "`if`");
                self.block(then_block);
                if let Some(b) = else_block {
                    self.block(b);
                }
            }
            StmtKind::Return(v) => self.ret(s.span, v.as_ref()),
            StmtKind::Break | StmtKind::Continue => {
                if self.loops == 0 {
                    let keyword = if matches!(s.kind, StmtKind::Break) { "break" } else { "continue" };
                    self.error(SemaError::OutsideLoop { keyword, span: s.span });
                }
            }
            StmtKind::Block(b) => self.block(b),
            StmtKind::Error => {}
        }
    }

    /// `role name(warpgroups = N, registers = R) as rank { body }`: N and R are compile-time integers (recorded
    /// for the lowering, which places the roles and checks that they fit the block); `rank` is an `int`.
    fn role(&mut self, id: ast::NodeId, args: &[ast::NamedArg], rank: Option<&ast::Ident>, body: &Block) {
        const ACCEPTED: [&str; 2] = ["warpgroups", "registers"];
        for a in args {
            let t = self.value(&a.value, Some(Scalar::Int));
            let Some(&what) = ACCEPTED.iter().find(|&&n| n == a.name.name) else {
                self.error(SemaError::UnknownNamedArg {
                    name: a.name.name.clone(),
                    span: a.name.span,
                    callee: "role".into(),
                    suggestion: crate::body::similar(&a.name.name, ACCEPTED.iter().copied()),
                    accepted: "`warpgroups`, `registers`".into(),
                });
                continue;
            };
            if let Some(first) = args.iter().find(|b| b.name.name == what).filter(|b| b.span != a.span) {
                let first = self.loc(first.name.span);
                self.error(SemaError::Duplicate { what: "argument", name: what.into(), span: a.name.span, first });
                continue;
            }
            if t.is_error() {
                continue;
            }
            if !t.is_integer() {
                let found = t.to_string();
                let span = a.value.span;
                self.error(SemaError::Mismatch { span, expected: "int".into(), found, because: None, help: None });
                continue;
            }
            let context = if what == "warpgroups" { "a role's number of warpgroups" } else { "a role's registers" };
            self.require_const(&a.value, context);
        }
        self.push_scope();
        if let Some(r) = rank {
            self.bind(r, id, Type::INT, false, false);
        }
        self.block(body);
        self.pop_scope();
    }

    /// Checks an assignment target and returns its type (`Error` if it cannot be assigned).
    fn place(&mut self, target: &Expr) -> Type {
        match &target.kind {
            ExprKind::Name { name, .. } => {
                let t = self.expr(target, None);
                match self.res(target.id).cloned() {
                    Some(Resolution::Local(id)) => {
                        if let Some(l) = self.locals.iter().rev().find(|l| l.id == id)
                            && !l.mutable
                        {
                            let kind = if l.loop_var { BindingKind::LoopVar } else { BindingKind::Let };
                            let (name, def) = (name.name.clone(), l.span);
                            self.error(SemaError::AssignImmutable { name, span: target.span, def, kind });
                        }
                        t
                    }
                    Some(Resolution::Param(i)) => {
                        let def = self.func.and_then(|f| self.cx.functions[f].param(i)).map_or(name.span, |p| p.span);
                        let name = name.name.clone();
                        self.error(SemaError::AssignImmutable {
                            name,
                            span: target.span,
                            def,
                            kind: BindingKind::Param,
                        });
                        t
                    }
                    None => Type::Error,
                    Some(_) if t.is_error() => Type::Error,
                    Some(_) => {
                        let what = format!("`{}`, which is not a variable", name.name);
                        self.error(SemaError::InvalidPlace { span: target.span, what, help: None });
                        Type::Error
                    }
                }
            }
            ExprKind::Index { base, .. } => {
                let t = self.expr(target, None);
                if let Some(bt) = self.ty(base.id).tensor()
                    && bt.space == Space::Identity
                {
                    let help = Some("identity tensors hold coordinates computed on the fly".to_owned());
                    self.error(SemaError::InvalidPlace { span: base.span, what: "an identity tensor".into(), help });
                    return Type::Error;
                }
                if t.tensor().is_some() {
                    let help = Some("index every mode to assign one element, or `copy` into the slice".to_owned());
                    self.error(SemaError::InvalidPlace { span: target.span, what: "a slice of a tensor".into(), help });
                    return Type::Error;
                }
                t
            }
            _ => {
                let t = self.expr(target, None);
                if !t.is_error() {
                    let help = Some("assign to a `let mut` variable or to a tensor element `t[i]`".to_owned());
                    self.error(SemaError::InvalidPlace { span: target.span, what: "this expression".into(), help });
                }
                Type::Error
            }
        }
    }

    fn assign(&mut self, target: &Expr, op: Option<BinaryOp>, value: &Expr) {
        let pt = self.place(target);
        let vt = self.value(value, pt.scalar());
        if pt.is_error() || vt.is_error() {
            return;
        }
        // For a variable, point at the `let` that fixed its type; an integer accumulator fed floats is the
        // classic case (`let mut acc = 0;`).
        let local = match self.res(target.id) {
            Some(Resolution::Local(id)) => {
                self.locals.iter().rev().find(|l| l.id == *id).map(|l| (l.name.clone(), l.span))
            }
            _ => None,
        };
        let because = local.as_ref().map(|(n, s)| (self.loc(*s), format!("`{n}` has type `{pt}` from here")));
        let help = |found: &Type| match (&local, pt.scalar(), found.scalar()) {
            (Some((n, _)), Some(p), Some(f)) if p.is_integer() && f.is_float() => {
                Some(format!("to make `{n}` a float, initialize it with a float literal: `let mut {n} = 0.0;`"))
            }
            _ => narrowing_help(found, &pt),
        };
        let Some(op) = op else {
            if !assignable(value, &vt, &pt) {
                let help = help(&vt);
                let (expected, found) = (pt.to_string(), vt.to_string());
                self.error(SemaError::Mismatch { span: value.span, expected, found, because, help });
            }
            return;
        };
        let o = format!("{}=", op.as_str());
        let (Some(p), Some(v)) = (pt.scalar(), vt.scalar()) else {
            let (side, t) = if pt.scalar().is_none() { (target, &pt) } else { (value, &vt) };
            let found = t.describe();
            self.error(SemaError::BadOperand { op: o, span: side.span, found, expected: "a number", help: None });
            return;
        };
        let integer_op =
            matches!(op, BinaryOp::Shl | BinaryOp::Shr | BinaryOp::BitAnd | BinaryOp::BitOr | BinaryOp::BitXor);
        for (side, s) in [(target, p), (value, v)] {
            let (ok, expected, help) = if integer_op {
                (
                    s.is_integer() || (s == Scalar::Bool && p == v && !matches!(op, BinaryOp::Shl | BinaryOp::Shr)),
                    "an integer",
                    None,
                )
            } else if s.is_fp8() {
                (false, "a number that supports arithmetic", Some(fp8_help()))
            } else {
                (s.is_numeric() && !matches!(op, BinaryOp::And | BinaryOp::Or), "a number", None)
            };
            if !ok {
                let found = format!("`{s}`");
                self.error(SemaError::BadOperand { op: o, span: side.span, found, expected, help });
                return;
            }
        }
        if matches!(op, BinaryOp::Shl | BinaryOp::Shr) || p == v {
            return;
        }
        match promote(p, v) {
            Some(r) if scalar_coerces(r, p) || literal_like(value) => {}
            Some(r) => {
                let (expected, found) = (p.to_string(), r.to_string());
                let help = help(&Type::Scalar(r)).map(|h| {
                    if h.starts_with("convert") {
                        format!("convert the right-hand side: `... {o} (...) as {p}`")
                    } else {
                        h
                    }
                });
                self.error(SemaError::Mismatch { span: value.span, expected, found, because, help });
            }
            None => {
                let (lhs, rhs) = ((target.span, p.to_string()), (value.span, v.to_string()));
                self.error(SemaError::OperandsDontMix { op: o, lhs, rhs });
            }
        }
    }

    fn ret(&mut self, span: Span, value: Option<&Expr>) {
        let Some(fi) = self.func else { return };
        let (is_kernel, ret, name) = {
            let f = &self.cx.functions[fi];
            (f.is_kernel, f.ret.clone(), f.name.clone())
        };
        let ast = self.ast_fn();
        let ret_span = ast.and_then(|f| f.ret.as_ref()).map_or(span, |t| t.span);
        match value {
            Some(v) if is_kernel => {
                self.expr(v, None);
                self.error(SemaError::ReturnInKernel { span: v.span });
            }
            None if !is_kernel && ret != Type::Unit && !ret.is_error() => {
                self.error(SemaError::MissingReturnValue { span, expected: ret.to_string(), ret_span });
            }
            Some(v) if ret == Type::Unit => {
                self.expr(v, None);
                let sig = ast.map_or(span, |f| f.sig_span);
                self.error(SemaError::ReturnValueInUnitFn { span: v.span, name, sig });
            }
            Some(v) => {
                let t = self.value(v, ret.scalar());
                if !t.is_error() && !ret.is_error() && !assignable(v, &t, &ret) {
                    self.error(SemaError::ReturnMismatch {
                        span: v.span,
                        expected: ret.to_string(),
                        found: t.to_string(),
                        ret_span,
                    });
                }
            }
            None => {}
        }
    }
}

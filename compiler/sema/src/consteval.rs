//! Compile-time values: symbolic integers of checked expressions ([`SymInt`]), constant-ness checks, and the
//! values of `const` items.
//!
//! Both walks read the resolutions the expression checker recorded, so they run after `Fcx::expr` on the same
//! expression.

use crate::body::{Fcx, MAX_DEPTH, Mode};
use crate::builtins::Builtin;
use crate::errors::SemaError;
use crate::program::{ConstState, Cx};
use crate::types::{Scalar, SymInt, SymOp, Type, scalar_coerces};
use crate::{ConstGenericId, ConstValue, Resolution};
use cutec_diagnostics::Span;
use cutec_grammar::ast::{self, BinaryOp, Expr, ExprKind, UnaryOp};

pub(crate) fn sym_op(op: BinaryOp) -> Option<SymOp> {
    Some(match op {
        BinaryOp::Add => SymOp::Add,
        BinaryOp::Sub => SymOp::Sub,
        BinaryOp::Mul => SymOp::Mul,
        BinaryOp::Div => SymOp::Div,
        BinaryOp::Rem => SymOp::Rem,
        _ => return None,
    })
}

/// `ceil_div(a, b)`, `min(a, b)`, `max(a, b)` as a symbolic operator, with their two arguments.
fn builtin_op<'e>(f: &Fcx<'_, '_>, callee: &Expr, args: &'e [ast::Arg]) -> Option<(SymOp, &'e Expr, &'e Expr)> {
    let op = match f.res(callee.id) {
        Some(Resolution::Builtin(Builtin::CeilDiv)) => SymOp::CeilDiv,
        Some(Resolution::Builtin(Builtin::Min)) => SymOp::Min,
        Some(Resolution::Builtin(Builtin::Max)) => SymOp::Max,
        _ => return None,
    };
    match args {
        [a, b] if a.name.is_none() && b.name.is_none() => Some((op, &a.value, &b.value)),
        _ => None,
    }
}

impl Fcx<'_, '_> {
    fn const_generic(&self, id: ConstGenericId) -> Option<&crate::ConstGenericInfo> {
        self.cx.functions.get(self.func?)?.const_generic(id)
    }

    fn const_item_value(&self, m: crate::ModuleId, i: usize) -> Option<ConstValue> {
        let idx = *self.cx.const_index.get(&(m, i))?;
        self.cx.consts.get(idx)?.value
    }

    /// The symbolic integer of a checked integer expression: constants folded, const generics replaced by their
    /// values, dynamic dimensions and integer parameters by name, anything else `Runtime`.
    pub fn sym(&self, e: &Expr) -> SymInt {
        self.sym_at(e, 0)
    }

    /// The run-time value of `e` as a leaf: its node id, named after its source text.
    pub fn runtime_sym(&self, e: &Expr) -> SymInt {
        SymInt::value(cutec_symint::ValueId::Node(e.id.0), crate::fold::text(e, 0))
    }

    fn sym_at(&self, e: &Expr, depth: u32) -> SymInt {
        let runtime = self.runtime_sym(e);
        if depth > MAX_DEPTH {
            return runtime;
        }
        // A layout query of a folded layout (`size(tv)`) is a constant.
        if let ExprKind::Call { .. } = e.kind
            && let Some(v) = self.folded_static(e.id)
        {
            return SymInt::Const(v);
        }
        match &e.kind {
            ExprKind::Int(v) => i64::try_from(*v).map_or(runtime, SymInt::Const),
            ExprKind::Bool(b) => SymInt::Const(i64::from(*b)),
            ExprKind::Name { name, .. } => match self.res(e.id) {
                Some(Resolution::ConstGeneric(g)) => match self.const_generic(*g) {
                    Some(g) => g.value.map_or_else(|| SymInt::Generic(g.name.clone()), SymInt::Const),
                    None => runtime,
                },
                Some(Resolution::Const(m, i)) => match self.const_item_value(*m, *i) {
                    Some(ConstValue::Int(v)) => SymInt::Const(v),
                    Some(ConstValue::Bool(b)) => SymInt::Const(i64::from(b)),
                    _ => runtime,
                },
                Some(Resolution::DynDim(_)) => SymInt::Dim(name.name.clone()),
                Some(Resolution::Param(i)) if self.ty(e.id).is_integer() => {
                    SymInt::Param { index: i.0, name: name.name.clone() }
                }
                _ => runtime,
            },
            ExprKind::Unary { op: UnaryOp::Neg, operand } => {
                SymInt::op(SymOp::Sub, SymInt::Const(0), self.sym_at(operand, depth + 1))
            }
            ExprKind::Binary { op, lhs, rhs } => {
                let (a, b) = (self.sym_at(lhs, depth + 1), self.sym_at(rhs, depth + 1));
                if let Some(op) = sym_op(*op) {
                    return SymInt::op(op, a, b);
                }
                let (Some(x), Some(y)) = (a.as_const(), b.as_const()) else { return runtime };
                let v = match op {
                    BinaryOp::Shl => u32::try_from(y).ok().and_then(|y| x.checked_shl(y)),
                    BinaryOp::Shr => u32::try_from(y).ok().and_then(|y| x.checked_shr(y)),
                    BinaryOp::BitAnd => Some(x & y),
                    BinaryOp::BitOr => Some(x | y),
                    BinaryOp::BitXor => Some(x ^ y),
                    _ => None,
                };
                v.map_or(runtime, SymInt::Const)
            }
            ExprKind::Call { callee, args } => match builtin_op(self, callee, args) {
                Some((op, a, b)) => SymInt::op(op, self.sym_at(a, depth + 1), self.sym_at(b, depth + 1)),
                None => runtime,
            },
            ExprKind::Cast { value, .. } if self.ty(e.id).is_integer() && self.ty(value.id).is_integer() => {
                self.sym_at(value, depth + 1)
            }
            _ => runtime,
        }
    }

    /// The first sub-expression of `e` that is not known at compile time; with `dims`, dynamic dimensions and
    /// integer parameters count as known (they are known at launch).
    pub fn non_const_span(&self, e: &Expr, dims: bool) -> Option<Span> {
        self.non_const_at(e, dims, 0)
    }

    fn non_const_at(&self, e: &Expr, dims: bool, depth: u32) -> Option<Span> {
        if depth > MAX_DEPTH {
            return Some(e.span);
        }
        if self.ty(e.id).is_error() {
            return None; // already reported
        }
        match &e.kind {
            ExprKind::Int(_) | ExprKind::Bool(_) | ExprKind::Float(_) | ExprKind::Error => None,
            ExprKind::Name { .. } => match self.res(e.id) {
                Some(Resolution::ConstGeneric(_) | Resolution::Const(..)) => None,
                Some(Resolution::DynDim(_)) if dims => None,
                Some(Resolution::Param(_)) if dims && self.ty(e.id).is_integer() => None,
                _ => Some(e.span),
            },
            ExprKind::Unary { operand, .. } => self.non_const_at(operand, dims, depth + 1),
            ExprKind::Binary { op, lhs, rhs } => {
                // Launch values are evaluated by the runtime, which knows the arithmetic operators only.
                let dims = dims && sym_op(*op).is_some();
                self.non_const_at(lhs, dims, depth + 1).or_else(|| self.non_const_at(rhs, dims, depth + 1))
            }
            ExprKind::Call { .. } if self.folded_static(e.id).is_some() => None,
            ExprKind::Call { callee, args } => {
                let pure = matches!(
                    self.res(callee.id),
                    Some(Resolution::Builtin(Builtin::CeilDiv | Builtin::Min | Builtin::Max))
                );
                if !pure {
                    return Some(e.span);
                }
                // With a wrong number of arguments (reported already) the present ones are still judged.
                args.iter().find_map(|a| self.non_const_at(&a.value, dims, depth + 1))
            }
            ExprKind::Cast { value, .. } => self.non_const_at(value, dims, depth + 1),
            _ => Some(e.span),
        }
    }

    /// Records the compile-time value of `e` for lowering.
    pub fn record_value(&mut self, e: &Expr, v: i64) {
        if let Some(t) = self.cx.tables.get_mut(self.m.index()) {
            t.values.push((e.id, v));
        }
    }

    /// Checks that the (already checked) integer expression `e` is a compile-time constant and returns its value
    /// (`None` if it depends on a const generic without value, or was reported).
    pub fn require_const(&mut self, e: &Expr, context: &str) -> Option<i64> {
        if let Some(span) = self.non_const_span(e, false) {
            self.error(SemaError::NotConstant { span, context: context.to_owned(), whole: e.span });
            return None;
        }
        let s = self.sym(e);
        if let SymInt::Const(v) = s {
            self.record_value(e, v);
            return Some(v);
        }
        if s.is_launch_time() {
            self.error(SemaError::ConstEval { span: e.span, problem: "division by zero or overflow" });
        }
        None
    }

    /// The value of a constant expression of any scalar type (for `const` items).
    fn const_value(&mut self, e: &Expr, depth: u32) -> Result<ConstValue, (Span, Option<&'static str>)> {
        use ConstValue as V;
        if depth > MAX_DEPTH {
            return Err((e.span, None));
        }
        let float = |v: V| match v {
            V::Int(i) => i as f64,
            V::Float(f) => f,
            V::Bool(b) => f64::from(u8::from(b)),
        };
        let overflow = (e.span, Some("overflow or division by zero"));
        Ok(match &e.kind {
            ExprKind::Int(v) => V::Int(i64::try_from(*v).map_err(|_| overflow)?),
            ExprKind::Float(v) => V::Float(*v),
            ExprKind::Bool(b) => V::Bool(*b),
            ExprKind::Name { .. } => match self.res(e.id).cloned() {
                Some(Resolution::Const(m, i)) => self.const_item_value(m, i).ok_or((e.span, Some("")))?,
                _ => return Err((e.span, None)),
            },
            ExprKind::Unary { op, operand } => match (op, self.const_value(operand, depth + 1)?) {
                (UnaryOp::Neg, V::Int(i)) => V::Int(i.checked_neg().ok_or(overflow)?),
                (UnaryOp::Neg, V::Float(f)) => V::Float(-f),
                (UnaryOp::Not, V::Bool(b)) => V::Bool(!b),
                (UnaryOp::BitNot, V::Int(i)) => V::Int(!i),
                _ => return Err((e.span, Some(""))),
            },
            ExprKind::Binary { op, lhs, rhs } => {
                let (a, b) = (self.const_value(lhs, depth + 1)?, self.const_value(rhs, depth + 1)?);
                match (a, b) {
                    (V::Int(x), V::Int(y)) => {
                        if let Some(sop) = sym_op(*op) {
                            V::Int(sop.apply(x, y).map_err(|_| overflow)?)
                        } else {
                            match op {
                                BinaryOp::Shl => {
                                    V::Int(u32::try_from(y).ok().and_then(|y| x.checked_shl(y)).ok_or(overflow)?)
                                }
                                BinaryOp::Shr => {
                                    V::Int(u32::try_from(y).ok().and_then(|y| x.checked_shr(y)).ok_or(overflow)?)
                                }
                                BinaryOp::BitAnd => V::Int(x & y),
                                BinaryOp::BitOr => V::Int(x | y),
                                BinaryOp::BitXor => V::Int(x ^ y),
                                _ => V::Bool(compare(*op, x.cmp(&y))),
                            }
                        }
                    }
                    (V::Bool(x), V::Bool(y)) => V::Bool(match op {
                        BinaryOp::And | BinaryOp::BitAnd => x && y,
                        BinaryOp::Or | BinaryOp::BitOr => x || y,
                        BinaryOp::BitXor | BinaryOp::Ne => x != y,
                        _ => x == y,
                    }),
                    (a, b) => {
                        let (x, y) = (float(a), float(b));
                        match op {
                            BinaryOp::Add => V::Float(x + y),
                            BinaryOp::Sub => V::Float(x - y),
                            BinaryOp::Mul => V::Float(x * y),
                            BinaryOp::Div => V::Float(x / y),
                            BinaryOp::Rem => V::Float(x % y),
                            _ => V::Bool(compare(*op, x.partial_cmp(&y).unwrap_or(std::cmp::Ordering::Less))),
                        }
                    }
                }
            }
            ExprKind::Cast { value, .. } => {
                let v = self.const_value(value, depth + 1)?;
                match self.ty(e.id).scalar() {
                    Some(s) if s.is_float() => V::Float(float(v)),
                    Some(Scalar::Bool) => v,
                    _ => V::Int(match v {
                        V::Float(f) => f as i64,
                        V::Int(i) => i,
                        V::Bool(b) => i64::from(b),
                    }),
                }
            }
            ExprKind::Call { callee, args } => match builtin_op(self, callee, args) {
                Some((op, a, b)) => match (self.const_value(a, depth + 1)?, self.const_value(b, depth + 1)?) {
                    (V::Int(x), V::Int(y)) => V::Int(op.apply(x, y).map_err(|_| overflow)?),
                    (x, y) if op == SymOp::Min => V::Float(float(x).min(float(y))),
                    (x, y) if op == SymOp::Max => V::Float(float(x).max(float(y))),
                    _ => return Err((e.span, None)),
                },
                None => return Err((e.span, None)),
            },
            _ => return Err((e.span, None)),
        })
    }
}

fn compare(op: BinaryOp, o: std::cmp::Ordering) -> bool {
    use std::cmp::Ordering::*;
    match op {
        BinaryOp::Eq => o == Equal,
        BinaryOp::Ne => o != Equal,
        BinaryOp::Lt => o == Less,
        BinaryOp::Le => o != Greater,
        BinaryOp::Gt => o == Greater,
        BinaryOp::Ge => o != Less,
        _ => false,
    }
}

/// Checks `const` item number `c` (an index into `cx.consts`) and computes its value, once. `depth` is the
/// nesting of the expression that asks for it (0 from the top level), so that chains of constants are bounded.
pub(crate) fn check_const_item(cx: &mut Cx<'_>, c: usize, depth: u32) {
    if cx.const_state.get(c) != Some(&ConstState::Unchecked) {
        return;
    }
    cx.const_state[c] = ConstState::InProgress;
    let (m, i) = (cx.consts[c].module, cx.consts[c].item);
    let Some(ast::ItemKind::Const(item)) = cx.item(m, i).map(|it| &it.kind) else {
        cx.const_state[c] = ConstState::Done;
        return;
    };
    let mut f = Fcx::new(cx, m, None, Mode::Const);
    f.depth = depth;
    let declared = item.ty.as_ref().map(|t| (f.resolve_type(t), t.span));
    if let Some((ty, span)) = &declared
        && !ty.is_error()
        && ty.scalar().is_none()
    {
        f.error(SemaError::BadConstGenericType { span: *span, found: ty.to_string() });
    }
    let hint = declared.as_ref().and_then(|(t, _)| t.scalar());
    let found = f.expr(&item.value, hint);
    if let (Some(want), Some(got)) = (hint, found.scalar())
        && !scalar_coerces(got, want)
    {
        let because = declared.as_ref().map(|(_, s)| (f.loc(*s), "declared type".to_owned()));
        f.error(SemaError::Mismatch {
            span: item.value.span,
            expected: want.to_string(),
            found: got.to_string(),
            because,
            help: None,
        });
    }
    let ty = hint.or(found.scalar());
    let value = if found.is_error() {
        None
    } else {
        match f.const_value(&item.value, 0) {
            Ok(v) => Some(match (v, ty) {
                (ConstValue::Int(i), Some(s)) if s.is_float() => ConstValue::Float(i as f64),
                (v, _) => v,
            }),
            Err((span, None)) => {
                let context = format!("the value of `{}`", item.name.name);
                f.error(SemaError::NotConstant { span, context, whole: item.value.span });
                None
            }
            Err((span, Some(problem))) if !problem.is_empty() => {
                f.error(SemaError::ConstEval { span, problem });
                None
            }
            Err(_) => None, // depends on a constant that failed: reported there
        }
    };
    f.set_type(item.id, ty.map_or(Type::Error, Type::Scalar));
    cx.consts[c].ty = ty.unwrap_or(Scalar::Int);
    cx.consts[c].value = value;
    cx.const_state[c] = ConstState::Done;
}

/// The value of a `static_assert` condition (or of a part of it).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Cond {
    Known(i64),
    /// Needs a const generic that has no value yet.
    Pending,
    /// Known only at run time: this sub-expression.
    Runtime(Span),
    /// Division by zero or overflow at this sub-expression.
    Overflow(Span),
    /// A floating-point value: not evaluated.
    Float(Span),
}

impl Fcx<'_, '_> {
    /// `static_assert(cond, "message")`: checks its arguments and, when `cond` folds to a constant, reports
    /// E0141 if it is false. A condition that needs a const generic without value is not checked (the kernel is
    /// checked again with `-D`); one that uses a run-time value is E0124.
    pub(crate) fn static_assert(
        &mut self,
        e: &Expr,
        name: &ast::Ident,
        b: &crate::builtins::BuiltinInfo,
        generics: &[Expr],
        args: &[ast::Arg],
    ) -> Type {
        if !generics.is_empty() {
            let span = crate::check_call::span_of(generics, name.span);
            self.error(SemaError::UnexpectedGenerics { name: b.name.to_owned(), span });
            self.skip_generics(generics);
        }
        let errors = self.cx.errors.len();
        let (pos, _) = self.split_args(b.name, args, &[]);
        let signature = Some(b.signature());
        self.check_arity("function", name, e.span, &pos, b.min_args(), b.params.len(), None, signature.clone());
        let mut message = None;
        for (i, arg) in pos.iter().enumerate() {
            if i == 1
                && let ExprKind::Str(s) = &arg.kind
            {
                // The message is not a value; it is only read here.
                self.set_type(arg.id, Type::Unit);
                message = Some(s.clone());
                continue;
            }
            let t = self.value(arg, None);
            let Some(p) = b.params.get(i) else { continue };
            if !p.kind.accepts(&t) {
                self.error(SemaError::WrongArgKind {
                    span: arg.span,
                    expected: p.kind.describe().to_owned(),
                    found: t.describe(),
                    param: p.name.to_owned(),
                    signature: b.signature(),
                });
            }
        }
        let Some(cond) = pos.first() else { return Type::Unit };
        if self.cx.errors.len() != errors {
            return Type::Unit;
        }
        let pending = self
            .func
            .and_then(|f| self.cx.functions.get(f))
            .is_some_and(|f| f.const_generics.iter().any(|g| g.value.is_none()));
        match self.cond_value(cond, pending, 0) {
            Cond::Known(0) => {
                let sides = match &cond.kind {
                    ExprKind::Binary { op, lhs, rhs } if is_comparison(*op) => [lhs, rhs]
                        .into_iter()
                        .filter(|x| !matches!(x.kind, ExprKind::Int(_)) && self.ty(x.id).is_integer())
                        .filter_map(|x| match self.cond_value(x, pending, 0) {
                            Cond::Known(v) => Some((source_text(x, 0), v)),
                            _ => None,
                        })
                        .collect(),
                    _ => Vec::new(),
                };
                let generics = self.const_generics_in(cond);
                self.error(SemaError::StaticAssertFailed { span: cond.span, message, sides, generics });
            }
            Cond::Known(_) | Cond::Pending => {}
            Cond::Runtime(_) if let Some(facts) = self.divisibility_facts(cond) => {
                if let Some(f) = self.func.and_then(|f| self.cx.functions.get_mut(f)) {
                    for (dim, multiple_of) in facts {
                        let message = message.clone();
                        f.requires.push(crate::Requirement { dim, multiple_of, message, span: cond.span });
                    }
                }
            }
            Cond::Runtime(span) => {
                let context = "the condition of `static_assert`".to_owned();
                self.error(SemaError::NotConstant { span, context, whole: cond.span });
            }
            Cond::Overflow(span) => {
                self.error(SemaError::ConstEval { span, problem: "division by zero or overflow" });
            }
            Cond::Float(span) => {
                let problem = "`static_assert` evaluates integers and booleans only";
                self.error(SemaError::ConstEval { span, problem });
            }
        }
        Type::Unit
    }

    /// The const generics `e` names, in order of first use, with their values and whether `-D` set them.
    pub(crate) fn const_generics_in(&self, e: &Expr) -> Vec<(String, i64, bool)> {
        fn walk(f: &Fcx<'_, '_>, e: &Expr, out: &mut Vec<ConstGenericId>, depth: u32) {
            if depth > MAX_DEPTH {
                return;
            }
            match &e.kind {
                ExprKind::Name { .. } => {
                    if let Some(Resolution::ConstGeneric(g)) = f.res(e.id)
                        && !out.contains(g)
                    {
                        out.push(*g);
                    }
                }
                ExprKind::Unary { operand, .. } | ExprKind::Cast { value: operand, .. } => {
                    walk(f, operand, out, depth + 1);
                }
                ExprKind::Binary { lhs, rhs, .. } => {
                    walk(f, lhs, out, depth + 1);
                    walk(f, rhs, out, depth + 1);
                }
                ExprKind::Call { args, .. } => args.iter().for_each(|a| walk(f, &a.value, out, depth + 1)),
                _ => {}
            }
        }
        let mut ids = Vec::new();
        walk(self, e, &mut ids, 0);
        ids.into_iter()
            .filter_map(|g| self.const_generic(g))
            .filter_map(|g| Some((g.name.clone(), g.value?, g.from_define)))
            .collect()
    }

    /// `D % c == 0` (`&&` of several) where `D` is a dynamic dimension of the kernel being checked and `c` a
    /// positive compile-time integer: requirements the runtime checks at launch (see [`crate::Requirement`]).
    fn divisibility_facts(&self, e: &Expr) -> Option<Vec<(String, i64)>> {
        let kernel = self.func.and_then(|f| self.cx.functions.get(f)).filter(|f| f.is_kernel)?;
        let mut facts = Vec::new();
        let mut stack = vec![e];
        while let Some(e) = stack.pop() {
            let ExprKind::Binary { op, lhs, rhs } = &e.kind else { return None };
            match op {
                // Right first: popped left first, so facts keep their source order.
                BinaryOp::And => stack.extend([&**rhs, &**lhs]),
                BinaryOp::Eq => {
                    let (rem, zero) = if matches!(rhs.kind, ExprKind::Int(0)) { (lhs, rhs) } else { (rhs, lhs) };
                    if !matches!(zero.kind, ExprKind::Int(0)) {
                        return None;
                    }
                    let ExprKind::Binary { op: BinaryOp::Rem, lhs: dim, rhs: by } = &rem.kind else { return None };
                    let (SymInt::Dim(name), SymInt::Const(c)) = (self.sym(dim), self.sym(by)) else { return None };
                    if c <= 0 || !kernel.dyn_dims.iter().any(|d| d.name == name) {
                        return None;
                    }
                    facts.push((name, c));
                }
                _ => return None,
            }
        }
        Some(facts)
    }

    /// The value of a checked integer or `bool` expression of a `static_assert` condition. With `pending` (a
    /// const generic of the function has no value), what does not fold is taken to wait for it.
    fn cond_value(&self, e: &Expr, pending: bool, depth: u32) -> Cond {
        if depth > MAX_DEPTH {
            return Cond::Runtime(e.span);
        }
        if self.ty(e.id).is_error() {
            return Cond::Pending; // reported
        }
        if let Some(v) = self.folded_static(e.id) {
            return Cond::Known(v);
        }
        let unknown = if pending { Cond::Pending } else { Cond::Runtime(e.span) };
        if self.ty(e.id).scalar().is_some_and(Scalar::is_float) {
            return Cond::Float(e.span);
        }
        let known = |v: Option<i64>| v.map_or(Cond::Overflow(e.span), Cond::Known);
        match &e.kind {
            ExprKind::Int(v) => known(i64::try_from(*v).ok()),
            ExprKind::Bool(b) => Cond::Known(i64::from(*b)),
            ExprKind::Name { .. } => match self.res(e.id) {
                Some(Resolution::ConstGeneric(g)) => {
                    self.const_generic(*g).and_then(|g| g.value).map_or(Cond::Pending, Cond::Known)
                }
                Some(Resolution::Const(m, i)) => match self.const_item_value(*m, *i) {
                    Some(ConstValue::Int(v)) => Cond::Known(v),
                    Some(ConstValue::Bool(b)) => Cond::Known(i64::from(b)),
                    Some(ConstValue::Float(_)) => Cond::Float(e.span),
                    None => Cond::Pending, // reported with the constant
                },
                // An immutable binding of a constant has folded; others may wait for a const generic.
                Some(Resolution::Local(_)) => unknown,
                _ => Cond::Runtime(e.span),
            },
            ExprKind::Unary { op, operand } => match self.cond_value(operand, pending, depth + 1) {
                Cond::Known(v) => match op {
                    UnaryOp::Not => Cond::Known(i64::from(v == 0)),
                    UnaryOp::Neg => known(v.checked_neg()),
                    UnaryOp::BitNot => Cond::Known(!v),
                },
                other => other,
            },
            ExprKind::Binary { op, lhs, rhs } => {
                let (a, b) = (self.cond_value(lhs, pending, depth + 1), self.cond_value(rhs, pending, depth + 1));
                for side in [a, b] {
                    if matches!(side, Cond::Runtime(_) | Cond::Overflow(_) | Cond::Float(_)) {
                        return side;
                    }
                }
                match (op, a, b) {
                    (BinaryOp::And, Cond::Known(0), _) | (BinaryOp::And, _, Cond::Known(0)) => Cond::Known(0),
                    (BinaryOp::Or, Cond::Known(x), _) | (BinaryOp::Or, _, Cond::Known(x)) if x != 0 => Cond::Known(1),
                    (_, Cond::Known(x), Cond::Known(y)) => match op {
                        BinaryOp::And => Cond::Known(i64::from(x != 0 && y != 0)),
                        BinaryOp::Or => Cond::Known(i64::from(x != 0 || y != 0)),
                        BinaryOp::Shl => known(u32::try_from(y).ok().and_then(|y| x.checked_shl(y))),
                        BinaryOp::Shr => known(u32::try_from(y).ok().and_then(|y| x.checked_shr(y))),
                        BinaryOp::BitAnd => Cond::Known(x & y),
                        BinaryOp::BitOr => Cond::Known(x | y),
                        BinaryOp::BitXor => Cond::Known(x ^ y),
                        op if is_comparison(*op) => Cond::Known(i64::from(compare(*op, x.cmp(&y)))),
                        op => known(sym_op(*op).and_then(|s| s.apply(x, y).ok())),
                    },
                    _ => Cond::Pending,
                }
            }
            ExprKind::Cast { value, .. } => match self.cond_value(value, pending, depth + 1) {
                Cond::Known(v) if *self.ty(e.id) == Type::BOOL => Cond::Known(i64::from(v != 0)),
                other => other,
            },
            ExprKind::Call { callee, args } => match builtin_op(self, callee, args) {
                Some((op, a, b)) => {
                    match (self.cond_value(a, pending, depth + 1), self.cond_value(b, pending, depth + 1)) {
                        (Cond::Known(x), Cond::Known(y)) => known(op.apply(x, y).ok()),
                        (Cond::Known(_), other) | (other, _) => other,
                    }
                }
                // A layout query that did not fold: a layout waiting for a const generic, or a dynamic one.
                None if self.ty(e.id).is_integer() => unknown,
                None => Cond::Runtime(e.span),
            },
            _ => Cond::Runtime(e.span),
        }
    }
}

fn is_comparison(op: BinaryOp) -> bool {
    matches!(op, BinaryOp::Eq | BinaryOp::Ne | BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge)
}

/// `e` as written (up to spacing and parentheses), for notes.
fn source_text(e: &Expr, depth: u32) -> String {
    if depth > 16 {
        return "..".to_owned();
    }
    let go = |x: &Expr| {
        let t = source_text(x, depth + 1);
        if matches!(x.kind, ExprKind::Binary { .. }) { format!("({t})") } else { t }
    };
    match &e.kind {
        ExprKind::Int(v) => v.to_string(),
        ExprKind::Bool(b) => b.to_string(),
        ExprKind::Name { name, generics } if generics.is_empty() => name.name.clone(),
        ExprKind::Name { name, generics } => {
            let g: Vec<String> = generics.iter().map(|g| source_text(g, depth + 1)).collect();
            format!("{}<{}>", name.name, g.join(", "))
        }
        ExprKind::Field { base, field } => format!("{}.{}", go(base), field.name),
        ExprKind::Unary { op, operand } => format!("{}{}", op.as_str(), go(operand)),
        ExprKind::Binary { op, lhs, rhs } => format!("{} {} {}", go(lhs), op.as_str(), go(rhs)),
        ExprKind::Cast { value, ty } => match &ty.kind {
            ast::TypeExprKind::Named { name, .. } => format!("{} as {}", go(value), name.name),
            _ => go(value),
        },
        ExprKind::Call { callee, args } => {
            let a: Vec<String> = args.iter().map(|a| source_text(&a.value, depth + 1)).collect();
            format!("{}({})", source_text(callee, depth + 1), a.join(", "))
        }
        _ => "..".to_owned(),
    }
}

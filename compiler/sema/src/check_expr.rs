//! Expressions: literals, names, operators, casts, fields and indexing. Calls are in `check_call.rs`, layout
//! literals and written types in `check_type.rs`.
//!
//! Literals take their type from context: `Fcx::expr` gets a scalar *hint* (the type of the other operand, of
//! the parameter, of the assigned place), which an integer literal takes if it is numeric and a float literal if
//! it is a float; without a hint `1` is `int` and `1.0` is `f32`.

use crate::body::{Fcx, Found};
use crate::builtins::{Builtin, Form};
use crate::errors::SemaError;
use crate::load::ItemRefKind;
use crate::size_diag::SizeDiag;
use crate::types::{LayoutType, Scalar, TensorType, Type, promote};
use crate::{Resolution, Space};
use cutec_grammar::ast::{Arg, BinaryOp, Expr, ExprKind, Ident, TypeExpr, UnaryOp};
use cutec_layout::LayoutOp;

/// The longest chain of constants, each defined by the next, that the checker follows (each link is checked from
/// the one before it, recursively).
const MAX_CONST_CHAIN: u32 = 100;

/// Whether `e` is made of literals only, so its type should come from the other operand.
pub(crate) fn literal_like(e: &Expr) -> bool {
    fn go(e: &Expr, depth: u32) -> bool {
        depth < 32
            && match &e.kind {
                ExprKind::Int(_) | ExprKind::Float(_) => true,
                ExprKind::Unary { op: UnaryOp::Neg, operand } => go(operand, depth + 1),
                ExprKind::Binary { op, lhs, rhs } => {
                    matches!(op, BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Div | BinaryOp::Rem)
                        && go(lhs, depth + 1)
                        && go(rhs, depth + 1)
                }
                _ => false,
            }
    }
    go(e, 0)
}

impl Fcx<'_, '_> {
    /// Checks `e`, records and returns its type.
    pub fn expr(&mut self, e: &Expr, hint: Option<Scalar>) -> Type {
        if !self.enter(e.span) {
            self.set_type(e.id, Type::Error);
            return Type::Error;
        }
        let ty = self.expr_kind(e, hint);
        self.check_literal_range(e, &ty);
        self.fold_expr(e, &ty);
        self.leave();
        self.set_type(e.id, ty.clone());
        ty
    }

    /// Checks `e` where a value is needed: `_` is reported.
    pub fn value(&mut self, e: &Expr, hint: Option<Scalar>) -> Type {
        let ty = self.expr(e, hint);
        if ty == Type::Wildcard {
            self.error(SemaError::MisplacedWildcard { span: e.span });
            return Type::Error;
        }
        ty
    }

    fn expr_kind(&mut self, e: &Expr, hint: Option<Scalar>) -> Type {
        match &e.kind {
            ExprKind::Int(_) => match hint {
                Some(s) if s.is_numeric() => Type::Scalar(s),
                _ => Type::INT,
            },
            ExprKind::Float(_) => match hint {
                Some(s) if s.is_float() && !s.is_fp8() => Type::Scalar(s),
                _ => Type::F32,
            },
            ExprKind::Bool(_) => Type::BOOL,
            ExprKind::Str(_) => {
                self.error(SemaError::NotAValue { span: e.span, what: "a string".into(), help: None });
                Type::Error
            }
            ExprKind::Name { name, generics } => self.name_expr(e, name, generics),
            ExprKind::Wildcard => Type::Wildcard,
            ExprKind::Tuple(items) => Type::Tuple(items.iter().map(|x| self.expr(x, hint)).collect()),
            ExprKind::Layout { shape, stride } => self.layout_literal(shape, stride),
            // `outer o inner` is `composition(outer, inner)`, checked and folded as that call.
            ExprKind::Compose { outer, inner } => {
                let b = crate::builtins::info(Builtin::Layout(LayoutOp::Composition));
                let name = Ident { name: b.name.to_owned(), span: e.span };
                let args = [outer, inner].map(|x| Arg { name: None, value: (**x).clone(), span: x.span });
                self.builtin_call(e, &name, b, &[], &args)
            }
            ExprKind::Unary { op, operand } => self.unary(*op, operand, hint),
            ExprKind::Binary { op, lhs, rhs } => self.binary(*op, lhs, rhs, hint),
            ExprKind::Call { callee, args } => self.call(e, callee, args),
            ExprKind::MethodCall { receiver, method, generics, args } => {
                self.method_call(e, receiver, method, generics, args)
            }
            ExprKind::Field { base, field } => self.field(base, field),
            ExprKind::Index { base, indices } => self.index(base, indices),
            ExprKind::Cast { value, ty } => self.cast(e, value, ty),
            ExprKind::Error => Type::Error,
        }
    }

    fn name_expr(&mut self, e: &Expr, name: &Ident, generics: &[Expr]) -> Type {
        let Some(found) = self.lookup(&name.name) else {
            self.unknown_name(name);
            self.skip_generics(generics);
            return Type::Error;
        };
        let takes_generics = matches!(&found, Found::Builtin(b) if b.form == Form::Constructor);
        if !generics.is_empty() && !takes_generics {
            let span = generics[0].span.to(generics[generics.len() - 1].span);
            self.error(SemaError::UnexpectedGenerics { name: name.name.clone(), span });
            self.skip_generics(generics);
        }
        match found {
            Found::Local(i) => {
                let l = &self.locals[i];
                let (id, ty) = (l.id, l.ty.clone());
                self.set_res(e.id, Resolution::Local(id));
                ty
            }
            Found::Param(i) => {
                self.set_res(e.id, Resolution::Param(i));
                self.func.and_then(|f| self.cx.functions[f].param(i)).map_or(Type::Error, |p| p.ty.clone())
            }
            Found::ConstGeneric(i) => {
                let g = self.func.and_then(|f| self.cx.functions[f].const_generic(i));
                let ty = g.map_or(Type::Error, |g| Type::Scalar(g.ty));
                self.set_res(e.id, Resolution::ConstGeneric(i));
                ty
            }
            Found::DynDim(d) => {
                self.set_res(e.id, Resolution::DynDim(d));
                Type::INT
            }
            Found::Item(r) => match r.kind {
                ItemRefKind::Const => {
                    self.set_res(e.id, Resolution::Const(r.module, r.item));
                    self.const_type(r.module, r.item, name)
                }
                ItemRefKind::Fn | ItemRefKind::Kernel => {
                    let (res, what) = if r.kind == ItemRefKind::Fn {
                        (Resolution::Function(r.module, r.item), "function")
                    } else {
                        (Resolution::Kernel(r.module, r.item), "kernel")
                    };
                    self.set_res(e.id, res);
                    let help = (r.kind == ItemRefKind::Fn).then(|| format!("call it: `{}(...)`", name.name));
                    self.error(SemaError::NotAValue {
                        span: name.span,
                        what: format!("the {what} `{}`", name.name),
                        help,
                    });
                    Type::Error
                }
            },
            Found::Builtin(b) => {
                self.set_res(e.id, Resolution::Builtin(b.builtin));
                match b.form {
                    Form::Value => builtin_value_type(b.builtin),
                    Form::Constructor => self.constructor(e, b, generics),
                    Form::Function => {
                        let help = Some(format!("call it: `{}`", b.signature()));
                        let what = format!("the builtin function `{}`", b.name);
                        self.error(SemaError::NotAValue { span: name.span, what, help });
                        Type::Error
                    }
                }
            }
            Found::Scalar(s) => {
                self.set_res(e.id, Resolution::Scalar(s));
                let help = Some(format!("to convert a value, write `value as {s}`"));
                self.error(SemaError::NotAValue { span: name.span, what: format!("the type `{s}`"), help });
                Type::Error
            }
            Found::Space(s) => {
                self.set_res(e.id, Resolution::Space(s));
                let what = format!("the memory space `{}`", s.name());
                self.error(SemaError::NotAValue { span: name.span, what, help: None });
                Type::Error
            }
        }
    }

    /// The type of `const` item `(m, i)`, checking it first if needed.
    fn const_type(&mut self, m: crate::ModuleId, i: usize, name: &Ident) -> Type {
        let Some(&c) = self.cx.const_index.get(&(m, i)) else { return Type::Error };
        if self.cx.const_state[c] == crate::program::ConstState::InProgress {
            self.error(SemaError::ConstCycle { name: name.name.clone(), span: name.span });
            return Type::Error;
        }
        // A constant defined by another is checked from here, recursively: the chain is bounded (a chain of
        // thousands of constants would overflow the stack), and its expressions count against the nesting bound.
        if self.cx.const_chain >= MAX_CONST_CHAIN {
            self.error(SemaError::ConstChainTooDeep { name: name.name.clone(), span: name.span });
            return Type::Error;
        }
        self.cx.const_chain += 1;
        crate::consteval::check_const_item(self.cx, c, self.depth);
        self.cx.const_chain -= 1;
        Type::Scalar(self.cx.consts[c].ty)
    }

    /// Checks generic arguments that will not be used, so their names are still resolved and reported.
    pub fn skip_generics(&mut self, generics: &[Expr]) {
        for g in generics {
            if let ExprKind::Name { name, generics: inner } = &g.kind
                && inner.is_empty()
                && (Scalar::from_name(&name.name).is_some() || Space::from_name(&name.name).is_some())
            {
                continue;
            }
            self.expr(g, None);
        }
    }

    fn unary(&mut self, op: UnaryOp, operand: &Expr, hint: Option<Scalar>) -> Type {
        if op == UnaryOp::Neg && matches!(operand.kind, ExprKind::Int(_)) {
            self.negated_literal = Some(operand.id);
        }
        let t = self.value(operand, hint);
        self.negated_literal = None;
        let Some(s) = t.scalar() else {
            if !t.is_error() {
                let expected = if op == UnaryOp::Not { "a `bool`" } else { "a number" };
                let found = t.describe();
                self.error(SemaError::BadOperand {
                    op: op.as_str().into(),
                    span: operand.span,
                    found,
                    expected,
                    help: None,
                });
            }
            return Type::Error;
        };
        let ok = match op {
            UnaryOp::Neg => s.is_numeric() && !s.is_fp8(),
            UnaryOp::Not => s == Scalar::Bool,
            UnaryOp::BitNot => s.is_integer(),
        };
        if ok {
            return t;
        }
        let (expected, help) = match op {
            UnaryOp::Neg if s.is_fp8() => ("a number", Some(fp8_help())),
            UnaryOp::Neg => ("a number", None),
            UnaryOp::Not if s.is_integer() => ("a `bool`", Some("for a bitwise not, use `~`".to_owned())),
            UnaryOp::Not => ("a `bool`", None),
            UnaryOp::BitNot => ("an integer", None),
        };
        let found = format!("`{s}`");
        self.error(SemaError::BadOperand { op: op.as_str().into(), span: operand.span, found, expected, help });
        Type::Error
    }

    fn binary(&mut self, op: BinaryOp, lhs: &Expr, rhs: &Expr, hint: Option<Scalar>) -> Type {
        use BinaryOp::*;
        let o = op.as_str().to_owned();
        if matches!(op, And | Or) {
            for side in [lhs, rhs] {
                let t = self.value(side, None);
                if !t.is_error() && t != Type::BOOL {
                    let found = t.describe();
                    self.error(SemaError::BadOperand {
                        op: o.clone(),
                        span: side.span,
                        found,
                        expected: "a `bool`",
                        help: None,
                    });
                }
            }
            return Type::BOOL;
        }
        let cmp = matches!(op, Eq | Ne | Lt | Le | Gt | Ge);
        let shift = matches!(op, Shl | Shr);
        let outer = if cmp { None } else { hint };
        // The literal side takes the type of the other side: `0.5 * x` with `x: f16` is f16 arithmetic.
        let (lt, rt) = if shift {
            let lt = self.value(lhs, outer);
            (lt, self.value(rhs, Some(Scalar::Int)))
        } else if literal_like(lhs) && !literal_like(rhs) {
            let rt = self.value(rhs, outer);
            (self.value(lhs, rt.scalar().or(outer)), rt)
        } else {
            let lt = self.value(lhs, outer);
            let rt = self.value(rhs, lt.scalar().or(outer));
            (lt, rt)
        };
        let fail = if cmp { Type::BOOL } else { Type::Error };
        if lt.is_error() || rt.is_error() {
            return fail;
        }
        let (a, b) = match (lt.scalar(), rt.scalar()) {
            (Some(a), Some(b)) => (a, b),
            (None, _) => {
                let found = lt.describe();
                self.error(SemaError::BadOperand { op: o, span: lhs.span, found, expected: "a number", help: None });
                return fail;
            }
            (_, None) => {
                let found = rt.describe();
                self.error(SemaError::BadOperand { op: o, span: rhs.span, found, expected: "a number", help: None });
                return fail;
            }
        };
        let bad = |this: &mut Self, side: &Expr, s: Scalar, expected: &'static str, help: Option<String>| {
            let found = format!("`{s}`");
            this.error(SemaError::BadOperand { op: op.as_str().into(), span: side.span, found, expected, help });
        };
        if shift || matches!(op, BitAnd | BitOr | BitXor) {
            if matches!(op, BitAnd | BitOr | BitXor) && a == Scalar::Bool && b == Scalar::Bool {
                return Type::BOOL;
            }
            for (side, s) in [(lhs, a), (rhs, b)] {
                if !s.is_integer() {
                    bad(self, side, s, "an integer", None);
                    return fail;
                }
            }
            if shift {
                return lt;
            }
        } else if (a == Scalar::Bool || b == Scalar::Bool) && !(matches!(op, Eq | Ne) && a == b) {
            let (side, s) = if a == Scalar::Bool { (lhs, a) } else { (rhs, b) };
            bad(self, side, s, "a number", None);
            return fail;
        } else if cmp && a == b {
            return Type::BOOL; // includes `==`/`!=` on two bools
        }
        for (side, s) in [(lhs, a), (rhs, b)] {
            if s.is_fp8() {
                bad(self, side, s, "a number that supports arithmetic", Some(fp8_help()));
                return fail;
            }
        }
        match promote(a, b) {
            Some(_) if cmp => Type::BOOL,
            Some(p) if p.is_integer() && matches!(op, Div | Rem) && self.sym(rhs).as_const() == Some(0) => {
                // Integer division by zero has no value: LLVM treats it as undefined and may delete the code.
                self.error(SemaError::DivisionByZero { op: o, span: rhs.span });
                Type::Scalar(p)
            }
            Some(p) => {
                if p.is_integer() {
                    self.check_overflow(op, lhs, rhs);
                }
                Type::Scalar(p)
            }
            None => {
                let (l, r) = ((lhs.span, a.to_string()), (rhs.span, b.to_string()));
                self.error(SemaError::OperandsDontMix { op: o, lhs: l, rhs: r });
                fail
            }
        }
    }

    /// Reports `lhs op rhs` of two compile-time integers whose value leaves the 64-bit range (E0160): the lowering
    /// could not compute it either, and would only say that it expected something else there. Division by zero is
    /// reported by `binary`; an operand that itself overflowed is not a constant, so only the innermost is reported.
    fn check_overflow(&mut self, op: BinaryOp, lhs: &Expr, rhs: &Expr) {
        let Some(sop) = crate::consteval::sym_op(op) else { return };
        let (Some(x), Some(y)) = (self.sym(lhs).as_const(), self.sym(rhs).as_const()) else { return };
        if !matches!(sop.apply(x, y), Err(cutec_symint::EvalError::Overflow { .. })) {
            return;
        }
        let mut generics: Vec<(String, i64)> = Vec::new();
        for side in [lhs, rhs] {
            for (name, value, _) in self.const_generics_in(side) {
                if !generics.iter().any(|(n, _)| *n == name) {
                    generics.push((name, value));
                }
            }
        }
        let text = format!("{} {} {}", crate::fold::text(lhs, 0), op.as_str(), crate::fold::text(rhs, 0));
        self.error(SemaError::Size(SizeDiag::Overflow {
            span: lhs.span.to(rhs.span),
            text,
            op: op.as_str(),
            lhs: x,
            rhs: y,
            generics,
        }));
    }

    fn cast(&mut self, e: &Expr, value: &Expr, ty: &TypeExpr) -> Type {
        let from = self.value(value, None);
        let to = self.resolve_type(ty);
        if from.is_error() || to.is_error() {
            return to;
        }
        let (Some(f), Some(t)) = (from.scalar(), to.scalar()) else {
            let help = if from.tensor().is_some() {
                Some("to convert a tensor's elements, use `store(src, dst)` or a loop over its elements".to_owned())
            } else {
                None
            };
            self.error(SemaError::InvalidCast { span: e.span, from: from.describe(), to: to.to_string(), help });
            return Type::Error;
        };
        if t == Scalar::Bool && f != Scalar::Bool {
            let help = Some("compare instead: `x != 0`".to_owned());
            self.error(SemaError::InvalidCast { span: e.span, from: format!("`{f}`"), to: t.to_string(), help });
            return Type::Error;
        }
        to
    }

    fn field(&mut self, base: &Expr, field: &Ident) -> Type {
        let t = self.value(base, None);
        match t {
            Type::Error => Type::Error,
            Type::Dim3 if matches!(field.name.as_str(), "x" | "y" | "z") => Type::INT,
            _ => {
                let available = if t == Type::Dim3 { "`x`, `y`, `z`" } else { "none" };
                let suggestion = None; // the note lists the three fields; a one-letter guess is noise;
                let ty = t.to_string();
                let (name, span) = (field.name.clone(), field.span);
                self.error(SemaError::UnknownField { name, span, ty, suggestion, available: available.into() });
                Type::Error
            }
        }
    }

    fn index(&mut self, base: &Expr, indices: &[Expr]) -> Type {
        let bt = self.value(base, None);
        for ix in indices {
            let t = self.expr(ix, Some(Scalar::Int));
            if !(t.is_integer() || t == Type::Wildcard || t.is_error()) {
                self.error(SemaError::IndexNotInt { span: ix.span, found: t.describe() });
            }
        }
        let t = match bt {
            Type::Tensor(t) => t,
            Type::Error => return Type::Error,
            other => {
                self.error(SemaError::IndexNonTensor { span: base.span, found: other.describe() });
                return Type::Error;
            }
        };
        let wild = indices.iter().filter(|i| matches!(i.kind, ExprKind::Wildcard)).count();
        if indices.len() > 1
            && let Some(rank) = t.layout.rank
            && rank != indices.len()
        {
            let span = indices[0].span.to(indices[indices.len() - 1].span);
            let ty = Type::Tensor(t.clone()).to_string();
            self.error(SemaError::IndexRank { span, found: indices.len(), rank, base: base.span, ty });
            return Type::Error;
        }
        if wild == 0 {
            return t.elem.clone();
        }
        if indices.len() == 1 {
            return Type::Tensor(t);
        }
        Type::Tensor(Box::new(TensorType { elem: t.elem, layout: LayoutType::of_rank(Some(wild)), space: t.space }))
    }
}

/// The type of a builtin used as a value.
fn builtin_value_type(b: Builtin) -> Type {
    match b {
        Builtin::ThreadIdx | Builtin::BlockIdx | Builtin::BlockDim | Builtin::GridDim => Type::Dim3,
        Builtin::Inf => Type::F32,
        _ => Type::INT,
    }
}

pub(crate) fn fp8_help() -> String {
    "fp8 values are a storage format without arithmetic; convert first: `x as f32`".to_owned()
}

impl Fcx<'_, '_> {
    /// E0142: a numeric literal whose value its type cannot hold (`let v: i8 = 1000;`, `1e400`, `70000 as` an
    /// `f16`), instead of a silently truncated or infinite constant.
    fn check_literal_range(&mut self, e: &Expr, ty: &Type) {
        let Some(s) = ty.scalar() else { return };
        let negated = self.negated_literal == Some(e.id);
        let (fits, literal) = match e.kind {
            ExprKind::Int(v) => {
                let value = if negated { -(i128::from(v)) } else { i128::from(v) };
                let fits = match int_range(s) {
                    Some((lo, hi)) => (lo..=hi).contains(&value),
                    None => float_max(s).is_none_or(|max| (value as f64).abs() <= max),
                };
                (fits, format!("{}{v}", if negated { "-" } else { "" }))
            }
            ExprKind::Float(f) => {
                let fits = f.is_finite() && float_max(s).is_none_or(|max| f.abs() <= max);
                // An overflowing literal parsed as infinity: its digits are in the source, under the label.
                (fits, if f.is_finite() { format!("{f:?}") } else { "this literal".to_owned() })
            }
            _ => return,
        };
        if !fits {
            let range = match (int_range(s), float_max(s)) {
                (Some((lo, hi)), _) => format!("`{s}` holds {lo} to {hi}"),
                (None, Some(max)) if max >= 1e6 => format!("the largest finite `{s}` is {max:e}"),
                (None, Some(max)) => format!("the largest finite `{s}` is {max}"),
                (None, None) => format!("`{s}` cannot hold it"),
            };
            self.error(SemaError::LiteralOutOfRange { span: e.span, literal, ty: s.to_string(), range });
        }
    }
}

/// The range of an integer type (`int` is 32-bit).
pub(crate) fn int_range(s: Scalar) -> Option<(i128, i128)> {
    if !s.is_integer() {
        return None;
    }
    let bits = s.bits();
    Some(if s.is_signed() { (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1) } else { (0, (1i128 << bits) - 1) })
}

/// The largest finite value of a floating-point type.
fn float_max(s: Scalar) -> Option<f64> {
    Some(match s {
        Scalar::F16 => 65504.0,
        Scalar::BF16 => 3.389_531_389_251_535_5e38,
        Scalar::E4M3 => 448.0,
        Scalar::E5M2 => 57344.0,
        Scalar::F32 => f64::from(f32::MAX),
        Scalar::F64 => f64::MAX,
        _ => return None,
    })
}

//! Written types (`f32`, `Tensor<bf16, (M, K):(K, 1), gmem>`, tuples), layout literals and their
//! well-formedness (integer entries, positive static extents, congruent shape and stride), and generic arguments
//! (constant integers, element types, memory spaces).

use crate::Resolution;
use crate::body::Fcx;
use crate::body::similar;
use crate::builtins::GenericKind;
use crate::errors::SemaError;
use crate::types::{IntTuple, LayoutType, Scalar, Space, SymInt, SymLayout, TensorType, Type, compact_col_major};
use cutec_grammar::ast::{Expr, ExprKind, TypeExpr, TypeExprKind};

/// A checked generic argument.
#[derive(Clone, Copy, PartialEq, Debug)]
pub(crate) enum GenVal {
    /// A constant integer (`None`: a const generic without value).
    Int(Option<i64>),
    DType(Scalar),
    Space(Space),
    Error,
}

impl GenVal {
    pub fn int(self) -> Option<i64> {
        if let GenVal::Int(v) = self { v } else { None }
    }
    pub fn dtype(self) -> Option<Scalar> {
        if let GenVal::DType(s) = self { Some(s) } else { None }
    }
}

fn type_names() -> Vec<&'static str> {
    let mut v: Vec<&'static str> = Scalar::ALL.iter().map(|s| s.name()).collect();
    v.push("Tensor");
    v
}

fn no_runtime(t: &IntTuple) -> bool {
    t.leaves().iter().all(|l| l.is_launch_time())
}

impl Fcx<'_, '_> {
    /// The type a type expression denotes.
    pub fn resolve_type(&mut self, te: &TypeExpr) -> Type {
        match &te.kind {
            TypeExprKind::Error => Type::Error,
            TypeExprKind::Tuple(v) => Type::Tuple(v.iter().map(|t| self.resolve_type(t)).collect()),
            TypeExprKind::Named { name, args } => {
                if let Some(s) = Scalar::from_name(&name.name) {
                    if !args.is_empty() {
                        let span = args[0].span.to(args[args.len() - 1].span);
                        self.error(SemaError::UnexpectedGenerics { name: name.name.clone(), span });
                        self.skip_generics(args);
                    }
                    return Type::Scalar(s);
                }
                if name.name == "Tensor" {
                    return self.tensor_type(te, args);
                }
                let suggestion = similar(&name.name, type_names());
                self.error(SemaError::UnknownType { name: name.name.clone(), span: name.span, suggestion });
                self.skip_generics(args);
                Type::Error
            }
        }
    }

    fn tensor_type(&mut self, te: &TypeExpr, args: &[Expr]) -> Type {
        let [elem, layout, space] = args else {
            self.error(SemaError::BadTensorType {
                span: te.span,
                problem: format!(
                    "`Tensor` takes 3 generic arguments (element type, layout, memory space), found {}",
                    args.len()
                ),
                help: Some("for example `Tensor<f32, (M, N):(N, 1), gmem>`".to_owned()),
            });
            self.skip_generics(args);
            return Type::Error;
        };
        let elem = self.generic_arg(elem, GenericKind::DType, "");
        let layout = self.layout_arg(layout);
        let space = self.generic_arg(space, GenericKind::Space, "");
        match (elem, space) {
            (GenVal::DType(e), GenVal::Space(s)) => {
                Type::Tensor(Box::new(TensorType { elem: Type::Scalar(e), layout, space: s }))
            }
            _ => Type::Error,
        }
    }

    /// A layout written as a type argument: a layout literal, or a shape standing for its compact layout.
    pub fn layout_arg(&mut self, e: &Expr) -> LayoutType {
        if let ExprKind::Layout { .. } = e.kind {
            return match self.expr(e, None) {
                Type::Layout(l) => *l,
                _ => LayoutType::default(),
            };
        }
        let shape = self.int_tree(e, "shape");
        let stride = compact_col_major(&shape);
        LayoutType::known(SymLayout { shape, stride })
    }

    /// `shape:stride`: both trees of integers, congruent, with positive static extents.
    pub fn layout_literal(&mut self, shape: &Expr, stride: &Expr) -> Type {
        let s = self.int_tree(shape, "shape");
        let d = self.int_tree(stride, "stride");
        if !s.congruent(&d) {
            let suggestion = no_runtime(&s).then(|| format!("{}:{}", s, compact_col_major(&s)));
            self.error(SemaError::IncongruentLayout {
                span: stride.span,
                shape_span: shape.span,
                shape_profile: s.profile(),
                stride_profile: d.profile(),
                suggestion,
            });
            return Type::Layout(Box::new(LayoutType::of_rank(Some(s.rank()))));
        }
        Type::Layout(Box::new(LayoutType::known(SymLayout { shape: s, stride: d })))
    }

    /// Checks a (nested) tuple of integer expressions and returns it symbolically.
    pub fn int_tree(&mut self, e: &Expr, part: &'static str) -> IntTuple {
        if let ExprKind::Tuple(items) = &e.kind {
            if !self.enter(e.span) {
                self.set_type(e.id, Type::Error);
                return IntTuple::Int(self.runtime_sym(e));
            }
            let v: Vec<IntTuple> = items.iter().map(|x| self.int_tree(x, part)).collect();
            self.leave();
            let types = items.iter().map(|x| self.ty(x.id).clone()).collect();
            self.set_type(e.id, Type::Tuple(types));
            return IntTuple::Tuple(v);
        }
        let t = self.expr(e, Some(Scalar::Int));
        if !t.is_integer() && !t.is_error() {
            self.error(SemaError::LayoutEntry { span: e.span, found: t.describe(), part });
            return IntTuple::Int(self.runtime_sym(e));
        }
        let v = self.sym(e);
        if let SymInt::Const(x) = v {
            self.record_value(e, x);
        }
        if part == "shape"
            && let SymInt::Const(x) = v
            && x <= 0
        {
            self.error(SemaError::NonPositiveExtent { span: e.span, value: x });
        }
        IntTuple::Int(v)
    }

    /// Checks a generic argument of the given kind. `context` names it in "must be a compile-time constant".
    pub fn generic_arg(&mut self, g: &Expr, kind: GenericKind, context: &str) -> GenVal {
        match kind {
            GenericKind::Int => {
                let t = self.expr(g, Some(Scalar::Int));
                if t.is_error() {
                    return GenVal::Error;
                }
                if !t.is_integer() && t != Type::BOOL {
                    let found = t.describe();
                    self.error(SemaError::BadGenericArg {
                        span: g.span,
                        expected: "a constant integer",
                        found,
                        suggestion: None,
                    });
                    return GenVal::Error;
                }
                let context = if context.is_empty() { "a generic argument" } else { context };
                GenVal::Int(self.require_const(g, context))
            }
            GenericKind::DType | GenericKind::Space => {
                let dtype = kind == GenericKind::DType;
                if let ExprKind::Name { name, generics } = &g.kind
                    && generics.is_empty()
                {
                    if dtype && let Some(s) = Scalar::from_name(&name.name) {
                        self.set_res(g.id, Resolution::Scalar(s));
                        self.set_type(g.id, Type::DType(s));
                        return GenVal::DType(s);
                    }
                    if !dtype && let Some(s) = Space::from_name(&name.name) {
                        self.set_res(g.id, Resolution::Space(s));
                        self.set_type(g.id, Type::Space(s));
                        return GenVal::Space(s);
                    }
                }
                let (expected, names): (&'static str, Vec<&str>) = if dtype {
                    ("an element type such as `f32`", Scalar::ALL.iter().map(|s| s.name()).collect())
                } else {
                    ("a memory space (`gmem`, `smem` or `rmem`)", Space::WRITABLE.iter().map(|s| s.name()).collect())
                };
                let (found, suggestion) = match &g.kind {
                    ExprKind::Name { name, .. } => (format!("`{}`", name.name), similar(&name.name, names)),
                    _ => ("an expression".to_owned(), None),
                };
                self.error(SemaError::BadGenericArg { span: g.span, expected, found, suggestion });
                self.set_type(g.id, Type::Error);
                GenVal::Error
            }
        }
    }
}

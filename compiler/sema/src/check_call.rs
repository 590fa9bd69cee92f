//! Calls: builtin functions (arity and argument kinds from the table, result types here) and device functions.
//! The atoms (`Swizzle<B, M, S>`, `SW128_K<T>`, `wgmma<...>`) and the tiled MMA's methods are in `check_atom.rs`.

use crate::Resolution;
use crate::body::similar;
use crate::body::{Fcx, Found};
use crate::builtins::{ArgKind, Builtin, BuiltinInfo, Form, GenericKind, ParamSig};
use crate::check_expr::literal_like;
use crate::check_type::GenVal;
use crate::errors::{Loc, SemaError};
use crate::load::{ItemRef, ItemRefKind};
use crate::program::CallEdge;
use crate::types::{LayoutType, Scalar, Space, TensorType, TiledMmaType, Type, coerces, promote, scalar_coerces};
use cutec_diagnostics::Span;
use cutec_grammar::ast::{Arg, Expr, ExprKind, Ident};
use cutec_layout::LayoutOp;

pub(crate) fn span_of(exprs: &[Expr], fallback: Span) -> Span {
    match (exprs.first(), exprs.last()) {
        (Some(a), Some(b)) => a.span.to(b.span),
        _ => fallback,
    }
}

pub(crate) fn tensor(ty: &Type) -> Option<&TensorType> {
    ty.tensor()
}

pub(crate) fn new_tensor(elem: Type, rank: Option<usize>, space: Space) -> Type {
    Type::Tensor(Box::new(TensorType { elem, layout: LayoutType::of_rank(rank), space }))
}

pub(crate) fn layout(rank: Option<usize>, swizzled: bool) -> Type {
    Type::Layout(Box::new(LayoutType { rank, value: None, swizzled }))
}

/// A layout-or-tensor operation's result: a tensor stays a tensor (with a new rank), anything else is a layout.
fn same_kind(x: &Type, rank: Option<usize>) -> Type {
    match x {
        Type::Tensor(t) => new_tensor(t.elem.clone(), rank, t.space),
        Type::Error => Type::Error,
        Type::Layout(l) => layout(rank, l.swizzled),
        _ => layout(rank, false),
    }
}

fn add(a: Option<usize>, b: Option<usize>) -> Option<usize> {
    Some(a? + b?)
}

/// Floating-point result of a math function: floats keep their type, integers become `f32`.
fn float_of(t: &Type) -> Type {
    match t.scalar() {
        Some(s) if s.is_float() => Type::Scalar(s),
        _ if t.is_error() => Type::Error,
        _ => Type::F32,
    }
}

impl Fcx<'_, '_> {
    pub(crate) fn skip_args(&mut self, args: &[Arg]) {
        for a in args {
            self.expr(&a.value, None);
        }
    }

    /// A call `callee(args)`.
    pub fn call(&mut self, e: &Expr, callee: &Expr, args: &[Arg]) -> Type {
        let ExprKind::Name { name, generics } = &callee.kind else {
            let t = self.expr(callee, None);
            if !t.is_error() {
                self.error(SemaError::NotCallable { span: callee.span, what: t.describe(), def: None, help: None });
            }
            self.skip_args(args);
            return Type::Error;
        };
        self.set_type(callee.id, Type::Fn);
        let Some(found) = self.lookup(&name.name) else {
            self.unknown_name(name);
            self.skip_generics(generics);
            self.skip_args(args);
            return Type::Error;
        };
        match found {
            Found::Builtin(b) if b.form == Form::Function => {
                self.set_res(callee.id, Resolution::Builtin(b.builtin));
                self.builtin_call(e, name, b, generics, args)
            }
            Found::Item(r) if r.kind == ItemRefKind::Fn => self.fn_call(callee, name, r, generics, args),
            other => {
                self.not_callable(callee, name, other);
                self.skip_generics(generics);
                self.skip_args(args);
                Type::Error
            }
        }
    }

    fn not_callable(&mut self, callee: &Expr, name: &Ident, found: Found) {
        let n = &name.name;
        let (what, def, help, res) = match found {
            Found::Builtin(b) => {
                let help = format!("`{n}` is a value, not a function: use it without parentheses");
                (format!("`{n}`"), None, Some(help), Some(Resolution::Builtin(b.builtin)))
            }
            Found::Item(r) => {
                let def = self.item_loc(r);
                if r.kind == ItemRefKind::Kernel {
                    let help = "kernels are launched from the host; move the shared code into a `fn`".to_owned();
                    (format!("the kernel `{n}`"), def, Some(help), Some(Resolution::Kernel(r.module, r.item)))
                } else {
                    (format!("the constant `{n}`"), def, None, Some(Resolution::Const(r.module, r.item)))
                }
            }
            Found::Local(i) => {
                let l = &self.locals[i];
                let what = format!("`{n}`, a variable of type `{}`,", l.ty);
                (what, Some(self.loc(l.span)), None, Some(Resolution::Local(l.id)))
            }
            Found::Param(i) => (format!("the parameter `{n}`"), None, None, Some(Resolution::Param(i))),
            Found::ConstGeneric(g) => {
                (format!("the const generic `{n}`"), None, None, Some(Resolution::ConstGeneric(g)))
            }
            Found::DynDim(d) => (format!("the dimension `{n}`"), None, None, Some(Resolution::DynDim(d))),
            Found::Scalar(s) => {
                let help = format!("to convert a value, write `value as {s}`");
                (format!("the type `{s}`"), None, Some(help), Some(Resolution::Scalar(s)))
            }
            Found::Space(s) => (format!("the memory space `{n}`"), None, None, Some(Resolution::Space(s))),
        };
        if let Some(r) = res {
            self.set_res(callee.id, r);
        }
        self.error(SemaError::NotCallable { span: name.span, what, def, help });
    }

    /// Splits arguments into positional ones; checks named ones against `accepted` and returns them with their
    /// types.
    pub(crate) fn split_args<'e>(
        &mut self,
        callee: &str,
        args: &'e [Arg],
        accepted: &[ParamSig],
    ) -> (Vec<&'e Expr>, Vec<(&'e Arg, Type)>) {
        let mut pos = Vec::new();
        let mut named: Vec<(&Arg, Type)> = Vec::new();
        // `store(.., map = f, with = x)`: `f` takes the value and `x`'s element.
        let operands = args.iter().filter(|a| a.name.as_ref().is_some_and(|n| n.name == "with")).count();
        for a in args {
            match &a.name {
                None => {
                    if let Some((n, _)) = named.first() {
                        self.error(SemaError::PositionalAfterNamed { span: a.span, named: n.span });
                    }
                    pos.push(&a.value);
                }
                Some(n) => {
                    let sig = accepted.iter().find(|p| p.name == n.name);
                    if let Some(p) = sig.filter(|p| p.kind == ArgKind::Function) {
                        // A function's name, not a value (`store(acc, c, map = gelu)`).
                        if self.function_arg(&a.value, callee, p, 1 + operands) {
                            named.push((a, Type::Unit));
                        }
                        continue;
                    }
                    let t = self.value(&a.value, sig.and_then(|p| p.kind.literal_hint()));
                    match sig {
                        None => {
                            let names = accepted.iter().map(|p| p.name);
                            let suggestion = similar(&n.name, names);
                            let list: Vec<String> = accepted.iter().map(|p| format!("`{}`", p.name)).collect();
                            self.error(SemaError::UnknownNamedArg {
                                name: n.name.clone(),
                                span: n.span,
                                callee: callee.to_owned(),
                                suggestion,
                                accepted: list.join(", "),
                            });
                        }
                        Some(p) if !p.kind.accepts(&t) => {
                            self.error(SemaError::WrongArgKind {
                                span: a.value.span,
                                expected: p.kind.describe().to_owned(),
                                found: t.describe(),
                                param: p.name.to_owned(),
                                signature: format!("{callee}(..., {} = {})", p.name, p.kind.sig()),
                            });
                        }
                        Some(_) => named.push((a, t)),
                    }
                }
            }
        }
        (pos, named)
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn check_arity(
        &mut self,
        what: &'static str,
        callee: &Ident,
        call: Span,
        pos: &[&Expr],
        min: usize,
        max: usize,
        def: Option<Loc>,
        signature: Option<String>,
    ) -> bool {
        let n = pos.len();
        if n >= min && n <= max {
            return true;
        }
        let expected = if min == max { min.to_string() } else { format!("{min} to {max}") };
        let extra = pos.iter().skip(max).map(|e| e.span).collect();
        let missing_at = (n < min).then(|| Span { start: call.end.saturating_sub(1), end: call.end });
        self.error(SemaError::Arity {
            what,
            callee: callee.name.clone(),
            span: callee.span,
            expected,
            found: n,
            extra,
            missing_at,
            def,
            signature,
        });
        false
    }

    /// Checks generic arguments against a builtin's table row; `None` (after reporting) if their number is wrong.
    pub(crate) fn builtin_generics(&mut self, b: &BuiltinInfo, span: Span, generics: &[Expr]) -> Option<Vec<GenVal>> {
        let (n, max) = (generics.len(), b.generics.len());
        let min = max - b.optional_generics;
        if n < min || (!b.variadic_generics && n > max) {
            let gspan = span_of(generics, span);
            if max == 0 {
                self.error(SemaError::UnexpectedGenerics { name: b.name.to_owned(), span: gspan });
            } else {
                let expected = if b.variadic_generics {
                    format!("at least {min}")
                } else if min == max {
                    min.to_string()
                } else {
                    format!("{min} or {max}")
                };
                let signature = Some(b.signature());
                self.error(SemaError::GenericCount {
                    name: b.name.to_owned(),
                    span: gspan,
                    expected,
                    found: n,
                    signature,
                });
            }
            self.skip_generics(generics);
            return None;
        }
        let ctx = format!("a generic argument of `{}`", b.name);
        Some(generics.iter().enumerate().map(|(i, g)| self.generic_arg(g, b.generics[i.min(max - 1)], &ctx)).collect())
    }

    /// Checks positional arguments against parameter kinds, literals last so they take their type from the others.
    pub(crate) fn builtin_args(&mut self, b: &BuiltinInfo, params: &[ParamSig], pos: &[&Expr]) -> Vec<Type> {
        let mut types = vec![Type::Error; pos.len()];
        let mut order: Vec<usize> = (0..pos.len()).filter(|&i| !literal_like(pos[i])).collect();
        order.extend((0..pos.len()).filter(|&i| literal_like(pos[i])));
        let mut common: Option<Scalar> = None;
        for i in order {
            let kind = params.get(i).map(|p| p.kind);
            let hint = match (b.builtin, i, kind) {
                (Builtin::Fill, 1, _) => types.first().and_then(tensor).and_then(|t| t.elem.scalar()),
                (_, _, Some(k @ (ArgKind::Numeric | ArgKind::Float))) => common.or(k.literal_hint()),
                (_, _, k) => k.and_then(ArgKind::literal_hint),
            };
            let t = if matches!(kind, Some(ArgKind::Coord | ArgKind::Tiler)) {
                self.expr(pos[i], hint)
            } else {
                self.value(pos[i], hint)
            };
            if let (Some(ArgKind::Numeric | ArgKind::Float), Some(s)) = (kind, t.scalar()) {
                common = Some(common.map_or(s, |c| promote(c, s).unwrap_or(c)));
            }
            match (kind, params.get(i)) {
                (Some(k), Some(p)) if !k.accepts(&t) => {
                    let (expected, found) = (k.describe().to_owned(), t.describe());
                    let signature = b.signature();
                    let param = p.name.to_owned();
                    self.error(SemaError::WrongArgKind { span: pos[i].span, expected, found, param, signature });
                }
                _ => types[i] = t,
            }
        }
        types
    }

    pub(crate) fn builtin_call(
        &mut self,
        e: &Expr,
        name: &Ident,
        b: &BuiltinInfo,
        generics: &[Expr],
        args: &[Arg],
    ) -> Type {
        if b.builtin == Builtin::Select && !generics.is_empty() {
            return self.select_modes(e, name, generics, args);
        }
        if b.builtin == Builtin::StaticAssert {
            return self.static_assert(e, name, b, generics, args);
        }
        let errors = self.cx.errors.len();
        let gens = self.builtin_generics(b, name.span, generics);
        let (pos, named) = self.split_args(b.name, args, b.named);
        let signature = Some(b.signature());
        self.check_arity("function", name, e.span, &pos, b.min_args(), b.params.len(), None, signature);
        let types = self.builtin_args(b, b.params, &pos);
        for (a, t) in &named {
            let Some(n) = &a.name else { continue };
            let operand = |p: &&crate::builtins::ParamSig| {
                matches!(p.kind, ArgKind::Mbarrier | ArgKind::Bool | ArgKind::Function | ArgKind::Tensor)
                    || p.name == "cta"
                    || p.name == "multicast"
            };
            match b.named.iter().find(|p| p.name == n.name).filter(operand).map(|p| p.kind) {
                // An operand (`tma_load(.., bar = full[s], multicast = mask)`, `gemm(.., accumulate = k > 0)`,
                // `mbarrier_arrive(.., cta = r)`, `store(.., with = x)`), not an option: a run-time value.
                // Resolved and checked by `split_args`.
                Some(ArgKind::Function) => {}
                Some(kind) => {
                    if !kind.accepts(t) {
                        self.error(SemaError::WrongArgKind {
                            span: a.value.span,
                            expected: kind.describe().to_owned(),
                            found: t.describe(),
                            param: n.name.clone(),
                            signature: b.signature(),
                        });
                    }
                }
                _ => {
                    self.require_const(&a.value, &format!("`{}` of `{}`", n.name, b.name));
                }
            }
        }
        // `with = x` is what `map = f` takes beside the value: alone it would be read by nothing.
        let named_arg = |n: &str| args.iter().find(|a| a.name.as_ref().is_some_and(|x| x.name == n));
        if b.builtin == Builtin::Store
            && let Some(w) = named_arg("with")
            && named_arg("map").is_none()
        {
            self.error(SemaError::NamedArgWithout {
                span: w.span,
                name: "with".into(),
                needs: "map".into(),
                signature: b.signature(),
            });
        }
        let Some(gens) = gens else { return Type::Error };
        let ty = self.builtin_result(b.builtin, name, &gens, generics, &types, &pos);
        if self.cx.errors.len() == errors && named.is_empty() {
            self.fold_call(e, b.builtin, generics, &gens, &pos, &ty);
        }
        ty
    }

    /// Common type of numeric arguments (`min`, `max`, `fma`, `select`, `ceil_div`).
    fn promote_args(&mut self, op: &str, pos: &[&Expr], types: &[Type], idx: &[usize]) -> Type {
        let mut acc: Option<(Scalar, usize)> = None;
        for &i in idx {
            let Some(s) = types.get(i).and_then(Type::scalar) else { return Type::Error };
            acc = match acc {
                None => Some((s, i)),
                Some((c, j)) => match promote(c, s) {
                    Some(p) => Some((p, j)),
                    None => {
                        let (lhs, rhs) = ((pos[j].span, c.to_string()), (pos[i].span, s.to_string()));
                        self.error(SemaError::OperandsDontMix { op: op.to_owned(), lhs, rhs });
                        return Type::Error;
                    }
                },
            };
        }
        acc.map_or(Type::Error, |(s, _)| Type::Scalar(s))
    }

    /// Reports a tensor argument whose element type or memory space is not what the builtin needs.
    fn expect_tensor(&mut self, arg: &Expr, t: &TensorType, elem: Option<&Type>, space: Option<Space>, help: &str) {
        self.expect_tensor_because(arg, t, elem, space, help, None);
    }

    fn expect_tensor_because(
        &mut self,
        arg: &Expr,
        t: &TensorType,
        elem: Option<&Type>,
        space: Option<Space>,
        help: &str,
        because: Option<(Span, String)>,
    ) {
        let elem_ok = elem.is_none_or(|e| e.is_error() || *e == t.elem);
        let space_ok = space.is_none_or(|s| s == t.space);
        if elem_ok && space_ok {
            return;
        }
        let expected = format!(
            "Tensor<{}, _, {}>",
            elem.map_or("_".to_owned(), ToString::to_string),
            space.map_or("_", Space::name)
        );
        let found = Type::Tensor(Box::new(t.clone())).to_string();
        let help = (!help.is_empty()).then(|| help.to_owned());
        let because = because.map(|(s, m)| (self.loc(s), m));
        self.error(SemaError::Mismatch { span: arg.span, expected, found, because, help });
    }

    fn writable(&mut self, arg: &Expr, t: &TensorType) {
        if t.space == Space::Identity {
            let help = Some("identity tensors hold coordinates computed on the fly; copy into a fragment".to_owned());
            self.error(SemaError::InvalidPlace { span: arg.span, what: "an identity tensor".to_owned(), help });
        }
    }

    fn builtin_result(
        &mut self,
        b: Builtin,
        name: &Ident,
        gens: &[GenVal],
        generics: &[Expr],
        types: &[Type],
        pos: &[&Expr],
    ) -> Type {
        use Builtin as B;
        let err = Type::Error;
        let arg = |i: usize| types.get(i).unwrap_or(&err);
        match b {
            B::Exp | B::Exp2 | B::Log | B::Log2 | B::Sqrt | B::Rsqrt | B::Tanh | B::Erf => float_of(arg(0)),
            B::Abs | B::ShflXor | B::ShflDown | B::ShflIdx => arg(0).clone(),
            B::Min | B::Max => self.promote_args(&name.name, pos, types, &[0, 1]),
            B::Select => self.promote_args(&name.name, pos, types, &[1, 2]),
            B::Fma => float_of(&self.promote_args(&name.name, pos, types, &[0, 1, 2])),
            B::CeilDiv => self.promote_args(&name.name, pos, types, &[0, 1]),
            B::ElectOne => Type::BOOL,
            B::SyncThreads
            | B::BarrierSync
            | B::SyncWarp
            | B::ClusterSync
            | B::FenceProxyAsync
            | B::MbarrierInit
            | B::MbarrierArrive
            | B::MbarrierArriveExpectTx
            | B::MbarrierWait
            | B::StaticAssert => Type::Unit,
            B::TmaStoreWait | B::WgmmaWait => {
                if let (Some(v), Some(g)) = (gens.first().and_then(|g| g.int()), generics.first())
                    && !(0..=63).contains(&v)
                {
                    let problem = format!("`{}` takes a number of pending groups in 0..=63, found {v}", name.name);
                    self.error(SemaError::BadAtom { span: g.span, problem, help: None });
                }
                Type::Unit
            }
            B::Setmaxnreg => {
                if let (Some(v), Some(g)) = (gens.first().and_then(|g| g.int()), generics.first())
                    && !u32::try_from(v).is_ok_and(cutec_target::setmaxnreg_takes)
                {
                    let problem = format!("`setmaxnreg` takes a multiple of 8 in 24..=256, found {v}");
                    self.error(SemaError::BadAtom { span: g.span, problem, help: None });
                }
                Type::Unit
            }
            B::Layout(LayoutOp::Size) => {
                if let (Some(g), Some(e)) = (gens.first(), generics.first()) {
                    self.mode_in_range(arg(0), g.int(), e);
                }
                Type::INT
            }
            B::Layout(LayoutOp::Rank | LayoutOp::Depth | LayoutOp::Cosize | LayoutOp::MaxCommonVector) => Type::INT,
            B::Layout(LayoutOp::Shape | LayoutOp::Stride) => Type::IntTuple(arg(0).rank()),
            B::Layout(LayoutOp::Get) => self.get_mode(arg(0), gens, generics),
            B::Layout(LayoutOp::LocalTile) => match tensor(arg(0)) {
                Some(t) => new_tensor(t.elem.clone(), add(arg(1).rank(), Some(arg(2).wildcards())), t.space),
                None => err,
            },
            B::MapShared => match tensor(arg(0)) {
                Some(t) => new_tensor(t.elem.clone(), t.layout.rank, t.space),
                None => err,
            },
            B::Layout(LayoutOp::LocalPartition) => match tensor(arg(0)) {
                Some(t) => new_tensor(t.elem.clone(), arg(1).rank().or(t.layout.rank), t.space),
                None => err,
            },
            B::MakeFragmentLike => {
                let elem = gens
                    .first()
                    .and_then(|g| g.dtype())
                    .map(Type::Scalar)
                    .or_else(|| tensor(arg(0)).map(|t| t.elem.clone()));
                match elem {
                    Some(elem) => new_tensor(elem, arg(0).rank(), Space::Rmem),
                    None if arg(0).is_error() => err,
                    None => {
                        let signature = Some("make_fragment_like<T>(layout) -> Tensor".to_owned());
                        let span = name.span;
                        self.error(SemaError::GenericCount {
                            name: name.name.clone(),
                            span,
                            expected: "1".into(),
                            found: 0,
                            signature,
                        });
                        err
                    }
                }
            }
            B::MakeTensor => {
                let (Some(elem), Some(GenVal::Space(space))) = (gens.first().and_then(|g| g.dtype()), gens.get(1))
                else {
                    return err;
                };
                if *space == Space::Gmem {
                    self.error(SemaError::BadTensorType {
                        span: generics.get(1).map_or(name.span, |g| g.span),
                        problem: "a kernel cannot allocate global memory".to_owned(),
                        help: Some("allocate in `smem` or `rmem`; global tensors are kernel parameters".to_owned()),
                    });
                }
                let layout = match arg(0) {
                    Type::Layout(l) => (**l).clone(),
                    other => LayoutType::of_rank(other.rank()),
                };
                Type::Tensor(Box::new(TensorType { elem: Type::Scalar(elem), layout, space: *space }))
            }
            B::MakeIdentityTensor => {
                let rank = arg(0).rank();
                let elem = match arg(0) {
                    Type::Error => return err,
                    t if t.is_integer() => Type::INT,
                    Type::Tuple(v) => Type::Tuple(vec![Type::INT; v.len()]),
                    _ => Type::IntTuple(rank),
                };
                new_tensor(elem, rank, Space::Identity)
            }
            B::PrefetchTensormap => {
                if let (Some(g), Some(s)) = (tensor(arg(0)), tensor(arg(1))) {
                    let (g, s) = (g.clone(), s.clone());
                    self.expect_tensor(pos[0], &g, None, Some(Space::Gmem), "");
                    self.expect_tensor(pos[1], &s, Some(&g.elem), Some(Space::Smem), "");
                }
                Type::Unit
            }
            B::Copy | B::Store | B::TmaStore => {
                if let (Some(src), Some(dst)) = (tensor(arg(0)), tensor(arg(1))) {
                    let (src, dst) = (src.clone(), dst.clone());
                    self.writable(pos[1], &dst);
                    match b {
                        B::Copy => {
                            let because = Some((pos[0].span, format!("the source has `{}` elements", src.elem)));
                            let help = "`store` converts element types";
                            self.expect_tensor_because(pos[1], &dst, Some(&src.elem), None, help, because);
                        }
                        B::TmaStore => {
                            self.expect_tensor(pos[0], &src, None, Some(Space::Smem), "");
                            self.expect_tensor(pos[1], &dst, Some(&src.elem), Some(Space::Gmem), "");
                        }
                        _ => {}
                    }
                }
                Type::Unit
            }
            B::Fill => {
                if let Some(t) = tensor(arg(0)).cloned() {
                    self.writable(pos[0], &t);
                    if let (Some(v), Some(elem)) = (arg(1).scalar(), t.elem.scalar())
                        && !literal_like(pos[1])
                        && !scalar_coerces(v, elem)
                    {
                        self.error(SemaError::Mismatch {
                            span: pos[1].span,
                            expected: elem.to_string(),
                            found: v.to_string(),
                            because: None,
                            help: Some(format!("convert it: `(...) as {elem}`")),
                        });
                    }
                }
                Type::Unit
            }
            B::Layout(LayoutOp::Composition) => match arg(0) {
                Type::Tensor(t) => new_tensor(t.elem.clone(), arg(1).rank(), t.space),
                Type::Swizzle(_) => layout(arg(1).rank(), true),
                Type::Layout(l) => layout(arg(1).rank(), l.swizzled),
                Type::Error => err,
                _ => layout(arg(1).rank(), false),
            },
            B::Layout(LayoutOp::MakeLayout | LayoutOp::MakeOrderedLayout) => layout(arg(0).rank(), false),
            B::Layout(
                LayoutOp::Coalesce
                | LayoutOp::Filter
                | LayoutOp::RightInverse
                | LayoutOp::LeftInverse
                | LayoutOp::Complement,
            ) => layout(None, false),
            B::Layout(LayoutOp::LogicalDivide | LayoutOp::Upcast | LayoutOp::Downcast) => {
                same_kind(arg(0), arg(0).rank())
            }
            B::Layout(LayoutOp::ZippedDivide) => same_kind(arg(0), Some(2)),
            B::Layout(LayoutOp::TiledDivide) => same_kind(arg(0), arg(0).rank().map(|r| r + 1)),
            B::Layout(LayoutOp::FlatDivide) => same_kind(arg(0), add(arg(0).rank(), arg(1).rank())),
            B::Layout(LayoutOp::LogicalProduct | LayoutOp::ZippedProduct | LayoutOp::MakeLayoutTv) => {
                layout(Some(2), false)
            }
            B::Layout(LayoutOp::TiledProduct) => layout(arg(1).rank().map(|r| r + 1), false),
            B::Layout(LayoutOp::FlatProduct) => layout(add(arg(0).rank(), arg(1).rank()), false),
            B::Layout(LayoutOp::BlockedProduct | LayoutOp::RakedProduct) => {
                layout(arg(0).rank().max(arg(1).rank()), false)
            }
            B::Layout(LayoutOp::TileToShape) => {
                let swizzled = matches!(arg(0), Type::Layout(l) if l.swizzled);
                layout(arg(1).rank(), swizzled)
            }
            // The algebra's operations that are not builtins (`take`, `nullspace`, ...) have no row, so no call
            // resolves to them.
            B::Layout(_) => err,
            B::TiledMma => {
                let Type::MmaAtom(atom) = arg(0) else { return err };
                let atom = *atom;
                let tiling = match pos.get(1).map(|p| &p.kind) {
                    Some(ExprKind::Tuple(items)) => {
                        items.iter().map(|x| self.require_const(x, "the warpgroup tiling of `tiled_mma`")).collect()
                    }
                    Some(_) => vec![self.require_const(pos[1], "the warpgroup tiling of `tiled_mma`")],
                    None => Vec::new(),
                };
                Type::TiledMma(Box::new(TiledMmaType { atom, tiling }))
            }
            B::TmaLoad => {
                let Some(src) = tensor(arg(0)).cloned() else { return err };
                self.expect_tensor(pos[0], &src, None, Some(Space::Gmem), "TMA loads read global memory");
                match arg(1) {
                    Type::Layout(l) => {
                        Type::Tensor(Box::new(TensorType { elem: src.elem, layout: (**l).clone(), space: Space::Smem }))
                    }
                    Type::Tensor(dst) => {
                        let dst = (**dst).clone();
                        self.expect_tensor(
                            pos[1],
                            &dst,
                            Some(&src.elem),
                            Some(Space::Smem),
                            "TMA loads write shared memory",
                        );
                        Type::Tensor(Box::new(dst))
                    }
                    Type::Error => err,
                    other => new_tensor(src.elem, other.rank(), Space::Smem),
                }
            }
            B::Gemm => {
                if let Type::TiledMma(m) = arg(0) {
                    let atom = m.atom;
                    let operands =
                        [(1, atom.a, None, "A"), (2, atom.b, None, "B"), (3, atom.c, Some(Space::Rmem), "C")];
                    for (i, elem, space, which) in operands {
                        if let (Some(t), Some(p)) = (tensor(arg(i)).cloned(), pos.get(i)) {
                            let help = format!("the MMA atom's {which} type is `{elem}`");
                            self.expect_tensor(p, &t, Some(&Type::Scalar(elem)), space, &help);
                        }
                    }
                }
                Type::Unit
            }
            B::ThreadIdx
            | B::BlockIdx
            | B::BlockDim
            | B::GridDim
            | B::LaneIdx
            | B::WarpIdx
            | B::BlockRankInCluster
            | B::Inf
            | B::Swizzle
            | B::Sw128K
            | B::Sw64K
            | B::Sw32K
            | B::Sw128Mn
            | B::Sw64Mn
            | B::Sw32Mn
            | B::Wgmma => err, // values and constructors are not called (rejected before)
        }
    }

    /// The named argument `a` of kind [`ArgKind::Function`]: the name of a device function of `arity` `f32`
    /// parameters returning `f32` (`fn(f32) -> f32`, or `fn(f32, f32) -> f32` beside `with = x`) without
    /// generics, resolved (the lowering inlines it where the builtin applies it) and counted as a call of it.
    /// Whether it was one (otherwise the error is reported).
    fn function_arg(&mut self, a: &Expr, callee: &str, p: &ParamSig, arity: usize) -> bool {
        let sig = format!("fn({}) -> f32", vec!["f32"; arity].join(", "));
        let wrong = |this: &mut Self, found: String| {
            let expected =
                if arity == 1 { p.kind.describe().to_owned() } else { format!("the name of a function `{sig}`") };
            this.error(SemaError::WrongArgKind {
                span: a.span,
                expected,
                found,
                param: p.name.to_owned(),
                signature: format!("{callee}(..., {} = {sig})", p.name),
            });
            false
        };
        let ExprKind::Name { name, generics } = &a.kind else {
            let t = self.value(a, None);
            return t.is_error() || wrong(self, t.describe());
        };
        let r = match self.lookup(&name.name) {
            Some(Found::Item(r)) if r.kind == ItemRefKind::Fn && generics.is_empty() => r,
            Some(_) => {
                let t = self.value(a, None);
                return t.is_error() || wrong(self, t.describe());
            }
            None => {
                self.unknown_name(name);
                return false;
            }
        };
        self.set_res(a.id, Resolution::Function(r.module, r.item));
        // A function has no value type; the argument is `()` (what the call passes on is the resolution).
        self.set_type(a.id, Type::Unit);
        let Some(&fi) = self.cx.fn_index.get(&(r.module, r.item)) else { return false };
        let f = &self.cx.functions[fi];
        let f32 = Type::Scalar(Scalar::F32);
        if !f.const_generics.is_empty()
            || f.params.len() != arity
            || f.params.iter().any(|p| p.ty != f32)
            || f.ret != f32
        {
            let params: Vec<String> = f.params.iter().map(|p| p.ty.to_string()).collect();
            let found = format!("the function `{}` of type `fn({}) -> {}`", f.name, params.join(", "), f.ret);
            return wrong(self, found);
        }
        if let Some(from) = self.func {
            self.cx.calls.push(CallEdge { from, to: fi, file: self.file, span: name.span });
        }
        true
    }

    /// A call of a device function.
    fn fn_call(&mut self, callee: &Expr, name: &Ident, r: ItemRef, generics: &[Expr], args: &[Arg]) -> Type {
        self.set_res(callee.id, Resolution::Function(r.module, r.item));
        let Some(&fi) = self.cx.fn_index.get(&(r.module, r.item)) else {
            self.skip_generics(generics);
            self.skip_args(args);
            return Type::Error;
        };
        let f = &self.cx.functions[fi];
        let (params, gens, ret) = (f.params.clone(), f.const_generics.clone(), f.ret.clone());
        let def = self.item_loc(r);
        let callee_file = self.cx.file(r.module);
        let required = gens.iter().filter(|g| g.default.is_none()).count();
        if generics.len() > gens.len() || generics.len() < required {
            let expected =
                if required == gens.len() { required.to_string() } else { format!("{required} to {}", gens.len()) };
            let span = span_of(generics, name.span);
            self.error(SemaError::GenericCount {
                name: name.name.clone(),
                span,
                expected,
                found: generics.len(),
                signature: None,
            });
            self.skip_generics(generics);
        } else {
            for g in generics {
                self.generic_arg(g, GenericKind::Int, &format!("a generic argument of `{}`", name.name));
            }
        }
        let (pos, _) = self.split_args(&name.name, args, &[]);
        let call = callee.span.to(args.last().map_or(callee.span, |a| a.span));
        let call = Span { start: call.start, end: call.end + 1 }; // through the closing parenthesis
        self.check_arity("function", name, call, &pos, params.len(), params.len(), def, None);
        for (i, a) in pos.iter().enumerate() {
            let Some(p) = params.get(i) else {
                self.value(a, None);
                continue;
            };
            let t = self.value(a, p.ty.scalar());
            if !coerces(&t, &p.ty) {
                let help = match (t.scalar(), p.ty.scalar()) {
                    (Some(_), Some(want)) => Some(format!("convert it: `(...) as {want}`")),
                    _ => None,
                };
                self.error(SemaError::Mismatch {
                    span: a.span,
                    expected: p.ty.to_string(),
                    found: t.to_string(),
                    because: Some((
                        Loc { file: callee_file, span: p.span },
                        format!("parameter `{}` declared here", p.name),
                    )),
                    help,
                });
            }
        }
        if let Some(from) = self.func {
            self.cx.calls.push(CallEdge { from, to: fi, file: self.file, span: name.span });
        }
        ret
    }
}

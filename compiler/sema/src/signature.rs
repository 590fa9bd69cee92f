//! Signatures: const generics (defaults and `-D`), parameters and their dynamic dimensions, return types, launch
//! clauses and attributes (of kernels, functions and loops).

use crate::body::similar;
use crate::body::{Fcx, Mode};
use crate::builtins::{ATTRIBUTES, AttrTarget, LAUNCH_KEYS};
use crate::errors::SemaError;
use crate::program::{Cx, DefineProblem};
use crate::types::{Scalar, Space, SymInt, Type, coerces};
use crate::{
    ConstGenericInfo, DefineValue, DimComponent, DimSite, DynDim, FunctionInfo, LaunchInfo, ModuleId, ParamInfo,
};
use cutec_diagnostics::Span;
use cutec_grammar::ast::{self, Attribute, Expr, ExprKind, TypeExprKind};

/// What a loop's attributes ask for; kept per `for` loop for lowering (see `CheckedModule::loops`).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct LoopAttrs {
    /// `unroll` (`Some(None)`) or `unroll(N)` (`Some(Some(N))`).
    pub unroll: Option<Option<u32>>,
    /// `pipelined(stages = S)`: `Some(Some(S))`, or `Some(None)` if S is a const generic without value.
    pub pipelined: Option<Option<u32>>,
}

/// Attributes of a kernel or function.
#[derive(Default)]
pub(crate) struct ItemAttrs {
    pub warp_specialized: bool,
    pub inline: bool,
    pub persistent: Option<crate::Persistent>,
    pub unchecked_protocol: bool,
}

/// Registers a kernel or function; its details are filled in by the next phases.
pub(crate) fn declare(cx: &mut Cx<'_>, m: ModuleId, item: usize, f: &ast::Function, is_kernel: bool) -> usize {
    let fi = cx.functions.len();
    cx.functions.push(FunctionInfo {
        module: m,
        item,
        name: f.name.name.clone(),
        is_kernel,
        const_generics: Vec::new(),
        params: Vec::new(),
        ret: Type::Unit,
        dyn_dims: Vec::new(),
        launch: None,
        warp_specialized: false,
        unchecked_protocol: false,
        persistent: None,
        inline: false,
        requires: Vec::new(),
    });
    cx.fn_index.insert((m, item), fi);
    fi
}

/// Const generics in order: type, default (may name earlier ones), `-D` override.
pub(crate) fn const_generics(
    cx: &mut Cx<'_>,
    fi: usize,
    f: &ast::Function,
    defines: &[(String, DefineValue)],
    used: &mut [bool],
    problems: &mut Vec<DefineProblem>,
) {
    let m = cx.functions[fi].module;
    let mut fx = Fcx::new(cx, m, Some(fi), Mode::Generic);
    for (gi, g) in f.generics.iter().enumerate() {
        let name = &g.name.name;
        if let Some(prev) = f.generics[..gi].iter().find(|p| p.name.name == *name) {
            let first = fx.loc(prev.name.span);
            fx.error(SemaError::Duplicate { what: "const generic", name: name.clone(), span: g.name.span, first });
            continue;
        }
        let (ty, ty_ok) = match fx.resolve_type(&g.ty) {
            Type::Scalar(s @ (Scalar::Int | Scalar::Bool)) => (s, true),
            Type::Error => (Scalar::Int, false),
            other => {
                fx.error(SemaError::BadConstGenericType { span: g.ty.span, found: other.to_string() });
                (Scalar::Int, false)
            }
        };
        fx.set_type(g.id, Type::Scalar(ty));
        let mut default = None;
        if let Some(d) = &g.default
            && !ty_ok
        {
            fx.expr(d, None); // resolve its names; its type cannot be judged against a broken declaration
        } else if let Some(d) = &g.default {
            let t = fx.value(d, Some(ty));
            if !t.is_error() && !coerces(&t, &Type::Scalar(ty)) {
                let because = Some((fx.loc(g.ty.span), format!("`{name}` is declared `{ty}` here")));
                fx.error(SemaError::Mismatch {
                    span: d.span,
                    expected: ty.to_string(),
                    found: t.to_string(),
                    because,
                    help: None,
                });
            } else if !t.is_error() {
                default = fx.require_const(d, &format!("the default of `{name}`"));
            }
        }
        let mut value = default;
        let mut from_define = false;
        for (i, (n, v)) in defines.iter().enumerate() {
            if n == name {
                used[i] = true;
                // `true`/`false` only for a `bool`, integers only for integer types: `-D STAGES=true` is a
                // mistake, not 1.
                let accepted = match (ty, *v) {
                    (Scalar::Bool, DefineValue::Bool(b)) => Some(i64::from(b)),
                    (Scalar::Bool, DefineValue::Int(_)) | (_, DefineValue::Bool(_)) => None,
                    (_, DefineValue::Int(v)) => {
                        let in_range =
                            crate::check_expr::int_range(ty).is_none_or(|(lo, hi)| (lo..=hi).contains(&i128::from(v)));
                        in_range.then_some(v)
                    }
                };
                match accepted {
                    Some(v) => {
                        value = Some(v);
                        from_define = true;
                    }
                    None => problems.push(DefineProblem::BadValue { index: i, def: fx.loc(g.name.span), ty }),
                }
            }
        }
        let info = ConstGenericInfo { id: g.id, name: name.clone(), ty, default, value, from_define };
        fx.cx.functions[fi].const_generics.push(info);
    }
}

/// Bare names in a parameter layout that are not otherwise defined: the dynamic dimensions' sites.
fn dim_sites(fx: &Fcx<'_, '_>, e: &Expr, site: DimSite, out: &mut Vec<(String, Span, DimSite)>, depth: u32) {
    if depth > crate::body::MAX_DEPTH {
        return;
    }
    match &e.kind {
        ExprKind::Tuple(items) => {
            for (i, x) in items.iter().enumerate() {
                let mut s = site.clone();
                s.path.push(i);
                dim_sites(fx, x, s, out, depth + 1);
            }
        }
        ExprKind::Name { name, generics } if generics.is_empty() && fx.lookup(&name.name).is_none() => {
            out.push((name.name.clone(), name.span, site));
        }
        _ => {}
    }
}

/// The layout argument of a `Tensor<T, layout, space>` type, split into shape and stride.
fn tensor_layout(ty: &ast::TypeExpr) -> Option<(&Expr, Option<&Expr>)> {
    let TypeExprKind::Named { name, args } = &ty.kind else { return None };
    if name.name != "Tensor" || args.len() != 3 {
        return None;
    }
    Some(match &args[1].kind {
        ExprKind::Layout { shape, stride } => (&**shape, Some(&**stride)),
        _ => (&args[1], None),
    })
}

fn leaves<'e>(e: &'e Expr, out: &mut Vec<&'e Expr>, depth: u32) {
    match &e.kind {
        ExprKind::Tuple(items) if depth <= crate::body::MAX_DEPTH => {
            items.iter().for_each(|x| leaves(x, out, depth + 1))
        }
        _ => out.push(e),
    }
}

/// Parameters (after their dynamic dimensions) and the return type.
pub(crate) fn params(cx: &mut Cx<'_>, fi: usize, f: &ast::Function) {
    let m = cx.functions[fi].module;
    let is_kernel = cx.functions[fi].is_kernel;
    let mut fx = Fcx::new(cx, m, Some(fi), Mode::Signature);

    let mut sites = Vec::new();
    for (pi, p) in f.params.iter().enumerate() {
        if let Some((shape, stride)) = tensor_layout(&p.ty) {
            let site = |component| DimSite { param: pi, path: Vec::new(), component };
            dim_sites(&fx, shape, site(DimComponent::Shape), &mut sites, 0);
            if let Some(stride) = stride {
                dim_sites(&fx, stride, site(DimComponent::Stride), &mut sites, 0);
            }
        }
    }
    let mut dims: Vec<(DynDim, Span)> = Vec::new();
    for (name, span, site) in sites {
        match dims.iter_mut().find(|(d, _)| d.name == name) {
            Some((d, _)) => d.sites.push(site),
            None => dims.push((DynDim { name, source: site.clone(), sites: vec![site] }, span)),
        }
    }
    for (d, span) in &mut dims {
        // Read it from a shape if possible (a stride may be a multiple), from the shallowest mode.
        let best = d.sites.iter().min_by_key(|s| (s.component == DimComponent::Stride, s.path.len()));
        if let Some(b) = best {
            d.source = b.clone();
        }
        if let Some(p) = f.params.iter().find(|p| p.name.name == d.name) {
            let first = fx.loc(*span);
            fx.error(SemaError::Duplicate { what: "name", name: d.name.clone(), span: p.name.span, first });
        }
    }
    fx.cx.functions[fi].dyn_dims = dims.into_iter().map(|(d, _)| d).collect();

    for (pi, p) in f.params.iter().enumerate() {
        let name = &p.name.name;
        let dup =
            f.params[..pi].iter().map(|q| &q.name).chain(f.generics.iter().map(|g| &g.name)).find(|q| q.name == *name);
        if let Some(prev) = dup {
            let first = fx.loc(prev.span);
            fx.error(SemaError::Duplicate { what: "parameter", name: name.clone(), span: p.name.span, first });
        }
        let ty = fx.resolve_type(&p.ty);
        if let Some((shape, stride)) = tensor_layout(&p.ty) {
            let mut ls = Vec::new();
            leaves(shape, &mut ls, 0);
            if let Some(s) = stride {
                leaves(s, &mut ls, 0);
            }
            for leaf in ls {
                if !fx.ty(leaf.id).is_error()
                    && let Some(span) = fx.non_const_span(leaf, true)
                {
                    fx.error(SemaError::NonStaticParamLayout { span });
                }
            }
        }
        if is_kernel
            && let Type::Tensor(t) = &ty
            && t.space != Space::Gmem
        {
            fx.error(SemaError::BadTensorType {
                span: p.ty.span,
                problem: format!("a kernel parameter cannot live in `{}`", t.space.name()),
                help: Some(
                    "kernel tensors are `gmem`; allocate shared memory with `make_tensor<T, smem>(layout)`".into(),
                ),
            });
        }
        fx.set_type(p.id, ty.clone());
        fx.cx.functions[fi].params.push(ParamInfo { id: p.id, name: name.clone(), ty, span: p.name.span });
    }
    let ret = match &f.ret {
        Some(t) if is_kernel => {
            fx.error(SemaError::ReturnInKernel { span: t.span });
            Type::Unit
        }
        Some(t) => fx.resolve_type(t),
        None => Type::Unit,
    };
    fx.cx.functions[fi].ret = ret;
}

/// The launch clause and the attributes of a kernel or function.
pub(crate) fn launch_and_attributes(cx: &mut Cx<'_>, fi: usize, f: &ast::Function) {
    let m = cx.functions[fi].module;
    let is_kernel = cx.functions[fi].is_kernel;
    let mut fx = Fcx::new(cx, m, Some(fi), Mode::Launch);
    let (attrs, _) = fx.attributes(&f.attrs, if is_kernel { AttrTarget::Kernel } else { AttrTarget::Fn });
    let launch = match (&f.launch, is_kernel) {
        (Some(l), false) => {
            fx.error(SemaError::LaunchOnFn { span: l.span, name: f.name.name.clone() });
            None
        }
        (None, true) => {
            fx.error(SemaError::MissingLaunch { span: f.name.span, name: f.name.name.clone() });
            None
        }
        (Some(l), true) => Some(fx.launch(l)),
        (None, false) => None,
    };
    let mut persistent = attrs.persistent;
    if let (Some(p), Some(l)) = (persistent.as_mut(), launch.as_ref()) {
        fx.grouped_fits_i32(p, l, &f.attrs);
    }
    let info = &mut fx.cx.functions[fi];
    info.launch = launch;
    info.warp_specialized = attrs.warp_specialized;
    info.unchecked_protocol = attrs.unchecked_protocol;
    info.persistent = persistent;
    info.inline = attrs.inline;
}

impl Fcx<'_, '_> {
    fn launch(&mut self, l: &ast::Launch) -> LaunchInfo {
        let mut info = LaunchInfo::default();
        let mut seen: Vec<(&str, Span)> = Vec::new();
        for a in &l.args {
            let key = a.name.name.as_str();
            let Some(&known) = LAUNCH_KEYS.iter().find(|k| **k == key) else {
                let suggestion = similar(key, LAUNCH_KEYS.iter().copied());
                self.error(SemaError::UnknownLaunchKey { name: key.to_owned(), span: a.name.span, suggestion });
                self.expr(&a.value, None);
                continue;
            };
            if let Some((_, first)) = seen.iter().find(|(k, _)| *k == known) {
                let first = *first;
                self.error(SemaError::DuplicateLaunchKey { name: key.to_owned(), span: a.name.span, first });
                self.expr(&a.value, None);
                continue;
            }
            seen.push((known, a.name.span));
            match known {
                "smem" => info.smem = self.launch_dims(known, &a.value, false).and_then(|mut v| v.pop()),
                "cluster" => info.cluster = self.launch_dims(known, &a.value, true),
                "grid" => info.grid = self.launch_dims(known, &a.value, true).unwrap_or_default(),
                _ => info.block = self.launch_dims(known, &a.value, true).unwrap_or_default(),
            }
        }
        for key in ["grid", "block"] {
            if !seen.iter().any(|(k, _)| *k == key) {
                self.error(SemaError::MissingLaunchKey { key, span: l.span });
            }
        }
        // Every launch extent known when compiling is positive, and within sm_90a's limits per dimension.
        for (key, dims) in
            [("grid", Some(&info.grid)), ("block", Some(&info.block)), ("cluster", info.cluster.as_ref())]
        {
            let (Some(dims), Some(a)) = (dims, l.args.iter().find(|a| a.name.name == key)) else { continue };
            let items: Vec<&Expr> = match &a.value.kind {
                ExprKind::Tuple(v) => v.iter().collect(),
                _ => vec![&a.value],
            };
            // Per dimension; the totals of `block` and `cluster` are checked below.
            let limits: [i64; 3] = match key {
                "grid" => cutec_target::MAX_GRID_DIMS.map(i64::from),
                // x and y are bounded by the block's total.
                "block" => [i64::MAX, i64::MAX, i64::from(cutec_target::MAX_BLOCK_DIMS[2])],
                _ => [i64::MAX; 3],
            };
            for (k, (d, e)) in dims.iter().zip(&items).enumerate() {
                let Some(v) = d.as_const() else { continue };
                let axis = ["x", "y", "z"].get(k).copied().unwrap_or("?");
                if v <= 0 {
                    self.error(SemaError::LaunchNotPositive { key: key.to_owned(), axis, span: e.span, value: v });
                } else if let Some(&limit) = limits.get(k)
                    && v > limit
                {
                    let what = if key == "block" { "threads" } else { "CTAs" };
                    let key = format!("{key}.{axis}");
                    self.error(SemaError::LaunchTooLarge { key, span: e.span, value: v, limit, what });
                }
            }
        }
        if let (Some(v), Some(a)) =
            (info.smem.as_ref().and_then(SymInt::as_const), l.args.iter().find(|a| a.name.name == "smem"))
        {
            // At most the target's shared memory per block, all of it dynamic (cudaFuncSetAttribute's maximum).
            const MAX_DYNAMIC_SMEM: i64 = cutec_target::MAX_SHARED_BYTES as i64;
            if v < 0 {
                self.error(SemaError::LaunchNotPositive { key: "smem".into(), axis: "", span: a.value.span, value: v });
            } else if v > MAX_DYNAMIC_SMEM {
                let (key, span, limit, what) = ("smem".to_owned(), a.value.span, MAX_DYNAMIC_SMEM, "bytes");
                self.error(SemaError::LaunchTooLarge { key, span, value: v, limit, what });
            }
        }
        // A grid known when compiling is whole clusters along each axis (the driver refuses any other launch).
        if let (Some(cluster), Some(a)) = (&info.cluster, l.args.iter().find(|a| a.name.name == "grid")) {
            let items: Vec<&Expr> = match &a.value.kind {
                ExprKind::Tuple(v) => v.iter().collect(),
                _ => vec![&a.value],
            };
            for (k, (g, e)) in info.grid.iter().zip(&items).enumerate() {
                let c = cluster.get(k).map_or(Some(1), SymInt::as_const);
                if let (Some(g), Some(c)) = (g.as_const(), c)
                    && g > 0
                    && c > 0
                    && g % c != 0
                {
                    let axis = ["x", "y", "z"].get(k).copied().unwrap_or("?");
                    self.error(SemaError::GridNotClusters { axis, grid: g, cluster: c, span: e.span });
                }
            }
        }
        let (threads, ctas) = (i64::from(cutec_target::MAX_BLOCK_THREADS), i64::from(cutec_target::MAX_CLUSTER_CTAS));
        for (key, dims, limit, what) in
            [("block", Some(&info.block), threads, "threads"), ("cluster", info.cluster.as_ref(), ctas, "CTAs")]
        {
            let product = dims.and_then(|d| d.iter().try_fold(1i64, |acc, x| acc.checked_mul(x.as_const()?)));
            if let Some(p) = product
                && p > limit
                && let Some(a) = l.args.iter().find(|a| a.name.name == key)
            {
                self.error(SemaError::LaunchTooLarge {
                    key: key.to_owned(),
                    span: a.value.span,
                    value: p,
                    limit,
                    what,
                });
            }
        }
        info
    }

    /// One launch value: an integer, or (with `tuple`) a tuple of 1 to 3 integers, computable before launch
    /// (`cluster`: at compile time).
    fn launch_dims(&mut self, key: &str, e: &Expr, tuple: bool) -> Option<Vec<SymInt>> {
        let items: Vec<&Expr> = match &e.kind {
            ExprKind::Tuple(v) if tuple => v.iter().collect(),
            _ => vec![e],
        };
        if items.is_empty() || items.len() > 3 {
            self.expr(e, None);
            let found = format!("a tuple of {} values", items.len());
            self.error(SemaError::LaunchValueType { key: key.to_owned(), span: e.span, found });
            return None;
        }
        let mut out = Some(Vec::new());
        for x in &items {
            let t = self.value(x, Some(Scalar::Int));
            if !t.is_integer() {
                if !t.is_error() {
                    self.error(SemaError::LaunchValueType { key: key.to_owned(), span: x.span, found: t.describe() });
                }
                out = None;
                continue;
            }
            let constant = key == "cluster";
            if let Some(span) = self.non_const_span(x, !constant) {
                self.error(SemaError::LaunchNotEvaluable { key: key.to_owned(), span, constant });
                out = None;
                continue;
            }
            let s = self.sym(x);
            if let Some(v) = out.as_mut() {
                v.push(s);
            }
        }
        if let ExprKind::Tuple(v) = &e.kind
            && tuple
        {
            let types = v.iter().map(|x| self.ty(x.id).clone()).collect();
            self.set_type(e.id, Type::Tuple(types));
        }
        out
    }

    /// Checks attributes for `target`; returns the item flags and the loop settings.
    pub(crate) fn attributes(&mut self, attrs: &[Attribute], target: AttrTarget) -> (ItemAttrs, LoopAttrs) {
        let mut item = ItemAttrs::default();
        let mut lp = LoopAttrs::default();
        for (i, a) in attrs.iter().enumerate() {
            let name = a.name.name.as_str();
            if let Some(prev) = attrs[..i].iter().find(|p| p.name.name == name) {
                self.error(SemaError::DuplicateAttribute { name: name.to_owned(), span: a.span, first: prev.span });
                continue;
            }
            let Some(&(_, _, usage)) = ATTRIBUTES.iter().find(|(n, t, _)| *n == name && *t == target) else {
                let applies_to = ATTRIBUTES.iter().find(|(n, _, _)| *n == name).map(|(_, t, _)| *t);
                let here = ATTRIBUTES.iter().filter(|(_, t, _)| *t == target).map(|(n, _, _)| *n);
                let suggestion = similar(name, here);
                self.error(SemaError::UnknownAttribute {
                    name: name.to_owned(),
                    span: a.name.span,
                    target,
                    suggestion,
                    applies_to,
                });
                for arg in &a.args {
                    self.expr(&arg.value, None);
                }
                continue;
            };
            let bad = |this: &mut Self, span: Span, problem: &str, help: Option<String>| {
                let problem = problem.to_owned();
                this.error(SemaError::BadAttributeArgs { name: name.to_owned(), span, problem, usage, help });
            };
            match name {
                "warp_specialized" | "inline" | "unchecked_protocol" => {
                    if let Some(arg) = a.args.first() {
                        bad(self, arg.span, "it takes no arguments", None);
                    }
                    item.warp_specialized |= name == "warp_specialized";
                    item.inline |= name == "inline";
                    item.unchecked_protocol |= name == "unchecked_protocol";
                }
                "persistent" => item.persistent = Some(self.persistent_attr(a, usage)),
                "unroll" => {
                    lp.unroll = Some(None);
                    match a.args.as_slice() {
                        [] => {}
                        [arg] if arg.name.is_none() => lp.unroll = Some(self.attr_count(name, &arg.value, 1, usage)),
                        [arg] => {
                            bad(self, arg.span, "the count is not a named argument", Some("write `unroll(4)`".into()))
                        }
                        [_, extra, ..] => bad(self, extra.span, "it takes at most one count", None),
                    }
                }
                _ => {
                    lp.pipelined = Some(None);
                    let mut stages = None;
                    for arg in &a.args {
                        match &arg.name {
                            Some(n) if n.name == "stages" && stages.is_none() => {
                                stages = Some(arg);
                                continue;
                            }
                            None => {
                                let help = Some("name it: `pipelined(stages = 4)`".to_owned());
                                bad(self, arg.span, "the number of stages must be named", help);
                            }
                            Some(n) => {
                                let help = similar(&n.name, ["stages"]).map(|_| "did you mean `stages`?".to_owned());
                                bad(self, n.span, &format!("unexpected argument `{}`", n.name), help);
                            }
                        }
                        self.expr(&arg.value, None);
                    }
                    match stages {
                        Some(s) => lp.pipelined = Some(self.attr_count("stages", &s.value, 1, usage)),
                        None if a.args.is_empty() => bad(self, a.span, "it needs the number of stages", None),
                        None => {}
                    }
                }
            }
        }
        if lp.unroll.is_some()
            && lp.pipelined.is_some()
            && let Some(a) = attrs.iter().rev().find(|a| matches!(a.name.name.as_str(), "unroll" | "pipelined"))
        {
            let problem = "a loop cannot be both unrolled and pipelined".to_owned();
            let (name, usage) = (a.name.name.clone(), "unroll  or  pipelined(stages = S)");
            self.error(SemaError::BadAttributeArgs { name, span: a.span, problem, usage, help: None });
        }
        (item, lp)
    }

    /// A positive constant count of an attribute (`unroll(4)`, `stages = 4`). The IR counts in `u32`: a larger
    /// count is an error here, never saturated.
    /// `persistent` or `persistent(raster = grouped(G))`.
    fn persistent_attr(&mut self, a: &Attribute, usage: &'static str) -> crate::Persistent {
        let mut p = crate::Persistent { group: None };
        let mut seen = false;
        for arg in &a.args {
            let bad = |this: &mut Self, span: Span, problem: String, help: Option<String>| {
                let name = "persistent".to_owned();
                this.error(SemaError::BadAttributeArgs { name, span, problem, usage, help });
            };
            match &arg.name {
                Some(n) if n.name == "raster" && !seen => {}
                Some(n) if n.name == "raster" => {
                    bad(self, arg.span, "`raster` is given twice".into(), None);
                    continue;
                }
                Some(n) => {
                    let help = similar(&n.name, ["raster"]).map(|_| "did you mean `raster`?".to_owned());
                    bad(self, n.span, format!("unexpected argument `{}`", n.name), help);
                    continue;
                }
                None => {
                    let help = Some("name it: `persistent(raster = grouped(8))`".to_owned());
                    bad(self, arg.span, "the rasterization must be named".into(), help);
                    continue;
                }
            }
            seen = true;
            match &arg.value.kind {
                ExprKind::Call { callee, args } if matches!(&callee.kind, ExprKind::Name { name, generics } if name.name == "grouped" && generics.is_empty()) =>
                {
                    self.set_res(callee.id, crate::Resolution::Rasterization);
                    self.set_type(callee.id, Type::Unit);
                    self.set_type(arg.value.id, Type::Unit);
                    match args.as_slice() {
                        [g] if g.name.is_none() => p.group = self.attr_count("grouped", &g.value, 1, usage),
                        _ => bad(self, arg.value.span, "`grouped` takes one count of tile rows".into(), None),
                    }
                }
                _ => {
                    let help = Some("`grouped(8)`: groups of 8 rows of tiles sweep the columns together".to_owned());
                    bad(self, arg.value.span, "the only rasterization is `grouped(G)`".into(), help);
                }
            }
        }
        p
    }

    /// E0121 for `grouped(G)` whose tile order would leave 32-bit integers: the loop over tiles computes the
    /// tiles of a group, `G * (cluster tiles along y)`, in `i32`, for every tile grid the runtime launches: a
    /// constant `grid.y`, or up to the grid's 65535 along y (the division by the cluster's y is exact).
    /// (`index * G` is at most the tile's row, and the rest of the arithmetic is below that product.)
    fn grouped_fits_i32(&mut self, p: &mut crate::Persistent, launch: &LaunchInfo, attrs: &[Attribute]) {
        let Some(g) = p.group else { return };
        let cy = launch.cluster.as_ref().and_then(|c| c.get(1)).map_or(Some(1), SymInt::as_const);
        let gy = launch.grid.get(1).map_or(Some(1), SymInt::as_const);
        let Some(cy) = cy.filter(|&c| c > 0) else { return };
        let (cols, why) = match gy {
            Some(gy) if gy > 0 => (gy / cy, format!("`grid.y` is {gy}")),
            Some(_) => return,
            None => {
                let most = i64::from(cutec_target::MAX_GRID_DIMS[1]);
                (most / cy, format!("`grid.y` is not known until launch and may be up to {most}"))
            }
        };
        let bound = i64::from(i32::MAX) / cols.max(1);
        if i64::from(g) <= bound {
            return;
        }
        p.group = None;
        let Some(e) = grouped_count(attrs) else { return };
        let per = if cy == 1 { String::new() } else { format!(" ({cols} clusters of {cy})") };
        self.error(SemaError::BadAttributeArgs {
            name: "grouped".to_owned(),
            span: e.span,
            problem: format!("it must be at most {bound}, found {g}"),
            usage: "persistent  or  persistent(raster = grouped(G))",
            help: Some(format!(
                "the loop over tiles computes `G * (tiles along y)` in 32-bit integers, and {why}: {cols} tiles \
                 along y{per}, so G may be at most {} / {cols} = {bound}; a group of more rows than the grid has \
                 is the whole grid",
                i32::MAX
            )),
        });
    }

    fn attr_count(&mut self, what: &str, e: &Expr, min: i64, usage: &'static str) -> Option<u32> {
        let t = self.value(e, Some(Scalar::Int));
        if !t.is_integer() {
            if !t.is_error() {
                self.error(SemaError::Mismatch {
                    span: e.span,
                    expected: "int".into(),
                    found: t.to_string(),
                    because: None,
                    help: None,
                });
            }
            return None;
        }
        let v = self.require_const(e, &format!("`{what}`"))?;
        let problem = match u32::try_from(v) {
            _ if v < min => format!("it must be at least {min}, found {v}"),
            Ok(v) => return Some(v),
            Err(_) => format!("it must be at most {}, found {v}", u32::MAX),
        };
        self.error(SemaError::BadAttributeArgs { name: what.to_owned(), span: e.span, problem, usage, help: None });
        None
    }
}

/// The count `G` of `persistent(raster = grouped(G))` among `attrs`.
fn grouped_count(attrs: &[Attribute]) -> Option<&Expr> {
    let a = attrs.iter().find(|a| a.name.name == "persistent")?;
    let raster = a.args.iter().find(|x| x.name.as_ref().is_some_and(|n| n.name == "raster"))?;
    let ExprKind::Call { args, .. } = &raster.value.kind else { return None };
    args.first().map(|g| &g.value)
}

//! The context of checking one body or one signature: scopes, name lookup, and the "did you mean" candidates.
//!
//! Lookup order (innermost first): `let` and `for` bindings (in body mode), parameters, const generics,
//! dynamic dimensions, the module's functions, constants and imports, builtins, kernels, scalar type names,
//! memory space names. Functions and constants shadow builtins; locals shadow everything.

use crate::builtins::{self, BuiltinInfo};
use crate::errors::{Loc, Located, SemaError};
use crate::load::{ItemRef, ItemRefKind};
use crate::program::Cx;
use crate::types::{Scalar, Space, Type};
use crate::{ConstGenericId, DimId, ModuleId, ParamId, Resolution};
use cutec_diagnostics::{FileId, Span, suggest};

/// Names from CUDA, C and PyTorch that users reach for, and ours.
static ALIASES: &[(&str, &str)] = &[
    ("float", "f32"),
    ("float32", "f32"),
    ("double", "f64"),
    ("float64", "f64"),
    ("half", "f16"),
    ("float16", "f16"),
    ("bfloat16", "bf16"),
    ("int32", "i32"),
    ("int64", "i64"),
    ("uint32", "u32"),
    ("unsigned", "u32"),
    ("shared", "smem"),
    ("global", "gmem"),
    ("register", "rmem"),
    ("registers", "rmem"),
    ("local", "rmem"),
    ("syncthreads", "sync_threads"),
    ("__syncthreads", "sync_threads"),
    ("__syncwarp", "sync_warp"),
    ("rsqrtf", "rsqrt"),
    ("expf", "exp"),
    ("fmaxf", "max"),
    ("fminf", "min"),
];

/// "Did you mean": an alias from another language, the closest name by edit distance, or a name that differs
/// by two swapped neighbouring letters (`flaot`, which plain edit distance counts as two edits).
pub(crate) fn similar<'c>(name: &str, candidates: impl IntoIterator<Item = &'c str>) -> Option<String> {
    // No one mistypes a name this long, and comparing it costs its length times each candidate's.
    if name.len() > 4 * cutec_diagnostics::MAX_SUGGEST_LEN {
        return None;
    }
    let candidates: Vec<&str> = candidates.into_iter().collect();
    // Aliases whose meaning is among the candidates take part too, so `flaot` finds `f32` through `float`.
    let aliases: Vec<(&str, &str)> = ALIASES.iter().copied().filter(|(_, ours)| candidates.contains(ours)).collect();
    let resolve = |found: &str| aliases.iter().find(|(a, _)| *a == found).map_or(found, |(_, ours)| *ours).to_owned();
    if aliases.iter().any(|(a, _)| *a == name) {
        return Some(resolve(name));
    }
    let all: Vec<&str> = candidates.iter().copied().chain(aliases.iter().map(|(a, _)| *a)).collect();
    if let Some(s) = suggest(name, all.iter().copied()) {
        return Some(resolve(s));
    }
    let n: Vec<char> = name.chars().collect();
    all.iter()
        .find(|c| {
            let c: Vec<char> = c.chars().collect();
            c.len() == n.len() && {
                let diff: Vec<usize> = (0..n.len()).filter(|&i| n[i] != c[i]).collect();
                diff.len() == 2 && diff[1] == diff[0] + 1 && n[diff[0]] == c[diff[1]] && n[diff[1]] == c[diff[0]]
            }
        })
        .map(|c| resolve(c))
}
use cutec_grammar::ast::{self, Ident, NodeId};

/// How deep expressions and blocks may nest before the checker stops descending. The parser already bounds
/// nesting (at 256); this guard keeps hand-built or future trees from overflowing the stack.
pub(crate) const MAX_DEPTH: u32 = 400;

/// What names in the checked code may refer to.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Mode {
    /// A function or kernel body: everything.
    Body,
    /// A parameter or return type: const generics, dynamic dimensions, items, builtins; no parameters.
    Signature,
    /// A const generic default: const generics and items only.
    Generic,
    /// A launch clause: parameters, const generics, dynamic dimensions, items, builtins.
    Launch,
    /// A `const` item: items and builtins.
    Const,
}

#[derive(Clone, Debug)]
pub(crate) struct Local {
    pub name: String,
    pub id: NodeId,
    pub ty: Type,
    pub mutable: bool,
    pub loop_var: bool,
    pub span: Span,
}

/// What a name was found to be.
#[derive(Clone, Debug)]
pub(crate) enum Found {
    Local(usize),
    Param(ParamId),
    ConstGeneric(ConstGenericId),
    DynDim(DimId),
    Item(ItemRef),
    Builtin(&'static BuiltinInfo),
    Scalar(Scalar),
    Space(Space),
}

pub(crate) struct Fcx<'c, 'a> {
    pub cx: &'c mut Cx<'a>,
    pub m: ModuleId,
    pub file: FileId,
    /// The enclosing kernel or function (index into `cx.functions`), if any.
    pub func: Option<usize>,
    pub mode: Mode,
    pub locals: Vec<Local>,
    /// `locals.len()` at the start of each open block.
    pub marks: Vec<usize>,
    pub loops: u32,
    pub depth: u32,
    /// Every `let`/`for` binding of the body, for "used before its `let`" and "out of scope".
    pub all_bindings: Vec<(String, Span, Span)>,
    /// The integer literal being checked as the operand of a unary `-`: its range is that of its negation
    /// (`-128` is an `i8`, `128` is not).
    pub negated_literal: Option<NodeId>,
}

impl<'c, 'a> Fcx<'c, 'a> {
    pub fn new(cx: &'c mut Cx<'a>, m: ModuleId, func: Option<usize>, mode: Mode) -> Fcx<'c, 'a> {
        let file = cx.file(m);
        Fcx {
            cx,
            m,
            file,
            func,
            mode,
            locals: Vec::new(),
            marks: Vec::new(),
            loops: 0,
            depth: 0,
            all_bindings: Vec::new(),
            negated_literal: None,
        }
    }

    pub fn error(&mut self, error: SemaError) {
        self.cx.errors.push(Located { file: self.file, error });
    }

    pub fn loc(&self, span: Span) -> Loc {
        Loc { file: self.file, span }
    }

    pub fn set_type(&mut self, id: NodeId, ty: Type) {
        if let Some(t) = self.cx.tables.get_mut(self.m.index()) {
            t.set_type(id, ty);
        }
    }

    pub fn set_res(&mut self, id: NodeId, r: Resolution) {
        if let Some(t) = self.cx.tables.get_mut(self.m.index()) {
            t.set_res(id, r);
        }
    }

    pub fn res(&self, id: NodeId) -> Option<&Resolution> {
        self.cx.tables.get(self.m.index()).and_then(|t| t.res(id))
    }

    pub fn ty(&self, id: NodeId) -> &Type {
        self.cx.tables.get(self.m.index()).map_or(&Type::Error, |t| t.ty(id))
    }

    pub fn push_scope(&mut self) {
        self.marks.push(self.locals.len());
    }

    pub fn pop_scope(&mut self) {
        let mark = self.marks.pop().unwrap_or(0);
        self.locals.truncate(mark);
    }

    pub fn bind(&mut self, name: &Ident, id: NodeId, ty: Type, mutable: bool, loop_var: bool) {
        self.set_type(id, ty.clone());
        self.locals.push(Local { name: name.name.clone(), id, ty, mutable, loop_var, span: name.span });
    }

    /// Enters one level of nesting; `false` (after reporting) when too deep.
    pub fn enter(&mut self, span: Span) -> bool {
        if self.depth >= MAX_DEPTH {
            if self.depth == MAX_DEPTH {
                self.error(SemaError::TooDeep { span });
                self.depth += 1; // report once per overflowing subtree
            }
            return false;
        }
        self.depth += 1;
        true
    }

    pub fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    fn func_info(&self) -> Option<&crate::FunctionInfo> {
        self.func.and_then(|f| self.cx.functions.get(f))
    }

    pub fn lookup(&self, name: &str) -> Option<Found> {
        if self.mode == Mode::Body
            && let Some(i) = self.locals.iter().rposition(|l| l.name == name)
        {
            return Some(Found::Local(i));
        }
        if let Some(f) = self.func_info() {
            // Positions as ids: a function has far fewer than 2^32 of each.
            let id = |i: usize| u32::try_from(i).ok();
            if matches!(self.mode, Mode::Body | Mode::Launch)
                && let Some(i) = f.params.iter().position(|p| p.name == name).and_then(id)
            {
                return Some(Found::Param(ParamId(i)));
            }
            if matches!(self.mode, Mode::Body | Mode::Launch | Mode::Signature | Mode::Generic)
                && let Some(i) = f.const_generics.iter().position(|g| g.name == name).and_then(id)
            {
                return Some(Found::ConstGeneric(ConstGenericId(i)));
            }
            if matches!(self.mode, Mode::Body | Mode::Launch | Mode::Signature)
                && let Some(i) = f.dyn_dims.iter().position(|d| d.name == name).and_then(id)
            {
                return Some(Found::DynDim(DimId(i)));
            }
        }
        // Kernels come after builtins: they cannot be called from device code, so a kernel named `copy` or
        // `gemm` must not hide the builtin of that name inside its own body.
        let item = self.cx.ns.get(self.m.index()).and_then(|ns| ns.get(name)).map(|e| e.item);
        if let Some(r) = item
            && r.kind != ItemRefKind::Kernel
        {
            return Some(Found::Item(r));
        }
        if let Some(b) = builtins::lookup(name) {
            return Some(Found::Builtin(b));
        }
        if let Some(r) = item {
            return Some(Found::Item(r));
        }
        if let Some(s) = Scalar::from_name(name) {
            return Some(Found::Scalar(s));
        }
        Space::from_name(name).map(Found::Space)
    }

    /// The value names visible here, for "did you mean".
    pub fn visible_values(&self) -> Vec<String> {
        let mut v: Vec<String> = Vec::new();
        if self.mode == Mode::Body {
            v.extend(self.locals.iter().map(|l| l.name.clone()));
        }
        if let Some(f) = self.func_info() {
            if matches!(self.mode, Mode::Body | Mode::Launch) {
                v.extend(f.params.iter().map(|p| p.name.clone()));
            }
            v.extend(f.const_generics.iter().map(|g| g.name.clone()));
            v.extend(f.dyn_dims.iter().map(|d| d.name.clone()));
        }
        if let Some(ns) = self.cx.ns.get(self.m.index()) {
            v.extend(ns.keys().cloned());
        }
        v.extend(builtins::BUILTINS.iter().map(|b| b.name.to_owned()));
        v
    }

    /// Reports a name that was not found: before its `let`, out of its block, or unknown (with a suggestion).
    pub fn unknown_name(&mut self, ident: &Ident) {
        if self.mode == Mode::Body {
            let at = ident.span.start;
            // Later in the body, or in its own initializer (`let x = x + 1;` with no `x` before).
            let later = self
                .all_bindings
                .iter()
                .find(|(n, s, stmt)| *n == ident.name && (s.start > at || (stmt.start <= at && at < stmt.end)));
            if let Some((_, def, _)) = later {
                let def = *def;
                self.error(SemaError::UseBeforeLet { name: ident.name.clone(), span: ident.span, def });
                return;
            }
            let earlier = self.all_bindings.iter().rev().find(|(n, s, _)| *n == ident.name && s.start < at);
            if let Some((_, def, _)) = earlier {
                let def = *def;
                self.error(SemaError::OutOfScope { name: ident.name.clone(), span: ident.span, def });
                return;
            }
        }
        if self.mode == Mode::Signature {
            // Every bare name of a parameter layout became a dynamic dimension; this one is inside an expression.
            self.error(SemaError::UnboundDynDim { name: ident.name.clone(), span: ident.span });
            return;
        }
        let candidates = self.visible_values();
        let suggestion = similar(&ident.name, candidates.iter().map(String::as_str));
        self.error(SemaError::UnknownName { name: ident.name.clone(), span: ident.span, suggestion });
    }

    /// The span where item `r` is named, in its own file.
    pub fn item_loc(&self, r: ItemRef) -> Option<Loc> {
        let item = self.cx.item(r.module, r.item)?;
        let name = crate::load::item_name(item)?;
        Some(Loc { file: self.cx.file(r.module), span: name.span })
    }
}

/// Collects every `let` and `for` binding of a block, for [`Fcx::unknown_name`]. Bounded by [`MAX_DEPTH`].
pub(crate) fn collect_bindings(block: &ast::Block, out: &mut Vec<(String, Span, Span)>, depth: u32) {
    if depth > MAX_DEPTH {
        return;
    }
    for s in &block.stmts {
        match &s.kind {
            ast::StmtKind::Let { name, .. } => out.push((name.name.clone(), name.span, s.span)),
            ast::StmtKind::For { var, body, start, end, .. } => {
                out.push((var.name.clone(), var.span, var.span.to(start.span).to(end.span)));
                collect_bindings(body, out, depth + 1);
            }
            ast::StmtKind::Role { rank, body, .. } => {
                if let Some(r) = rank {
                    out.push((r.name.clone(), r.span, s.span));
                }
                collect_bindings(body, out, depth + 1);
            }
            ast::StmtKind::While { body, .. } | ast::StmtKind::Block(body) => collect_bindings(body, out, depth + 1),
            ast::StmtKind::If { then_block, else_block, .. } => {
                collect_bindings(then_block, out, depth + 1);
                if let Some(b) = else_block {
                    collect_bindings(b, out, depth + 1);
                }
            }
            _ => {}
        }
    }
}

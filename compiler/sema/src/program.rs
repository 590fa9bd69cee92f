//! The checker's state ([`Cx`]) and the order of the phases:
//!
//! 1. load the modules (`load.rs`); 2. register `const` items; 3. per kernel and function, its const generics
//!    (defaults, `-D`); 4. its parameters (dynamic dimensions first) and return type; 5. report `-D` names that
//!    matched nothing; 6. check `const` items; 7. check launch clauses, attributes and bodies; 8. reject
//!    recursion; 9. assemble the [`Program`] and sort the diagnostics.

use crate::errors::{Located, SemaError};
use crate::load::{self, Namespace};
use crate::types::{Scalar, Type};
use crate::{CheckOutput, CheckedModule, ConstInfo, FunctionInfo, ModuleId, Program, Resolution, signature};
use cutec_diagnostics::{Diagnostic, FileId, SourceMap, Span};
use cutec_grammar::ast::{self, NodeId};
use std::collections::HashMap;

/// The side tables of one module, indexed by `NodeId.0`.
#[derive(Default)]
pub(crate) struct Tables {
    pub types: Vec<Type>,
    pub res: Vec<Option<Resolution>>,
    pub loops: Vec<(NodeId, crate::LoopAttrs)>,
    pub values: Vec<(NodeId, i64)>,
    pub folded: HashMap<NodeId, cutec_layout::Value>,
}

/// Ids beyond this are not stored: the parser guarantees ids below `node_count`, and this keeps a malformed
/// tree from making the tables allocate without bound.
const MAX_NODES: usize = 1 << 24;

impl Tables {
    pub fn set_type(&mut self, id: NodeId, ty: Type) {
        let i = id.0 as usize;
        if i >= MAX_NODES {
            return;
        }
        if i >= self.types.len() {
            self.types.resize(i + 1, Type::Error);
        }
        self.types[i] = ty;
    }
    pub fn set_res(&mut self, id: NodeId, r: Resolution) {
        let i = id.0 as usize;
        if i >= MAX_NODES {
            return;
        }
        if i >= self.res.len() {
            self.res.resize(i + 1, None);
        }
        self.res[i] = Some(r);
    }
    pub fn ty(&self, id: NodeId) -> &Type {
        self.types.get(id.0 as usize).unwrap_or(&Type::Error)
    }
    pub fn res(&self, id: NodeId) -> Option<&Resolution> {
        self.res.get(id.0 as usize).and_then(Option::as_ref)
    }
}

/// Where a `const` item stands: not yet checked, being checked (a reference now is a cycle), or done.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum ConstState {
    Unchecked,
    InProgress,
    Done,
}

/// A call from one function (index into `functions`) to another, for the recursion check.
pub(crate) struct CallEdge {
    pub from: usize,
    pub to: usize,
    pub file: FileId,
    pub span: Span,
}

/// Everything the phases share.
pub(crate) struct Cx<'a> {
    pub asts: &'a [ast::Module],
    pub files: &'a [FileId],
    pub ns: &'a [Namespace],
    pub tables: Vec<Tables>,
    pub functions: Vec<FunctionInfo>,
    pub fn_index: HashMap<(ModuleId, usize), usize>,
    pub consts: Vec<ConstInfo>,
    pub const_index: HashMap<(ModuleId, usize), usize>,
    pub const_state: Vec<ConstState>,
    /// How many constants are being checked, each from the one before (see `Fcx::const_type`).
    pub const_chain: u32,
    pub errors: Vec<Located>,
    pub calls: Vec<CallEdge>,
}

impl<'a> Cx<'a> {
    pub fn file(&self, m: ModuleId) -> FileId {
        self.files.get(m.index()).copied().unwrap_or_default()
    }
    pub fn item(&self, m: ModuleId, i: usize) -> Option<&'a ast::Item> {
        self.asts.get(m.index()).and_then(|a| a.items.get(i))
    }
}

/// A `-D` that needs reporting once the `<command line>` file exists.
pub(crate) enum DefineProblem {
    Unknown {
        index: usize,
        suggestion: Option<String>,
    },
    /// A value the const generic's type cannot hold: an integer for a `bool`, `true`/`false` for an integer
    /// type, or an integer out of its type's range.
    BadValue {
        index: usize,
        def: crate::errors::Loc,
        ty: crate::types::Scalar,
    },
}

pub(crate) fn check_program(
    map: &mut SourceMap,
    root: FileId,
    defines: &[(String, crate::DefineValue)],
) -> CheckOutput {
    let loaded = load::load(map, root);
    let mut cx = Cx {
        asts: &loaded.asts,
        files: &loaded.files,
        ns: &loaded.namespaces,
        tables: loaded.asts.iter().map(|_| Tables::default()).collect(),
        functions: Vec::new(),
        fn_index: HashMap::new(),
        consts: Vec::new(),
        const_index: HashMap::new(),
        const_state: Vec::new(),
        const_chain: 0,
        errors: loaded.errors.clone(),
        calls: Vec::new(),
    };
    for (m, ast) in loaded.asts.iter().enumerate() {
        cx.tables[m].types.reserve(ast.node_count.min(MAX_NODES as u32) as usize);
    }

    // Constants first: const generic defaults and layouts may name them.
    for (mi, ast) in loaded.asts.iter().enumerate() {
        for (i, item) in ast.items.iter().enumerate() {
            if let ast::ItemKind::Const(c) = &item.kind {
                let m = ModuleId(mi as u32);
                cx.const_index.insert((m, i), cx.consts.len());
                cx.consts.push(ConstInfo {
                    module: m,
                    item: i,
                    name: c.name.name.clone(),
                    ty: Scalar::Int,
                    value: None,
                });
                cx.const_state.push(ConstState::Unchecked);
            }
        }
    }

    let mut define_used = vec![false; defines.len()];
    let mut define_problems = Vec::new();
    for (mi, ast) in loaded.asts.iter().enumerate() {
        for (i, item) in ast.items.iter().enumerate() {
            let (f, is_kernel) = match &item.kind {
                ast::ItemKind::Kernel(f) => (f, true),
                ast::ItemKind::Fn(f) => (f, false),
                _ => continue,
            };
            let m = ModuleId(mi as u32);
            let fi = signature::declare(&mut cx, m, i, f, is_kernel);
            let defs = if is_kernel { defines } else { &[] };
            signature::const_generics(&mut cx, fi, f, defs, &mut define_used, &mut define_problems);
        }
    }
    for fi in 0..cx.functions.len() {
        let (m, i) = (cx.functions[fi].module, cx.functions[fi].item);
        if let Some(ast::ItemKind::Kernel(f) | ast::ItemKind::Fn(f)) = cx.item(m, i).map(|it| &it.kind) {
            signature::params(&mut cx, fi, f);
        }
    }

    let known: Vec<String> = {
        let mut v: Vec<String> = cx
            .functions
            .iter()
            .filter(|f| f.is_kernel)
            .flat_map(|f| f.const_generics.iter().map(|g| g.name.clone()))
            .collect();
        v.sort();
        v.dedup();
        v
    };
    for (index, used) in define_used.iter().enumerate() {
        if !used {
            let suggestion = crate::body::similar(&defines[index].0, known.iter().map(String::as_str));
            define_problems.push(DefineProblem::Unknown { index, suggestion });
        }
    }
    report_defines(&mut cx, map, defines, define_problems, known);

    for c in 0..cx.consts.len() {
        crate::consteval::check_const_item(&mut cx, c, 0);
    }
    for fi in 0..cx.functions.len() {
        let (m, i) = (cx.functions[fi].module, cx.functions[fi].item);
        if let Some(ast::ItemKind::Kernel(f) | ast::ItemKind::Fn(f)) = cx.item(m, i).map(|it| &it.kind) {
            signature::launch_and_attributes(&mut cx, fi, f);
            crate::check_stmt::check_body(&mut cx, fi, f);
        }
    }
    check_recursion(&mut cx);

    let Cx { tables, functions, consts, errors, .. } = cx;
    let mut diagnostics: Vec<Diagnostic> = loaded.syntax;
    diagnostics.extend(errors.iter().map(Located::to_diagnostic));
    // Sort by file, then position; the sort is stable so diagnostics at one position keep their order.
    diagnostics.sort_by_key(|d| d.primary().map(|l| (l.file, l.span.start, l.span.end)));
    let modules = loaded
        .asts
        .into_iter()
        .zip(tables)
        .enumerate()
        .map(|(i, (ast, t))| CheckedModule {
            file: loaded.files[i],
            path: loaded.paths[i].clone(),
            ast,
            types: t.types,
            resolutions: t.res,
            imports: loaded.imports.get(i).cloned().unwrap_or_default(),
            loops: t.loops.into_iter().collect(),
            values: t.values.into_iter().collect(),
            folded: t.folded,
        })
        .collect();
    CheckOutput { program: Program { modules, functions, consts }, diagnostics }
}

/// Reports `-D` problems against a `<command line>` pseudo-file that spells the defines out, so the diagnostic
/// can point at the offending name like any other.
fn report_defines(
    cx: &mut Cx<'_>,
    map: &mut SourceMap,
    defines: &[(String, crate::DefineValue)],
    problems: Vec<DefineProblem>,
    known: Vec<String>,
) {
    if problems.is_empty() {
        return;
    }
    let mut text = String::new();
    let mut spans = Vec::new();
    for (name, value) in defines {
        if !text.is_empty() {
            text.push(' ');
        }
        text.push_str("-D ");
        spans.push(Span::new(text.len(), text.len() + name.len()));
        text.push_str(&format!("{name}={value}"));
    }
    let file = map.add("<command line>", text);
    for p in problems {
        let error = match p {
            DefineProblem::Unknown { index, suggestion } => SemaError::UnknownDefine {
                name: defines[index].0.clone(),
                span: spans[index],
                suggestion,
                known: known.clone(),
            },
            DefineProblem::BadValue { index, def, ty } => SemaError::BadDefineValue {
                name: defines[index].0.clone(),
                span: spans[index],
                value: defines[index].1.to_string(),
                def,
                ty: ty.to_string(),
                // A wrong kind of literal has no range to quote: the message says what kind is expected.
                range: match defines[index].1 {
                    crate::DefineValue::Int(_) => crate::check_expr::int_range(ty),
                    crate::DefineValue::Bool(_) => None,
                },
            },
        };
        cx.errors.push(Located { file, error });
    }
}

/// Reports every cycle of device-function calls once, at the call that closes it.
fn check_recursion(cx: &mut Cx<'_>) {
    let n = cx.functions.len();
    let mut adj: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (e, c) in cx.calls.iter().enumerate() {
        if c.from < n && c.to < n {
            adj[c.from].push(e);
        }
    }
    // Iterative DFS with colours (0 new, 1 on the stack, 2 done), so deep call chains cannot overflow the stack.
    let mut colour = vec![0u8; n];
    let mut found = Vec::new();
    for start in 0..n {
        if colour[start] != 0 {
            continue;
        }
        let mut stack: Vec<(usize, usize)> = vec![(start, 0)];
        colour[start] = 1;
        while let Some(top) = stack.last_mut() {
            let v = top.0;
            if let Some(&e) = adj[v].get(top.1) {
                top.1 += 1;
                let w = cx.calls[e].to;
                if colour[w] == 1 {
                    let pos = stack.iter().position(|(u, _)| *u == w).unwrap_or(0);
                    let mut cycle: Vec<String> =
                        stack[pos..].iter().map(|(u, _)| cx.functions[*u].name.clone()).collect();
                    cycle.push(cx.functions[w].name.clone());
                    found.push((e, cycle));
                } else if colour[w] == 0 {
                    colour[w] = 1;
                    stack.push((w, 0));
                }
            } else {
                colour[v] = 2;
                stack.pop();
            }
        }
    }
    for (e, cycle) in found {
        let c = &cx.calls[e];
        cx.errors.push(Located { file: c.file, error: SemaError::Recursion { span: c.span, cycle } });
    }
}

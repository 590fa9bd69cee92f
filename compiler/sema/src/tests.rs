//! Unit tests of the checker over small programs, the examples and the stdlib.

use crate::{CheckOutput, ModuleId, check};
use cutec_diagnostics::Span;
use cutec_diagnostics::{ColorMode, SourceMap, render_text};
use cutec_grammar::ast::{self, NodeId};
use std::path::Path;

/// Checks `src` as the root file `test.cute` with `defines`.
pub(crate) fn run_with(src: &str, defines: &[(&str, i64)]) -> (SourceMap, CheckOutput) {
    let mut map = SourceMap::new();
    let root = map.add("test.cute", src);
    let defines: Vec<(String, i64)> = defines.iter().map(|(n, v)| ((*n).to_owned(), *v)).collect();
    let out = check(&mut map, root, &defines);
    (map, out)
}

pub(crate) fn run(src: &str) -> (SourceMap, CheckOutput) {
    run_with(src, &[])
}

pub(crate) fn rendered(map: &SourceMap, out: &CheckOutput) -> String {
    let mut buf = Vec::new();
    let _ = render_text(map, &out.diagnostics, ColorMode::Never, &mut buf);
    String::from_utf8_lossy(&buf).into_owned()
}

fn repo() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

fn cute_files(dir: &str) -> Vec<std::path::PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(repo().join(dir))
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    v.retain(|p: &std::path::PathBuf| p.extension().is_some_and(|e| e == "cute"));
    v.sort();
    v
}

#[test]
fn examples_and_stdlib_have_no_diagnostics() {
    let mut files = cute_files("examples");
    files.extend(cute_files("stdlib"));
    assert!(files.len() >= 9, "examples not found");
    let mut report = String::new();
    for path in files {
        let src = std::fs::read_to_string(&path).unwrap_or_default();
        let (map, out) = run(&src);
        if !out.diagnostics.is_empty() {
            report.push_str(&format!("== {}\n{}", path.display(), rendered(&map, &out)));
        }
    }
    assert!(report.is_empty(), "{report}");
}

/// Every expression and binding id of a module, with whether it is a `Name` expression.
fn all_ids(m: &ast::Module) -> Vec<(NodeId, Span, bool)> {
    fn expr(e: &ast::Expr, out: &mut Vec<(NodeId, Span, bool)>) {
        use ast::ExprKind as K;
        out.push((e.id, e.span, matches!(e.kind, K::Name { .. })));
        match &e.kind {
            K::Name { generics, .. } => generics.iter().for_each(|g| expr(g, out)),
            K::Tuple(v) => v.iter().for_each(|x| expr(x, out)),
            K::Layout { shape, stride } => {
                expr(shape, out);
                expr(stride, out);
            }
            K::Unary { operand, .. } => expr(operand, out),
            K::Binary { lhs, rhs, .. } => {
                expr(lhs, out);
                expr(rhs, out);
            }
            K::Call { callee, args } => {
                expr(callee, out);
                args.iter().for_each(|a| expr(&a.value, out));
            }
            K::MethodCall { receiver, generics, args, .. } => {
                expr(receiver, out);
                generics.iter().for_each(|g| expr(g, out));
                args.iter().for_each(|a| expr(&a.value, out));
            }
            K::Field { base, .. } => expr(base, out),
            K::Index { base, indices } => {
                expr(base, out);
                indices.iter().for_each(|x| expr(x, out));
            }
            K::Cast { value, ty } => {
                expr(value, out);
                ty_expr(ty, out);
            }
            _ => {}
        }
    }
    fn ty_expr(t: &ast::TypeExpr, out: &mut Vec<(NodeId, Span, bool)>) {
        match &t.kind {
            ast::TypeExprKind::Named { args, .. } => args.iter().for_each(|a| expr(a, out)),
            ast::TypeExprKind::Tuple(v) => v.iter().for_each(|x| ty_expr(x, out)),
            ast::TypeExprKind::Error => {}
        }
    }
    fn block(b: &ast::Block, out: &mut Vec<(NodeId, Span, bool)>) {
        for s in &b.stmts {
            use ast::StmtKind as S;
            match &s.kind {
                S::Let { id, name, ty, value, .. } => {
                    out.push((*id, name.span, false));
                    if let Some(t) = ty {
                        ty_expr(t, out);
                    }
                    expr(value, out);
                }
                S::Assign { target, value, .. } => {
                    expr(target, out);
                    expr(value, out);
                }
                S::Expr(e) | S::Return(Some(e)) => expr(e, out),
                S::For { id, var, start, end, attrs, body } => {
                    out.push((*id, var.span, false));
                    expr(start, out);
                    expr(end, out);
                    attrs.iter().flat_map(|a| &a.args).for_each(|a| expr(&a.value, out));
                    block(body, out);
                }
                S::While { cond, body } => {
                    expr(cond, out);
                    block(body, out);
                }
                S::If { cond, then_block, else_block } => {
                    expr(cond, out);
                    block(then_block, out);
                    if let Some(b) = else_block {
                        block(b, out);
                    }
                }
                S::Block(b) => block(b, out),
                _ => {}
            }
        }
    }
    let mut out = Vec::new();
    for item in &m.items {
        match &item.kind {
            ast::ItemKind::Kernel(f) | ast::ItemKind::Fn(f) => {
                for g in &f.generics {
                    out.push((g.id, g.name.span, false));
                    if let Some(d) = &g.default {
                        expr(d, &mut out);
                    }
                }
                for p in &f.params {
                    out.push((p.id, p.name.span, false));
                    ty_expr(&p.ty, &mut out);
                }
                if let Some(l) = &f.launch {
                    l.args.iter().for_each(|a| expr(&a.value, &mut out));
                }
                f.attrs.iter().flat_map(|a| &a.args).for_each(|a| expr(&a.value, &mut out));
                block(&f.body, &mut out);
            }
            ast::ItemKind::Const(c) => {
                out.push((c.id, c.name.span, false));
                expr(&c.value, &mut out);
            }
            _ => {}
        }
    }
    out
}

#[test]
fn every_expression_of_the_examples_is_typed_and_every_name_resolved() {
    let mut files = cute_files("examples");
    files.extend(cute_files("stdlib"));
    let mut missing = Vec::new();
    for path in files {
        let src = std::fs::read_to_string(&path).unwrap_or_default();
        let (map, out) = run(&src);
        for (mi, m) in out.program.modules.iter().enumerate() {
            let mid = ModuleId(mi as u32);
            for (id, span, is_name) in all_ids(&m.ast) {
                let (line, col) = map.line_col(m.file, span.start as usize);
                let at = format!("{}:{line}:{col} `{}`", path.display(), &map.source(m.file)[span.range()]);
                if out.program.type_of(mid, id).is_error() {
                    missing.push(format!("{at}: no type"));
                }
                if is_name && out.program.resolution(mid, id).is_none() {
                    missing.push(format!("{at}: no resolution"));
                }
            }
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}

#[test]
#[ignore = "prints the types of the examples' bindings, for eyeballing"]
fn print_binding_types() {
    for name in ["gemm_sm90", "softmax", "gemm_simt", "transpose", "gemm_epilogue"] {
        let src = std::fs::read_to_string(repo().join(format!("examples/{name}.cute"))).unwrap_or_default();
        let (map, out) = run(&src);
        let m = &out.program.modules[0];
        println!("== {name}");
        for (id, span, is_name) in all_ids(&m.ast) {
            if !is_name && !matches!(out.program.type_of(ModuleId(0), id), crate::Type::Scalar(_)) {
                println!("  {} : {}", &map.source(m.file)[span.range()], out.program.type_of(ModuleId(0), id));
            }
        }
        for f in &out.program.functions {
            println!(
                "  {} dims={:?} launch={:?} generics={:?}",
                f.name,
                f.dyn_dims.iter().map(|d| (&d.name, &d.source)).collect::<Vec<_>>(),
                f.launch,
                f.const_generics.iter().map(|g| (&g.name, g.value)).collect::<Vec<_>>()
            );
        }
        println!("  loops: {:?}", m.loops);
    }
}

/// `tests/ui/sema_*.cute`: each has one problem, named by the code in its first line (`// E0100: ...`). Every
/// diagnostic must be an error with that code and a primary label in its file, and no syntax error may occur.
#[test]
fn ui_programs_report_their_error() {
    let files: Vec<_> = cute_files("tests/ui")
        .into_iter()
        .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("sema_")))
        .collect();
    assert!(files.len() >= 25, "only {} sema ui files", files.len());
    let mut failures = String::new();
    for path in files {
        let src = std::fs::read_to_string(&path).unwrap_or_default();
        let first = src.lines().next().unwrap_or_default();
        let want = first.strip_prefix("// ").and_then(|r| r.get(..5)).filter(|c| c.starts_with("E01"));
        let (map, out) = run(&src);
        let ok = want.is_some()
            && !out.diagnostics.is_empty()
            && out.diagnostics.iter().all(|d| {
                d.is_error()
                    && Some(d.code) == want
                    && d.primary()
                        .is_some_and(|l| !l.message.is_empty() && l.span.end as usize <= map.source(l.file).len())
            });
        if !ok {
            failures.push_str(&format!("== {} (want {want:?})\n{}\n", path.display(), rendered(&map, &out)));
        }
    }
    assert!(failures.is_empty(), "{failures}");
}

#[test]
#[ignore = "prints the rendered diagnostics of tests/ui/sema_*.cute"]
fn print_ui_diagnostics() {
    for path in cute_files("tests/ui") {
        if !path.file_name().is_some_and(|n| n.to_string_lossy().starts_with("sema_")) {
            continue;
        }
        let src = std::fs::read_to_string(&path).unwrap_or_default();
        let (map, out) = run(&src);
        println!("=== {}\n{}", path.display(), rendered(&map, &out));
    }
}

#[test]
#[ignore = "renders the diagnostics of the file named by CUTE_FILE"]
fn print_file_diagnostics() {
    let path = std::env::var("CUTE_FILE").unwrap_or_default();
    let src = std::fs::read_to_string(&path).unwrap_or_default();
    let (map, out) = run(&src);
    println!("{}", rendered(&map, &out));
}

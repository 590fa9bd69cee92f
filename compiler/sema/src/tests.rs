//! Unit tests of the checker over small programs, the examples and the stdlib.

use crate::{CheckOutput, DefineValue, ModuleId, check};
use cutec_diagnostics::Span;
use cutec_diagnostics::{ColorMode, SourceMap, render_text};
use cutec_grammar::ast::{self, NodeId};
use std::path::Path;

/// Checks `src` as the root file `test.cute` with integer `defines`.
pub(crate) fn run_with(src: &str, defines: &[(&str, i64)]) -> (SourceMap, CheckOutput) {
    let defines: Vec<(&str, DefineValue)> = defines.iter().map(|&(n, v)| (n, v.into())).collect();
    run_with_values(src, &defines)
}

/// Checks `src` as the root file `test.cute` with `defines` of any kind (`-D FAST=true`).
pub(crate) fn run_with_values(src: &str, defines: &[(&str, DefineValue)]) -> (SourceMap, CheckOutput) {
    let mut map = SourceMap::new();
    let root = map.add("test.cute", src);
    let defines: Vec<(String, DefineValue)> = defines.iter().map(|&(n, v)| (n.to_owned(), v)).collect();
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

/// A name of the enclosing function resolves to an id of its [`crate::FunctionInfo`] that names that very entry,
/// in every example and stdlib module: nothing later has to find it again by name.
#[test]
fn function_names_resolve_to_ids_of_their_function() {
    use crate::Resolution as R;
    let mut files = cute_files("examples");
    files.extend(cute_files("stdlib"));
    let (mut wrong, mut seen) = (Vec::new(), [0usize; 3]);
    for path in files {
        let src = std::fs::read_to_string(&path).unwrap_or_default();
        let (map, out) = run(&src);
        for (mi, m) in out.program.modules.iter().enumerate() {
            let mid = ModuleId(mi as u32);
            let ids = all_ids(&m.ast);
            for (item, it) in m.ast.items.iter().enumerate() {
                let Some(f) = out.program.function(mid, item) else { continue };
                for (id, span, _) in
                    ids.iter().filter(|(_, s, is_name)| *is_name && it.span.start <= s.start && s.end <= it.span.end)
                {
                    // A launch value `(THREADS)` is the name with its parentheses.
                    let text = map.source(m.file)[span.range()].trim_matches(|c: char| "() ".contains(c));
                    let (kind, named) = match out.program.resolution(mid, *id) {
                        Some(R::ConstGeneric(g)) => (0, f.const_generic(*g).map(|g| g.name.as_str())),
                        Some(R::DynDim(d)) => (1, f.dyn_dim(*d).map(|d| d.name.as_str())),
                        Some(R::Param(p)) => (2, f.param(*p).map(|p| p.name.as_str())),
                        _ => continue,
                    };
                    seen[kind] += 1;
                    if named != Some(text) {
                        wrong.push(format!("{}: `{text}` in `{}` resolved to {named:?}", path.display(), f.name));
                    }
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(seen.iter().all(|&n| n > 0), "const generics, dimensions, parameters seen: {seen:?}");
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

/// Diagnostic codes, in order.
fn codes(src: &str) -> Vec<&'static str> {
    let (_, out) = run(src);
    out.diagnostics.iter().map(|d| d.code).collect()
}

const HEAD: &str = "kernel k(x: Tensor<f32, N:1, gmem>) launch(grid = (ceil_div(N, 256)), block = (256)) {\n";

#[test]
fn deep_nesting_does_not_overflow_the_stack() {
    for depth in [50usize, 250, 300, 2000] {
        let parens = format!("{}1{}", "(".repeat(depth), ")".repeat(depth));
        let chain = vec!["1"; depth * 4].join(" + ");
        let neg = format!("{}1", "-".repeat(depth));
        let blocks = format!("{}x[0] = 1.0;{}", "{ ".repeat(depth), " }".repeat(depth));
        for body in [format!("let a = {parens};"), format!("let b = {chain};"), format!("let c = {neg};"), blocks] {
            let src = format!("{HEAD}{body}\n}}\n");
            // The default test thread has a 2 MiB stack, like many embedders.
            let r = std::thread::Builder::new().stack_size(2 << 20).spawn(move || run(&src).1.diagnostics.len());
            assert!(r.map(|h| h.join().is_ok()).unwrap_or(false), "panicked at depth {depth}");
        }
    }
}

/// xorshift64*, so the mutations are the same on every machine.
struct Rng(u64);
impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) % n.max(1) as u64) as usize
    }
}

#[test]
fn mutated_examples_never_panic() {
    let mut files = cute_files("examples");
    files.extend(cute_files("stdlib"));
    let pieces = [
        "",
        "(",
        ")",
        "{",
        "}",
        "<",
        ">",
        ",",
        ";",
        ":",
        "_",
        "0",
        "-1",
        "1.5",
        "x",
        "M",
        "let",
        "for",
        "return",
        "break",
        "as f32",
        "[",
        "]",
        "=",
        "+",
        "copy",
        "f32",
        "Tensor",
        "launch",
        "stdlib",
        ".x",
        "::",
        "size<9>",
        "pipelined",
    ];
    let mut rng = Rng(0x5eed);
    for path in files {
        let src = std::fs::read_to_string(&path).unwrap_or_default();
        for _ in 0..150 {
            let mut s = src.clone();
            for _ in 0..1 + rng.below(3) {
                let mut a = rng.below(s.len());
                while !s.is_char_boundary(a) {
                    a -= 1;
                }
                let mut b = (a + rng.below(12)).min(s.len());
                while !s.is_char_boundary(b) {
                    b -= 1;
                }
                s.replace_range(a..b, pieces[rng.below(pieces.len())]);
            }
            let r = std::panic::catch_unwind(|| run(&s).1.diagnostics.len());
            assert!(r.is_ok(), "panic on a mutation of {}:\n{s}", path.display());
        }
    }
}

#[test]
fn defines_override_defaults_and_unknown_ones_are_reported() {
    let src = std::fs::read_to_string(repo().join("examples/gemm_sm90.cute")).unwrap_or_default();
    let (_, out) = run_with(&src, &[("BN", 128)]);
    assert!(out.diagnostics.is_empty());
    let k = out.program.kernel("gemm").expect("kernel");
    let bn = k.const_generics.iter().find(|g| g.name == "BN").expect("BN");
    assert_eq!((bn.default, bn.value, bn.from_define), (Some(256), Some(128), true));
    assert_eq!(k.launch.as_ref().map(|l| l.grid[1].to_string()), Some("ceil_div(N,128)".into()));

    let (map, out) = run_with(&src, &[("BMM", 64)]);
    assert_eq!(out.diagnostics.len(), 1);
    let d = &out.diagnostics[0];
    assert_eq!(d.code, "E0133");
    assert!(d.help.iter().any(|h| h.contains("`BM`")), "{d:?}");
    let l = d.primary().expect("primary");
    assert_eq!(map.name(l.file), "<command line>");
    assert_eq!(&map.source(l.file)[l.span.range()], "BMM");

    let bool_src =
        "kernel k<const FAST: bool = false>(x: Tensor<f32, N:1, gmem>) launch(grid = (1), block = (32)) {\n}\n";
    // A `bool` takes `true` or `false`, not an integer (not even 1).
    for v in [2, 1] {
        let (_, out) = run_with(bool_src, &[("FAST", v)]);
        let d = out.diagnostics.first().expect("one diagnostic");
        assert_eq!((out.diagnostics.len(), d.code), (1, "E0133"));
        assert_eq!(d.message, format!("`-D FAST={v}` is not a `bool`"));
        assert_eq!(d.primary().map(|l| l.message.as_str()), Some("expected `true` or `false`"));
    }
    let (_, out) = run_with_values(bool_src, &[("FAST", true.into())]);
    assert!(out.diagnostics.is_empty());
    assert_eq!(out.program.kernel("k").map(|k| k.const_generics[0].value), Some(Some(1)));

    // `int` is 32-bit: a larger -D value is out of range, said so with the range (not left to overflow later).
    let int_src = "kernel k<const VEC: int = 4>(x: Tensor<f32, N:1, gmem>) launch(grid = (1), block = (32)) {\n}\n";
    let (_, out) = run_with(int_src, &[("VEC", 4_611_686_018_427_387_904)]);
    let d = out.diagnostics.first().expect("one diagnostic");
    assert_eq!((out.diagnostics.len(), d.code), (1, "E0133"));
    assert_eq!(d.message, "`-D VEC=4611686018427387904` is out of range for `int`");
    assert_eq!(d.primary().map(|l| l.message.as_str()), Some("`int` holds -2147483648 to 2147483647"));
    let (_, out) = run_with(int_src, &[("VEC", -2_147_483_648)]);
    assert!(out.diagnostics.is_empty());
    // An integer parameter takes no `true`: it was 1 once, silently.
    let (map, out) = run_with_values(int_src, &[("VEC", true.into())]);
    let d = out.diagnostics.first().expect("one diagnostic");
    assert_eq!((out.diagnostics.len(), d.code), (1, "E0133"));
    assert_eq!(d.message, "`-D VEC=true` is not an integer");
    let l = d.primary().expect("anchored on the option");
    assert_eq!((map.name(l.file), &map.source(l.file)[l.span.range()]), ("<command line>", "VEC"));
    assert_eq!(l.message, "expected an integer (`int`)");
}

#[test]
fn dynamic_dimensions_are_recorded_with_their_sites() {
    let src = "kernel k(a: Tensor<f32, (M, K):(K, 1), gmem>, b: Tensor<f32, ((2, N), K):((1, 2 * K), 2), gmem>, \
               s: int) launch(grid = (ceil_div(M, 128), s), block = (128)) {\n    let m = M + N;\n}\n";
    let (map, out) = run(src);
    assert!(out.diagnostics.is_empty(), "{}", rendered(&map, &out));
    let k = out.program.kernel("k").expect("kernel");
    let dims: Vec<(&str, usize, Vec<usize>, crate::DimComponent)> = k
        .dyn_dims
        .iter()
        .map(|d| (d.name.as_str(), d.source.param, d.source.path.clone(), d.source.component))
        .collect();
    use crate::DimComponent::Shape;
    assert_eq!(dims, [("M", 0, vec![0], Shape), ("K", 0, vec![1], Shape), ("N", 1, vec![0, 1], Shape)]);
    let kdim = &k.dyn_dims[1];
    assert_eq!(kdim.sites.len(), 3, "{:?}", kdim.sites); // a's shape and stride, b's shape (`2 * K` is no site)
    let launch = k.launch.as_ref().expect("launch");
    assert_eq!(
        launch.grid,
        [
            crate::SymInt::op(crate::SymOp::CeilDiv, crate::SymInt::Dim("M".into()), crate::SymInt::Const(128)),
            crate::SymInt::Param { index: 2, name: "s".into() }
        ]
    );
}

#[test]
fn literals_take_their_type_from_context() {
    let src = "fn f(h: f16, i: i64) -> f16 {\n    let a = 2 * h;\n    let b = 0.5 * h + 1;\n    let c = i + 1;\n    let d = 1;\n    \
               let e = 1.0;\n    let g: f64 = 1.0;\n    let mut s = 0.0;\n    s += h;\n    return a + b;\n}\n";
    let (map, out) = run(src);
    assert!(out.diagnostics.is_empty(), "{}", rendered(&map, &out));
    let m = &out.program.modules[0];
    let mut lets = Vec::new();
    if let ast::ItemKind::Fn(f) = &m.ast.items[0].kind {
        for s in &f.body.stmts {
            if let ast::StmtKind::Let { id, name, .. } = &s.kind {
                lets.push(format!("{}: {}", name.name, out.program.type_of(ModuleId(0), *id)));
            }
        }
    }
    assert_eq!(lets, ["a: f16", "b: f16", "c: i64", "d: int", "e: f32", "g: f64", "s: f32"]);
}

#[test]
fn promotions_and_narrowing() {
    let ok = "fn f(h: bf16, x: f32, i: int) -> f32 {\n    let a = h * x;\n    let b = i * x;\n    let c = (x * 2.0) as bf16;\n    \
              return a + b + (c as f32);\n}\n";
    assert_eq!(codes(ok), Vec::<&str>::new());
    assert_eq!(codes("fn f(x: f32) -> bf16 {\n    return x;\n}\n"), ["E0115"]);
    assert_eq!(codes("fn f(x: f32) {\n    let h: bf16 = x;\n}\n"), ["E0109"]);
    assert_eq!(codes("fn f(x: f32) -> bool {\n    return x < 1 && x > 0.5;\n}\n"), Vec::<&str>::new());
    assert_eq!(codes("fn f(x: f32) -> f32 {\n    return x & 1;\n}\n"), ["E0112"]);
    assert_eq!(codes("fn f(b: bool) -> bool {\n    return !b == false;\n}\n"), Vec::<&str>::new());
    assert_eq!(codes("fn f(i: int) -> int {\n    return !i;\n}\n"), ["E0112"]);
}

#[test]
fn scopes_shadowing_and_tensor_elements() {
    let ok = format!(
        "{HEAD}    let v = 1.0;\n    let v = v * 2.0;\n    {{\n        let v = 3;\n        x[v] = 0.0;\n    }}\n    let r = \
         make_fragment_like(x);\n    r[0] = v;\n    for i in 0..4 {{\n        let v = i;\n    }}\n}}\n"
    );
    assert_eq!(codes(&ok), Vec::<&str>::new());
    assert_eq!(codes(&format!("{HEAD}    let a = a + 1;\n}}\n")), ["E0105"]);
    assert_eq!(codes(&format!("{HEAD}    x = x;\n}}\n")), ["E0106"]);
    assert_eq!(codes(&format!("{HEAD}    N = 3;\n}}\n")), ["E0107"]);
    assert_eq!(codes(&format!("{HEAD}    while true {{\n        continue;\n    }}\n    continue;\n}}\n")), ["E0108"]);
}

#[test]
fn imports_globs_and_duplicates() {
    let glob = "use stdlib::reduce;\n\nfn f(v: f32) -> f32 {\n    return block_sum(v) + warp_max(v);\n}\n";
    assert_eq!(codes(glob), Vec::<&str>::new());
    let own = "use stdlib::reduce;\n\nfn block_sum(v: f32) -> f32 {\n    return v;\n}\n";
    assert_eq!(codes(own), Vec::<&str>::new(), "an own item shadows a whole-module import");
    let clash = "use stdlib::reduce::block_sum;\n\nfn block_sum(v: f32) -> f32 {\n    return v;\n}\n";
    assert_eq!(codes(clash), ["E0104"]);
    assert_eq!(codes("use stdlib::reduce::block_sum::x;\n"), ["E0102"]);
    let (_, out) = run("use stdlib::reduce::{block_max, block_sum};\n");
    assert_eq!(out.program.modules.len(), 2);
    assert_eq!(out.program.modules[1].path, "stdlib::reduce");
    assert_eq!(out.program.modules[0].imports.len(), 2);
}

#[test]
fn recursion_through_two_functions_is_reported_once() {
    let src = "fn even(n: int) -> bool {\n    if n == 0 {\n        return true;\n    }\n    return odd(n - 1);\n}\n\n\
               fn odd(n: int) -> bool {\n    if n == 0 {\n        return false;\n    }\n    return even(n - 1);\n}\n";
    let (map, out) = run(src);
    assert_eq!(out.diagnostics.len(), 1, "{}", rendered(&map, &out));
    assert!(out.diagnostics[0].message.contains("even -> odd -> even"), "{}", out.diagnostics[0].message);
}

#[test]
fn constants_and_loop_attributes() {
    let src = "const TILE: int = 4 * 8;\nconst HALF: int = TILE / 2;\nconst EPS: f32 = 1e-5;\n\n\
               kernel k<const S: int = 3>(x: Tensor<f32, (TILE, N):(1, TILE), gmem>) launch(grid = (N), block = (HALF)) {\n    \
               for i in 0..HALF unroll(2) {\n        x[i, 0] = EPS;\n    }\n    for j in 0..N pipelined(stages = S) {\n        \
               x[0, j] = 0.0;\n    }\n}\n";
    let (map, out) = run(src);
    assert!(out.diagnostics.is_empty(), "{}", rendered(&map, &out));
    let values: Vec<_> = out.program.consts.iter().map(|c| (c.name.as_str(), c.value)).collect();
    use crate::ConstValue::*;
    assert_eq!(values, [("TILE", Some(Int(32))), ("HALF", Some(Int(16))), ("EPS", Some(Float(1e-5)))]);
    let k = out.program.kernel("k").expect("kernel");
    assert_eq!(k.launch.as_ref().map(|l| l.block.clone()), Some(vec![crate::SymInt::Const(16)]));
    let m = &out.program.modules[0];
    let mut consts: Vec<i64> = m.values.values().copied().collect();
    consts.sort_unstable();
    consts.dedup();
    assert_eq!(consts, [1, 2, 3, 32], "stages, unroll, the layout entries");
    let mut loops: Vec<_> = out.program.modules[0].loops.values().copied().collect();
    loops.sort_by_key(|l| l.unroll.is_none());
    assert_eq!(
        loops,
        [
            crate::LoopAttrs { unroll: Some(Some(2)), pipelined: None },
            crate::LoopAttrs { unroll: None, pipelined: Some(Some(3)) }
        ]
    );
    assert_eq!(codes("const A: int = B;\nconst B: int = A;\n"), ["E0124"]);
}

#[test]
fn launch_clause_problems() {
    let k = |launch: &str| format!("kernel k(x: Tensor<f32, N:1, gmem>) launch({launch}) {{\n}}\n");
    assert_eq!(codes(&k("grid = (1)")), ["E0118"]);
    assert_eq!(codes(&k("grid = (1), block = (32), grid = (2)")), ["E0118"]);
    assert_eq!(codes(&k("grid = (1, 2, 3, 4), block = (32)")), ["E0119"]);
    assert_eq!(codes(&k("grid = (1), block = (32), cluster = (N)")), ["E0119"]);
    assert_eq!(codes(&k("grid = (1), block = (32), smem = 1.5")), ["E0119"]);
    assert_eq!(codes(&k("grid = (4, 8), block = (32), cluster = (4, 8)")), ["E0119"]);
    assert_eq!(codes(&k("grid = (x), block = (32)")), ["E0119"]);
    // A grid known when compiling is whole clusters along every axis; one computed at run time is the runtime's.
    assert_eq!(codes(&k("grid = (3), block = (32), cluster = (2)")), ["E0170"]);
    assert_eq!(codes(&k("grid = (4, 3), block = (32), cluster = (2, 2)")), ["E0170"]);
    assert_eq!(codes(&k("grid = (6, 4, 3), block = (32), cluster = (2, 2)")), Vec::<&str>::new());
    assert_eq!(codes(&k("grid = (N), block = (32), cluster = (2)")), Vec::<&str>::new());
}

#[test]
fn builtin_signatures_are_enforced() {
    let body = |s: &str| format!("{HEAD}{s}\n}}\n");
    assert_eq!(codes(&body("    sync_threads(1);")), ["E0110"]);
    assert_eq!(codes(&body("    let t = local_tile(x, 64);")), ["E0110"]);
    assert_eq!(codes(&body("    let t = local_tile(1.0, 64, 0);")), ["E0111"]);
    assert_eq!(codes(&body("    let s = make_tensor<f32, gmem>(32:1);")), ["E0134"]);
    assert_eq!(codes(&body("    let w = wgmma<128, 128, 16, bf16, bf16, f32>;")), ["E0136"]);
    assert_eq!(codes(&body("    let w = wgmma<64, 100, 16, bf16, bf16, f32>;")), ["E0136"]);
    assert_eq!(codes(&body("    let w = wgmma<64, 128, 32, e4m3, e5m2, f32>;")), Vec::<&str>::new());
    assert_eq!(codes(&body("    let s = Swizzle<3, 4, 2>;")), ["E0136"]);
    assert_eq!(codes(&body("    setmaxnreg<240>();\n    setmaxnreg<20>();")), ["E0136"]);
    assert_eq!(
        codes(&body("    let l = select<1, 0>((4, 8):(1, 4));\n    let c = select(true, 1.0, 2);")),
        Vec::<&str>::new()
    );
    assert_eq!(codes(&body("    let y = x.partition_c(x);")), ["E0129"]);
    assert_eq!(codes(&body("    let y = thread_idx();")), ["E0132"]);
    assert_eq!(codes(&body("    let n = get<2>((1, 2));")), ["E0126"]);
    assert_eq!(codes(&body("    let r = make_tensor<f32, rmem>((4, 8));\n    let n = size<2>(r);")), ["E0126"]);
    assert_eq!(
        codes(&body("    let r = make_tensor<f32, rmem>((4, 8));\n    let n = size<1>(r) + get<1>(shape(r));")),
        Vec::<&str>::new()
    );
    assert_eq!(
        codes(&body("    fill(x, 0);\n    let r = make_fragment_like<bf16>(x);\n    fill(r, 1.5);")),
        Vec::<&str>::new()
    );
}

/// Diagnostic codes of `src` checked with `defines`.
fn codes_with(src: &str, defines: &[(&str, i64)]) -> Vec<&'static str> {
    let (_, out) = run_with(src, defines);
    out.diagnostics.iter().map(|d| d.code).collect()
}

#[test]
fn static_assert_rejects_softmax_sizes_it_would_truncate() {
    let src = std::fs::read_to_string(repo().join("examples/softmax.cute")).expect("softmax.cute");
    let (map, out) = run_with(&src, &[("N", 1536)]);
    assert_eq!(out.diagnostics.iter().map(|d| d.code).collect::<Vec<_>>(), ["E0141"], "{}", rendered(&map, &out));
    let d = &out.diagnostics[0];
    assert!(d.message.contains("N must be a multiple of THREADS * VEC"), "{}", d.message);
    let primary = d.primary().expect("a primary label");
    assert_eq!(&src[primary.span.range()], "N % (THREADS * VEC) == 0");
    let text = rendered(&map, &out);
    assert!(text.contains("with N = 1536 (from -D), THREADS = 256, VEC = 4: `N % (THREADS * VEC)` is 512"), "{text}");
    assert!(codes_with(&src, &[("N", 4096)]).is_empty());
    assert!(codes_with(&src, &[("N", 4096), ("VEC", 8), ("THREADS", 128)]).is_empty());
    // Without -D, N has no value: nothing to check yet.
    assert!(codes_with(&src, &[]).is_empty());
    let rms = std::fs::read_to_string(repo().join("examples/rmsnorm.cute")).expect("rmsnorm.cute");
    assert_eq!(codes_with(&rms, &[("N", 3000)]), ["E0141"]);
    assert!(codes_with(&rms, &[("N", 4096)]).is_empty());
}

#[test]
fn static_assert_conditions() {
    let k = |generics: &str, body: &str| {
        format!(
            "const TILE: int = 64;\nkernel k{generics}(x: Tensor<f32, (M, 64):(64, 1), gmem>, n: int) \
             launch(grid = (M), block = (64)) {{\n{body}\n}}\n"
        )
    };
    let none = Vec::<&str>::new();
    // Literals, constants, folded layout queries, `&&`, `!`, `min`.
    assert_eq!(codes(&k("", "    static_assert(TILE * 2 == 128 && !(TILE < 8), \"tile\");")), none);
    assert_eq!(codes(&k("", "    let l = (4, 8):(8, 1);\n    static_assert(size(l) == 32, \"size\");")), none);
    assert_eq!(codes(&k("", "    let l = (4, 8):(8, 1);\n    static_assert(cosize(l) == 31, \"c\");")), ["E0141"]);
    assert_eq!(codes(&k("", "    static_assert(min(TILE, 16) > 16, \"min\");")), ["E0141"]);
    assert_eq!(codes(&k("", "    static_assert(false, \"always\");")), ["E0141"]);
    // A tiler mixing a layout and an integer (CuTe's mode-wise tiler): the algebra's
    // zipped_divide((128,64):(64,1), (4:2, 8)) = ((4,8),((2,16),8)):((128,1),((64,512),8)).
    let mixed = "    let l = zipped_divide((128, 64):(64, 1), (make_layout(4, 2), 8));\n    \
                 static_assert(size(get<0>(l)) == 32 && size(get<1>(l)) == 256 && cosize(l) == 8192, \"mixed\");";
    assert_eq!(codes(&k("", mixed)), none);
    assert_eq!(codes(&k("", "    let t = logical_divide(x, (make_layout(4, 2), 16));")), none);
    assert_eq!(codes(&k("", "    let t = zipped_divide(x, (make_layout(4, 2), 1.5));")), ["E0111"]);
    // A const generic without value: not checked; with a value, checked.
    let g = "<const B: int, const C: bool = false>";
    assert_eq!(codes(&k(g, "    static_assert(B % 2 == 0, \"even\");")), none);
    assert_eq!(codes_with(&k(g, "    static_assert(B % 2 == 0, \"even\");"), &[("B", 3)]), ["E0141"]);
    assert_eq!(codes_with(&k(g, "    static_assert(B > 0 || C, \"\");"), &[("B", 2)]), none);
    assert_eq!(codes_with(&k(g, "    static_assert(C, \"c\");"), &[("B", 2)]), ["E0141"]);
    // Run-time values are never constants, with or without values for the const generics.
    assert_eq!(codes(&k("", "    static_assert(thread_idx.x < 64, \"t\");")), ["E0124"]);
    assert_eq!(codes(&k("", "    static_assert(M > 0, \"m\");")), ["E0124"]);
    assert_eq!(codes(&k("", "    static_assert(n > 0, \"n\");")), ["E0124"]);
    assert_eq!(codes(&k(g, "    static_assert(B < M, \"m\");")), ["E0124"]);
    assert_eq!(codes(&k("", "    for i in 0..4 {\n        static_assert(i < 4, \"i\");\n    }")), ["E0124"]);
    // A divisor that is 0 when compiling is reported as such (TILE is 64 here).
    assert_eq!(codes(&k("", "    static_assert(TILE / (TILE - 64) == 1, \"z\");")), ["E0143"]);
    // Arguments.
    assert_eq!(codes(&k("", "    static_assert(1, \"int\");")), ["E0111"]);
    assert_eq!(codes(&k("", "    static_assert(true, TILE);")), ["E0111"]);
    assert_eq!(codes(&k("", "    static_assert(true);")), ["E0110"]);
    assert_eq!(codes(&k("", "    static_assert<4>(true, \"\");")), ["E0125"]);
}

#[test]
fn static_assert_of_divisibility_on_a_dynamic_dimension_is_a_launch_requirement() {
    let src = "kernel k<const T: int = 64>(x: Tensor<f32, (M, N):(N, 1), gmem>) launch(grid = (M), block = (1)) {
    static_assert(N % T == 0 && M % 2 == 0, \"whole tiles\");
}";
    let (map, out) = run(src);
    assert!(!out.has_errors(), "{}", rendered(&map, &out));
    let k = out.program.kernel("k").expect("checked");
    let req: Vec<(&str, i64, Option<&str>)> =
        k.requires.iter().map(|r| (r.dim.as_str(), r.multiple_of, r.message.as_deref())).collect();
    assert_eq!(req, [("N", 64, Some("whole tiles")), ("M", 2, Some("whole tiles"))]);

    // Anything else about a dynamic dimension cannot be decided at compile time: E0124, as before.
    for cond in ["N > 64", "N % T == 1", "N % 0 == 0"] {
        let (map, out) = run(&src.replace("N % T == 0 && M % 2 == 0", cond));
        let text = rendered(&map, &out);
        assert!(out.has_errors(), "`{cond}` must be rejected");
        assert!(text.contains("E0124") || text.contains("E0143"), "`{cond}`:\n{text}");
    }
}

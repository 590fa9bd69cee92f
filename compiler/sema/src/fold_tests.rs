//! Tests of layout folding: the examples' folded layouts against CuTe's, the `tests/ui/layout_*.cute` wrong
//! programs (code and offending expression), constants from folded queries, and symbolic checking.

use crate::tests::{rendered, run, run_with};
use crate::{CheckOutput, ModuleId};
use cutec_grammar::ast::{self, NodeId};
use cutec_layout::{Layout, Value, parse_layout};
use std::path::Path;

fn repo() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

fn example(name: &str) -> String {
    std::fs::read_to_string(repo().join(format!("examples/{name}.cute"))).unwrap_or_default()
}

/// The binding id of the first `let name` of the root module's first kernel or function that has one.
fn let_id(out: &CheckOutput, name: &str) -> Option<NodeId> {
    fn block(b: &ast::Block, name: &str) -> Option<NodeId> {
        b.stmts.iter().find_map(|s| match &s.kind {
            ast::StmtKind::Let { id, name: n, .. } if n.name == name => Some(*id),
            ast::StmtKind::For { body, .. }
            | ast::StmtKind::While { body, .. }
            | ast::StmtKind::Role { body, .. }
            | ast::StmtKind::Block(body) => block(body, name),
            ast::StmtKind::If { then_block, else_block, .. } => {
                block(then_block, name).or_else(|| else_block.as_ref().and_then(|b| block(b, name)))
            }
            _ => None,
        })
    }
    let m = out.program.module(ModuleId::ROOT)?;
    m.ast.items.iter().find_map(|it| match &it.kind {
        ast::ItemKind::Kernel(f) | ast::ItemKind::Fn(f) => block(&f.body, name),
        _ => None,
    })
}

fn folded(out: &CheckOutput, name: &str) -> Option<String> {
    let id = let_id(out, name)?;
    out.program.folded(ModuleId::ROOT, id).map(ToString::to_string)
}

/// Whether two layouts are the same function on the same domain size.
fn same_function(a: &Layout, b: &str) -> bool {
    let b = parse_layout(b).expect("a layout");
    a.size() == b.size() && a.indices().ok() == b.indices().ok()
}

#[test]
fn copy_folds_the_thread_tile_to_cutes_layout() {
    let (map, out) = run(&example("copy"));
    assert!(out.diagnostics.is_empty(), "{}", rendered(&map, &out));
    let p = &out.program;
    // x: N:1; the CTA tile of 1024 elements; the TV layout; thread t's 4 elements.
    assert_eq!(folded(&out, "gx").as_deref(), Some("(1024):(1)"));
    assert_eq!(folded(&out, "tv").as_deref(), Some("(256,4):(4,1)"));
    assert_eq!(folded(&out, "tx").as_deref(), Some("(4):(1)"));
    let tx = let_id(&out, "tx").and_then(|id| p.folded_layout(ModuleId::ROOT, id)).expect("tx folds");
    assert!(same_function(tx, "4:1"));
    let x = &p.kernel("copy").expect("kernel").params[0];
    assert_eq!(p.folded(ModuleId::ROOT, x.id).map(ToString::to_string).as_deref(), Some("N:1"));
}

#[test]
fn softmax_folds_fully_with_a_define_and_stays_symbolic_without() {
    let src = example("softmax");
    let (map, out) = run_with(&src, &[("N", 4096)]);
    assert!(out.diagnostics.is_empty(), "{}", rendered(&map, &out));
    assert_eq!(folded(&out, "tv").as_deref(), Some("(256,(4,4)):(4,(1,1024))"));
    // CuTe's slice keeps the mode under `_` as one mode: ((4,4)):((1,1024)), the function (4,4):(1,1024).
    assert_eq!(folded(&out, "tx").as_deref(), Some("((4,4)):((1,1024))"));
    let p = &out.program;
    let tx = let_id(&out, "tx").and_then(|id| p.folded_layout(ModuleId::ROOT, id)).expect("tx folds");
    assert!(same_function(tx, "(4,4):(1,1024)"));
    assert_eq!(folded(&out, "rx").as_deref(), Some("((4,4)):((1,4))"));
    let rx = let_id(&out, "rx").and_then(|id| p.folded_layout(ModuleId::ROOT, id)).expect("rx folds");
    assert!(same_function(rx, "(4,4):(1,4)"));
    // `size(rx)` in the loop bounds is a compile-time constant, recorded for lowering.
    let m = p.module(ModuleId::ROOT).expect("root");
    let sixteen = m.values.iter().filter(|(id, v)| **v == 16 && p.folded_int(ModuleId::ROOT, **id) == Some(16));
    assert_eq!(sixteen.count(), 3);

    let (map, out) = run(&src);
    assert!(out.diagnostics.is_empty(), "{}", rendered(&map, &out));
    assert_eq!(folded(&out, "tv"), None);
    assert_eq!(folded(&out, "tx"), None);
    // Without N, the row of x is still known symbolically where N is not needed: the dynamic M is fine.
    assert_eq!(folded(&out, "m"), None);
}

#[test]
fn examples_check_cleanly_with_and_without_defines() {
    let mut report = String::new();
    for name in ["copy", "gemm_epilogue", "gemm_fp8", "gemm_simt", "gemm_sm90", "rmsnorm", "softmax", "transpose"] {
        let src = example(name);
        assert!(!src.is_empty(), "examples/{name}.cute not found");
        let defines: &[&[(&str, i64)]] =
            if matches!(name, "softmax" | "rmsnorm") { &[&[], &[("N", 4096)], &[("N", 8192)]] } else { &[&[]] };
        for d in defines {
            let (map, out) = run_with(&src, d);
            if !out.diagnostics.is_empty() {
                report.push_str(&format!("== {name} {d:?}\n{}", rendered(&map, &out)));
            }
        }
    }
    assert!(report.is_empty(), "{report}");
}

#[test]
fn gemm_tiles_fold_symbolically_over_dynamic_dimensions() {
    let (map, out) = run(&example("gemm_sm90"));
    assert!(out.diagnostics.is_empty(), "{}", rendered(&map, &out));
    // CUTLASS 4.2's tile_to_shape is a blocked product, not coalesced.
    let tiled = "Sw<3,3,3> o 0 o ((8,16),(64,1)):((64,512),(1,0))";
    assert_eq!(folded(&out, "sa").as_deref(), Some(tiled));
    assert_eq!(folded(&out, "ga").as_deref(), Some("(128,64,ceil_div(K,64)):(K,1,64)"));
    assert_eq!(folded(&out, "ta").as_deref(), Some(tiled));
}

/// CuTe's notation for swizzled layouts (`Sw<B,M,S> o offset o L`, what `print` writes) reads back inside a kernel
/// as the same value, and `A o B` is `composition(A, B)`.
#[test]
fn swizzled_layouts_read_back_as_printed() {
    let cases = [
        "composition(Swizzle<5, 0, 5>, (32, 32):(32, 1))",
        "composition(Swizzle<3, 4, 3>, (8, 64):(64, 1))",
        "composition(Swizzle<2, 3, 3>, ((8, 2), 32):((32, 256), 1))",
        "composition((6, 2):(8, 2), (4, 3):(3, 1))",
        "(6, 2):(8, 2) o (4, 3):(3, 1)",
    ];
    let head = "kernel k(x: Tensor<f32, N:1, gmem>) launch(grid = (1), block = (32)) {\n";
    for case in cases {
        let (map, out) = run(&format!("{head}    let v = {case};\n}}\n"));
        assert!(out.diagnostics.is_empty(), "{case}\n{}", rendered(&map, &out));
        let printed = folded(&out, "v").expect("folds");
        let (map, again) = run(&format!("{head}    let v = {printed};\n}}\n"));
        assert!(again.diagnostics.is_empty(), "{printed}\n{}", rendered(&map, &again));
        assert_eq!(folded(&again, "v").as_deref(), Some(printed.as_str()), "{case} printed as {printed}");
    }
    let (_, out) = run(&format!("{head}    let v = Sw<5,0,5> o (32,32):(32,1);\n}}\n"));
    assert_eq!(folded(&out, "v").as_deref(), Some("Sw<5,0,5> o 0 o (32,32):(32,1)"));
}

#[test]
fn folded_queries_are_constants() {
    let src = "kernel k(x: Tensor<f32, N:1, gmem>) launch(grid = (1), block = (128)) {\n    \
               let l = (4, 8):(8, 1);\n    let u = upcast<size<0>(l)>(l);\n    for i in 0..cosize(l) unroll {\n    }\n}\n";
    let (map, out) = run(src);
    assert!(out.diagnostics.is_empty(), "{}", rendered(&map, &out));
    // upcast<4>((4,8):(8,1)): the generic argument `size<0>(l)` folded to 4.
    assert_eq!(folded(&out, "u").as_deref(), Some("(4,2):(2,1)"));
    let m = out.program.module(ModuleId::ROOT).expect("root");
    let mut values: Vec<i64> = m.values.values().copied().collect();
    values.sort();
    assert!(values.contains(&4) && values.contains(&32), "{values:?}");
}

/// Each `tests/ui/layout_*.cute` file and the text of the expression its error must point at.
const UI: &[(&str, &str)] = &[
    ("layout_complement_not_injective", "complement((2, 2):(1, 1))"),
    ("layout_composition_not_divisible", "composition(a, 3:3)"),
    ("layout_divide_not_dividing", "logical_divide(l, TILE:1)"),
    ("layout_get_out_of_range", "2"),
    ("layout_index_count", "1, 2, 3"),
    ("layout_index_out_of_range", "4"),
    ("layout_make_layout_incongruent", "make_layout((4, 4), (1, 4, 16))"),
    ("layout_product_overflow", "logical_product(a, 1000000000:1)"),
    ("layout_right_inverse_swizzled", "right_inverse(s)"),
    ("layout_select_negative_mode", "-1"),
    ("layout_select_out_of_range", "3"),
    ("layout_slice_out_of_range", "TILE"),
    ("layout_swizzle_outside", "composition(Swizzle<3, 3, 3>, (8, 60):(60, 1))"),
    ("layout_tile_to_shape_not_divisible", "tile_to_shape(atom, (6, 8))"),
    ("layout_tiler_rank_mismatch", "zipped_divide((8, 8):(1, 8), (4, 2, 2))"),
    ("layout_upcast_not_dividing", "upcast<4>(l)"),
];

#[test]
fn ui_layout_programs_point_at_the_offending_expression() {
    let mut files: Vec<String> = std::fs::read_dir(repo().join("tests/ui"))
        .map(|rd| rd.filter_map(|e| e.ok()?.file_name().into_string().ok()).collect())
        .unwrap_or_default();
    files.retain(|f| f.starts_with("layout_") && f.ends_with(".cute"));
    files.sort();
    let listed: Vec<String> = UI.iter().map(|(f, _)| format!("{f}.cute")).collect();
    assert_eq!(files, listed, "every tests/ui/layout_*.cute file is listed in UI");
    assert!(files.len() >= 12);
    let mut failures = String::new();
    for (file, want) in UI {
        let src = std::fs::read_to_string(repo().join(format!("tests/ui/{file}.cute"))).unwrap_or_default();
        let code = src.lines().next().and_then(|l| l.strip_prefix("// ")).and_then(|r| r.get(..5)).unwrap_or("");
        let (map, out) = run(&src);
        let ok = out.diagnostics.len() == 1
            && out.diagnostics.iter().all(|d| {
                d.code == code
                    && code.starts_with("E02")
                    && !d.help.is_empty() | !d.notes.is_empty()
                    && d.primary()
                        .is_some_and(|l| !l.message.is_empty() && map.source(l.file).get(l.span.range()) == Some(*want))
            });
        if !ok {
            failures.push_str(&format!("== {file} (want {code} at `{want}`)\n{}\n", rendered(&map, &out)));
        }
    }
    assert!(failures.is_empty(), "{failures}");
}

#[test]
fn dynamic_values_never_report_and_odd_inputs_never_panic() {
    let head = "kernel k(x: Tensor<f32, (M, K):(K, 1), gmem>) launch(grid = (1), block = (128)) {\n";
    for body in [
        "    let t = local_tile(x, (128, 64), (block_idx.x, _));\n    let s = t[_, _, 3];\n",
        "    let d = logical_divide(x, (M, 4));\n",
        "    let c = complement((M, 4):(1, M));\n",
        "    let p = local_partition(x, (8, 16):(16, 1), thread_idx.x);\n",
        "    let z = coalesce((0, 4):(1, 1));\n",
        "    let v = upcast<0>((4, 4):(1, 4));\n",
        "    let w = get<-1>((4, 4):(1, 4));\n",
        "    let q = composition((4, 4):(1, 4), (1000000000000, 1000000000000));\n",
    ] {
        let (_, out) = run(&format!("{head}{body}}}\n"));
        for d in &out.diagnostics {
            assert!(d.primary().is_some(), "{body}");
        }
    }
    // Dynamic shapes only: nothing to report.
    let (map, out) = run(&format!(
        "{head}    let t = local_tile(x, (128, 64), (block_idx.x, _));\n    let d = logical_divide(x, (M, 4));\n}}\n"
    ));
    assert!(out.diagnostics.is_empty(), "{}", rendered(&map, &out));
    let _ = Value::Underscore;
}

/// The ```cute blocks of the book's "Layouts in the language" section: plain ones check, `fail` ones are
/// rejected with a layout error (the suite's book test runs every page; this one runs without LLVM).
#[test]
fn book_layout_listings_check() {
    let text = std::fs::read_to_string(repo().join("book/src/layout-algebra.md")).unwrap_or_default();
    let mut blocks = Vec::new();
    let mut current: Option<(String, String)> = None;
    for line in text.lines() {
        match (line.trim_start().strip_prefix("```"), current.take()) {
            (Some(_), Some(block)) => blocks.push(block),
            (Some(info), None) => current = Some((info.trim().to_owned(), String::new())),
            (None, Some((info, mut code))) => {
                code.push_str(line);
                code.push('\n');
                current = Some((info, code));
            }
            (None, None) => {}
        }
    }
    let cute: Vec<_> =
        blocks.iter().filter(|(info, _)| info.starts_with("cute") && !info.starts_with("cute-")).collect();
    assert!(cute.len() >= 3, "the section has {} cute listings", cute.len());
    for (info, code) in cute {
        let (map, out) = run(code);
        if info.contains("fail") {
            assert!(out.diagnostics.iter().any(|d| d.code.starts_with("E02")), "{}", rendered(&map, &out));
        } else {
            assert!(out.diagnostics.is_empty(), "{code}\n{}", rendered(&map, &out));
        }
    }
}

//! The checker's part of `role` statements: its arguments are compile-time integers (recorded for the lowering),
//! its rank an `int` scoped to its body.

use crate::tests::{rendered, run, run_with};
use crate::{ModuleId, Type};
use cutec_grammar::ast;

const HEAD: &str = "kernel k<const R: int = 232>(x: Tensor<i32, N:1, gmem>) launch(grid = (1), block = (384)) {";

fn codes(src: &str) -> Vec<&'static str> {
    run(src).1.diagnostics.iter().map(|d| d.code).collect()
}

/// The top-level role statements of the kernel: their arguments' ids and their binding id.
fn role_parts(out: &crate::CheckOutput) -> Vec<(Vec<ast::NodeId>, ast::NodeId)> {
    let m = out.program.module(ModuleId::ROOT).expect("the root module");
    let Some(ast::ItemKind::Kernel(f)) = m.ast.items.first().map(|i| &i.kind) else { panic!("no kernel") };
    f.body
        .stmts
        .iter()
        .filter_map(|s| match &s.kind {
            ast::StmtKind::Role { id, args, .. } => Some((args.iter().map(|a| a.value.id).collect(), *id)),
            _ => None,
        })
        .collect()
}

#[test]
fn role_arguments_are_recorded_constants_and_the_rank_is_an_int() {
    let src = format!(
        "{HEAD}
    role producer(registers = 40) {{ }}
    role consumer(warpgroups = 1 + 1, registers = R) as wg {{ x[wg] = wg; }}
}}"
    );
    let (map, out) = run_with(&src, &[("R", 224)]);
    assert!(out.diagnostics.is_empty(), "{}", rendered(&map, &out));
    let parts = role_parts(&out);
    let values: Vec<Vec<Option<i64>>> =
        parts.iter().map(|(args, _)| args.iter().map(|&a| out.program.value_of(ModuleId::ROOT, a)).collect()).collect();
    assert_eq!(values, [vec![Some(40)], vec![Some(2), Some(224)]]);
    assert_eq!(out.program.type_of(ModuleId::ROOT, parts[1].1), &Type::INT);
}

#[test]
fn role_arguments_must_be_known_integers_with_known_names() {
    let bad = |args: &str| codes(&format!("{HEAD}\n    role p({args}) {{ }}\n}}"));
    // A run-time value.
    assert_eq!(bad("warpgroups = N"), ["E0124"]);
    assert_eq!(bad("registers = thread_idx.x"), ["E0124"]);
    // Not an integer.
    assert_eq!(bad("registers = 1.5"), ["E0109"]);
    // A misspelled name, and a name given twice.
    assert_eq!(bad("warpgroup = 2"), ["E0139"]);
    assert_eq!(bad("registers = 40, registers = 48"), ["E0104"]);
}

#[test]
fn the_rank_is_scoped_to_its_role_and_immutable() {
    assert_eq!(codes(&format!("{HEAD}\n    role p as wg {{ }}\n    x[0] = wg;\n}}")), ["E0105"]);
    assert_eq!(codes(&format!("{HEAD}\n    role p as wg {{ wg = 1; }}\n}}")), ["E0106"]);
}

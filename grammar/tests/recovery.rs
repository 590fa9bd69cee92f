//! Error recovery: one run reports every error it can, and the tree keeps the parts that parsed.

use crate::common::{body, errors_of};
use cutec_grammar::ast::{ItemKind, StmtKind};
use cutec_grammar::parse;

#[test]
fn three_statement_errors_are_three_errors() {
    let src = "fn f() {\n    let a = 1 +;\n    let b = (2;\n    let = 3;\n    let ok = 4;\n}\n";
    let (stmts, errors) = body(src);
    assert_eq!(errors.len(), 3, "{errors:#?}");
    // The good statement after the broken ones survives.
    assert!(stmts.iter().any(|s| matches!(&s.kind, StmtKind::Let { name, .. } if name.name == "ok")), "{stmts:#?}");
    assert!(stmts.iter().any(|s| matches!(s.kind, StmtKind::Error)));
}

#[test]
fn argument_and_parameter_lists_recover_at_commas() {
    let e = errors_of("fn f(a: int, b: , c: int) { g(a, +, c); h(1); }");
    assert_eq!(e.len(), 2, "{e:#?}");
    let (module, _) = parse("fn f(a: int, b: , c: int) { g(a, +, c); }");
    let ItemKind::Fn(f) = &module.items[0].kind else { panic!("not a fn") };
    let names: Vec<_> = f.params.iter().map(|p| p.name.name.as_str()).collect();
    assert_eq!(names, ["a", "c"]);
}

#[test]
fn items_recover() {
    let src = "const A: int = ;\nfn f() { }\n+ + +\nkernel k() launch(grid = (1), block = (1)) { }\n";
    let (module, errors) = parse(src);
    assert_eq!(errors.len(), 2, "{errors:#?}");
    let kinds: Vec<_> = module.items.iter().map(|i| std::mem::discriminant(&i.kind)).collect();
    assert!(kinds.len() >= 3, "{:#?}", module.items);
    assert!(module.items.iter().any(|i| matches!(&i.kind, ItemKind::Kernel(f) if f.name.name == "k")));
}

#[test]
fn broken_headers_skip_to_the_block() {
    let e = errors_of("fn f() { if a < { g(); } while ) { h(); } for i 0..4 { } for j in 0.. { } k(); }");
    assert_eq!(e.len(), 4, "{e:#?}");
}

#[test]
fn statement_running_into_the_closing_brace() {
    let (stmts, errors) = body("fn f() { g(a, }\nfn h() { }");
    assert_eq!(errors.len(), 1, "{errors:#?}");
    assert!(matches!(stmts.last().map(|s| &s.kind), Some(StmtKind::Error)));
}

#[test]
fn unclosed_and_stray_delimiters() {
    let e = errors_of("fn f() {\n    g(1);\n");
    assert_eq!(e.len(), 1, "{e:#?}");
    assert!(e[0].contains("E0022"), "{e:#?}");
    let e = errors_of("fn f() { g(1)); }");
    assert_eq!(e.len(), 1, "{e:#?}");
    assert!(e[0].contains("E0023"), "{e:#?}");
    let e = errors_of("fn f() { let x = [1; }");
    assert!(!e.is_empty());
}

#[test]
fn empty_and_trivial_files() {
    assert!(errors_of("").is_empty());
    assert!(errors_of("// only a comment\n").is_empty());
    assert!(errors_of("//! only docs\n").is_empty());
    assert_eq!(errors_of("/// dangling doc\n").len(), 1);
}

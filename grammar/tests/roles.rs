//! `role NAME(warpgroups = N, registers = R) as RANK { .. }`: its parts, its defaults, its errors.

use crate::common::{body, errors_of, sexpr};
use cutec_grammar::ast::StmtKind;

/// A role statement as `(name, [(arg, value)], rank, statements in the body)`.
type RoleParts = (String, Vec<(String, String)>, Option<String>, usize);

/// The role statements of `f`'s body.
fn roles(src: &str) -> Vec<RoleParts> {
    let (stmts, errors) = body(src);
    assert!(errors.is_empty(), "{errors:#?}");
    stmts
        .iter()
        .filter_map(|s| match &s.kind {
            StmtKind::Role { name, args, rank, body, .. } => Some((
                name.name.clone(),
                args.iter().map(|a| (a.name.name.clone(), sexpr(&a.value))).collect(),
                rank.as_ref().map(|r| r.name.clone()),
                body.stmts.len(),
            )),
            _ => None,
        })
        .collect()
}

#[test]
fn a_role_has_a_name_named_arguments_a_rank_and_a_body() {
    let r = roles(
        "fn f() {
            role producer(registers = 40) { g(); }
            role consumer(warpgroups = 2, registers = 8 * 29) as wg { g(wg); h(); }
            role epilogue { }
            role tail() as t { }
        }",
    );
    let s = |x: &str| x.to_string();
    assert_eq!(
        r,
        [
            (s("producer"), vec![(s("registers"), s("40"))], None, 1),
            (s("consumer"), vec![(s("warpgroups"), s("2")), (s("registers"), s("(* 8 29)"))], Some(s("wg")), 2),
            (s("epilogue"), vec![], None, 0),
            (s("tail"), vec![], Some(s("t")), 0),
        ]
    );
}

#[test]
fn role_is_a_keyword_and_a_broken_role_is_one_error() {
    // `role` cannot name a variable.
    let e = errors_of("fn f() { let role = 1; }");
    assert_eq!(e.len(), 1, "{e:#?}");
    assert!(e[0].contains("E0024"), "{e:#?}");
    // A broken argument list is reported once and the rest of the body survives.
    let (stmts, errors) = body("fn f() { role p(warpgroups = ) { g(); } h(); }");
    assert_eq!(errors.len(), 1, "{errors:#?}");
    assert!(stmts.iter().any(|s| matches!(&s.kind, StmtKind::Role { name, .. } if name.name == "p")), "{stmts:#?}");
    // A role needs a name and a body.
    assert_eq!(errors_of("fn f() { role { } }").len(), 1);
    assert_eq!(errors_of("fn f() { role p; }").len(), 1);
}

//! Every example and standard-library module, through every stage that prints: snapshots pin each stage's text.

use cutec_tests::repo_relative;

#[test]
fn examples_check_without_diagnostics() {
    let files = cutec_tests::cute_files("examples");
    assert!(files.len() >= 8, "expected the eight examples, found {files:?}");
    for path in files {
        let src = std::fs::read_to_string(&path).expect("example is readable");
        let checked = cutec::check_source(&repo_relative(&path), &src, &[]);
        let rendered = cutec_diagnostics::render_plain(&checked.map, checked.diagnostics());
        assert!(checked.diagnostics().is_empty(), "{} has diagnostics:\n{rendered}", repo_relative(&path));
    }
}

#[test]
fn tokens() {
    insta::glob!("../..", "{examples,stdlib}/*.cute", |path| {
        let src = std::fs::read_to_string(path).expect("readable");
        insta::assert_snapshot!(cutec::emit_tokens(&src));
    });
}

#[test]
fn ast() {
    insta::glob!("../..", "{examples,stdlib}/*.cute", |path| {
        let src = std::fs::read_to_string(path).expect("readable");
        insta::assert_snapshot!(cutec::emit_ast(&src));
    });
}

//! `tests/ui/*.cute`: wrong programs and their rendered diagnostics (no colour), one snapshot each.
//! The first line of each file is a comment saying what is wrong with it. Programs the checker accepts are built
//! (lowering, passes, codegen), and must fail there (`build_*.cute`: E03xx), except `warn_*.cute`, which must
//! build with warnings (the snapshot holds them).

use cutec_tests::repo_relative;

#[test]
fn ui_diagnostics() {
    let files = cutec_tests::cute_files("tests/ui");
    assert!(files.len() >= 40, "expected at least 40 wrong programs in tests/ui, found {}", files.len());
    let tables = cutec::code_tables();
    insta::glob!("../ui", "*.cute", |path| {
        let name = repo_relative(path);
        let src = std::fs::read_to_string(path).expect("readable");
        let checked = cutec::check_source(&name, &src, &[]);
        let (map, diags) = if checked.has_errors() {
            let diags = checked.diagnostics().to_vec();
            (checked.map, diags)
        } else {
            match cutec::build::build_source(&name, &src, &cutec::build::BuildOptions::default()) {
                Err(f) => (f.map, f.diagnostics),
                Ok((checked, art)) if name.contains("/warn_") => (checked.map, art.warnings),
                Ok(_) => panic!("{name} must be rejected"),
            }
        };
        for d in &diags {
            assert!(cutec_diagnostics::explain(&tables, d.code).is_some(), "{name}: {} has no explanation", d.code);
            let primary = d.primary().unwrap_or_else(|| panic!("{name}: {} has no primary label", d.code));
            assert!(primary.span.end as usize <= map.source(primary.file).len(), "{name}: span past the end");
            // The IR's names of run-time values (`%5`) mean nothing to a user: no message or label shows one.
            let texts = std::iter::once(&d.message).chain(d.labels.iter().map(|l| &l.message)).chain(&d.notes);
            for text in texts {
                let ir_name = text.as_bytes().windows(2).any(|w| w[0] == b'%' && w[1].is_ascii_digit());
                assert!(!ir_name, "{name}: an IR value name in `{text}`");
            }
        }
        insta::assert_snapshot!(cutec_diagnostics::render_plain(&map, &diags));
        assert!(!diags.is_empty(), "{name} must be rejected, or warned about");
    });
    let _ = files;
}

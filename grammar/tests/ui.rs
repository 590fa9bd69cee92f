//! The `tests/ui/syntax_*.cute` programs: each has one problem (or as many as its name says), and the parser
//! reports exactly that many errors, every one with a primary label inside the file.

use crate::common::{cute_files, describe};
use cutec_diagnostics::{SourceMap, render_plain};
use cutec_grammar::parse;

fn expected_count(name: &str) -> usize {
    match name {
        n if n.contains("two_errors") => 2,
        n if n.contains("three_errors") => 3,
        _ => 1,
    }
}

#[test]
fn each_syntax_ui_file_reports_its_errors() {
    let files: Vec<_> = cute_files("tests/ui")
        .into_iter()
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("syntax_")))
        .collect();
    assert!(files.len() >= 18, "expected at least 18 syntax ui files, found {}", files.len());
    let mut failures = Vec::new();
    for path in &files {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_string();
        let src = std::fs::read_to_string(path).unwrap_or_default();
        assert!(src.starts_with("//"), "{name}: the first line must say what is wrong");
        let (_, errors) = parse(&src);
        let mut map = SourceMap::new();
        let file = map.add(name.clone(), src.clone());
        let diags: Vec<_> = errors.iter().map(|e| e.to_diagnostic(file)).collect();
        for e in &errors {
            assert!(e.span.end as usize <= src.len(), "{name}: span {:?} past the end", e.span);
        }
        if std::env::var_os("PRINT_DIAG").is_some() {
            println!("==== {name}\n{}", render_plain(&map, &diags));
        }
        if errors.len() != expected_count(&name) {
            failures.push(format!("{name}: {:#?}", describe(&errors)));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_code_is_explained_once() {
    let mut seen = std::collections::HashSet::new();
    for info in cutec_grammar::CODES {
        assert!(seen.insert(info.code), "{} listed twice", info.code);
        let n: u32 = info.code.strip_prefix('E').and_then(|n| n.parse().ok()).unwrap_or(0);
        assert!((1..=99).contains(&n), "{} outside E0001..E0099", info.code);
        assert!(!info.title.is_empty() && info.explanation.len() > 80, "{}: explanation too short", info.code);
        assert!(info.explanation.contains("\n    "), "{}: no indented example", info.code);
    }
    // Every code the ui programs produce is in the table.
    for path in cute_files("tests/ui") {
        let src = std::fs::read_to_string(&path).unwrap_or_default();
        for e in parse(&src).1 {
            assert!(seen.contains(e.code()), "{}: {} is not in CODES", path.display(), e.code());
        }
    }
}

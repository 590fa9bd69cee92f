//! Unit tests of the checker over small programs, the examples and the stdlib.

use crate::{CheckOutput, check};
use cutec_diagnostics::{ColorMode, SourceMap, render_text};
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

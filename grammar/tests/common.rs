//! Helpers shared by the test modules.

use cutec_grammar::{SyntaxError, parse};
use std::path::{Path, PathBuf};

/// The repository root (the grammar crate lives one level below it).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().map(Path::to_path_buf).unwrap_or_default()
}

/// Every `.cute` file in `dir` (relative to the repository root), sorted.
pub fn cute_files(dir: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(repo_root().join(dir))
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.extension().is_some_and(|x| x == "cute")).collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

/// Error messages with their spans, for readable assertion failures.
pub fn describe(errors: &[SyntaxError]) -> Vec<String> {
    errors.iter().map(|e| format!("{}..{} {} {}", e.span.start, e.span.end, e.code(), e.message())).collect()
}

/// Parses `src` and returns the errors as text.
pub fn errors_of(src: &str) -> Vec<String> {
    describe(&parse(src).1)
}

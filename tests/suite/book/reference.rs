//! The generated pages of the book. Each committed page must be what its generator writes today; with
//! `CUTEC_BLESS=1` the test writes the page instead (then review the diff and commit it).

use super::support::support_markdown;
use cutec_sema::reference::{REGENERATE, builtins_markdown, scalar_tables_markdown};
use cutec_tests::repo_root;

/// Compares the committed page `relative` (to the repository root) with `generated`, or writes it under
/// `CUTEC_BLESS=1`.
fn compare_or_bless(relative: &str, generated: &str) {
    let path = repo_root().join(relative);
    if std::env::var_os("CUTEC_BLESS").is_some() {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).expect("the book's folder is writable");
        }
        std::fs::write(&path, generated).expect("the page is writable");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    if committed == generated {
        return;
    }
    let first = committed.lines().zip(generated.lines()).position(|(c, g)| c != g);
    let line = first.unwrap_or_else(|| committed.lines().count().min(generated.lines().count()));
    let shown = |text: &str| text.lines().nth(line).unwrap_or("(end of file)").to_owned();
    panic!(
        "{relative} is not what its generator writes; first difference at line {}:\n  committed: {}\n  generated: \
         {}\nRegenerate it with `{REGENERATE}` and review the diff.",
        line + 1,
        shown(&committed),
        shown(generated),
    );
}

#[test]
fn builtin_reference_is_generated_from_the_table() {
    compare_or_bless("book/src/reference/builtins.md", &builtins_markdown());
}

#[test]
fn scalar_tables_are_generated_from_the_checker() {
    compare_or_bless("book/src/reference/scalar-tables.md", &scalar_tables_markdown());
}

#[test]
fn support_page_is_generated_from_builds() {
    compare_or_bless("book/src/reference/support.md", &support_markdown());
}

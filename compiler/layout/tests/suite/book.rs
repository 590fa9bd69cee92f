//! The book's layout chapters: every `cute-layout` block evaluates as written, and every picture is fresh.

use std::path::PathBuf;

use cutec_layout::{book_pictures, check_doc_block, doc_blocks};

fn book() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../book/src")
}

#[test]
fn chapters_examples_evaluate_as_written() {
    let mut failures = Vec::new();
    for chapter in ["layouts.md", "layout-algebra.md"] {
        let text = std::fs::read_to_string(book().join(chapter)).unwrap_or_else(|e| panic!("{chapter}: {e}"));
        let blocks = doc_blocks(&text);
        assert!(blocks.len() >= 5, "{chapter} has only {} cute-layout blocks", blocks.len());
        for (line, block) in blocks {
            if let Err(e) = check_doc_block(&block) {
                failures.push(format!("{chapter}:{line}:\n{e}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn pictures_are_fresh() {
    let mut stale = Vec::new();
    for (file, svg) in book_pictures().unwrap() {
        let path = book().join("img").join(&file);
        if std::fs::read_to_string(&path).ok().as_deref() != Some(svg.as_str()) {
            stale.push(file);
        }
    }
    assert!(
        stale.is_empty(),
        "stale pictures {stale:?}: run `cargo run -p cutec-layout --example book_pictures` and commit book/src/img"
    );
}

#[test]
fn doc_block_checker_reports_mismatches() {
    assert!(check_doc_block(">>> size((4,8))\n32\n>>> foo()\nerror: eval: unknown operation `foo`\n").is_ok());
    let err = check_doc_block(">>> size((4,8))\n31\n").unwrap_err();
    assert!(err.contains("expected:\n31\nactual:\n32"), "{err}");
}

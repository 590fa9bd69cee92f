//! Every ```cute block in the book is compiled. A block whose info string says `fail` (```` ```cute,fail ````)
//! must be rejected, by the checker or else by the build, and a code in its info string
//! (```` ```cute,fail,E0112 ````) must be among the errors; every other block must check without diagnostics,
//! and one that says `build` (```` ```cute,build ````) must also build to PTX. mdBook's `{{#include PATH}}` lines are expanded first, from the page's folder, as mdBook does.
//! Every ```cute-layout block (`>>> EXPR` lines, each followed by its expected output) is evaluated by the layout
//! algebra.

mod reference;
mod support;

use cutec_tests::{repo_relative, repo_root};

/// (info string, first line number, code) of each fenced block of a Markdown file.
fn fenced_blocks(text: &str) -> Vec<(String, usize, String)> {
    let mut blocks = Vec::new();
    let mut current: Option<(String, usize, String)> = None;
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        if let Some(rest) = trimmed.strip_prefix("```") {
            match current.take() {
                Some(block) => blocks.push(block),
                None => current = Some((rest.trim().to_string(), i + 2, String::new())),
            }
        } else if let Some((_, _, code)) = current.as_mut() {
            code.push_str(line);
            code.push('\n');
        }
    }
    blocks
}

/// `code` with each `{{#include PATH}}` line replaced by the file PATH, relative to `page`'s folder.
fn expand_includes(page: &std::path::Path, code: &str) -> String {
    let mut out = String::new();
    for line in code.lines() {
        match line.trim().strip_prefix("{{#include ").and_then(|r| r.strip_suffix("}}")) {
            Some(path) => {
                let file = page.parent().expect("a page has a folder").join(path.trim());
                let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
                out.push_str(&text);
            }
            None => {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    out
}

fn book_pages() -> Vec<std::path::PathBuf> {
    let mut pages = Vec::new();
    let mut stack = vec![repo_root().join("book/src")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let p = entry.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|e| e == "md") {
                pages.push(p);
            }
        }
    }
    pages.sort();
    pages
}

#[test]
fn book_cute_blocks_compile() {
    let mut checked_blocks = 0;
    for page in book_pages() {
        let text = std::fs::read_to_string(&page).expect("readable");
        for (info, line, code) in fenced_blocks(&text) {
            let mut words = info.split([',', ' ']).filter(|w| !w.is_empty());
            let lang = words.next();
            if lang == Some("cute-layout") {
                // `>>> EXPR` lines followed by the expected output, evaluated by the layout algebra.
                let name = format!("{}:{line}", repo_relative(&page));
                if let Err(e) = cutec_layout::check_doc_block(&code) {
                    panic!("{name}: layout example does not evaluate as written:\n{e}");
                }
                checked_blocks += 1;
                continue;
            }
            if lang != Some("cute") {
                continue;
            }
            let words: Vec<&str> = words.collect();
            let must_fail = words.contains(&"fail");
            let expected_codes =
                words.iter().filter(|w| w.starts_with('E') && w[1..].bytes().all(|c| c.is_ascii_digit()));
            let name = format!("{}:{line}", repo_relative(&page));
            let code = expand_includes(&page, &code);
            let checked = cutec::check_source(&name, &code, &[]);
            let rendered = cutec_diagnostics::render_plain(&checked.map, checked.diagnostics());
            if must_fail {
                // Rejected by the checker, or (a program the checker accepts) by the build: E03xx.
                let (errors, rendered) = if checked.has_errors() {
                    (checked.diagnostics().to_vec(), rendered)
                } else {
                    match cutec::build::build_source(&name, &code, &cutec::build::BuildOptions::default()) {
                        Err(f) => {
                            let text = cutec_diagnostics::render_plain(&f.map, &f.diagnostics);
                            (f.diagnostics, text)
                        }
                        Ok(_) => panic!("{name}: block marked `fail` was accepted"),
                    }
                };
                for code in expected_codes {
                    let found = errors.iter().any(|d| d.is_error() && d.code == *code);
                    assert!(found, "{name}: block marked `{code}` does not report it:\n{rendered}");
                }
                checked_blocks += 1;
                continue;
            }
            assert!(checked.diagnostics().is_empty(), "{name}: block does not check:\n{rendered}");
            if words.contains(&"build") {
                let options = cutec::build::BuildOptions::default();
                if let Err(f) = cutec::build::build_source(&name, &code, &options) {
                    panic!(
                        "{name}: block marked `build` does not build:\n{}",
                        cutec_diagnostics::render_plain(&f.map, &f.diagnostics)
                    );
                }
            }
            checked_blocks += 1;
        }
    }
    assert!(checked_blocks >= 5, "the book should hold at least five cute listings, found {checked_blocks}");
}

//! The page "What works today" (`book/src/reference/support.md`): for every builtin and every example, what the
//! stages of the compiler do with it, found by running them.
//!
//! - parse and check: `cutec::check_source`;
//! - build (lowering, the pass pipeline, LLVM NVPTX codegen): `cutec::build::build_source`, which answers E0300
//!   for what lowering does not support yet;
//! - the H200: the examples the GPU harness builds (`scripts/gpu/build.sh`) and runs against PyTorch
//!   (`scripts/gpu/first_light.sh`), and for a builtin, those of them that use it.

use cutec::build::{BuildOptions, build_source};
use cutec_sema::reference::{BuiltinGroup, builtin_example, generated_note};
use cutec_sema::{BUILTINS, Builtin, Resolution};
use cutec_tests::{cute_files, repo_relative, repo_root};
use std::fmt::Write;

/// What a stage made of a program: `✓`, or the code and message of its first error.
fn outcome(diagnostics: &[cutec_diagnostics::Diagnostic]) -> String {
    match diagnostics.iter().find(|d| d.is_error()) {
        None => "✓".to_owned(),
        Some(d) => format!("{}: {}", d.code, d.message.replace('|', "\\|")),
    }
}

/// The outcome of `cutec build` on `source`.
fn build_outcome(name: &str, source: &str) -> String {
    build_outcome_with(name, source, Vec::new())
}

/// The const generics without a default that examples need, as the GPU harness (`scripts/gpu/build.sh`) sets
/// them (a test checks that it does).
const EXAMPLE_DEFINES: &[(&str, &str, i64)] =
    &[("rmsnorm", "N", 4096), ("softmax", "N", 4096), ("softmax_warp", "N", 1024)];

fn defines_of(stem: &str) -> Vec<(String, cutec::DefineValue)> {
    EXAMPLE_DEFINES
        .iter()
        .filter(|(s, _, _)| *s == stem)
        .map(|(_, name, v)| ((*name).to_owned(), (*v).into()))
        .collect()
}

/// The outcome of `cutec build -D ...` on `source`.
fn build_outcome_with(name: &str, source: &str, defines: Vec<(String, cutec::DefineValue)>) -> String {
    let options = BuildOptions { module_file: "module.ptx".to_owned(), defines, ..BuildOptions::default() };
    match build_source(name, source, &options) {
        Ok(_) => "✓".to_owned(),
        Err(failure) => outcome(&failure.diagnostics),
    }
}

/// Whether the GPU harness builds and runs the example `stem` (`examples/{stem}.cute`).
fn in_gpu_harness(harness: &str, stem: &str) -> bool {
    harness.contains(&format!("examples/{stem}.cute")) || harness.contains(&format!(" {stem}:"))
}

/// The builtins a program uses, in any of its modules.
fn builtins_used(source: &str) -> Vec<Builtin> {
    let checked = cutec::check_source("example.cute", source, &[]);
    let mut used: Vec<Builtin> = checked
        .output
        .program
        .modules
        .iter()
        .flat_map(|m| m.resolutions.iter().flatten())
        .filter_map(|r| match r {
            Resolution::Builtin(b) => Some(*b),
            _ => None,
        })
        .collect();
    used.sort();
    used.dedup();
    used
}

pub fn support_markdown() -> String {
    let harness = std::fs::read_to_string(repo_root().join("scripts/gpu/build.sh")).unwrap_or_default();
    let examples: Vec<(String, String)> = cute_files("examples")
        .iter()
        .map(|p| {
            let stem = p.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
            (stem, std::fs::read_to_string(p).unwrap_or_default())
        })
        .collect();
    let on_gpu: Vec<(&str, Vec<Builtin>)> = examples
        .iter()
        .filter(|(stem, _)| in_gpu_harness(&harness, stem))
        .map(|(stem, source)| (stem.as_str(), builtins_used(source)))
        .collect();

    let mut out = String::from("# What works today\n\n");
    out.push_str(&generated_note("tests/suite/book/support.rs", "running the compiler"));
    out.push_str(
        "\nThe front end (parsing and checking) accepts the whole language; the back end (lowering to the IR, the \
         pass pipeline and LLVM NVPTX code generation, what `cutec build` runs) does not compile everything yet, and \
         says so with E0300 (\"not supported yet\") at the construct it cannot lower. This page is written by \
         running the compiler: the book test rebuilds it and fails when it no longer matches.\n\n\
         A ✓ means the stage accepts the program; otherwise the cell holds its first error. **H200** names the \
         examples that the GPU harness builds (`scripts/gpu/build.sh`) and runs against PyTorch on an H200 \
         (`scripts/gpu/first_light.sh`; the results are in `docs/perf-notes.md`).\n\n",
    );

    out.push_str("## Examples\n\n| example | parse | check | build | H200 |\n|---|---|---|---|---|\n");
    for (path, (stem, source)) in cute_files("examples").iter().zip(&examples) {
        let name = repo_relative(path);
        let (_, _, syntax) = cutec::parse_source(&name, source);
        let checked = cutec::check_source(&name, source, &[]);
        let defines = defines_of(stem);
        let flags: Vec<String> = defines.iter().map(|(n, v)| format!("`-D {n}={v}`")).collect();
        let build = if checked.has_errors() {
            "—".to_owned()
        } else if flags.is_empty() {
            build_outcome(&name, source)
        } else {
            format!("{} (with {})", build_outcome_with(&name, source, defines), flags.join(" "))
        };
        let gpu = if in_gpu_harness(&harness, stem) { "✓" } else { "" };
        let _ =
            writeln!(out, "| `{name}` | {} | {} | {build} | {gpu} |", outcome(&syntax), outcome(checked.diagnostics()));
    }

    out.push_str(
        "\n## Scalar types\n\nWhat `cutec build` makes of a kernel that copies one element of each type per thread \
         (`y[thread_idx.x] = x[thread_idx.x];` with `x, y: Tensor<T, 128:1, gmem>`).\n\n| type | build |\n|---|---|\n",
    );
    for scalar in cutec_sema::Scalar::ALL {
        let source = format!(
            "kernel copy_{scalar}(x: Tensor<{scalar}, 128:1, gmem>, y: Tensor<{scalar}, 128:1, gmem>) launch(grid = \
             (1), block = (128)) {{\n    y[thread_idx.x] = x[thread_idx.x];\n}}\n"
        );
        let name = format!("copy_{scalar}.cute");
        let checked = cutec::check_source(&name, &source, &[]);
        let build = if checked.has_errors() { outcome(checked.diagnostics()) } else { build_outcome(&name, &source) };
        let _ = writeln!(out, "| `{scalar}` | {build} |");
    }
    out.push_str(
        "\n## Builtins\n\nEach builtin's example on the [builtin reference](builtins.md) parses and checks (the \
         book test compiles it). **build** is what `cutec build` makes of that example; **H200** lists the examples \
         run on the H200 that use the builtin.\n",
    );
    for group in BuiltinGroup::ALL {
        let _ = write!(out, "\n### {}\n\n| builtin | build | H200 |\n|---|---|---|\n", group.title());
        for b in BUILTINS.iter().filter(|b| BuiltinGroup::of(b.builtin) == group) {
            let build = build_outcome(&format!("uses_{}.cute", b.name), &builtin_example(b.builtin));
            let users: Vec<String> =
                on_gpu.iter().filter(|(_, used)| used.contains(&b.builtin)).map(|(s, _)| format!("`{s}`")).collect();
            let _ =
                writeln!(out, "| [`{}`](builtins.md#{}) | {build} | {} |", b.name, anchor(b.name), users.join(", "));
        }
    }
    out
}

#[test]
fn example_defines_are_the_gpu_harness_s() {
    let harness = std::fs::read_to_string(repo_root().join("scripts/gpu/build.sh")).unwrap_or_default();
    for (stem, name, value) in EXAMPLE_DEFINES {
        assert!(
            harness.contains(&format!(" {stem}:{value}")) && harness.contains(&format!("-D {name}=$n")),
            "scripts/gpu/build.sh no longer builds {stem} with -D {name}={value}; update EXAMPLE_DEFINES"
        );
    }
}

/// mdBook's id of the heading `` `name` ``: lower case, `_` kept.
fn anchor(name: &str) -> String {
    name.to_ascii_lowercase()
}

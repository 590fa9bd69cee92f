//! The `cutec` binary as users run it: exit codes, output formats, and files.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod resources;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn cutec(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cutec")).args(args).current_dir(root()).output().expect("cutec runs")
}

fn code(o: &Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

#[test]
fn check_accepts_every_example() {
    let mut args = vec!["check"];
    let files: Vec<String> = std::fs::read_dir(root().join("examples"))
        .expect("examples/")
        .filter_map(|e| e.ok())
        .map(|e| format!("examples/{}", e.file_name().to_string_lossy()))
        .filter(|f| f.ends_with(".cute"))
        .collect();
    args.extend(files.iter().map(String::as_str));
    let o = cutec(&args);
    assert_eq!(code(&o), 0, "stderr:\n{}", String::from_utf8_lossy(&o.stderr));
    assert!(o.stderr.is_empty(), "no diagnostics expected: {}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn errors_exit_1_with_located_diagnostics() {
    let dir = std::env::temp_dir().join(format!("cutec-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let bad = dir.join("bad.cute");
    std::fs::write(&bad, "kernel k() launch(grid = (1), block = (32)) {\n    let x = undefined_name;\n}\n")
        .expect("write");
    let o = cutec(&["check", "--color=never", bad.to_str().expect("utf-8 path")]);
    assert_eq!(code(&o), 1);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("error[E") && err.contains("bad.cute:2:"), "got:\n{err}");
    assert!(!err.contains('\u{1b}'), "no colour when not on a terminal");

    let o = cutec(&["check", "--error-format=json", bad.to_str().expect("utf-8 path")]);
    assert_eq!(code(&o), 1);
    let out = String::from_utf8_lossy(&o.stderr);
    let first = out.lines().next().expect("one JSON line per diagnostic");
    assert!(first.starts_with('{') && first.contains("\"code\":\"E") && first.contains("\"line\":2"), "{first}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn missing_file_is_an_error_not_a_panic() {
    let o = cutec(&["check", "does/not/exist.cute"]);
    assert_eq!(code(&o), 1);
    assert!(String::from_utf8_lossy(&o.stderr).contains("E0400"));
}

#[test]
fn bad_usage_exits_2() {
    assert_eq!(code(&cutec(&[])), 2);
    assert_eq!(code(&cutec(&["frobnicate"])), 2);
    assert_eq!(code(&cutec(&["check"])), 2);
    assert_eq!(code(&cutec(&["check", "-D", "N", "examples/copy.cute"])), 2);
    assert_eq!(code(&cutec(&["explain", "E9999"])), 2);
}

#[test]
fn version_and_explain() {
    let o = cutec(&["--version"]);
    assert_eq!(code(&o), 0);
    assert!(String::from_utf8_lossy(&o.stdout).starts_with("cutec "));
    let o = cutec(&["explain", "E0400"]);
    assert_eq!(code(&o), 0);
    assert!(String::from_utf8_lossy(&o.stdout).starts_with("E0400: "));
}

#[test]
fn build_emits_tokens_and_ast() {
    let o = cutec(&["build", "examples/copy.cute", "--emit", "ast"]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("copy"));
    let dir = std::env::temp_dir().join(format!("cutec-build-{}", std::process::id()));
    let o = cutec(&["build", "examples/copy.cute", "--emit", "tokens,ast", "-o", dir.to_str().expect("utf-8")]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    assert!(dir.join("copy.tokens").is_file() && dir.join("copy.ast").is_file());
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn layout_eval_prints_cute_notation() {
    let o = cutec(&["layout", "--eval", "composition((6,2):(8,2), (4,3):(3,1))"]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), "((2,2),3):((24,2),8)");
    let o = cutec(&["layout", "size((4,8):(8,1))"]);
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), "32");
    let o = cutec(&["layout", "--eval", "composition((4,4):(1,8), 5:3)"]);
    assert_eq!(code(&o), 1);
    assert!(String::from_utf8_lossy(&o.stderr).starts_with("error: "));
}

#[test]
fn layout_eval_file_answers_one_line_per_line() {
    let dir = std::env::temp_dir().join(format!("cutec-eval-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let input = dir.join("exprs.txt");
    std::fs::write(&input, "coalesce((2,4):(1,2))\nnot a layout (\ncosize(4:2)\n").expect("write");
    let o = cutec(&["layout", "--eval-file", input.to_str().expect("utf-8")]);
    assert_eq!(code(&o), 0);
    let out = String::from_utf8_lossy(&o.stdout);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "{out}");
    assert_eq!(lines[0], "8:1");
    assert!(lines[1].starts_with("error: "));
    assert_eq!(lines[2], "7");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn layout_table_and_svg() {
    let o = cutec(&["layout", "(2,3):(3,1)", "--table"]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let table = String::from_utf8_lossy(&o.stdout);
    assert!(table.contains("+---") && table.contains("| 5 |"), "{table}");
    let dir = std::env::temp_dir().join(format!("cutec-svg-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let svg = dir.join("tv.svg");
    let o = cutec(&["layout", "(4,2):(2,1)", "--svg", svg.to_str().expect("utf-8"), "--tv", "2,4"]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(&svg).expect("svg written");
    assert!(text.starts_with("<svg") || text.contains("<svg"), "not an svg");
    assert!(text.contains("T0") && text.contains("V1"), "TV cells are labelled");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn run_compiles_a_cute_file_first_and_reports_its_errors() {
    // Without -D N=..., softmax cannot be compiled: the error comes before any GPU is touched.
    let o = cutec(&["run", "examples/softmax.cute", "--kernel", "softmax", "--dim", "M=4", "--color=never"]);
    assert_eq!(code(&o), 1);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("error[E0305]") && err.contains("-D N="), "{err}");
}

#[test]
fn build_writes_ptx_and_manifest_with_a_summary() {
    let dir = std::env::temp_dir().join(format!("cutec-ptx-{}", std::process::id()));
    let o = cutec(&["build", "examples/softmax.cute", "-D", "N=1024", "-o", dir.to_str().expect("utf-8")]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let ptx = std::fs::read_to_string(dir.join("softmax.ptx")).expect("PTX written");
    assert!(ptx.contains(".entry softmax") && ptx.contains(".target sm_90a"), "{ptx}");
    let manifest = std::fs::read_to_string(dir.join("softmax.json")).expect("manifest written");
    assert!(manifest.contains("\"module\": \"softmax.ptx\""), "{manifest}");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("kernel softmax(") && out.contains("launch: grid = (M), block = (256)"), "{out}");
    // One stage and `-o DIR/` still means a directory.
    let o = cutec(&["build", "examples/copy.cute", "--emit", "ptx", "-o", &format!("{}/", dir.display())]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    assert!(dir.join("copy.ptx").is_file());
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(code(&cutec(&["build", "--print-passes"])), 0);
    let o = cutec(&["build", "examples/copy.cute", "--emit", "ir", "--dump-after", "fold"]);
    assert_eq!(code(&o), 2, "a mistyped pass is bad usage");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("no pass named `fold`") && err.contains("did you mean `fold-constants`"), "{err}");
    let o = cutec(&["build", "examples/copy.cute", "--emit", "ir", "--dump-after", "dce", "-o", "-"]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stderr).contains("kernel @copy"), "the IR after dce goes to stderr");
}

#[test]
fn outputs_never_overwrite_the_input() {
    let dir = std::env::temp_dir().join(format!("cutec-cli-input-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let src = dir.join("copy.cute");
    std::fs::copy(root().join("examples/copy.cute"), &src).expect("copy the example");
    let before = std::fs::read(&src).expect("read");
    let s = src.to_str().expect("utf-8 path");
    // `-o` naming the input itself, and a directory where the input would be one of the outputs.
    for (args, says) in [
        (vec!["build", s, "-o", s, "--emit", "ptx"], "is the input"),
        (vec!["build", s, "--emit", "ptx,tokens", "-o", s], "is a file"),
    ] {
        let o = cutec(&args);
        assert_eq!(code(&o), 2, "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
        assert!(String::from_utf8_lossy(&o.stderr).contains(says), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let renamed = dir.join("copy.ptx");
    std::fs::rename(&src, &renamed).expect("rename");
    let o = cutec(&["build", renamed.to_str().expect("utf-8"), "--emit", "ptx", "-o", dir.to_str().expect("utf-8")]);
    assert_eq!(code(&o), 2, "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(std::fs::read(&renamed).expect("read"), before, "the input is unchanged");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn usage_mistakes_exit_2() {
    // Several stages to standard output would run together.
    let o = cutec(&["build", "examples/copy.cute", "--emit", "ptx,llvm", "-o", "-"]);
    assert_eq!(code(&o), 2, "{}", String::from_utf8_lossy(&o.stderr));
    assert!(o.stdout.is_empty());
    // A const generic given twice.
    let o = cutec(&["check", "examples/softmax.cute", "-D", "N=1024", "-D", "N=4096"]);
    assert_eq!(code(&o), 2);
    assert!(String::from_utf8_lossy(&o.stderr).contains("-D N is given twice (1024 and 4096)"));
}

#[test]
fn run_options_that_do_not_fit_the_kernel_exit_2_before_any_gpu_work() {
    let dir = std::env::temp_dir().join(format!("cutec-cli-run-{}", std::process::id()));
    let d = dir.to_str().expect("utf-8 path").to_owned();
    let o = cutec(&["build", "examples/copy.cute", "--emit", "ptx,manifest", "-o", &d]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let ptx = format!("{d}/copy.ptx");
    for (args, says) in [
        (vec!["run", ptx.as_str(), "--kernel", "nope"], "no kernel `nope`"),
        (vec!["run", ptx.as_str(), "--kernel", "copy", "--dim", "Q=4"], "Q"),
        (vec!["run", ptx.as_str(), "--kernel", "copy", "--input", "q=q.npy"], "q"),
    ] {
        let o = cutec(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(code(&o), 2, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

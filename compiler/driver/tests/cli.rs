//! The `cutec` binary as users run it: exit codes, output formats, and files; the machine code of the examples
//! (`sass`).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod cpu;
mod hopper;
mod pipeline;
mod resources;
mod sass;
mod tune;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn cutec(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cutec")).args(args).current_dir(root()).output().expect("cutec runs")
}

fn code(o: &Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A fresh directory for one test.
fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("cutec-cli-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// Runs `args` with `--error-format=json` and returns the one diagnostic it reports, after checking that the
/// human form reports the same code and that the exit status is `exit`.
fn one_error(args: &[&str], exit: i32) -> serde_json::Value {
    let human = cutec(&[args, &["--color=never"]].concat());
    assert_eq!(code(&human), exit, "{args:?}: {}", stderr(&human));
    let o = cutec(&[args, &["--error-format=json"]].concat());
    assert_eq!(code(&o), exit, "{args:?}: {}", stderr(&o));
    let err = stderr(&o);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "{args:?}: one JSON line expected: {err}");
    let d: serde_json::Value = serde_json::from_str(lines[0]).unwrap_or_else(|e| panic!("{args:?}: {e}: {err}"));
    let code = d["code"].as_str().expect("a code");
    assert!(stderr(&human).starts_with(&format!("error[{code}]: ")), "{args:?}: {}", stderr(&human));
    let explained = cutec(&["explain", code]);
    assert_eq!(self::code(&explained), 0, "{code} has an explanation");
    d
}

/// A `.npy` file of zeros of type `<f4` and shape `shape` (`[]`: rank 0, one value).
fn npy_f32(shape: &[usize]) -> Vec<u8> {
    let dims: Vec<String> = shape.iter().map(usize::to_string).collect();
    let tuple = if shape.len() == 1 { format!("({},)", dims[0]) } else { format!("({})", dims.join(", ")) };
    let mut header = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': {tuple}, }}");
    // Magic, version and length take 10 bytes; the header ends with a newline at a multiple of 64.
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend((header.len() as u16).to_le_bytes());
    bytes.extend(header.as_bytes());
    bytes.resize(bytes.len() + 4 * shape.iter().product::<usize>(), 0);
    bytes
}

/// The text a diagnostic's primary label covers in `<command line>` or `<expression>`, if it has one.
fn primary_text(d: &serde_json::Value) -> Option<String> {
    let labels = d["labels"].as_array()?;
    let l = labels.iter().find(|l| l["primary"] == true)?;
    Some(format!("{}:{}..{}", l["file"].as_str()?, l["start"], l["end"]))
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
fn endless_files_are_refused_at_their_limit() {
    // `/dev/zero` never ends: every file a command reads whole is read up to its limit and one byte, then refused
    // (it used to be read until the memory ran out).
    if !Path::new("/dev/zero").exists() {
        return;
    }
    for cmd in ["check", "build"] {
        let d = one_error(&[cmd, "/dev/zero"], 1);
        assert_eq!(d["code"], "E0008", "{cmd}: {d}");
        assert!(
            d["message"].as_str().is_some_and(|m| m.contains("more than the limit of 2097152 bytes")),
            "{cmd}: {d}"
        );
        assert!(primary_text(&d).is_some_and(|p| p.starts_with("<command line>:")), "{cmd}: {d}");
    }
    let d = one_error(&["build", "examples/copy.cute", "--tuning", "/dev/zero", "--shape", "N=4096"], 1);
    assert_eq!(d["code"], "E0412", "{d}");
    assert!(d["message"].as_str().is_some_and(|m| m.contains("longer than the limit of")), "{d}");
    let d = one_error(&["layout", "--eval-file", "/dev/zero"], 1);
    assert_eq!(d["code"], "E0400", "{d}");
    assert!(d["message"].as_str().is_some_and(|m| m.contains("longer than the limit of")), "{d}");
    let dir = temp_dir("endless");
    let ptx = dir.join("k.ptx");
    std::fs::write(&ptx, ".version 8.0\n.target sm_90a\n.address_size 64\n").expect("written");
    let ptx = ptx.to_str().expect("a UTF-8 path");
    let o = cutec(&["run", ptx, "--kernel", "k", "--manifest", "/dev/zero", "--color=never"]);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    assert!(stderr(&o).contains("error[E0400]: cannot read `/dev/zero`"), "{}", stderr(&o));
    assert!(stderr(&o).contains("longer than the limit of"), "{}", stderr(&o));
    std::fs::remove_dir_all(&dir).ok();
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

/// A reader that stops reading (`cutec explain E0313 | head -1`) ends the output quietly: no internal error.
#[test]
fn a_closed_standard_output_is_not_an_internal_error() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_cutec"))
        .args(["explain", "E0313"])
        .current_dir(root())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("cutec runs");
    // Closed before cutec writes anything: its first write fails with a broken pipe.
    drop(child.stdout.take());
    let out = child.wait_with_output().expect("cutec ends");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("internal compiler error") && !err.contains("E0402"), "{err}");
    assert_eq!(out.status.code(), Some(0), "{err}");
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
fn build_emits_the_dependency_graph_of_each_loop_as_dot() {
    let o = cutec(&["build", "examples/row_sum.cute", "--emit", "deps"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let dot = String::from_utf8_lossy(&o.stdout);
    // One digraph per loop, each closed, named after its kernel; the pipelined loop's copy feeds the loads that
    // read its tile, and the loop-carried edges are drawn dashed with their distance.
    let graphs = dot.matches("digraph row_sum_loop").count();
    assert!(graphs >= 2, "{dot}");
    assert_eq!(dot.matches("\n}\n").count(), graphs, "{dot}");
    assert!(dot.contains("// row_sum: for $k in") && dot.contains("pipelined(stages = 4)"), "{dot}");
    assert!(dot.contains("tma.load.unscheduled") && dot.contains("label=\"data\""), "{dot}");
    assert!(dot.contains("style=dashed, label=\""), "{dot}");
    let dir = temp_dir("deps");
    let o = cutec(&["build", "examples/row_sum.cute", "--emit", "deps,ptx", "-o", dir.to_str().expect("utf-8")]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(dir.join("row_sum.deps.dot")).expect("written"), dot);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn layout_eval_prints_cute_notation() {
    let o = cutec(&["layout", "--eval", "composition((6,2):(8,2), (4,3):(3,1))"]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), "((2,2),3):((24,2),8)");
    let o = cutec(&["layout", "size((4,8):(8,1))"]);
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), "32");
    let o = cutec(&["layout", "--eval", "composition((4,4):(1,8), 5:3)", "--color=never"]);
    assert_eq!(code(&o), 1);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.starts_with("error[E0200]: composition: shape 5 and shape 2"), "{err}");
    assert!(err.contains("<expression>:1:1"), "located on the expression: {err}");
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
    // A checking pass (they run beside code generation) dumps the module the transforms left.
    let o = cutec(&["build", "examples/row_sum.cute", "--emit", "ptx", "--dump-after", "check-protocol", "-o", "-"]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stderr).contains("kernel @row_sum"), "{}", String::from_utf8_lossy(&o.stderr));
    // When a later pass refuses the module, the dump still comes, before the error: it is what the error is read
    // against (here a protocol whose parity is wrong, found by `check-protocol`).
    let file = "tests/ui/build_protocol_parity.cute";
    let o = cutec(&["build", file, "--emit", "ptx", "--dump-after", "specialize-warps", "-o", "-"]);
    assert_eq!(code(&o), 1, "{}", String::from_utf8_lossy(&o.stderr));
    let err = String::from_utf8_lossy(&o.stderr);
    let (ir, error) = (err.find("kernel @"), err.find("error[E0341]"));
    assert!(matches!((ir, error), (Some(i), Some(e)) if i < e), "{err}");
}

#[test]
fn timings_show_the_checks_beside_code_generation() {
    // gemm_sm90's protocol check takes milliseconds (row_sum's can take under the 1 ms a line is printed for).
    let o = cutec(&["build", "examples/gemm_sm90.cute", "--emit", "ptx", "--timings", "-o", "-"]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let err = String::from_utf8_lossy(&o.stderr);
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("time:")).collect();
    let at = |name: &str| lines.iter().position(|l| l.ends_with(name)).unwrap_or_else(|| panic!("no {name}: {err}"));
    // The stages in order, the checks' wait after the codegen phases, each check's own time under it.
    assert!(at("  IR passes") < at("  PTX emission") && at("  PTX emission") < at("  checks (after codegen)"), "{err}");
    assert!(at("    check-protocol") > at("  checks (after codegen)"), "{err}");
    assert!(at("  total") == lines.len() - 1, "{err}");
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
    // A hard link to the input is the input under another name (its path and its canonical path differ).
    let alias = dir.join("alias.ptx");
    std::fs::hard_link(&src, &alias).expect("hard link");
    let o = cutec(&["build", s, "--emit", "ptx", "-o", alias.to_str().expect("utf-8")]);
    assert_eq!(code(&o), 2, "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stderr).contains("is the input"), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(std::fs::read(&src).expect("read"), before, "the input is unchanged");
    std::fs::remove_file(&alias).expect("remove the link");
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

#[test]
fn run_refuses_arguments_the_kernel_cannot_take_before_any_gpu_work() {
    // No GPU is needed to get these answers: the launch is checked before the device is touched.
    let dir = std::env::temp_dir().join(format!("cutec-cli-refuse-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let req = dir.join("copy_req.cute");
    let src = std::fs::read_to_string(root().join("examples/copy.cute")).expect("copy.cute").replace(
        "    let gx = local_tile",
        "    static_assert(N % (THREADS * VEC) == 0, \"whole tiles\");\n    let gx = local_tile",
    );
    std::fs::write(&req, src).expect("write");
    let d = dir.to_str().expect("utf-8 path").to_owned();
    let o = cutec(&["build", req.to_str().expect("utf-8"), "--emit", "ptx,manifest", "-o", &d]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let ptx = format!("{d}/copy_req.ptx");
    // Values of --dim the kernel cannot take: usage errors on the option (exit status 2).
    for (dim, says) in [
        (
            "N=1000003",
            "dimension `N` = 1000003 (from --dim N=1000003) is not a multiple of 1024, which the kernel requires: \
             whole tiles",
        ),
        ("N=2147482624", "kernels index with 32-bit integers"),
    ] {
        let d = one_error(&["run", ptx.as_str(), "--kernel", "copy", "--dim", dim], 2);
        assert_eq!(d["code"], "E0422", "{dim}: {d}");
        assert!(d["message"].as_str().unwrap_or_default().contains(says), "{dim}: {d}");
        assert_eq!(primary_text(&d), Some(format!("<command line>:0..{}", 6 + dim.len())), "{dim}: {d}");
    }
    // The same refusal of an input file's shape is an error in the input (exit status 1), anchored on it.
    let five = dir.join("five.npy");
    std::fs::write(&five, npy_f32(&[5])).expect("write");
    let input = format!("x={}", five.display());
    let d = one_error(&["run", ptx.as_str(), "--kernel", "copy", "--input", &input], 1);
    assert_eq!(d["code"], "E0424", "{d}");
    assert!(d["message"].as_str().unwrap_or_default().contains("`N` = 5 (from x.shape[0]) is not a multiple"), "{d}");
    assert_eq!(primary_text(&d), Some(format!("<command line>:0..{}", 8 + input.len())), "{d}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn every_command_reports_coded_diagnostics_in_json_with_the_exit_status_of_their_class() {
    let dir = temp_dir("codes");
    let d = dir.to_str().expect("utf-8 path").to_owned();
    let o = cutec(&["build", "examples/copy.cute", "--emit", "ptx,manifest", "-o", &d]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let ptx = format!("{d}/copy.ptx");
    let lone = format!("{d}/lone.ptx");
    std::fs::copy(&ptx, &lone).expect("a module without its manifest");
    let bad_npy = format!("{d}/bad.npy");
    std::fs::write(&bad_npy, b"not a numpy file").expect("write");
    let bad_input = format!("x={bad_npy}");
    let rank0_npy = format!("{d}/rank0.npy");
    std::fs::write(&rank0_npy, npy_f32(&[])).expect("write");
    let rank0_input = format!("x={rank0_npy}");
    let a_file = format!("{d}/a-file");
    std::fs::write(&a_file, b"").expect("write");
    let under_file = format!("{a_file}/out/");
    let svg_under_file = format!("{a_file}/x.svg");
    #[rustfmt::skip]
    let cases: Vec<(Vec<&str>, i32, &str, &str)> = vec![
        // cutec layout: the algebra's own codes, a syntax error located in the expression, files.
        (vec!["layout", "composition((4,4):(1,8), 5:3)"], 1, "E0200", "do not divide"),
        (vec!["layout", "(4,4):(1,8"], 1, "E0409", "malformed layout expression: expected `)`"),
        (vec!["layout", "--eval-file", "no/such/exprs.txt"], 1, "E0400", "cannot read `no/such/exprs.txt`"),
        (vec!["layout", "size(4:1)", "--table"], 1, "E0410", "`4` is not a layout"),
        (vec!["layout", "4:1", "--svg", &svg_under_file], 1, "E0408", "cannot write"),
        // cutec build.
        (vec!["build", "examples/copy.cute", "--kernel", "nope"], 2, "E0405", "no kernel named `nope`"),
        (vec!["build", "examples/copy.cute", "--emit", "ptx,llvm", "-o", "-"], 2, "E0406", "`-o -` takes one stage"),
        (vec!["build", "examples/copy.cute", "--emit", "tokens,ast", "-o", &under_file], 1, "E0408", "cannot write"),
        (vec!["build", "examples/copy.cute", "--llvm-passes", "function(nope)"], 2, "E0403",
         "LLVM cannot run the pass pipeline `function(nope)`: unknown function pass 'nope'"),
        // A -D value its parameter cannot take is a bad value of a flag: a usage error, like a bad --dim value.
        (vec!["build", "examples/copy.cute", "-D", "VEC=4611686018427387904"], 2, "E0133", "is out of range for `int`"),
        (vec!["check", "examples/gemm_sm90_manual.cute", "-D", "STAGES=true"], 2, "E0133",
         "`-D STAGES=true` is not an integer"),
        (vec!["check", "examples/gemm_sm90_manual.cute", "-D", "TMA_STORE=1"], 2, "E0133",
         "`-D TMA_STORE=1` is not a `bool`"),
        (vec!["check", "examples/copy.cute", "-D", "N=99999999999999999999"], 2, "E0403",
         "`99999999999999999999` is out of range: values are 64-bit signed integers, -9223372036854775808 to"),
        (vec!["check", "examples/softmax.cute", "-D", "N=1024", "-D", "N=4096"], 2, "E0407",
         "-D N is given twice (1024 and 4096)"),
        (vec!["check", "--frobnicate", "examples/copy.cute"], 2, "E0403", "unexpected argument '--frobnicate'"),
        (vec!["explain", "E9999"], 2, "E0403", "no error code `E9999`"),
        // cutec run, before any GPU work: files, manifests, .npy inputs, options.
        (vec!["run", "m/nothere.ptx", "--kernel", "copy"], 1, "E0400", "cannot read `m/nothere.ptx`"),
        (vec!["run", &lone, "--kernel", "copy"], 1, "E0400", "lone.json"),
        (vec!["run", &ptx, "--kernel", "nope"], 2, "E0405", "the manifest has no kernel `nope` (it has: copy)"),
        (vec!["run", "examples/copy.cute", "--kernel", "nope"], 2, "E0405", "no kernel named `nope`"),
        (vec!["run", &ptx, "--kernel", "copy", "--dim", "Q=4"], 2, "E0422", "no dimension `Q`"),
        (vec!["run", &ptx, "--kernel", "copy", "--input", &bad_input], 1, "E0421", "not a .npy file"),
        // A --dim value is a flag's value: a usage error whether the option parser or the launch check refuses it.
        (vec!["run", &ptx, "--kernel", "copy", "--dim", "N=-1"], 2, "E0422", "`x` has negative extent -1"),
        (vec!["run", &ptx, "--kernel", "copy", "--dim", "N=0"], 2, "E0422", "ceil_div(N,1024) = 0 is outside"),
        (vec!["run", &ptx, "--kernel", "copy"], 2, "E0422", "dimension `N` has no value"),
        (vec!["run", &ptx, "--kernel", "copy", "--dim", "N=8", "--scalar", "s=1"], 2, "E0422", "no scalar parameter"),
        // A file the kernel cannot take is an error in the input.
        (vec!["run", &ptx, "--kernel", "copy", "--input", &rank0_input], 1, "E0421",
         "the file holds a rank-0 array (a single value, shape ()), but `x` is a tensor of rank 1 (layout N:1)"),
    ];
    for (args, exit, want, says) in &cases {
        let d = one_error(args, *exit);
        assert_eq!(d["code"], *want, "{args:?}: {d}");
        let message = d["message"].as_str().unwrap_or_default();
        assert!(message.contains(says), "{args:?}: {message}");
        // Everything but the GPU's own errors points at text: a file, the expression or the command line.
        assert!(primary_text(&d).is_some(), "{args:?}: no primary label: {d}");
    }
    // A run-time usage error points at the option it is about, as the unusable input file's error does at it.
    for (dim, text) in [("Q=4", "--dim Q=4"), ("N=0", "--dim N=0"), ("N=-1", "--dim N=-1")] {
        let d = one_error(&["run", &ptx, "--kernel", "copy", "--dim", dim], 2);
        let l = &d["labels"][0];
        assert_eq!(
            (l["file"].as_str(), l["start"].as_u64(), l["end"].as_u64()),
            (Some("<command line>"), Some(0), Some(text.len() as u64)),
            "{d}"
        );
    }
    let d = one_error(&["run", &ptx, "--kernel", "copy", "--input", "q=q.npy"], 2);
    assert_eq!(primary_text(&d).as_deref(), Some("<command line>:0..15"), "`--input q=q.npy`: {d}");
    // Where a label is on the command line, it covers what is wrong.
    let d = one_error(&["build", "examples/copy.cute", "--kernel", "nope"], 2);
    assert_eq!(primary_text(&d).as_deref(), Some("<command line>:0..13"), "`--kernel nope`: {d}");
    assert_eq!(d["notes"][0], "the kernels of this file are: copy");
    let d = one_error(&["run", "m/nothere.ptx", "--kernel", "copy"], 1);
    assert_eq!(primary_text(&d).as_deref(), Some("<command line>:0..13"), "the module, not its manifest: {d}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn options_that_conflict_or_would_be_ignored_exit_2_and_say_why() {
    #[rustfmt::skip]
    let cases: [(&[&str], &str); 11] = [
        (&["layout", "(4,2):(2,1)", "--tv", "2,4"], "--tv 2,4 labels the cells of --svg, which is not given"),
        (&["layout", "--eval-file", "exprs.txt", "--table"], "--table draws one expression; --eval-file answers"),
        (&["layout", "--eval-file", "exprs.txt", "--svg", "x.svg"], "--svg x.svg draws one expression"),
        (&["build", "examples/copy.cute", "--emit", "tokens", "--dump-after", "dce"],
         "--dump-after dce shows the IR after a pass, but --emit tokens builds nothing after parsing"),
        (&["build", "examples/copy.cute", "--emit", "ast", "--kernel", "copy"], "--kernel copy selects the kernel"),
        (&["build", "examples/copy.cute", "--emit", "tokens,ast", "-O", "1"], "-O 1 sets LLVM's optimisation level"),
        (&["build", "examples/copy.cute", "--emit", "ast", "--timings"], "--timings times the stages"),
        (&["build", "--print-passes", "examples/copy.cute"], "--print-passes prints the pass pipeline"),
        (&["run", "examples/copy.cute", "--kernel", "copy", "--manifest", "m.json"], "--manifest names the manifest"),
        (&["run", "copy.ptx", "--kernel", "copy", "-D", "VEC=8"], "-D sets a const generic of a .cute file"),
        (&["run", "copy.ptx", "--kernel", "copy", "--iters", "5"], "--iters 5 counts the launches of --bench"),
    ];
    for (args, says) in cases {
        let d = one_error(args, 2);
        assert_eq!(d["code"], "E0404", "{args:?}: {d}");
        assert!(d["message"].as_str().unwrap_or_default().starts_with(says), "{args:?}: {d}");
        assert_eq!(d["labels"][0]["message"], "would be ignored", "{args:?}: {d}");
    }
    // The same options in a combination that uses them are fine.
    let o =
        cutec(&["build", "examples/copy.cute", "--emit", "ir", "--dump-after", "dce", "--kernel", "copy", "-o", "-"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
}

#[test]
fn run_names_the_missing_module_and_the_unknown_kernel_with_codes() {
    let o = cutec(&["run", "m/nothere.ptx", "--kernel", "copy", "--color=never"]);
    assert_eq!(code(&o), 1);
    let err = stderr(&o);
    assert!(err.contains("error[E0400]: cannot read `m/nothere.ptx`"), "{err}");
    assert!(!err.contains("nothere.json"), "the manifest is not what is missing first: {err}");
}

#[test]
fn run_refuses_a_tensor_its_tma_map_cannot_describe_before_any_gpu_work() {
    // A hand-written module: `rows(x, N, x_tma)` reads the f32 tensor x: (4, N):(N, 1) through a tensor map of
    // boxes of 32 x 4. Its PTX never reaches a GPU here.
    let dir = temp_dir("tma-refuse");
    let ptx = dir.join("rows.ptx");
    std::fs::write(
        &ptx,
        ".version 8.0\n.target sm_90a\n.address_size 64\n\n.visible .entry rows(\n\t.param .u64 x,\n\t.param .s32 N,\n\
         \t.param .align 64 .b8 x_tma[128]\n)\n{\n\tret;\n}\n",
    )
    .expect("write");
    let manifest = serde_json::json!({
        "format_version": 1, "target": "sm_90a", "module": "rows.ptx",
        "kernels": [{ "name": "rows",
            "params": [{ "kind": "tensor", "name": "x", "dtype": "f32", "space": "gmem",
                         "layout": { "shape": [4, "N"], "stride": ["N", 1] }, "align_bytes": 16, "access": "read" }],
            "dims": [{ "name": "N", "type": "i32", "from": { "param": "x", "mode": 1 } }],
            "launch": { "grid": [1], "block": [32] },
            "tensor_maps": [{ "name": "x_tma", "tensor": "x", "modes": [1, 0], "box": [32, 4],
                              "swizzle": "128B", "l2_promotion": "128B", "oob_fill": "zero" }] }]
    });
    std::fs::write(dir.join("rows.json"), manifest.to_string()).expect("write");
    let ptx = ptx.to_str().expect("utf-8 path");
    // Rows of 1001 f32 are 4004 bytes apart: not a stride TMA can take.
    // The stride comes from `--dim N=1001`: a flag's value, so a usage error on that option.
    let d = one_error(&["run", ptx, "--kernel", "rows", "--dim", "N=1001"], 2);
    assert_eq!(d["code"], "E0422", "{d}");
    assert_eq!(primary_text(&d).as_deref(), Some("<command line>:0..12"), "`--dim N=1001`: {d}");
    assert_eq!(
        d["message"],
        "kernel `rows`: tensor map `x_tma` of `x`: the stride of mode 0 is 4004 bytes; TMA needs a multiple of 16 bytes"
    );
    // Rows of 1004 pass the check: what follows is the GPU's business (no driver here: E0425; with one, a run).
    let o = cutec(&["run", ptx, "--kernel", "rows", "--dim", "N=1004", "--color=never"]);
    let err = stderr(&o);
    assert!(code(&o) == 0 || err.starts_with("error[E0425]"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_copy_of_different_static_sizes_is_found_by_check() {
    let dir = temp_dir("copy-size");
    let src = dir.join("k.cute");
    std::fs::write(
        &src,
        "kernel k(x: Tensor<f32, 128:1, gmem>, y: Tensor<f32, 64:1, gmem>) launch(grid = (1), block = (32)) {\n    \
         copy(x, y);\n}\n",
    )
    .expect("write");
    let d = one_error(&["check", src.to_str().expect("utf-8 path")], 1);
    assert_eq!(d["code"], "E0161");
    assert_eq!(d["message"], "`copy` from a tensor of 128 elements to one of 64");
    let labels = d["labels"].as_array().expect("labels");
    assert_eq!((labels[0]["line"].as_u64(), labels[0]["column"].as_u64()), (Some(2), Some(5)), "{d}");
    assert_eq!(labels.len(), 3, "the copy and both tensors: {d}");
    std::fs::remove_dir_all(&dir).ok();
}

/// A file name that is not UTF-8 is used as it is, never mangled into U+FFFD.
#[cfg(unix)]
#[test]
fn file_names_that_are_not_utf8_are_kept() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let dir = temp_dir("non-utf8");
    let src = dir.join(OsStr::from_bytes(b"k\xff.cute"));
    std::fs::copy(root().join("examples/copy.cute"), &src).expect("copy the example");
    let run = |args: &[&OsStr]| {
        Command::new(env!("CARGO_BIN_EXE_cutec")).args(args).current_dir(root()).output().expect("cutec runs")
    };
    let o = run(&[OsStr::new("check"), src.as_os_str()]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let o = run(&[
        OsStr::new("build"),
        src.as_os_str(),
        OsStr::new("--emit"),
        OsStr::new("ptx,manifest,ast"),
        OsStr::new("-o"),
        dir.as_os_str(),
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(dir.join(OsStr::from_bytes(b"k\xff.ptx")).is_file(), "the output keeps the input's name");
    assert!(dir.join(OsStr::from_bytes(b"k\xff.ast")).is_file());
    // A .npy path given to --input is read as given: the error names it (shown lossily), not a mangled one.
    let input = dir.join(OsStr::from_bytes(b"in\xff.npy"));
    let mut arg = std::ffi::OsString::from("x=");
    arg.push(&input);
    let ptx = dir.join(OsStr::from_bytes(b"k\xff.ptx"));
    let o = run(&[
        OsStr::new("run"),
        ptx.as_os_str(),
        OsStr::new("--kernel"),
        OsStr::new("copy"),
        OsStr::new("--input"),
        &arg,
    ]);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("error[E0400]: cannot read") && stderr(&o).contains("in\u{fffd}.npy"),
        "{}",
        stderr(&o)
    );
    std::fs::remove_dir_all(&dir).ok();
}

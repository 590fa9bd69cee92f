//! Bounded work for any input: generated stress inputs (deep nesting, 100,000 delimiters, huge unrolls, 100,000
//! statements, a long name, a big file) through the `cutec` binary under a memory limit. Each must be refused with
//! exit code 1 and its diagnostic code: no signal, no abort, no stack overflow, and little output. The wall limit
//! is only a guard against hangs, generous for a debug build on a loaded machine.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The address space the compiler may use (a 64 MiB stack and LLVM included): a fraction of the CI machine's.
const MEMORY_KIB: u64 = 4 << 20;
/// The hang guard.
const WALL: Duration = Duration::from_secs(60);
/// What a refusal may write to stderr at most: 100 diagnostics of a few lines each.
const MAX_STDERR: usize = 200_000;

const KERNEL: &str = "kernel k(w: Tensor<i32, 4:1, gmem>) launch(grid = (1), block = (1)) {\n";

struct Outcome {
    code: Option<i32>,
    stderr: String,
}

/// Runs `cutec args... FILE` on `source` (written to a private file) under the memory limit and the hang guard.
fn run_limited(name: &str, source: &str, args: &[&str]) -> Outcome {
    let dir = std::env::temp_dir().join(format!("cutec-resources-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join(format!("{name}.cute"));
    std::fs::write(&file, source).expect("write the input");
    let out = dir.join("out");
    // `ulimit -v` in a shell that then becomes the compiler: no dependency on prlimit or libc.
    let script = format!("ulimit -v {MEMORY_KIB} && exec \"$0\" \"$@\"");
    let mut command = Command::new("sh");
    command.arg("-c").arg(script).arg(env!("CARGO_BIN_EXE_cutec")).args(args);
    if args.first() == Some(&"build") {
        command.arg("-o").arg(&out);
    }
    let mut child = command.arg(&file).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().expect("sh runs");
    // Read stderr while waiting, so a full pipe cannot stall the child.
    let mut pipe = child.stderr.take().expect("piped");
    let reader = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        bytes
    });
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if start.elapsed() > WALL {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{name}: still running after {WALL:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let stderr = String::from_utf8_lossy(&reader.join().expect("reader")).into_owned();
    std::fs::remove_dir_all(&dir).ok();
    Outcome { code: status.code(), stderr }
}

/// Asserts success: exit code 0, within the hang guard.
fn assert_accepted(name: &str, source: &str, args: &[&str]) {
    let o = run_limited(name, source, args);
    let head: String = o.stderr.chars().take(2_000).collect();
    assert_eq!(o.code, Some(0), "{name}: exit status {:?}, stderr:\n{head}", o.code);
}

/// Asserts a refusal: exit code 1 (not a signal, not 101 for a panic), the expected code, bounded output.
fn assert_refused(name: &str, source: &str, args: &[&str], code: &str) -> String {
    let o = run_limited(name, source, args);
    let head: String = o.stderr.chars().take(2_000).collect();
    assert_eq!(o.code, Some(1), "{name}: exit status {:?}, stderr:\n{head}", o.code);
    let coded = o.stderr.contains(&format!("[{code}]")) || o.stderr.contains(&format!("\"code\":\"{code}\""));
    assert!(coded, "{name}: no {code} in:\n{head}");
    assert!(o.stderr.len() <= MAX_STDERR, "{name}: {} bytes of diagnostics", o.stderr.len());
    o.stderr
}

#[test]
fn many_delimiters_are_reported_in_bounded_output() {
    let n = 100_000;
    let err = assert_refused("closers", &format!("{KERNEL}{}\n", "}".repeat(n)), &["check", "--color=never"], "E0023");
    // The first `}` closes the kernel: 99,999 stray ones, 100 shown.
    assert!(err.contains("99899 more errors not shown"), "{}", &err[err.len().saturating_sub(300)..]);
    assert_refused("openers", &format!("{KERNEL}{}\n}}\n", "(".repeat(n)), &["check", "--color=never"], "E0022");
    // JSON: one object per diagnostic shown, then one that counts the rest.
    let json = assert_refused(
        "closers-json",
        &format!("{KERNEL}{}\n", "}".repeat(n)),
        &["check", "--error-format=json"],
        "E0023",
    );
    let lines: Vec<&str> = json.lines().collect();
    assert_eq!(lines.len(), 101, "one line per diagnostic shown, then the count");
    assert!(lines[100].contains("\"omitted\":99899"), "{}", lines[100]);
}

#[test]
fn deep_nesting_is_refused_not_overflowed() {
    let n = 100_000;
    let deep = [
        ("parens", format!("{KERNEL}    w[0] = {}1{};\n}}\n", "(".repeat(n), ")".repeat(n))),
        ("blocks", format!("{KERNEL}{}{}\n}}\n", "{".repeat(n), "}".repeat(n))),
        ("negations", format!("{KERNEL}    w[0] = {}1;\n}}\n", "-".repeat(n))),
        ("sum", format!("{KERNEL}    w[0] = 1{};\n}}\n", " + 1".repeat(n))),
    ];
    for (name, src) in deep {
        assert_refused(name, &src, &["build", "--emit", "ptx"], "E0025");
    }
    // Constants each defined by the next: the checker follows a bounded chain.
    let chain: String = (0..20_000).map(|i| format!("const C{i}: int = C{}  + 1;\n", i + 1)).collect();
    assert_refused(
        "const-chain",
        &format!("{chain}const C20000: int = 0;\n{KERNEL}    w[0] = C0;\n}}\n"),
        &["check"],
        "E0150",
    );
    // Device functions called from deep inside each other's blocks: the nesting adds up when inlined.
    let nest = |i: usize| {
        format!(
            "fn f{i}(w: Tensor<i32, 4:1, gmem>, x: i32) {{ {}f{}(w, x);{} }}\n",
            "if x > 0 { ".repeat(200),
            i + 1,
            " }".repeat(200)
        )
    };
    let fns: String = (0..50).map(nest).collect();
    let src = format!("{fns}fn f50(w: Tensor<i32, 4:1, gmem>, x: i32) {{ w[0] = x; }}\n{KERNEL}    f0(w, 1);\n}}\n");
    assert_refused("inlined-nesting", &src, &["build", "--emit", "ptx"], "E0322");
}

#[test]
fn unrolling_and_kernel_size_are_budgeted() {
    let body = "w[(i + j + l) % 4] = w[(i * j + l) % 4] * 3 + l;";
    let nested = format!(
        "{KERNEL}    for i in 0..1000 unroll {{\n for j in 0..1000 unroll {{\n for l in 0..1000 unroll {{\n {body}\n }}\n }}\n }}\n}}\n"
    );
    for opt in ["-O0", "-O1", "-O3"] {
        assert_refused("nested-unroll", &nested, &["build", opt, "--emit", "ptx"], "E0320");
    }
    let long =
        format!("{KERNEL}    for i in 0..100000 unroll {{\n        w[i % 4] = w[(i * 7) % 4] * 3 + i;\n    }}\n}}\n");
    assert_refused("long-unroll", &long, &["build", "--emit", "ptx"], "E0320");
    let statements = format!("{KERNEL}{}}}\n", "    w[0] = 1;\n".repeat(100_000));
    assert_refused("statements", &statements, &["build", "--emit", "ptx"], "E0321");
}

#[test]
fn big_inputs_are_refused_or_quick() {
    // A 50 MB file is refused before it is lexed.
    let big = "// a comment line, repeated to make the file large enough\n".repeat(50_000_000 / 58);
    let err = assert_refused("big", &big, &["check"], "E0008");
    assert!(err.contains("more than the limit of 2097152 bytes"), "{err}");
    // An unknown name of a million characters: no quadratic "did you mean", and a message of bounded size.
    let name = "a".repeat(1_000_000);
    assert_refused("long-name", &format!("{KERNEL}    w[0] = {name};\n}}\n"), &["check"], "E0100");
}

/// The statement budget, as the diagnostics state it.
const BUDGET: u64 = 32_768;

/// The number in `text` right after `before` (`"inlines 123 statements"` with `before = "inlines "`).
fn number_after(text: &str, before: &str) -> u64 {
    let at = text.find(before).unwrap_or_else(|| panic!("no `{before}` in:\n{text}")) + before.len();
    let digits: String = text[at..].chars().take_while(char::is_ascii_digit).collect();
    digits.parse().unwrap_or_else(|_| panic!("no number after `{before}` in:\n{text}"))
}

#[test]
fn inlining_is_charged_before_it_is_done() {
    // 24 functions each calling the previous one twice: 2^24 inlined bodies. Once inlined before the budget was
    // checked (27 s and an abort allocating 3.5 GB); now the call is refused, counted without inlining.
    for leaf in ["w[0] = x;", ""] {
        let mut fns = format!("fn f0(w: Tensor<i32, 4:1, gmem>, x: i32) {{ {leaf} }}\n");
        for i in 1..24 {
            fns += &format!("fn f{i}(w: Tensor<i32, 4:1, gmem>, x: i32) {{ f{0}(w, x); f{0}(w, x); }}\n", i - 1);
        }
        let src = format!("{fns}{KERNEL}    w[1] = 2;\n    f23(w, 1);\n}}\n");
        let err = assert_refused("call-tree", &src, &["build", "--color=never"], "E0321");
        // At the kernel's call, with the size of what it would inline: 2^24 - 2 call statements, and the leaf's
        // statement in each of the 2^23 leaves.
        assert!(err.contains("call-tree.cute:27:5"), "{err}");
        let leaves = if leaf.is_empty() { 0 } else { 1 << 23 };
        assert_eq!(number_after(&err, "this call inlines "), (1 << 24) - 2 + leaves, "{err}");
    }
    // A function that fits is inlined, as many times as the budget allows: 100 calls of 100 statements.
    let body = "w[0] = x;".repeat(100);
    let calls = "    f(w, 1);\n".repeat(100);
    assert_accepted(
        "calls-within",
        &format!("fn f(w: Tensor<i32, 4:1, gmem>, x: i32) {{ {body} }}\n{KERNEL}{calls}}}\n"),
        &["build", "--emit", "ir"],
    );
}

#[test]
fn run_time_partial_unrolls_are_counted() {
    // `unroll(N)` over a run-time trip count makes N copies in the back end: once LLVM ran for minutes.
    let kernel = "kernel k(w: Tensor<i32, N:1, gmem>) launch(grid = (1), block = (1)) {\n";
    let one = format!("{kernel}    for i in 0..N unroll(1000000000) {{\n        w[i] = i;\n    }}\n}}\n");
    let err = assert_refused("run-time-unroll", &one, &["build", "--color=never"], "E0320");
    assert!(err.contains("1000000000 copies"), "{err}");
    // Nested partial unrolls multiply: 1000 copies of the inner loop's 1000 copies.
    let nested = format!(
        "{kernel}    for i in 0..N unroll(1000) {{\n        for j in 0..N unroll(1000) {{\n            w[j] = i;\n        \
         }}\n    }}\n}}\n"
    );
    let err = assert_refused("nested-run-time-unroll", &nested, &["build", "--color=never"], "E0320");
    assert!(err.contains("1000 copies of a body of"), "{err}");
    assert!(number_after(&err, "1000 copies of a body of ") > 1000, "{err}");
}

#[test]
fn copies_are_charged_by_the_statements_they_expand_to() {
    // Six copies of a 128x128 tile: once minutes of expansion before E0321 (over 150 s for tiles at the edge).
    // Now the first copy that does not fit is refused before it is expanded, with what it would add: a load and a
    // store per element (these strides give no vector), or per element of the bounds-checked path of a tile that
    // may cross the tensor's edge.
    let tile = "Tensor<f32, (128, 128):(128, 1), gmem>";
    let whole = format!(
        "kernel k(x: {tile}, y: {tile}) launch(grid = (1), block = (1)) {{\n{}}}\n",
        "    copy(x, y);\n".repeat(6)
    );
    let err = assert_refused("tile-copies", &whole, &["build", "--color=never"], "E0321");
    assert_eq!(number_after(&err, "its 16384 elements expand to at least "), 32_768, "{err}");
    let edge = format!(
        "kernel k(x: Tensor<f32, (M, N):(N, 1), gmem>, y: Tensor<f32, (M, N):(N, 1), gmem>) launch(grid = (1), \
         block = (1)) {{\n    let gx = local_tile(x, (128, 128), (block_idx.x, block_idx.y));\n    let gy = \
         local_tile(y, (128, 128), (block_idx.x, block_idx.y));\n{}}}\n",
        "    copy(gx, gy);\n".repeat(6)
    );
    let err = assert_refused("edge-tile-copies", &edge, &["build", "--color=never"], "E0321");
    assert!(err.contains("its 16384 elements expand to at least"), "{err}");
    // A register tile filled and copied out, six times: the same.
    let regs = format!(
        "kernel k(x: {tile}, y: {tile}) launch(grid = (1), block = (1)) {{\n    let r = make_fragment_like(x);\n{}}}\n",
        "    fill(r, 1.0);\n    copy(r, y);\n".repeat(6)
    );
    assert_refused("register-tile-copies", &regs, &["build", "--color=never"], "E0321");
}

/// The largest kernel the budget accepts compiles to PTX (LLVM at -O3) well within the hang guard. The budget is
/// set so that this takes seconds with the release binary (see `MAX_STMTS`); a body of 10 statements, a chain of
/// dependent multiply-adds of loaded values, is the slowest shape found for LLVM's code generator.
#[test]
fn the_largest_accepted_kernel_compiles() {
    let chain = |n: u64| {
        format!(
            "kernel k(x: Tensor<f32, 65536:1, gmem>, y: Tensor<f32, 65536:1, gmem>) launch(grid = (1), \
             block = (1)) {{\n    let mut acc = x[0];\n    for i in 0..{n} unroll {{\n        \
             acc = acc * x[i] + y[i];\n    }}\n    y[0] = acc;\n}}\n"
        )
    };
    // Counted: one more trip than the budget allows is refused, naming the body's size.
    let err = assert_refused("chain-over", &chain(BUDGET), &["build", "--color=never"], "E0320");
    let body = number_after(&err, &format!("{BUDGET} copies of a body of "));
    assert_accepted("chain-at-budget", &chain(BUDGET / body - 1), &["build", "-O3", "--emit", "ptx"]);
}

#[test]
fn the_layout_algebra_is_near_linear_in_modes() {
    // Composing two 20,000-mode layouts once walked every mode of one for each mode of the other (35 s).
    let n = 20_000;
    let tuple = |v: &str| vec![v; n].join(", ");
    let src = format!(
        "{KERNEL}    let a = composition(({}):({}), ({}):({}));\n}}\n",
        tuple("2"),
        tuple("1"),
        tuple("1"),
        tuple("1")
    );
    assert_accepted("composition-modes", &src, &["check"]);
    // A product over 20,000 dynamic modes (the prefix products of `right_inverse`) once built 20,000 ever larger
    // copies of one expression (minutes, 13 GB); a dynamic integer is now bounded in operations.
    let dynamic = format!(
        "kernel k(x: Tensor<f32, N:1, gmem>) launch(grid = (1), block = (1)) {{\n    let r = right_inverse(({}):({}));\n}}\n",
        tuple("N"),
        (1..=n).map(|i| i.to_string()).collect::<Vec<_>>().join(", ")
    );
    let err = assert_refused("dynamic-modes", &dynamic, &["check"], "E0205");
    assert!(err.contains("more than 1024 operations"), "{err}");
}

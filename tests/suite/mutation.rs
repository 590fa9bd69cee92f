//! Random mutations of the examples through lex + parse + check: the front end never panics, and every
//! rejection is a coded diagnostic with a primary label inside its file.

use cutec_tests::{Rng, repo_relative, seed};
use std::panic::{AssertUnwindSafe, catch_unwind};

const CASES: usize = 10_000;

/// Fragments that make interesting programs when spliced in: keywords, delimiters, layout notation.
const VOCAB: &[&str] = &[
    "(",
    ")",
    "{",
    "}",
    "[",
    "]",
    "<",
    ">",
    ":",
    ";",
    ",",
    ".",
    "..",
    "_",
    "=",
    "+=",
    "->",
    "::",
    "kernel",
    "fn",
    "let",
    "mut",
    "for",
    "in",
    "if",
    "else",
    "while",
    "return",
    "use",
    "const",
    "launch",
    "as",
    "Tensor",
    "f32",
    "bf16",
    "gmem",
    "smem",
    "(4,8):(8,1)",
    "8:1",
    "((2,2),3):((24,2),8)",
    "Swizzle<3,4,3>",
    "0",
    "1.0",
    "18446744073709551616",
    "\"",
    "\"\\q\"",
    "/*",
    "*/",
    "//",
    "///",
    "x",
    "M",
    "block_idx.x",
    "thread_idx",
    "size(",
    "copy(",
    "unroll",
    "pipelined(stages = 2)",
    "é",
    "\u{0}",
    "\t",
    "\n",
];

fn mutate(rng: &mut Rng, src: &str) -> String {
    let chars: Vec<char> = src.chars().collect();
    let mut out = chars.clone();
    for _ in 0..1 + rng.below(3) {
        let n = out.len().max(1);
        let at = rng.below(n);
        match rng.below(5) {
            0 => {
                let len = rng.below(12).min(out.len().saturating_sub(at));
                out.drain(at..at + len);
            }
            1 => {
                let frag: Vec<char> = VOCAB[rng.below(VOCAB.len())].chars().collect();
                let at = at.min(out.len());
                out.splice(at..at, frag);
            }
            2 => {
                let len = rng.below(30).min(out.len().saturating_sub(at));
                let piece: Vec<char> = out[at..at + len].to_vec();
                let to = rng.below(out.len() + 1);
                out.splice(to..to, piece);
            }
            3 if !out.is_empty() => {
                let b = rng.below(out.len());
                let a = at.min(out.len() - 1);
                out.swap(a, b);
            }
            _ if !out.is_empty() => {
                let punct = ['(', ')', ':', ',', '<', '>', '{', '}', ';', '_', '0', 'x', '.', '#'];
                let a = at.min(out.len() - 1);
                out[a] = punct[rng.below(punct.len())];
            }
            _ => {}
        }
    }
    out.into_iter().collect()
}

#[test]
fn mutated_examples_never_panic_and_rejections_are_located() {
    let seed = seed(0xC0FFEE);
    let mut rng = Rng::new(seed);
    let mut sources: Vec<(String, String)> = Vec::new();
    for dir in ["examples", "stdlib"] {
        for p in cutec_tests::cute_files(dir) {
            sources.push((repo_relative(&p), std::fs::read_to_string(&p).expect("readable")));
        }
    }
    let tables = cutec::code_tables();
    let (mut rejected, mut accepted) = (0usize, 0usize);
    let previous_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {})); // the failure message below says everything needed
    for case in 0..CASES {
        let (name, src) = &sources[rng.below(sources.len())];
        let input = mutate(&mut rng, src);
        let result = catch_unwind(AssertUnwindSafe(|| cutec::check_source(name, &input, &[])));
        let Ok(checked) = result else {
            std::panic::set_hook(previous_hook);
            panic!("case {case} panicked (seed {seed}; rerun with CUTEC_SEED={seed}); input:\n{input}");
        };
        if !checked.has_errors() {
            accepted += 1;
            continue;
        }
        rejected += 1;
        for d in checked.diagnostics() {
            let ok = cutec_diagnostics::explain(&tables, d.code).is_some()
                && d.primary().is_some_and(|l| l.span.end as usize <= checked.map.source(l.file).len());
            if !ok {
                std::panic::set_hook(previous_hook);
                panic!(
                    "case {case} (seed {seed}): diagnostic {d:?} lacks a known code or a located primary label; input:\n{input}"
                );
            }
        }
    }
    std::panic::set_hook(previous_hook);
    eprintln!(
        "mutation test: {CASES} inputs, {rejected} rejected with located diagnostics, {accepted} accepted (seed {seed})"
    );
    assert!(rejected > CASES / 2, "mutations should mostly produce errors; only {rejected} did");
}

/// Mutations of the kernels the back end compiles, through the whole compiler: whatever checks must lower and
/// generate code, or be refused with a located, coded diagnostic; nothing panics after the front end either.
#[test]
fn mutated_kernels_compile_or_are_refused_with_located_diagnostics() {
    const BUILDS: usize = 5_000;
    let seed = seed(0xB1D5);
    let mut rng = Rng::new(seed);
    let kernels: Vec<(String, String)> = ["copy", "softmax", "rmsnorm"]
        .iter()
        .map(|k| {
            let path = cutec_tests::repo_root().join(format!("examples/{k}.cute"));
            (repo_relative(&path), std::fs::read_to_string(&path).expect("readable"))
        })
        .collect();
    let opts =
        cutec::build::BuildOptions { defines: vec![("N".into(), cutec::DefineValue::Int(4096))], ..Default::default() };
    let tables = cutec::code_tables();
    let (mut compiled, mut refused, mut rejected_early) = (0usize, 0usize, 0usize);
    let previous_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    for case in 0..BUILDS {
        let (name, src) = &kernels[rng.below(kernels.len())];
        let input = mutate(&mut rng, src);
        let result = catch_unwind(AssertUnwindSafe(|| cutec::build::build_source(name, &input, &opts)));
        let failure = match result {
            Err(_) => {
                std::panic::set_hook(previous_hook);
                panic!("build case {case} panicked (seed {seed}; rerun with CUTEC_SEED={seed}); input:\n{input}");
            }
            Ok(Ok((_, art))) => {
                assert!(art.ptx.contains(".entry"), "case {case}: PTX without a kernel entry");
                compiled += 1;
                continue;
            }
            Ok(Err(f)) => f,
        };
        // Front-end rejections are the other test's business; count what lowering and codegen refused.
        if failure.diagnostics.iter().any(|d| d.code < "E0300") {
            rejected_early += 1;
        } else {
            refused += 1;
        }
        for d in &failure.diagnostics {
            let ok = cutec_diagnostics::explain(&tables, d.code).is_some()
                && d.primary().is_some_and(|l| l.span.end as usize <= failure.map.source(l.file).len());
            if !ok || d.code == "E0402" {
                std::panic::set_hook(previous_hook);
                panic!("build case {case} (seed {seed}): {d:?}; input:\n{input}");
            }
        }
    }
    std::panic::set_hook(previous_hook);
    eprintln!(
        "build mutation test: {BUILDS} inputs, {compiled} compiled to PTX, {refused} refused by lowering, \
         {rejected_early} rejected by the front end (seed {seed})"
    );
    assert!(compiled > BUILDS / 20, "some mutations should still compile; only {compiled} did");
}

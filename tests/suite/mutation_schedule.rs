//! The schedule's checks against generated programs: the plain loops of `examples/gemm_sm90.cute` (warp-specialized,
//! persistent, clusters of 2) and `examples/gemm_pipelined.cute` (thread 0 issues the copies) are mutated the
//! ways a user gets a scheduled kernel wrong, and an oracle (the program's meaning: which iterations and threads
//! a generated condition selects, which named barriers the epilogue takes) says what each mutant must give:
//!
//! - `gemm` under a condition on `k` (or in both branches of one): a condition some iteration fails leaves that
//!   k-tile without a group while its stage is refilled, so it must be refused (E0346); one in both branches
//!   must build.
//! - a store into a ring's tile, before or after the `gemm` that reads it: refused (E0347).
//! - a `break`, `continue` or `return` in the pipelined loop under a generated condition: refused (E0346) unless
//!   no iteration and no thread meets it.
//! - a `return` before the loop under a condition on the thread and the block: refused (E0324) where two threads
//!   of one block disagree on it.
//! - `barrier_sync(id, 256)` after the loop: refused (E0348) exactly when the epilogue takes `id` (1 and 2, one per
//!   consumer warpgroup).
//! - `if thread_idx.x == t { .. }` after the loop of the warp-specialized kernel: a store runs on thread `t`
//!   wherever it is (it must build); a write into the accumulator (the consumers' work) is refused (E0324) when
//!   `t` is a thread of the producer warpgroup, which never runs it.
//! - a store every thread runs inside the pipelined loop: refused (E0324) in the warp-specialized kernel, whose
//!   producer loop only issues copies; built in the other.
//!
//! A mutant the oracle says is right may still be refused (the proofs are conservative); the test counts them,
//! and requires some of each operator that may build to build. The first built mutants that compute what the
//! example computes (up to [`CPU_RUNS`]) run on the CPU at a ragged shape, under the latest TMA schedule, and
//! must match the reference with no race, deadlock or error. With `CUTEC_MUTANTS_DIR`, the built mutants that
//! compute what the example computes are written there, and `scripts/gpu/mutants_check.py` runs them on the GPU.

use cutec_tests::{Rng, repo_relative, seed};

const CASES: usize = 200;
/// Built mutants run by the interpreter (each about a second in a debug build).
const CPU_RUNS: usize = 12;

/// Whether an exit's condition holds at k-tile `k`, for thread `t` of block `b`.
type ExitOracle = Box<dyn Fn(i64, i64, i64) -> bool>;

/// One mutation: the program, what the oracle requires, and its operator (for the counts).
struct Mutant {
    source: String,
    operator: &'static str,
    /// `Some(codes)`: must be refused with one of these codes; `None`: may build, and must not be refused with
    /// one of `forbidden`.
    must_refuse: Option<&'static [&'static str]>,
    forbidden: &'static [&'static str],
}

/// A kernel to mutate: its source, the lines the operators anchor on, whether its producer is a warpgroup.
struct Subject {
    name: String,
    source: String,
    gemm: &'static str,
    loop_head: &'static str,
    store: &'static str,
    warp_specialized: bool,
    /// The block's threads.
    threads: i64,
}

/// A condition on the k-tile `k` (0.. `trips`) as text, and which k meet it.
fn k_condition(rng: &mut Rng) -> (String, impl Fn(i64) -> bool + use<>) {
    let c = [1i64, 2, 3, 4, 7][rng.below(5)];
    let r = rng.below(c as usize) as i64;
    match rng.below(5) {
        0 => (format!("k % {c} == {r}"), Box::new(move |k: i64| k % c == r) as Box<dyn Fn(i64) -> bool>),
        1 => (format!("k < {c}"), Box::new(move |k| k < c)),
        2 => (format!("k >= {c}"), Box::new(move |k| k >= c)),
        3 => ("k >= 0".to_string(), Box::new(|k| k >= 0)),
        _ => (format!("k != {r}"), Box::new(move |k| k != r)),
    }
}

/// A condition on the thread and block indices as text, and its value for (thread, block).
fn thread_condition(rng: &mut Rng) -> (String, impl Fn(i64, i64) -> bool + use<>) {
    let c = [0i64, 1, 31, 64, 128, 200, 255, 383, 100_000][rng.below(9)];
    match rng.below(5) {
        0 => (format!("thread_idx.x == {c}"), Box::new(move |t: i64, _| t == c) as Box<dyn Fn(i64, i64) -> bool>),
        1 => (format!("thread_idx.x >= {c}"), Box::new(move |t, _| t >= c)),
        2 => (format!("block_idx.x >= {c}"), Box::new(move |_, b| b >= c)),
        3 => (format!("thread_idx.x / 128 == {}", c % 3), Box::new(move |t, _| t / 128 == c % 3)),
        _ => (format!("block_idx.x + thread_idx.x < {c}"), Box::new(move |t, b| b + t < c)),
    }
}

fn mutate(rng: &mut Rng, s: &Subject) -> Mutant {
    let replace = |from: &str, to: String| {
        assert!(s.source.contains(from), "{}: no line `{}`", s.name, from.trim());
        s.source.replacen(from, &to, 1)
    };
    let gemm = s.gemm.trim();
    let trips = 0..12i64; // K up to 12 k-tiles: what every launch sees first
    match rng.below(8) {
        0 => {
            let (cond, meets) = k_condition(rng);
            let every = trips.clone().all(meets);
            let source = replace(s.gemm, format!("        if {cond} {{\n            {gemm}\n        }}\n"));
            // Always true (`k >= 0`): right, though the check may not see it.
            let must_refuse = if every { None } else { Some(&["E0346"][..]) };
            Mutant { source, operator: "gemm under a condition", must_refuse, forbidden: &[] }
        }
        1 => {
            let (cond, _) = k_condition(rng);
            let both = format!(
                "        if {cond} {{\n            {gemm}\n        }} else {{\n            {gemm}\n        }}\n"
            );
            Mutant {
                source: replace(s.gemm, both),
                operator: "gemm in both branches",
                must_refuse: None,
                forbidden: &["E0346"],
            }
        }
        2 => {
            let tile = ["ta", "tb"][rng.below(2)];
            let store = format!("        {tile}[thread_idx.x % 64, 0] = 0.0;\n");
            let source = match rng.below(2) {
                0 => replace(s.gemm, format!("{store}{}", s.gemm)),
                _ => replace(s.gemm, format!("{}{store}", s.gemm)),
            };
            Mutant { source, operator: "store into a stage", must_refuse: Some(&["E0347"]), forbidden: &[] }
        }
        3 => {
            let exit = ["break", "continue", "return"][rng.below(3)];
            let (cond, meets): (String, ExitOracle) = match rng.below(2) {
                0 => {
                    let (c, f) = k_condition(rng);
                    (c, Box::new(move |k, _, _| f(k)))
                }
                _ => {
                    let (c, f) = thread_condition(rng);
                    (c, Box::new(move |_, t, b| f(t, b)))
                }
            };
            let never = trips.clone().all(|k| (0..s.threads).all(|t| (0..4).all(|b| !meets(k, t, b))));
            let source = replace(s.gemm, format!("{}        if {cond} {{\n            {exit};\n        }}\n", s.gemm));
            let must_refuse = if never { None } else { Some(&["E0346", "E0324"][..]) };
            Mutant { source, operator: "exit in the loop", must_refuse, forbidden: &[] }
        }
        4 => {
            let (cond, meets) = thread_condition(rng);
            let split = (0..4).any(|b| {
                let first = meets(0, b);
                (0..s.threads).any(|t| meets(t, b) != first)
            });
            let source = replace(s.loop_head, format!("    if {cond} {{\n        return;\n    }}\n{}", s.loop_head));
            let must_refuse = if split { Some(&["E0324"][..]) } else { None };
            Mutant { source, operator: "return before the loop", must_refuse, forbidden: &[] }
        }
        5 => {
            let id = 1 + rng.below(15);
            // The consumers' 256 threads (the warp-specialized kernel's), or the block's.
            let source = replace(s.store, format!("    barrier_sync({id}, 256);\n{}", s.store));
            let (must_refuse, forbidden) =
                if id <= 2 { (Some(&["E0348"][..]), &[][..]) } else { (None, &["E0348"][..]) };
            Mutant { source, operator: "barrier_sync after the loop", must_refuse, forbidden }
        }
        6 => {
            // A store every thread runs, in the loop: the warp-specialized producer's loop only issues copies.
            let stmt = format!("{}        c[0, thread_idx.x % 8] = 1.0;\n", s.gemm);
            let (must_refuse, forbidden) =
                if s.warp_specialized { (Some(&["E0324"][..]), &[][..]) } else { (None, &["E0324"][..]) };
            Mutant { source: replace(s.gemm, stmt), operator: "a thread's store in the loop", must_refuse, forbidden }
        }
        _ => {
            let t = [0i64, 5, 127, 128, 200, 383][rng.below(6)];
            // A store runs on the thread the program names, the producer's included; the consumers' work (the
            // accumulator's registers) runs on the consumers only, so under a producer's thread on none.
            let work = rng.below(2) == 0;
            let body = if work { "acc[0] = 0.0;" } else { "c[0, 0] = 1.0;" };
            let stmt = format!("    if thread_idx.x == {t} {{\n        {body}\n    }}\n{}", s.store);
            let producer = s.warp_specialized && t < 128 && work;
            let (must_refuse, forbidden) =
                if producer { (Some(&["E0324"][..]), &[][..]) } else { (None, &["E0324"][..]) };
            Mutant {
                source: replace(s.store, stmt),
                operator: "a thread's statement after the loop",
                must_refuse,
                forbidden,
            }
        }
    }
}

fn subject(file: &str, gemm: &'static str, store: &'static str, warp_specialized: bool, threads: i64) -> Subject {
    let path = cutec_tests::repo_root().join(file);
    let source = std::fs::read_to_string(&path).expect("readable");
    let loop_head = "    for k in 0..ceil_div(K, BK) pipelined(stages = STAGES) {\n";
    Subject { name: repo_relative(&path), source, gemm, loop_head, store, warp_specialized, threads }
}

#[test]
fn scheduled_mutants_are_refused_or_right() {
    let seed = seed(0x5EED_0346);
    let mut rng = Rng::new(seed);
    let subjects = [
        subject(
            "examples/gemm_sm90.cute",
            "        gemm(mma, ta, tb, acc);\n",
            "    store(acc, local_tile(c, (BM, BN), (block_idx.x, block_idx.y)));\n",
            true,
            384,
        ),
        subject(
            "examples/gemm_pipelined.cute",
            "        gemm(mma, ta, tb, acc);\n",
            "    store(acc, local_tile(c, (BM, BN), (block_idx.x, block_idx.y)));\n",
            false,
            256,
        ),
    ];
    let opts = cutec::build::BuildOptions::default();
    // Per operator: (mutants, refused, built).
    let mut counts: std::collections::BTreeMap<&str, (usize, usize, usize)> = Default::default();
    let mut cpu_runs = 0;
    for case in 0..CASES {
        let s = &subjects[rng.below(subjects.len())];
        let m = mutate(&mut rng, s);
        let result = cutec::build::build_source(&s.name, &m.source, &opts);
        let codes: Vec<&str> = match &result {
            Ok(_) => Vec::new(),
            Err(f) => f.diagnostics.iter().filter(|d| d.is_error()).map(|d| d.code).collect(),
        };
        // `CUTEC_MUTANTS_DIR=DIR`: the mutants that build and compute what the example computes go to DIR, for
        // scripts/gpu/mutants_check.py to run against torch.
        if let (Ok(dir), Ok(_)) = (std::env::var("CUTEC_MUTANTS_DIR"), &result)
            && matches!(m.operator, "gemm in both branches" | "barrier_sync after the loop")
        {
            let stem = s.name.trim_start_matches("examples/").trim_end_matches(".cute");
            std::fs::write(format!("{dir}/{stem}__{case}.cute"), &m.source).expect("the mutants' folder is writable");
        }
        // The same computation as the example: it must give the same numbers, race-free, on the CPU.
        if let Ok((_, art)) = &result
            && matches!(m.operator, "gemm in both branches" | "barrier_sync after the loop")
            && cpu_runs < CPU_RUNS
        {
            cpu_runs += 1;
            let kernel = art.manifest.kernels.first().map(|k| k.name.clone()).unwrap_or_default();
            let (mm, n, k) = (129, 264, 72);
            let dims = [("M", mm as i64), ("N", n as i64), ("K", k as i64)];
            let latest = cutec::run::CpuOptions { schedule: cutec_interp::Schedule::Latest, ..Default::default() };
            let run = crate::interp::run_built(art, &kernel, &dims, &["a", "b"], &["c"], &[], latest);
            let t = run.unwrap_or_else(|e| panic!("case {case} (seed {seed}) fails on the CPU: {e}\n{}", m.source));
            let want = crate::interp::matmul_nt(t.get("a"), t.get("b"), mm, n, k);
            let what = format!("case {case} (seed {seed}), {} on {}:\n{}", m.operator, s.name, m.source);
            crate::interp::assert_close(&what, t.get("c"), &want, 1.0 / 128.0);
        }
        let entry = counts.entry(m.operator).or_default();
        entry.0 += 1;
        if result.is_ok() {
            entry.2 += 1;
        } else {
            entry.1 += 1;
        }
        let context =
            || format!("case {case} (seed {seed}), {} on {}: got {codes:?}\n{}", m.operator, s.name, m.source);
        // Nothing is refused without a code, and nothing is an internal error.
        assert!(!codes.contains(&"E0399"), "an internal error: {}", context());
        if let Some(expected) = m.must_refuse {
            assert!(
                codes.iter().any(|c| expected.contains(c)),
                "must be refused with one of {expected:?}: {}",
                context()
            );
        }
        for f in m.forbidden {
            assert!(!codes.contains(f), "must not be refused with {f}: {}", context());
        }
    }
    eprintln!("schedule mutation test ({CASES} programs, seed {seed}): {counts:?} (mutants, refused, built)");
    assert!(cpu_runs > 0, "no built mutant ran on the CPU: {counts:?}");
    for op in [
        "gemm in both branches",
        "barrier_sync after the loop",
        "a thread's statement after the loop",
        "a thread's store in the loop",
    ] {
        assert!(counts.get(op).is_some_and(|c| c.2 > 0), "no `{op}` mutant built: {counts:?}");
    }
}

//! The uniformity proof against generated programs: the collectives of `examples/wgmma_rs.cute` (`gemm`,
//! `wgmma_wait`, `sync_threads`, in a block of one warpgroup) are moved under generated conditions on the thread,
//! lane, warp and block indices and a dynamic dimension, directly or through a variable. An oracle evaluates each
//! condition for every thread of the block: a condition that differs between two threads of the warpgroup must be
//! refused (E0312); one that is the same for all of them may compile (the proof is conservative), and some must.

use cutec_tests::{Rng, repo_relative, seed};

const CASES: usize = 160;

/// An integer expression of the generator, with its source text and its value for one thread.
#[derive(Clone, Debug)]
enum Term {
    Atom(&'static str),
    Bin(Box<Term>, &'static str, i64),
}

/// What one thread sees: its index in the block, the block's index, and the dynamic dimension `K`.
#[derive(Clone, Copy)]
struct Thread {
    tid: i64,
    block: i64,
    k: i64,
}

impl Term {
    fn text(&self) -> String {
        match self {
            Term::Atom(a) => (*a).to_string(),
            Term::Bin(t, op, c) => format!("({} {op} {c})", t.text()),
        }
    }

    /// The value, with the language's semantics: signed, division and remainder truncating toward zero.
    fn eval(&self, t: Thread) -> i64 {
        match self {
            Term::Atom("thread_idx.x") => t.tid,
            Term::Atom("lane_idx") => t.tid % 32,
            Term::Atom("warp_idx") => t.tid / 32,
            Term::Atom("block_idx.x") => t.block,
            Term::Atom(_) => t.k,
            Term::Bin(x, op, c) => {
                let x = x.eval(t);
                match *op {
                    "/" => x / c,
                    "%" => x % c,
                    "&" => x & c,
                    "+" => x + c,
                    "*" => x * c,
                    _ => x >> c,
                }
            }
        }
    }
}

const ATOMS: &[&str] = &["thread_idx.x", "lane_idx", "warp_idx", "block_idx.x", "K"];
const CONSTANTS: &[i64] = &[1, 2, 3, 4, 16, 32, 64, 96, 128, 256];

fn term(rng: &mut Rng, depth: usize) -> Term {
    if depth == 0 || rng.below(3) == 0 {
        return Term::Atom(ATOMS[rng.below(ATOMS.len())]);
    }
    let ops = ["/", "%", "&", "+", "*", ">>"];
    let op = ops[rng.below(ops.len())];
    let c = match op {
        ">>" => 1 + rng.below(7) as i64,
        _ => CONSTANTS[rng.below(CONSTANTS.len())],
    };
    Term::Bin(Box::new(term(rng, depth - 1)), op, c)
}

/// A condition: `term cmp constant`, as text, and its value for a thread.
fn condition(rng: &mut Rng) -> (String, impl Fn(Thread) -> bool + use<>) {
    let t = term(rng, 3);
    let cmps = ["==", "!=", "<", ">="];
    let cmp = cmps[rng.below(cmps.len())];
    let c = match rng.below(3) {
        0 => 0,
        _ => CONSTANTS[rng.below(CONSTANTS.len())],
    };
    let text = format!("{} {cmp} {c}", t.text());
    let value = move |th: Thread| {
        let v = t.eval(th);
        match cmp {
            "==" => v == c,
            "!=" => v != c,
            "<" => v < c,
            _ => v >= c,
        }
    };
    (text, value)
}

/// Whether the condition is the same for all 128 threads of the block, for every block and `K` sampled.
fn whole_warpgroup(value: &impl Fn(Thread) -> bool) -> bool {
    [0, 1, 5, 77].iter().all(|&block| {
        [64, 100, 1000].iter().all(|&k| {
            let first = value(Thread { tid: 0, block, k });
            (0..128).all(|tid| value(Thread { tid, block, k }) == first)
        })
    })
}

#[test]
fn collectives_under_generated_conditions_are_refused_unless_every_thread_agrees() {
    let seed = seed(0x5EED_0312);
    let mut rng = Rng::new(seed);
    let path = cutec_tests::repo_root().join("examples/wgmma_rs.cute");
    let (name, src) = (repo_relative(&path), std::fs::read_to_string(&path).expect("readable"));
    // The statements to move: each is a whole line of the loop's body.
    let targets = [
        "        gemm(mma, fa, sb, acc, accumulate = k > 0); // BK / 16 wgmma.mma_async with A from registers\n",
        "        wgmma_wait<0>();\n",
        "        sync_threads(); // every warp is done with sb before it is loaded again\n",
    ];
    for t in targets {
        assert!(src.contains(t), "wgmma_rs.cute no longer has the line `{}`", t.trim());
    }
    let opts = cutec::build::BuildOptions::default();
    let (mut split, mut whole, mut whole_compiled) = (0usize, 0usize, 0usize);
    for case in 0..CASES {
        let target = targets[rng.below(targets.len())];
        let (cond, value) = condition(&mut rng);
        // Directly under the condition, or under a variable written under it.
        let moved = match rng.below(2) {
            0 => format!("        if {cond} {{\n    {}        }}\n", target.trim_start()),
            _ => format!(
                "        let mut d = 0;\n        if {cond} {{\n            d = 1;\n        }}\n        if d == 1 {{\n    \
                 {}        }}\n",
                target.trim_start()
            ),
        };
        let input = src.replacen(target, &moved, 1);
        let result = cutec::build::build_source(&name, &input, &opts);
        let codes: Vec<&str> = match &result {
            Ok(_) => Vec::new(),
            Err(f) => f.diagnostics.iter().map(|d| d.code).collect(),
        };
        if whole_warpgroup(&value) {
            // The proof may not see that every thread agrees (`(thread_idx.x % 256) < 300`): no assertion here.
            whole += 1;
            whole_compiled += usize::from(result.is_ok());
        } else {
            split += 1;
            assert!(
                codes.contains(&"E0312"),
                "case {case} (seed {seed}): `{cond}` splits the warpgroup but the build gave {codes:?}:\n{input}"
            );
        }
    }
    eprintln!(
        "collectives mutation test: {CASES} programs, {split} split (all refused), {whole} whole ({whole_compiled} compiled)"
    );
    assert!(
        split > CASES / 8 && whole_compiled > 0,
        "the generator should make both kinds: {split} split, {whole_compiled} compiled"
    );
}

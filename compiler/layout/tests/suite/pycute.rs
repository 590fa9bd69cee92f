//! Differential test against pycute (CUTLASS's pure-Python CuTe), run from the `nvidia-cutlass==4.2.0.0` wheel
//! that `scripts/install-pycute.sh` installs into `$CUTEC_PYCUTE_DIR` (default `$HOME/.cache/cutec/pycute`).
//! Thousands of seeded random cases go to one python3 process (`tests/pycute_oracle.py`, JSON lines); results
//! are compared as functions: size, rank, the size of each mode and the index of every coordinate.
//! Divergences where we follow CUTLASS C++ (listed in the crate docs) are counted, not failed.

use std::fmt::Write as _;
use std::io::Write as _;
use std::process::{Command, Stdio};

use cutec_layout::*;

use super::rng::{self, Rng};

const MAX_INDICES: i64 = 512;
const CASES_PER_OP: usize = 300;

/// The argument after the layout.
#[derive(Clone, Debug)]
enum Arg {
    None,
    Int(i64),
    Layout(Layout),
    Tuple(Vec<Arg>),
}

fn json_tuple(t: &IntTuple, out: &mut String) {
    match t {
        IntTuple::Int(i) => write!(out, "{}", i.value().unwrap()).unwrap(),
        IntTuple::Tuple(v) => {
            out.push('[');
            for (k, x) in v.iter().enumerate() {
                if k > 0 {
                    out.push(',');
                }
                json_tuple(x, out);
            }
            out.push(']');
        }
    }
}

fn json_layout(l: &Layout, out: &mut String) {
    out.push_str("{\"shape\":");
    json_tuple(l.shape(), out);
    out.push_str(",\"stride\":");
    json_tuple(l.stride(), out);
    out.push('}');
}

fn json_arg(a: &Arg, out: &mut String) {
    match a {
        Arg::None => out.push_str("null"),
        Arg::Int(v) => write!(out, "{v}").unwrap(),
        Arg::Layout(l) => json_layout(l, out),
        Arg::Tuple(v) => {
            out.push('[');
            for (k, x) in v.iter().enumerate() {
                if k > 0 {
                    out.push(',');
                }
                json_arg(x, out);
            }
            out.push(']');
        }
    }
}

impl std::fmt::Display for Arg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Arg::None => f.write_str("_"),
            Arg::Int(v) => write!(f, "{v}"),
            Arg::Layout(l) => write!(f, "{l}"),
            Arg::Tuple(v) => {
                let items: Vec<String> = v.iter().map(|x| x.to_string()).collect();
                write!(f, "({})", items.join(","))
            }
        }
    }
}

fn tiler(a: &Arg) -> Tiler {
    match a {
        Arg::None => Tiler::Underscore,
        Arg::Int(v) => Tiler::from_shape(&IntTuple::int(*v)),
        Arg::Layout(l) => Tiler::Layout(l.clone()),
        Arg::Tuple(v) => Tiler::Tuple(v.iter().map(tiler).collect()),
    }
}

fn profile(a: &Arg) -> IntTuple {
    match a {
        Arg::Tuple(v) => IntTuple::Tuple(v.iter().map(profile).collect()),
        _ => IntTuple::int(1),
    }
}

struct Case {
    op: &'static str,
    a: Layout,
    b: Arg,
}

fn ours(c: &Case) -> Result<Layout> {
    let (a, b) = (&c.a, &c.b);
    let layout_b = || match b {
        Arg::Layout(l) => l.clone(),
        _ => unreachable!(),
    };
    match c.op {
        "composition" => composition_tiler(a, &tiler(b)),
        "complement" => match b {
            Arg::Int(m) => complement(a, &IntTuple::int(*m)),
            _ => unreachable!(),
        },
        "right_inverse" => right_inverse(a),
        "left_inverse" => left_inverse(a),
        "coalesce" => match b {
            Arg::None => coalesce(a),
            p => coalesce_by(a, &profile(p)),
        },
        "filter" => match b {
            Arg::None => filter(a),
            p => filter_by(a, &profile(p)),
        },
        "logical_divide" => logical_divide(a, &tiler(b)),
        "zipped_divide" => zipped_divide(a, &tiler(b)),
        "tiled_divide" => tiled_divide(a, &tiler(b)),
        "logical_product" => logical_product(a, &tiler(b)),
        "zipped_product" => zipped_product(a, &tiler(b)),
        "tiled_product" => tiled_product(a, &tiler(b)),
        "blocked_product" => blocked_product(a, &layout_b()),
        "raked_product" => raked_product(a, &layout_b()),
        op => panic!("no such op {op}"),
    }
}

fn size_of(l: &Layout) -> i64 {
    l.size().unwrap().value().unwrap()
}

/// An injective layout whose image fits in `[0, size(within))` and whose tiles cover `within` exactly (outside its domain pycute's coalesce forgets a
/// layout's last stride, where C++ keeps it), or `size:1`.
fn fitting(rng: &mut Rng, within: &Layout, pow2: bool) -> Layout {
    let size = size_of(within);
    let exact = |extent: i64| {
        let rest =
            cutec_layout::int_tuple::ceil_div_tuple(LayoutOp::CeilDiv, within.shape(), &IntTuple::int(extent)).unwrap();
        rest.product(LayoutOp::Size).unwrap().value() == Some(size / extent)
    };
    (0..20)
        .map(|_| rng::injective(rng, pow2))
        .find(|b| {
            // The tiles must cover `size` exactly: C++ divides the shape of A by the tile's extent mode by
            // mode, pycute divides its size, and the two agree only then.
            let extent = b.leaves().iter().map(|(s, d)| s.value().unwrap() * d.value().unwrap()).max().unwrap();
            b.cosize().unwrap().value().unwrap() <= size && extent > 0 && size % extent == 0 && exact(extent)
        })
        .unwrap_or_else(|| Layout::int(size, 1).unwrap())
}

/// A tiler for divides that fits `a`: a layout, or a tuple of divisors and layouts (at most rank(a) modes).
fn divide_tiler(rng: &mut Rng, a: &Layout, pow2: bool, full_rank: bool) -> Arg {
    if rng.chance(40) {
        return Arg::Layout(fitting(rng, a, pow2));
    }
    let n = if full_rank { a.rank() } else { rng.range(1, a.rank() as i64) as usize };
    Arg::Tuple(
        a.modes()[..n]
            .iter()
            .map(|m| {
                let size = size_of(m);
                if rng.chance(50) {
                    let exact = |d: i64| {
                        let rest =
                            cutec_layout::int_tuple::ceil_div_tuple(LayoutOp::CeilDiv, m.shape(), &IntTuple::int(d));
                        rest.unwrap().product(LayoutOp::Size).unwrap().value() == Some(size / d)
                    };
                    let divisors: Vec<i64> = (1..=size).filter(|&d| size % d == 0 && exact(d)).collect();
                    Arg::Int(*rng.pick(&divisors))
                } else {
                    Arg::Layout(fitting(rng, m, pow2))
                }
            })
            .collect(),
    )
}

fn ones_profile(rng: &mut Rng, a: &Layout) -> Arg {
    if !a.shape().is_tuple() || rng.chance(30) {
        return Arg::None;
    }
    Arg::Tuple((0..rng.range(1, a.rank() as i64)).map(|_| Arg::Int(1)).collect())
}

fn generate(rng: &mut Rng, op: &'static str) -> Case {
    let pow2 = rng.chance(70);
    let (a, b) = match op {
        "composition" => {
            // B's image stays inside A's domain: outside it pycute's coalesce forgets A's last stride.
            let a = rng::layout(rng, pow2);
            let inside = |rng: &mut Rng, m: &Layout| {
                let size = m.size().unwrap().value().unwrap();
                (0..20)
                    .map(|_| if rng.chance(50) { rng::compact(rng, pow2) } else { rng::layout(rng, pow2) })
                    .find(|b| b.cosize().unwrap().value().unwrap() <= size)
                    .unwrap_or_else(|| Layout::int(size, 1).unwrap())
            };
            let b = if rng.chance(25) {
                Arg::Tuple(a.modes().iter().map(|m| Arg::Layout(inside(rng, m))).collect())
            } else {
                Arg::Layout(inside(rng, &a))
            };
            (a, b)
        }
        "complement" => {
            let a = rng::injective(rng, pow2);
            let m = a.cosize().unwrap().value().unwrap() * rng.range(1, 3);
            (a, Arg::Int(m))
        }
        "right_inverse" => (if rng.chance(50) { rng::layout(rng, pow2) } else { rng::injective(rng, pow2) }, Arg::None),
        "left_inverse" => (rng::injective(rng, pow2), Arg::None),
        "coalesce" | "filter" => {
            let a = rng::layout(rng, pow2);
            let p = ones_profile(rng, &a);
            (a, p)
        }
        "logical_divide" | "zipped_divide" | "tiled_divide" => {
            let a = if rng.chance(50) { rng::compact(rng, pow2) } else { rng::layout(rng, pow2) };
            let t = divide_tiler(rng, &a, pow2, op != "logical_divide");
            (a, t)
        }
        "logical_product" | "zipped_product" | "tiled_product" => {
            let a = rng::injective(rng, pow2);
            let b = if rng.chance(70) {
                Arg::Layout(rng::injective(rng, pow2))
            } else {
                Arg::Tuple((0..rng.range(1, a.rank() as i64)).map(|_| Arg::Layout(rng::compact(rng, pow2))).collect())
            };
            (a, b)
        }
        _ => (rng::injective(rng, pow2), Arg::Layout(rng::compact(rng, pow2))),
    };
    Case { op, a, b }
}

const OPS: &[&str] = &[
    "composition",
    "complement",
    "right_inverse",
    "left_inverse",
    "coalesce",
    "filter",
    "logical_divide",
    "zipped_divide",
    "tiled_divide",
    "logical_product",
    "zipped_product",
    "tiled_product",
    "blocked_product",
    "raked_product",
];

/// What pycute answered.
enum Answer {
    Layout { size: i64, rank: i64, modes: Vec<i64>, indices: Vec<i64> },
    Error(String),
}

fn parse_answer(line: &str) -> Answer {
    if line.starts_with('"') {
        return Answer::Error(line.trim_matches('"').to_string());
    }
    let nums: Vec<i64> = line
        .split(['[', ']', ','])
        .filter(|s| !s.trim().is_empty())
        .map(|s| s.trim().parse().expect("a number"))
        .collect();
    let (size, rank) = (nums[0], nums[1]);
    let modes = nums[2..2 + rank as usize].to_vec();
    let indices = nums[2 + rank as usize..].to_vec();
    Answer::Layout { size, rank, modes, indices }
}

fn summary(l: &Layout) -> (i64, i64, Vec<i64>, Vec<i64>) {
    let size = l.size().unwrap().value().unwrap();
    let modes = l.modes().iter().map(|m| m.size().unwrap().value().unwrap()).collect();
    let n = size.min(MAX_INDICES);
    let indices = (0..n).map(|i| l.index(i).unwrap()).collect();
    (size, l.rank() as i64, modes, indices)
}

/// Where we follow CUTLASS C++ and pycute does not: C++'s shape divisibility check in composition, and its
/// detection of non-nesting strides in complement.
fn known_divergence(c: &Case, e: &LayoutError) -> bool {
    // C++'s coalesce_x keeps a trailing static size-1 mode of A (as size 2), so the mode before it is checked
    // for divisibility where pycute has already merged it away.
    let trailing_one = c.a.leaves().last().is_some_and(|(s, _)| s.is(1));
    match e {
        LayoutError::NotDivisible { what, .. } => what.contains("shape divisibility") || trailing_one,
        LayoutError::NotInjective { .. } => true,
        // C++'s zip needs both halves of a rank-sensitive product to be tuples of one rank.
        LayoutError::RankMismatch { op: LayoutOp::BlockedProduct | LayoutOp::RakedProduct, .. } => true,
        _ => false,
    }
}

/// pycute's right_inverse neither coalesces first nor skips stride-0 modes (it sorts them first and stops
/// there), so where a layout is not injective or has stride-0 modes its right inverse can be smaller than
/// C++'s. Ours must still be a right inverse, and at least as large.
fn right_inverse_divergence(c: &Case, r: &Layout, pycute_size: i64) -> bool {
    let ok = (0..size_of(r)).all(|i| c.a.index(r.index(i).unwrap()).unwrap() == i);
    ok && size_of(r) > pycute_size
}

/// C++'s left_inverse takes the modes of `coalesce(A)` by increasing stride and gives the holes between them
/// their own modes (stride 0 at the front), so outside the image of A it differs from pycute's. Ours must
/// still be a left inverse.
fn left_inverse_divergence(c: &Case, r: &Layout) -> bool {
    (0..size_of(&c.a)).all(|i| r.index(c.a.index(i).unwrap()).unwrap() == i)
}

fn pycute_dir() -> std::path::PathBuf {
    match std::env::var_os("CUTEC_PYCUTE_DIR") {
        Some(d) => d.into(),
        None => std::path::PathBuf::from(std::env::var_os("HOME").expect("HOME is set")).join(".cache/cutec/pycute"),
    }
}

#[test]
fn pycute_agrees_on_random_cases() {
    let dir = pycute_dir();
    assert!(
        dir.join("pycute/layout.py").is_file(),
        "pycute is not installed in {} (set CUTEC_PYCUTE_DIR or run scripts/install-pycute.sh)",
        dir.display()
    );
    let seed = rng::seed(0x5eed_c0de);
    let mut rng = Rng::new(seed);
    let cases: Vec<Case> = OPS
        .iter()
        .flat_map(|&op| (0..CASES_PER_OP).map(|_| op).collect::<Vec<_>>())
        .map(|op| generate(&mut rng, op))
        .collect();
    let mut input = String::new();
    for c in &cases {
        write!(input, "{{\"op\":\"{}\",\"a\":", c.op).unwrap();
        json_layout(&c.a, &mut input);
        input.push_str(",\"b\":");
        json_arg(&c.b, &mut input);
        input.push_str("}\n");
    }
    let oracle = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/pycute_oracle.py");
    let mut child = Command::new("python3")
        .arg(oracle)
        .env("PYTHONPATH", &dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 runs");
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "the oracle failed: {}", String::from_utf8_lossy(&output.stderr));
    let stdout = String::from_utf8(output.stdout).unwrap();
    let answers: Vec<&str> = stdout.lines().collect();
    assert_eq!(answers.len(), cases.len(), "one answer per case");

    let mut failures = Vec::new();
    let mut agreed = std::collections::BTreeMap::<&str, (usize, usize, usize)>::new();
    for (c, line) in cases.iter().zip(&answers) {
        let stats = agreed.entry(c.op).or_default();
        let what = || format!("{}({}, {})", c.op, c.a, c.b);
        match (ours(c), parse_answer(line)) {
            (Ok(l), Answer::Layout { size, .. })
                if c.op == "right_inverse" && right_inverse_divergence(c, &l, size) =>
            {
                stats.2 += 1
            }
            (Ok(l), Answer::Layout { size, rank, modes, indices })
                if c.op == "left_inverse"
                    && summary(&l) != (size, rank, modes.clone(), indices.clone())
                    && left_inverse_divergence(c, &l) =>
            {
                stats.2 += 1
            }
            (Ok(l), Answer::Layout { size, rank, modes, indices }) => {
                if summary(&l) != (size, rank, modes.clone(), indices.clone()) {
                    failures.push(format!(
                        "{}: ours {l} = {:?}, pycute {:?}",
                        what(),
                        summary(&l),
                        (size, rank, modes, indices)
                    ));
                } else {
                    stats.0 += 1;
                }
            }
            (Err(_), Answer::Error(_)) => stats.1 += 1,
            (Err(e), Answer::Layout { .. }) if known_divergence(c, &e) => stats.2 += 1,
            (Err(e), Answer::Layout { .. }) => {
                failures.push(format!("{}: ours fails ({e}), pycute answers {line}", what()))
            }
            // C++'s divisibility conditions are weak (a stride or shape smaller than the other passes) where
            // pycute asserts: the C++ oracle (module `cpp`) checks these answers.
            (Ok(_), Answer::Error(_)) if c.op != "right_inverse" && c.op != "left_inverse" => stats.2 += 1,
            (Ok(l), Answer::Error(e)) => failures.push(format!("{}: ours {l}, pycute fails ({e})", what())),
        }
    }
    for (op, (ok, both_err, diverge)) in &agreed {
        eprintln!("{op:>16}: {ok} agree, {both_err} both fail, {diverge} known divergences");
        // A known divergence is checked against C++'s semantics (the inverses) or C++'s errors.
        assert!(
            *ok > 0 && (*ok + *diverge) * 2 >= CASES_PER_OP,
            "{op}: only {ok} of {CASES_PER_OP} cases compared (seed {seed})"
        );
    }
    let shown: Vec<String> = failures.iter().take(12).map(|f| f.chars().take(400).collect()).collect();
    assert!(
        failures.is_empty(),
        "seed {seed} (CUTEC_SEED to replay): {} failures:\n{}",
        failures.len(),
        shown.join("\n")
    );
}

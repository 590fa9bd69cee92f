//! Throughput of the layout expression evaluator: 100,000 random expressions through `eval`, then 10,000
//! lines through `eval_lines`. Prints the figures; asserts nothing about time.
//!
//! Run: `cargo bench -p cutec-layout --bench eval`.

use std::hint::black_box;
use std::time::Instant;

use cutec_layout::{eval, eval_lines};

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A random small layout in CuTe's notation.
fn layout(rng: &mut Rng) -> String {
    let n = 1 + rng.below(3);
    let shapes: Vec<u64> = (0..n).map(|_| 1 << rng.below(4)).collect();
    let mut strides = Vec::new();
    let mut current = 1;
    for s in &shapes {
        strides.push(current);
        current *= s * (1 + rng.below(2));
    }
    let join = |v: &[u64]| v.iter().map(u64::to_string).collect::<Vec<_>>().join(",");
    format!("({}):({})", join(&shapes), join(&strides))
}

fn expression(rng: &mut Rng) -> String {
    let (a, b) = (layout(rng), layout(rng));
    match rng.below(12) {
        0 => format!("composition({a}, {b})"),
        1 => format!("complement({a}, 256)"),
        2 => format!("coalesce({a})"),
        3 => format!("right_inverse({a})"),
        4 => format!("left_inverse({a})"),
        5 => format!("logical_divide({a}, 2:1)"),
        6 => format!("zipped_divide({a}, (2,1))"),
        7 => format!("logical_product({a}, {b})"),
        8 => format!("blocked_product({a}, {b})"),
        9 => format!("raked_product({a}, {b})"),
        10 => format!("size(get<0>({a}))"),
        _ => format!("tile_to_shape({a}, (16,16))"),
    }
}

fn main() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let exprs: Vec<String> = (0..100_000).map(|_| expression(&mut rng)).collect();
    let start = Instant::now();
    let mut ok = 0usize;
    for e in &exprs {
        ok += black_box(eval(e)).is_ok() as usize;
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "eval: {} expressions in {:.3} s = {:.0} expressions/s ({} evaluated, {} errors)",
        exprs.len(),
        secs,
        exprs.len() as f64 / secs,
        ok,
        exprs.len() - ok
    );

    let text: String = exprs[..10_000].iter().map(|e| format!("{e}\n")).collect();
    let start = Instant::now();
    let out = black_box(eval_lines(&text));
    let secs = start.elapsed().as_secs_f64();
    println!("eval_lines: 10000 lines in {:.3} s ({} output lines)", secs, out.lines().count());
}

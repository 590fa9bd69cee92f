//! A small seeded xorshift RNG and generators of random layouts.

use cutec_layout::{Int, IntTuple, Layout};

/// xorshift64*.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.max(1).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in `[lo, hi]`.
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next() % (hi - lo + 1) as u64) as i64
    }

    pub fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.next() as usize % items.len()]
    }
}

/// The seed of a test run: `CUTEC_SEED` or a fixed default, printed on failure by the callers.
pub fn seed(default: u64) -> u64 {
    std::env::var("CUTEC_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(default)
}

/// A random profile of `n` leaves: a tuple of rank 1..=3 whose modes may be tuples (depth <= 2).
fn profile(rng: &mut Rng, leaves: Vec<i64>) -> IntTuple {
    if leaves.len() == 1 && rng.chance(50) {
        return IntTuple::int(leaves[0]);
    }
    let mut modes = Vec::new();
    let mut it = leaves.into_iter().peekable();
    while it.peek().is_some() {
        let take = if rng.chance(30) { 2 } else { 1 };
        let group: Vec<i64> = it.by_ref().take(take).collect();
        modes.push(if group.len() == 1 { IntTuple::int(group[0]) } else { IntTuple::ints(&group) });
    }
    IntTuple::Tuple(modes)
}

/// Give `shape`'s profile to a flat list of strides.
fn with_profile(shape: &IntTuple, strides: &[i64]) -> IntTuple {
    let mut it = strides.iter();
    shape.map(|_| Int::Static(*it.next().unwrap_or(&0)))
}

/// Leaf shapes: powers of two (`pow2`) or small integers.
fn leaves(rng: &mut Rng, n: usize, pow2: bool) -> Vec<i64> {
    (0..n).map(|_| if pow2 { 1 << rng.range(0, 3) } else { rng.range(1, 6) }).collect()
}

/// A random layout: arbitrary non-negative strides (stride 0 sometimes).
pub fn layout(rng: &mut Rng, pow2: bool) -> Layout {
    let n = rng.range(1, 4) as usize;
    let shapes = leaves(rng, n, pow2);
    let strides: Vec<i64> = (0..n)
        .map(|_| {
            if rng.chance(10) {
                0
            } else if pow2 {
                1 << rng.range(0, 5)
            } else {
                rng.range(1, 24)
            }
        })
        .collect();
    let shape = profile(rng, shapes);
    Layout::new(shape.clone(), with_profile(&shape, &strides)).unwrap()
}

/// A random injective layout whose sorted strides nest (CuTe's admissible complement inputs): compact
/// strides in a random order, with holes (a factor 1..3 between consecutive modes).
pub fn injective(rng: &mut Rng, pow2: bool) -> Layout {
    let n = rng.range(1, 4) as usize;
    let shapes = leaves(rng, n, pow2);
    let mut order: Vec<usize> = (0..n).collect();
    for k in (1..n).rev() {
        order.swap(k, rng.range(0, k as i64) as usize);
    }
    let mut strides = vec![0i64; n];
    let mut current = if pow2 { 1 << rng.range(0, 1) } else { rng.range(1, 2) };
    for &k in &order {
        strides[k] = current;
        let hole = if pow2 { 1 << rng.range(0, 1) } else { rng.range(1, 3) };
        current *= shapes[k] * hole;
    }
    let shape = profile(rng, shapes);
    Layout::new(shape.clone(), with_profile(&shape, &strides)).unwrap()
}

/// A compact layout (a bijection onto `[0, size)`), in a random mode order.
pub fn compact(rng: &mut Rng, pow2: bool) -> Layout {
    let n = rng.range(1, 4) as usize;
    let shapes = leaves(rng, n, pow2);
    let mut order: Vec<usize> = (0..n).collect();
    for k in (1..n).rev() {
        order.swap(k, rng.range(0, k as i64) as usize);
    }
    let mut strides = vec![0i64; n];
    let mut current = 1;
    for &k in &order {
        strides[k] = current;
        current *= shapes[k];
    }
    let shape = profile(rng, shapes);
    Layout::new(shape.clone(), with_profile(&shape, &strides)).unwrap()
}

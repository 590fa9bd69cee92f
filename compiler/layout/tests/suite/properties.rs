//! Property tests over seeded random layouts: each operation's post-condition, checked element by element.

use std::collections::HashSet;

use cutec_layout::*;

use super::rng::{self, Rng};

const ROUNDS: usize = 400;

fn size(l: &Layout) -> i64 {
    l.size().unwrap().value().unwrap()
}

fn run(name: &str, mut f: impl FnMut(&mut Rng, bool) -> Option<String>) {
    let seed = rng::seed(0xC0FFEE);
    let mut rng = Rng::new(seed ^ name.len() as u64);
    let mut checked = 0;
    for round in 0..ROUNDS {
        let pow2 = rng.chance(60);
        match f(&mut rng, pow2) {
            Some(failure) if failure.is_empty() => checked += 1,
            Some(failure) => panic!("{name}, seed {seed} (CUTEC_SEED), round {round}: {failure}"),
            None => {}
        }
    }
    assert!(checked >= ROUNDS / 3, "{name}: only {checked} of {ROUNDS} cases applied");
}

/// CuTe's `compatible(a, b)`: the sizes agree at every leaf of `a`.
fn compatible(a: &IntTuple, b: &IntTuple) -> bool {
    match (a, b) {
        (IntTuple::Int(x), _) => Some(x.clone()) == b.product(LayoutOp::Size).ok(),
        (IntTuple::Tuple(x), IntTuple::Tuple(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| compatible(p, q))
        }
        _ => false,
    }
}

/// `Some("")` when the property holds, `Some(why)` when it fails, `None` when the case does not apply.
fn holds(ok: bool, why: impl FnOnce() -> String) -> Option<String> {
    Some(if ok { String::new() } else { why() })
}

#[test]
fn composition_is_function_composition() {
    run("composition", |rng, pow2| {
        // Composition distributes over the modes of B, which is exact for an injective B. CuTe's divisibility
        // conditions are weak (a stride smaller than a shape passes), so only powers of two, which always
        // divide, are sure to compose as functions.
        if !pow2 {
            return None;
        }
        let a = rng::layout(rng, pow2);
        let b = if rng.chance(50) { rng::compact(rng, pow2) } else { rng::injective(rng, pow2) };
        let r = composition(&a, &b).ok()?;
        let same_shape = compatible(b.shape(), r.shape());
        let same = (0..size(&b)).all(|i| r.index(i).unwrap() == a.index(b.index(i).unwrap()).unwrap());
        holds(same_shape && same, || format!("{a} o {b} = {r}"))
    });
}

#[test]
fn complement_is_disjoint_and_fills_the_cotarget() {
    run("complement", |rng, pow2| {
        let a = rng::injective(rng, pow2);
        let cosize = a.cosize().unwrap().value().unwrap();
        let m = cosize * rng.range(1, 3);
        let c = complement(&a, &IntTuple::int(m)).ok()?;
        let image: HashSet<i64> = a.indices().unwrap().into_iter().collect();
        let rest = c.indices().unwrap();
        let disjoint = rest.iter().skip(1).all(|i| !image.contains(i));
        let ordered = rest.windows(2).all(|w| w[0] < w[1]);
        let both = Layout::from_modes(vec![a.clone(), c.clone()]);
        let all: Vec<i64> = both.indices().unwrap();
        let injective = all.iter().collect::<HashSet<_>>().len() == all.len();
        let fills = both.cosize().unwrap().value().unwrap() >= m;
        holds(disjoint && ordered && injective && fills, || format!("complement({a}, {m}) = {c}"))
    });
}

#[test]
fn right_inverse_is_a_right_inverse() {
    run("right_inverse", |rng, pow2| {
        let a = if rng.chance(50) { rng::layout(rng, pow2) } else { rng::compact(rng, pow2) };
        let r = right_inverse(&a).ok()?;
        holds((0..size(&r)).all(|i| a.index(r.index(i).unwrap()).unwrap() == i), || format!("right_inverse({a}) = {r}"))
    });
}

#[test]
fn compact_layouts_have_full_right_inverses() {
    run("right_inverse_compact", |rng, pow2| {
        let a = rng::compact(rng, pow2);
        let r = right_inverse(&a).ok()?;
        holds(size(&r) == size(&a), || format!("right_inverse({a}) = {r}"))
    });
}

#[test]
fn left_inverse_is_a_left_inverse() {
    run("left_inverse", |rng, pow2| {
        let a = rng::injective(rng, pow2);
        let r = left_inverse(&a).ok()?;
        holds((0..size(&a)).all(|i| r.index(a.index(i).unwrap()).unwrap() == i), || format!("left_inverse({a}) = {r}"))
    });
}

#[test]
fn coalesce_preserves_the_function() {
    run("coalesce", |rng, pow2| {
        let a = rng::layout(rng, pow2);
        let c = coalesce(&a).ok()?;
        let by_mode = coalesce_by(&a, &IntTuple::ints(&vec![1; a.rank()])).ok()?;
        let ok = size(&c) == size(&a)
            && c.depth() <= 1
            && c.indices().unwrap() == a.indices().unwrap()
            && by_mode.rank() == a.rank()
            && by_mode.indices().unwrap() == a.indices().unwrap();
        holds(ok, || format!("coalesce({a}) = {c}, by mode {by_mode}"))
    });
}

#[test]
fn filter_keeps_the_image() {
    run("filter", |rng, pow2| {
        let a = rng::layout(rng, pow2);
        let f = filter(&a).ok()?;
        let image = |l: &Layout| l.indices().unwrap().into_iter().collect::<HashSet<_>>();
        holds(image(&f) == image(&a), || format!("filter({a}) = {f}"))
    });
}

#[test]
fn divides_keep_the_elements() {
    run("divide", |rng, pow2| {
        let a = rng::compact(rng, pow2);
        let n = size(&a);
        // Tiles that divide the shape mode by mode (C++ takes the complement within shape(A)).
        let exact = |d: i64| {
            let rest =
                cutec_layout::int_tuple::ceil_div_tuple(LayoutOp::CeilDiv, a.shape(), &IntTuple::int(d)).unwrap();
            rest.product(LayoutOp::Size).unwrap().value() == Some(n / d)
        };
        let divisors: Vec<i64> = (1..=n).filter(|&d| n % d == 0 && exact(d)).collect();
        let t = *rng.pick(&divisors);
        let tiler = Tiler::Layout(Layout::int(t, 1).unwrap());
        let ld = logical_divide(&a, &tiler).ok()?;
        let zd = zipped_divide(&a, &tiler).ok()?;
        let td = tiled_divide(&a, &tiler).ok()?;
        let tile = composition(&a, &Layout::int(t, 1).unwrap()).ok()?;
        let ok = ld.rank() == 2
            && size(&ld) == n
            && ld.mode(0).unwrap().indices().unwrap() == tile.indices().unwrap()
            && zd.indices().unwrap() == ld.indices().unwrap()
            && td.indices().unwrap() == ld.indices().unwrap()
            && size(&ld.mode(1).unwrap()) == n / t;
        holds(ok, || format!("logical_divide({a}, {t}:1) = {ld}, zipped {zd}, tiled {td}"))
    });
}

#[test]
fn products_multiply_sizes() {
    run("product", |rng, pow2| {
        // Powers of two: with other sizes CuTe's weak divisibility can make the product overlap itself.
        if !pow2 {
            return None;
        }
        let a = rng::injective(rng, pow2);
        let b = rng::compact(rng, pow2);
        let lp = logical_product(&a, &Tiler::Layout(b.clone())).ok()?;
        let bp = blocked_product(&a, &b).ok()?;
        let rp = raked_product(&a, &b).ok()?;
        let n = size(&a) * size(&b);
        let image = |l: &Layout| l.indices().unwrap().into_iter().collect::<HashSet<_>>();
        let ok = lp.rank() == 2
            && lp.mode(0).unwrap() == a
            && size(&lp) == n
            && bp.rank() == a.rank().max(b.rank())
            && size(&bp) == n
            && size(&rp) == n
            && image(&bp) == image(&lp)
            && image(&rp) == image(&lp)
            && image(&lp).len() as i64 == n;
        holds(ok, || format!("products of {a} and {b}: logical {lp}, blocked {bp}, raked {rp}"))
    });
}

#[test]
fn tile_to_shape_fills_the_shape() {
    run("tile_to_shape", |rng, pow2| {
        let block = rng::compact(rng, pow2);
        let extra = rng.range(0, 1);
        let mut shape: Vec<i64> = block.modes().iter().map(|m| size(m) * rng.range(1, 3)).collect();
        shape.extend((0..extra).map(|_| 2));
        let target = IntTuple::ints(&shape);
        let t = tile_to_shape(&block, &target, None).ok()?;
        let sizes: Vec<i64> = t.modes().iter().map(size).collect();
        let image: HashSet<i64> = t.indices().unwrap().into_iter().collect();
        holds(sizes == shape && image.len() as i64 == size(&t), || format!("tile_to_shape({block}, {target}) = {t}"))
    });
}

#[test]
fn ordered_layouts_are_compact() {
    run("make_ordered_layout", |rng, pow2| {
        let a = rng::compact(rng, pow2);
        let n = a.shape().rank();
        let order: Vec<i64> = (0..n).map(|_| rng.range(0, 9)).collect();
        let l = make_ordered_layout(a.shape(), &IntTuple::ints(&order)).ok()?;
        let mut idx = l.indices().unwrap();
        idx.sort();
        holds(idx == (0..size(&l)).collect::<Vec<_>>(), || {
            format!("make_ordered_layout({}, {order:?}) = {l}", a.shape())
        })
    });
}

#[test]
fn upcast_then_downcast_is_the_identity_on_row_major() {
    run("upcast", |rng, _| {
        let rows = rng.range(1, 8);
        let n = 1 << rng.range(0, 3);
        let cols = n * rng.range(2, 8); // one column of wide elements would collapse to stride 1
        let l = Layout::row_major(IntTuple::ints(&[rows, cols])).unwrap();
        let up = l.upcast(n).ok()?;
        let back = up.downcast(n).ok()?;
        holds(back == l && size(&up) * n == size(&l), || format!("{l} up {up} back {back}"))
    });
}

#[test]
fn swizzles_are_involutions() {
    run("swizzle", |rng, _| {
        let b = rng.range(0, 3);
        let s = Swizzle::new(b, rng.range(0, 4), b + rng.range(0, 3)).ok()?;
        holds((0..4096).all(|x| s.apply(s.apply(x)) == x), || format!("{s}"))
    });
}

#[test]
fn make_layout_tv_covers_the_tile_once() {
    run("make_layout_tv", |rng, _| {
        let thr = Layout::row_major(IntTuple::ints(&[rng.range(1, 4), rng.range(1, 8)])).unwrap();
        let val = Layout::row_major(IntTuple::ints(&[rng.range(1, 3), rng.range(1, 4)])).unwrap();
        let (tile, tv) = make_layout_tv(&thr, &val).ok()?;
        let mut idx = tv.indices().unwrap();
        idx.sort();
        let n = tile.product(LayoutOp::Size).unwrap().value().unwrap();
        holds(idx == (0..n).collect::<Vec<_>>(), || format!("make_layout_tv({thr}, {val}) = ({tile}, {tv})"))
    });
}

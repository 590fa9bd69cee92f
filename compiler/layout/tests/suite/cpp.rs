//! Differential test against CUTLASS's C++ CuTe: the headers of the `nvidia-cutlass==4.2.0.0` wheel (and the
//! libcu++ and CUDA headers they include), installed by `scripts/install-cute-headers.sh` into
//! `$CUTEC_CUTE_DIR` (default `$HOME/.cache/cutec/cute-headers`), compiled with g++ on the CPU.
//!
//! Thousands of seeded random cases of every operation of [`cutec_layout::OPS`] (swizzled layouts where CuTe
//! takes them) are written twice: as an expression of our evaluator and as a C++ expression over static
//! integers (`Int<N>{}`). Cases are batched a few hundred per translation unit, one function per line, and
//! the translation units are compiled and run in parallel (`CUTEC_CPP_JOBS`, default 2). C++ prints each
//! result with `cute::print`, which we read back without CuTe's `_` marks on static integers.
//!
//! * A case that C++ does not compile (a `static_assert` of CuTe fires) must be an `Err` here. The failing
//!   cases are found from the lines g++ reports in the translation unit (each case has its own line); the rest
//!   of the batch is compiled again until it compiles, and a batch whose errors name no case line is bisected.
//! * A case that C++ compiles must give exactly the same text here: shape and stride as printed, not only the
//!   same function.
//!
//! The test is skipped (with a message) only when the headers are absent and `CUTEC_REQUIRE_CPP` is unset;
//! `scripts/test.sh` sets it. `CUTEC_SEED` replays a seed, `CUTEC_CPP_CASES` sets the number of cases per
//! operation, `CUTEC_CPP_KEEP=1` keeps the generated sources (in the temporary folder it prints).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::{self, Write as _};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use cutec_layout::{ComposedLayout, Int, IntTuple, Layout, LayoutOp, OPS, Shape, Swizzle, eval};

use super::rng::{self, Rng};

/// Cases per operation (the total is this times the number of generators).
const CASES_PER_OP: usize = 50;
/// Cases per translation unit.
const BATCH: usize = 250;

/// An expression, printed both in our notation and in C++.
#[derive(Clone, Debug)]
enum E {
    Int(i64),
    Under,
    Tuple(Vec<E>),
    Layout(Layout),
    Swizzle(Swizzle),
    Composed(Box<ComposedLayout>),
    Call(&'static str, Vec<i64>, Vec<E>),
}

fn tuple(t: &IntTuple) -> E {
    match t {
        IntTuple::Int(i) => E::Int(i.value().unwrap_or(0)),
        IntTuple::Tuple(v) => E::Tuple(v.iter().map(tuple).collect()),
    }
}

fn call(name: &'static str, args: Vec<E>) -> E {
    E::Call(name, vec![], args)
}

fn call_g(name: &'static str, generics: Vec<i64>, args: Vec<E>) -> E {
    E::Call(name, generics, args)
}

fn list<T: fmt::Display>(f: &mut fmt::Formatter<'_>, items: &[T]) -> fmt::Result {
    for (k, x) in items.iter().enumerate() {
        if k > 0 {
            f.write_str(",")?;
        }
        write!(f, "{x}")?;
    }
    Ok(())
}

/// Our notation (what `eval` reads).
impl fmt::Display for E {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            E::Int(v) => write!(f, "{v}"),
            E::Under => f.write_str("_"),
            E::Tuple(v) => {
                f.write_str("(")?;
                list(f, v)?;
                f.write_str(")")
            }
            E::Layout(l) => write!(f, "{l}"),
            E::Swizzle(s) => write!(f, "{s}"),
            E::Composed(c) => write!(f, "{c}"),
            E::Call(name, g, args) => {
                f.write_str(name)?;
                if !g.is_empty() {
                    f.write_str("<")?;
                    list(f, g)?;
                    f.write_str(">")?;
                }
                f.write_str("(")?;
                list(f, args)?;
                f.write_str(")")
            }
        }
    }
}

/// A C++ static integer tuple.
fn cpp_tuple(t: &IntTuple, out: &mut String) {
    match t {
        IntTuple::Int(i) => write!(out, "Int<{}>{{}}", i.value().unwrap_or(0)).unwrap(),
        IntTuple::Tuple(v) => {
            out.push_str("make_tuple(");
            for (k, x) in v.iter().enumerate() {
                if k > 0 {
                    out.push(',');
                }
                cpp_tuple(x, out);
            }
            out.push(')');
        }
    }
}

fn cpp_layout(l: &Layout, out: &mut String) {
    out.push_str("make_layout(");
    cpp_tuple(l.shape(), out);
    out.push(',');
    cpp_tuple(l.stride(), out);
    out.push(')');
}

fn cpp_swizzle(s: &Swizzle) -> String {
    format!("Swizzle<{},{},{}>{{}}", s.bits(), s.base(), s.shift())
}

/// The C++ expression.
fn cpp(e: &E, out: &mut String) {
    let args = |v: &[E], out: &mut String| {
        for (k, x) in v.iter().enumerate() {
            if k > 0 {
                out.push(',');
            }
            cpp(x, out);
        }
    };
    match e {
        E::Int(v) => write!(out, "Int<{v}>{{}}").unwrap(),
        E::Under => out.push('_'),
        E::Tuple(v) => {
            out.push_str("make_tuple(");
            args(v, out);
            out.push(')');
        }
        E::Layout(l) => cpp_layout(l, out),
        E::Swizzle(s) => out.push_str(&cpp_swizzle(s)),
        E::Composed(c) => {
            write!(out, "make_composed_layout({},Int<{}>{{}},", cpp_swizzle(&c.swizzle), c.offset).unwrap();
            cpp_layout(&c.layout, out);
            out.push(')');
        }
        // `crd2idx(c, L)` is `L(c)` in C++ (its `crd2idx(c, shape)` takes a shape).
        E::Call("crd2idx", _, a) if a.len() == 2 && matches!(a[1], E::Layout(_) | E::Composed(_)) => {
            out.push('(');
            cpp(&a[1], out);
            out.push_str(")(");
            cpp(&a[0], out);
            out.push(')');
        }
        E::Call(name, g, a) => {
            // Our names that C++ spells differently, or that the preamble defines.
            let name = match *name {
                "local_tile" => "t_local_tile",
                "local_partition" => "t_local_partition",
                n => n,
            };
            out.push_str(name);
            if !g.is_empty() {
                out.push('<');
                for (k, x) in g.iter().enumerate() {
                    if k > 0 {
                        out.push(',');
                    }
                    write!(out, "{x}").unwrap();
                }
                out.push('>');
            }
            out.push('(');
            args(a, out);
            out.push(')');
        }
    }
}

/// The top of every translation unit: headers, and helpers for what CuTe computes on tensors or inside other
/// functions (`local_tile` and `local_partition` on a tensor over a base pointer, printing the tile's layout
/// and its offset; `make_layout_tv` as `make_tiled_copy` computes it).
const PREAMBLE: &str = r#"#include <cute/layout.hpp>
#include <cute/layout_composed.hpp>
#include <cute/swizzle_layout.hpp>
using namespace cute;
template <class T> struct Show;
template <class L, class T, class C> constexpr auto t_local_tile(L const& l, T const& t, C const& c) {
  auto z = zipped_divide(l, t);
  constexpr int R0 = decltype(rank<0>(z))::value;
  if constexpr (is_tuple<C>::value) {
    constexpr int R1 = decltype(rank<1>(z))::value;
    return slice_and_offset(make_coord(repeat<R0>(_), append<R1>(c, _)), z);
  } else {
    return slice_and_offset(make_coord(repeat<R0>(_), c), z);
  }
}
template <class L, class T, class I> constexpr auto t_local_partition(L const& l, T const& tile, I const& i) {
  auto z = zipped_divide(l, product_each(shape(tile)));
  auto c = tile.get_flat_coord(i);
  constexpr int R1 = decltype(rank<1>(z))::value;
  if constexpr (is_tuple<decltype(c)>::value) {
    constexpr int R0 = decltype(rank<0>(z))::value;
    return slice_and_offset(make_coord(append<R0>(c, _), repeat<R1>(_)), z);
  } else {
    return slice_and_offset(make_coord(c, repeat<R1>(_)), z);
  }
}
template <class T, class V> constexpr auto make_layout_tv(T const& thr, V const& val) {
  auto mn = raked_product(thr, val);
  auto tv = right_inverse(mn).with_shape(make_shape(size(thr), size(val)));
  return make_tuple(product_each(shape(mn)), tv);
}
"#;

/// One random case.
struct Case {
    expr: E,
}

fn pow2(rng: &mut Rng) -> bool {
    rng.chance(60)
}

fn injective(rng: &mut Rng) -> Layout {
    let p = pow2(rng);
    rng::injective(rng, p)
}

fn compact(rng: &mut Rng) -> Layout {
    let p = pow2(rng);
    rng::compact(rng, p)
}

fn any_layout(rng: &mut Rng) -> Layout {
    let p = pow2(rng);
    match rng.range(0, 2) {
        0 => rng::layout(rng, p),
        1 => rng::injective(rng, p),
        _ => rng::compact(rng, p),
    }
}

fn size_of(l: &Layout) -> i64 {
    l.size().ok().and_then(|s| s.value()).unwrap_or(1)
}

fn divisors(n: i64) -> Vec<i64> {
    (1..=n.max(1)).filter(|d| n % d == 0).collect()
}

/// A layout to compose with or divide by, often fitting `within`: a divisor `n:1`, a random layout, an
/// injective or compact one.
fn tile_layout(rng: &mut Rng, within: i64) -> Layout {
    let p = pow2(rng);
    for _ in 0..20 {
        let b = match rng.range(0, 3) {
            0 => Layout::int(*rng.pick(&divisors(within)), 1).unwrap(),
            1 => rng::layout(rng, p),
            2 => rng::injective(rng, p),
            _ => rng::compact(rng, p),
        };
        if rng.chance(15) || b.cosize().ok().and_then(|c| c.value()).is_some_and(|c| c <= within) {
            return b;
        }
    }
    Layout::int(within, 1).unwrap()
}

/// A tiler for `a`: a layout, an integer, or a tuple of tilers (integers, layouts, `_`) over its modes.
fn tiler(rng: &mut Rng, a: &Layout) -> E {
    match rng.range(0, 9) {
        0..=3 => E::Layout(tile_layout(rng, size_of(a))),
        4 => E::Int(*rng.pick(&divisors(size_of(a)))),
        _ => {
            let n = rng.range(1, a.rank() as i64) as usize;
            E::Tuple(
                a.modes()[..n]
                    .iter()
                    .map(|m| match rng.range(0, 9) {
                        0 => E::Under,
                        1..=4 => E::Int(*rng.pick(&divisors(size_of(m)))),
                        _ => E::Layout(tile_layout(rng, size_of(m))),
                    })
                    .collect(),
            )
        }
    }
}

/// A coordinate for `shape`: an index, or congruent at the top level with `_` in some modes.
fn coord(rng: &mut Rng, shape: &IntTuple, underscores: bool) -> E {
    let size = shape.product(LayoutOp::Size).ok().and_then(|s| s.value()).unwrap_or(1);
    match shape {
        IntTuple::Tuple(v) if !rng.chance(20) => E::Tuple(
            v.iter()
                .map(|m| if underscores && rng.chance(40) { E::Under } else { coord(rng, m, underscores) })
                .collect(),
        ),
        _ if underscores && rng.chance(20) => E::Under,
        _ => E::Int(rng.range(0, size - 1)),
    }
}

/// A random permutation of `0..n`, with the profile of `shape`.
fn order_like(rng: &mut Rng, shape: &IntTuple) -> E {
    let n = shape.flatten().len();
    let mut order: Vec<i64> = (0..n as i64).collect();
    for k in (1..n).rev() {
        order.swap(k, rng.range(0, k as i64) as usize);
    }
    let mut it = order.into_iter();
    tuple(&shape.map(|_| Int::Static(it.next().unwrap_or(0))))
}

/// A swizzle with `B >= 1` (CuTe decays the identity `Swizzle<0,M,S>` to the plain layout; we keep it).
fn swizzle(rng: &mut Rng) -> Swizzle {
    let b = rng.range(1, 3);
    let m = rng.range(0, 4);
    let s = rng.range(b.max(1), 4);
    Swizzle::new(b, m, if rng.chance(20) { -s } else { s }).unwrap()
}

fn composed(rng: &mut Rng) -> E {
    let l = if rng.chance(50) { rng::compact(rng, true) } else { rng::layout(rng, true) };
    E::Composed(Box::new(ComposedLayout { swizzle: swizzle(rng), offset: Int::Static(0), layout: l }))
}

/// A path of mode indices into `t` (possibly empty).
fn path(rng: &mut Rng, t: &IntTuple) -> Vec<i64> {
    let mut p = Vec::new();
    let mut cur = t.clone();
    while let IntTuple::Tuple(v) = &cur {
        if v.is_empty() || rng.chance(35) {
            break;
        }
        let i = rng.range(0, v.len() as i64 - 1);
        p.push(i);
        cur = v[i as usize].clone();
    }
    p
}

/// The generators: one per operation of the table, and a few for swizzled layouts.
const GENERATORS: &[&str] = &[
    "make_layout",
    "make_ordered_layout",
    "size",
    "cosize",
    "rank",
    "depth",
    "shape",
    "stride",
    "get",
    "select",
    "take",
    "flatten",
    "crd2idx",
    "idx2crd",
    "slice",
    "slice_and_offset",
    "coalesce",
    "filter",
    "composition",
    "complement",
    "right_inverse",
    "left_inverse",
    "nullspace",
    "max_common_vector",
    "max_common_layout",
    "logical_divide",
    "zipped_divide",
    "tiled_divide",
    "flat_divide",
    "logical_product",
    "zipped_product",
    "tiled_product",
    "flat_product",
    "blocked_product",
    "raked_product",
    "tile_to_shape",
    "upcast",
    "downcast",
    "make_layout_tv",
    "local_tile",
    "local_partition",
    "product",
    "product_each",
    "ceil_div",
    "shape_div",
    "swizzled",
];

/// Operations of the table that the C++ oracle does not check, and why.
const NOT_COMPARED: &[(&str, &str)] = &[("print_layout", "a picture, pinned by snapshots instead")];

fn generate(rng: &mut Rng, op: &'static str) -> Case {
    let l = |e: &Layout| E::Layout(e.clone());
    let expr = match op {
        "make_layout" => {
            let a = any_layout(rng);
            match rng.range(0, 2) {
                0 => call(op, vec![tuple(a.shape()), tuple(a.stride())]),
                1 => call(op, vec![tuple(a.shape())]),
                _ => call(op, vec![l(&a), l(&any_layout(rng))]),
            }
        }
        "make_ordered_layout" => {
            let a = any_layout(rng);
            let order = order_like(rng, a.shape());
            call(op, vec![tuple(a.shape()), order])
        }
        "size" | "cosize" | "rank" | "depth" | "shape" | "stride" => {
            let a = any_layout(rng);
            let p = path(rng, a.shape());
            let arg = if op != "cosize" && op != "stride" && rng.chance(30) { tuple(a.shape()) } else { l(&a) };
            call_g(op, p, vec![arg])
        }
        "get" => {
            let a = any_layout(rng);
            let mut p = path(rng, a.shape());
            if p.is_empty() {
                p.push(0);
            }
            call_g(op, p, vec![l(&a)])
        }
        "select" => {
            let a = any_layout(rng);
            let r = a.rank() as i64;
            let n = rng.range(1, 3);
            call_g(op, (0..n).map(|_| rng.range(0, r - 1)).collect(), vec![l(&a)])
        }
        "take" => {
            let a = any_layout(rng);
            let r = a.rank() as i64;
            let b = rng.range(0, r - 1);
            call_g(op, vec![b, rng.range(b + 1, r)], vec![l(&a)])
        }
        "flatten" => call(op, vec![l(&any_layout(rng))]),
        "crd2idx" => {
            let a = any_layout(rng);
            let c = coord(rng, a.shape(), false);
            if rng.chance(30) {
                call(op, vec![c, tuple(a.shape())])
            } else {
                call(op, vec![c, tuple(a.shape()), tuple(a.stride())])
            }
        }
        "idx2crd" => {
            let a = any_layout(rng);
            let i = E::Int(rng.range(0, size_of(&a) - 1));
            if rng.chance(50) {
                call(op, vec![i, tuple(a.shape())])
            } else {
                let c = Layout::compact(a.shape().clone()).unwrap();
                call(op, vec![i, tuple(c.shape()), tuple(c.stride())])
            }
        }
        "slice" | "slice_and_offset" => {
            let a = any_layout(rng);
            let c = coord(rng, a.shape(), true);
            call(op, vec![c, l(&a)])
        }
        "coalesce" | "filter" => {
            let a = any_layout(rng);
            if a.shape().is_tuple() && rng.chance(40) {
                let n = rng.range(1, a.rank() as i64);
                call(op, vec![l(&a), E::Tuple((0..n).map(|_| E::Int(1)).collect())])
            } else {
                call(op, vec![l(&a)])
            }
        }
        "composition" => {
            let a = any_layout(rng);
            let t = tiler(rng, &a);
            call(op, vec![l(&a), t])
        }
        "complement" => {
            let a = if rng.chance(80) { injective(rng) } else { any_layout(rng) };
            if rng.chance(30) {
                call(op, vec![l(&a)])
            } else {
                let c = a.cosize().unwrap().value().unwrap();
                let m = if rng.chance(70) { c * rng.range(1, 3) } else { rng.range(1, 2 * c) };
                call(op, vec![l(&a), E::Int(m)])
            }
        }
        "right_inverse" | "nullspace" => call(op, vec![l(&any_layout(rng))]),
        "left_inverse" => call(op, vec![l(&injective(rng))]),
        "max_common_vector" | "max_common_layout" => {
            let a = any_layout(rng);
            let b = if rng.chance(60) {
                // The same shape, another order.
                let order = order_like(rng, a.shape());
                match eval(&format!("make_ordered_layout({},{order})", a.shape())) {
                    Ok(cutec_layout::Value::Layout(b)) => b,
                    _ => a.clone(),
                }
            } else {
                any_layout(rng)
            };
            call(op, vec![l(&a), l(&b)])
        }
        "logical_divide" | "zipped_divide" | "tiled_divide" | "flat_divide" => {
            let a = any_layout(rng);
            let t = tiler(rng, &a);
            call(op, vec![l(&a), t])
        }
        "logical_product" | "zipped_product" | "tiled_product" | "flat_product" => {
            let a = any_layout(rng);
            let t = match rng.range(0, 4) {
                0..=1 => l(&any_layout(rng)),
                2 => E::Int(rng.range(1, 4)),
                _ => E::Tuple(
                    (0..rng.range(1, a.rank() as i64))
                        .map(|_| if rng.chance(15) { E::Under } else { l(&any_layout(rng)) })
                        .collect(),
                ),
            };
            call(op, vec![l(&a), t])
        }
        "blocked_product" | "raked_product" => call(op, vec![l(&any_layout(rng)), l(&any_layout(rng))]),
        "tile_to_shape" => {
            let a = if rng.chance(70) { compact(rng) } else { any_layout(rng) };
            let r = a.rank().max(rng.range(1, 3) as usize);
            let sizes: Vec<i64> = a.append_to(r).modes().iter().map(size_of).collect();
            let target: Vec<i64> =
                sizes.iter().map(|s| if rng.chance(90) { s * rng.range(1, 3) } else { s + 1 }).collect();
            let target = IntTuple::ints(&target);
            if rng.chance(30) {
                let order = order_like(rng, &target);
                call(op, vec![l(&a), tuple(&target), order])
            } else {
                call(op, vec![l(&a), tuple(&target)])
            }
        }
        "upcast" | "downcast" => {
            let a = if rng.chance(25) { composed(rng) } else { l(&any_layout(rng)) };
            call_g(op, vec![*rng.pick(&[1, 2, 4, 8])], vec![a])
        }
        "make_layout_tv" => {
            let thr = if rng.chance(70) { rng::compact(rng, true) } else { any_layout(rng) };
            let val = if rng.chance(70) { rng::compact(rng, true) } else { any_layout(rng) };
            call(op, vec![l(&thr), l(&val)])
        }
        "local_tile" => {
            let a = compact(rng);
            let t = match tiler(rng, &a) {
                E::Layout(_) => E::Tuple(a.modes().iter().map(|m| E::Int(*rng.pick(&divisors(size_of(m))))).collect()),
                t => t,
            };
            let t = match t {
                E::Int(n) => E::Tuple(vec![E::Int(n)]),
                t => t,
            };
            let n = match &t {
                E::Tuple(v) => v.len(),
                _ => 1,
            };
            let c = E::Tuple((0..n).map(|_| E::Int(rng.range(0, 1))).collect());
            call(op, vec![l(&a), t, c])
        }
        "local_partition" => {
            let a = compact(rng);
            let threads = Layout::compact(IntTuple::Tuple(
                a.modes().iter().map(|m| IntTuple::int(*rng.pick(&divisors(size_of(m))))).collect(),
            ))
            .unwrap();
            let i = rng.range(0, size_of(&threads) - 1);
            call(op, vec![l(&a), l(&threads), E::Int(i)])
        }
        "product" | "product_each" => call(op, vec![tuple(any_layout(rng).shape())]),
        "ceil_div" | "shape_div" => {
            let a = any_layout(rng);
            let b = if rng.chance(50) {
                E::Int(if rng.chance(50) { *rng.pick(&divisors(size_of(&a))) } else { rng.range(1, 8) })
            } else {
                tuple(&a.shape().map(|s| Int::Static(*rng.pick(&divisors(s.value().unwrap_or(1))))))
            };
            call(op, vec![tuple(a.shape()), b])
        }
        "swizzled" => {
            let c = composed(rng);
            let a = match &c {
                E::Composed(x) => x.layout.clone(),
                _ => unreachable!(),
            };
            match rng.range(0, 9) {
                0 => call("composition", vec![E::Swizzle(swizzle(rng)), l(&a)]),
                1 => call("coalesce", vec![c]),
                2 | 3 => call("crd2idx", vec![E::Int(rng.range(0, size_of(&a) - 1)), c]),
                4 => {
                    let t = tiler(rng, &a);
                    call("logical_divide", vec![c, t])
                }
                5 => {
                    let t = tiler(rng, &a);
                    call("zipped_divide", vec![c, t])
                }
                6 => call("size", vec![c]),
                7 => call("complement", vec![c]),
                8 => call("max_common_vector", vec![c, l(&rng::compact(rng, true))]),
                _ => call("composition", vec![c, tiler(rng, &a)]),
            }
        }
        other => panic!("no generator for {other}"),
    };
    Case { expr }
}

fn headers_dir() -> PathBuf {
    match std::env::var_os("CUTEC_CUTE_DIR") {
        Some(d) => d.into(),
        None => PathBuf::from(std::env::var_os("HOME").expect("HOME is set")).join(".cache/cutec/cute-headers"),
    }
}

/// What C++ said about one case.
#[derive(Clone, Debug, PartialEq)]
enum Answer {
    Printed(String),
    DoesNotCompile,
}

/// One translation unit over `cases` (id, C++ expression): what g++ says about each line. Every case is a
/// line `Show<std::decay_t<decltype(EXPR)>> vID;` of an incomplete `Show`, so g++ compiles nothing and reports
/// each result's type in an error; a case whose line also appears in another error (a `static_assert` of CuTe
/// "required from here") does not compile. Only the syntax is checked (`-fsyntax-only`): no code generation.
///
/// A failing template instantiation is reported once per translation unit: a later case that hits the same
/// one may show a type instead of the error. Callers confirm any answer that disagrees with ours by compiling
/// that case alone.
fn compile(dir: &Path, work: &Path, name: &str, cases: &[(usize, String)]) -> Result<BTreeMap<usize, Answer>, String> {
    let mut src = String::from(PREAMBLE);
    let first = src.lines().count() + 1;
    for (id, cpp) in cases {
        writeln!(src, "Show<std::decay_t<decltype({cpp})>> v{id};").unwrap();
    }
    let file = work.join(format!("{name}.cpp"));
    std::fs::write(&file, &src).map_err(|e| format!("writing {}: {e}", file.display()))?;
    let inc = |sub: &str| format!("-I{}", dir.join(sub).display());
    let out = Command::new("g++")
        .env("LC_ALL", "C")
        .args(["-std=c++17", "-fsyntax-only", "-w", "-fmax-errors=0", "-ftemplate-backtrace-limit=0"])
        .args([inc("cutlass/include"), inc("cccl/include"), inc("cuda/include")])
        .arg(&file)
        .output()
        .map_err(|e| format!("g++ does not run: {e}"))?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    let prefix = format!("{}:", file.display());
    let mut shown = BTreeMap::new();
    let mut failed = BTreeSet::new();
    for line in stderr.lines() {
        let Some(rest) = line.strip_prefix(&prefix) else { continue };
        let Some(n) = rest.split(':').next().and_then(|n| n.parse::<usize>().ok()) else { continue };
        if n < first || n >= first + cases.len() {
            continue; // inside the preamble's helpers: the case's own line follows in the trace
        }
        let id = cases[n - first].0;
        let show = line
            .split_once("error: aggregate 'Show<")
            .and_then(|(_, t)| t.rsplit_once("> v"))
            .filter(|(_, v)| v.starts_with(&format!("{id}' has incomplete type")));
        match show {
            Some((ty, _)) => {
                shown.entry(id).or_insert_with(|| ty.to_string());
            }
            None if line.contains("error:") || line.contains("required from") => {
                failed.insert(id);
            }
            None => {}
        }
    }
    let mut answers = BTreeMap::new();
    for (id, _) in cases {
        let answer = match (failed.contains(id), shown.get(id)) {
            (true, _) => Answer::DoesNotCompile,
            (false, Some(ty)) => Answer::Printed(from_type(ty).map_err(|e| format!("case {id}: {e} in {ty}"))?),
            (false, None) => return Err(format!("{name}: g++ said nothing about case {id}:\n{stderr}")),
        };
        answers.insert(*id, answer);
    }
    Ok(answers)
}

/// A C++ type of a static value (`cute::Layout<cute::tuple<cute::C<4>, cute::C<2> >, ...>`, as g++ prints it)
/// in our notation (`(4,2):(...)`).
fn from_type(ty: &str) -> Result<String, String> {
    let compact: String =
        ty.replace("cute::", "").replace("std::", "").chars().filter(|c| !c.is_whitespace()).collect();
    let mut p = TypeParser { s: compact.as_bytes(), at: 0 };
    let mut out = String::new();
    p.value(&mut out)?;
    if p.at != p.s.len() {
        return Err(format!("trailing text at {}", p.at));
    }
    Ok(out)
}

struct TypeParser<'a> {
    s: &'a [u8],
    at: usize,
}

impl TypeParser<'_> {
    fn eat(&mut self, text: &str) -> bool {
        let ok = self.s[self.at..].starts_with(text.as_bytes());
        if ok {
            self.at += text.len();
        }
        ok
    }

    fn expect(&mut self, text: &str) -> Result<(), String> {
        if self.eat(text) { Ok(()) } else { Err(format!("expected {text} at {}", self.at)) }
    }

    fn int(&mut self) -> Result<i64, String> {
        let start = self.at;
        if self.s.get(self.at) == Some(&b'-') {
            self.at += 1;
        }
        while self.s.get(self.at).is_some_and(u8::is_ascii_digit) {
            self.at += 1;
        }
        let text = std::str::from_utf8(&self.s[start..self.at]).unwrap_or("");
        text.parse().map_err(|_| format!("expected an integer at {start}"))
    }

    fn value(&mut self, out: &mut String) -> Result<(), String> {
        if self.eat("C<") || self.eat("integral_constant<int,") {
            write!(out, "{}", self.int()?).unwrap();
            self.expect(">")
        } else if self.eat("tuple<") {
            out.push('(');
            let mut first = true;
            while !self.eat(">") {
                if !first {
                    self.expect(",")?;
                    out.push(',');
                }
                first = false;
                self.value(out)?;
            }
            out.push(')');
            Ok(())
        } else if self.eat("Layout<") {
            self.value(out)?;
            self.expect(",")?;
            out.push(':');
            self.value(out)?;
            self.expect(">")
        } else if self.eat("Swizzle<") {
            let (b, m) = (self.int()?, (self.expect(",")?, self.int()?).1);
            self.expect(",")?;
            write!(out, "Sw<{b},{m},{}>", self.int()?).unwrap();
            self.expect(">")
        } else if self.eat("ComposedLayout<") {
            self.value(out)?;
            out.push_str(" o ");
            self.expect(",")?;
            self.value(out)?;
            out.push_str(" o ");
            self.expect(",")?;
            self.value(out)?;
            self.expect(">")
        } else {
            Err(format!("not a static value at {}", self.at))
        }
    }
}

#[test]
fn cpp_cute_agrees_on_random_cases() {
    let dir = headers_dir();
    let required = std::env::var_os("CUTEC_REQUIRE_CPP").is_some_and(|v| !v.is_empty() && v != "0");
    if !dir.join("cutlass/include/cute/layout.hpp").is_file() {
        assert!(
            !required,
            "CUTEC_REQUIRE_CPP is set but CuTe's headers are not in {} (run scripts/install-cute-headers.sh)",
            dir.display()
        );
        eprintln!("skipped: CuTe's C++ headers are not in {} (scripts/install-cute-headers.sh)", dir.display());
        return;
    }
    // Every operation of the table is generated, or listed as not compared.
    for info in OPS {
        assert!(
            GENERATORS.contains(&info.name) || NOT_COMPARED.iter().any(|(n, _)| *n == info.name),
            "operation {} has no generator in the C++ differential test",
            info.name
        );
    }
    let seed = rng::seed(0xc0de_c0de);
    let per_op = std::env::var("CUTEC_CPP_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(CASES_PER_OP);
    let mut rng = Rng::new(seed);
    let cases: Vec<(&str, Case)> =
        GENERATORS.iter().flat_map(|&op| (0..per_op).map(move |_| op)).map(|op| (op, generate(&mut rng, op))).collect();

    let work = std::env::temp_dir().join(format!("cutec-cpp-oracle-{}-{seed}", std::process::id()));
    std::fs::create_dir_all(&work).unwrap();
    let jobs = std::env::var("CUTEC_CPP_JOBS").ok().and_then(|s| s.parse().ok()).unwrap_or(2usize).max(1);
    let start = std::time::Instant::now();
    let sources: Vec<(usize, String)> = cases
        .iter()
        .enumerate()
        .map(|(k, (_, c))| {
            let mut s = String::new();
            cpp(&c.expr, &mut s);
            (k, s)
        })
        .collect();
    let ours: Vec<(String, Result<String, String>)> = cases
        .iter()
        .map(|(_, c)| {
            let expr = c.expr.to_string();
            let v = eval(&expr).map(|v| v.to_string()).map_err(|e| e.to_string());
            (expr, v)
        })
        .collect();
    let batches: Vec<Vec<(usize, String)>> = sources.chunks(BATCH).map(|c| c.to_vec()).collect();
    let mut answers = compile_all(&dir, &work, "b", batches, jobs);
    // Confirm every disagreement by compiling that case alone (a failed instantiation is reported once per
    // translation unit, so a batch can hide an error).
    let disagree: Vec<Vec<(usize, String)>> = sources
        .iter()
        .filter(|(k, _)| !agrees(answers.get(k), &ours[*k].1))
        .take(std::env::var("CUTEC_CPP_CONFIRM").ok().and_then(|s| s.parse().ok()).unwrap_or(MAX_CONFIRMED))
        .map(|c| vec![c.clone()])
        .collect();
    let confirmed = disagree.len();
    answers.extend(compile_all(&dir, &work, "c", disagree, jobs));
    if std::env::var_os("CUTEC_CPP_KEEP").is_some() {
        eprintln!("sources kept in {}", work.display());
    } else {
        let _ = std::fs::remove_dir_all(&work);
    }

    let mut failures = Vec::new();
    let mut stats = BTreeMap::<&str, (usize, usize)>::new();
    for (k, (op, _)) in cases.iter().enumerate() {
        let (expr, ours) = &ours[k];
        let entry = stats.entry(op).or_default();
        match (answers.get(&k), ours) {
            (Some(Ok(Answer::Printed(t))), Ok(v)) if t == v => entry.0 += 1,
            (Some(Ok(Answer::DoesNotCompile)), Err(_)) => entry.1 += 1,
            (Some(Ok(Answer::Printed(t))), Ok(v)) => failures.push(format!("{expr}: ours {v}, C++ {t}")),
            (Some(Ok(Answer::Printed(t))), Err(e)) => failures.push(format!("{expr}: ours fails ({e}), C++ {t}")),
            (Some(Ok(Answer::DoesNotCompile)), Ok(v)) => {
                failures.push(format!("{expr}: ours {v}, C++ does not compile"))
            }
            (Some(Err(e)), _) => failures.push(format!("{expr}: the harness failed: {e}")),
            (None, _) => failures.push(format!("{expr}: no C++ answer")),
        }
    }
    let total: usize = stats.values().map(|(a, b)| a + b).sum();
    for (op, (same, both_err)) in &stats {
        eprintln!("{op:>20}: {same} equal, {both_err} errors in both");
    }
    eprintln!(
        "C++ CuTe oracle: {} cases, {total} agree, {} differ ({confirmed} compiled alone), {:.1}s with {jobs} g++ jobs (seed {seed})",
        cases.len(),
        failures.len(),
        start.elapsed().as_secs_f64()
    );
    let shown: Vec<String> = failures.iter().take(60).map(|f| f.chars().take(300).collect()).collect();
    assert!(
        failures.is_empty(),
        "seed {seed} (CUTEC_SEED to replay): {} of {} cases differ from C++ CuTe:\n{}",
        failures.len(),
        cases.len(),
        shown.join("\n")
    );
}

/// Cases compiled alone to confirm a disagreement, at most.
const MAX_CONFIRMED: usize = 120;

fn agrees(answer: Option<&Result<Answer, String>>, ours: &Result<String, String>) -> bool {
    match (answer, ours) {
        (Some(Ok(Answer::Printed(t))), Ok(v)) => t == v,
        (Some(Ok(Answer::DoesNotCompile)), Err(_)) => true,
        _ => false,
    }
}

/// Compile the translation units `units` with `jobs` g++ processes at a time; the answer for each case (an
/// `Err` where the harness could not read one).
fn compile_all(
    dir: &Path,
    work: &Path,
    prefix: &str,
    units: Vec<Vec<(usize, String)>>,
    jobs: usize,
) -> BTreeMap<usize, Result<Answer, String>> {
    let queue = Mutex::new(units.into_iter().enumerate().collect::<Vec<_>>());
    let answers = Mutex::new(BTreeMap::new());
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(|| {
                loop {
                    let Some((k, unit)) = queue.lock().unwrap().pop() else { break };
                    let result = compile(dir, work, &format!("{prefix}{k}"), &unit);
                    let mut answers = answers.lock().unwrap();
                    match result {
                        Ok(a) => answers.extend(a.into_iter().map(|(id, a)| (id, Ok(a)))),
                        Err(e) => answers.extend(unit.iter().map(|(id, _)| (*id, Err(e.clone())))),
                    }
                }
            });
        }
    });
    answers.into_inner().unwrap()
}

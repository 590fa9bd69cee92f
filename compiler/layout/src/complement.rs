//! `complement`, the inverses, `nullspace` and the common-vector queries.

use crate::coalesce::{coalesce, filter};
use crate::composition::composition;
use crate::error::{LayoutError, Result, invalid, not_divisible};
use crate::eval::LayoutOp;
use crate::int_tuple::{Int, IntTuple, ceil_div_tuple, coalesce_shape, compact_col_major, mul};
use crate::layout::Layout;

/// `complement(A, M)`: the layout `R` of the "rest" of `A` within the cotarget `M` (a shape; only its size
/// and the staticness of its modes matter).
/// @post R is ordered: its strides are positive and increasing, so R is unique;
/// @post R(i) != A(j) for all 1 <= i < size(R), 0 <= j < size(A): the images are disjoint;
/// @post cosize(make_layout(A, R)) >= size(M).
///
/// After `filter(A)`, the modes are taken in increasing stride order; each gap `d_next / (s*d)` becomes a mode
/// of `R`, and the remainder up to `M` is `ceil_div(M, s_last*d_last)` modes. CuTe requires the sorted strides
/// to nest (`s*d` divides the next stride); a layout whose gap is 0 is reported as not injective.
pub fn complement(a: &Layout, cotarget: &IntTuple) -> Result<Layout> {
    const OP: LayoutOp = LayoutOp::Complement;
    let f = filter(a)?;
    if let Some(d) = f.stride().as_int()
        && d.is(0)
    {
        return Layout::compact(coalesce_shape(OP, cotarget)?);
    }
    let mut modes: Vec<(Int, Int)> = f.leaves();
    let r = modes.len();
    if r > 1
        && let Some((_, d)) = modes.iter().find(|(_, d)| !d.is_static())
    {
        return Err(LayoutError::NeedsStatic { op: OP, name: d.to_string() });
    }
    if let Some((_, d)) = modes.iter().find(|(_, d)| d.value().is_some_and(|v| v < 0)) {
        return Err(invalid(OP, format!("negative stride {d} in {a} is not supported")));
    }
    let mut result_shape: Vec<Int> = Vec::with_capacity(r + 1);
    let mut result_stride: Vec<Int> = vec![Int::Static(1)];
    // Increasing stride, ties in their order (a stable sort): what taking the smallest stride left each time
    // gives, without the quadratic search and removal.
    modes.sort_by_key(|(_, d)| d.value().unwrap_or(i64::MAX));
    let mut modes = modes.into_iter();
    for _ in 1..r {
        let Some((s, d)) = modes.next() else { break };
        let last = result_stride.last().expect("non-empty").clone();
        let gap = gap(OP, &d, &last, a)?;
        result_shape.push(gap);
        result_stride.push(mul(OP, &d, &s)?);
    }
    let Some((s, d)) = modes.next() else { return Err(invalid(OP, format!("{a} has no modes"))) };
    let last = result_stride.last().expect("non-empty").clone();
    result_shape.push(gap(OP, &d, &last, a)?);
    let new_stride = mul(OP, &d, &s)?;
    let rest_shape = coalesce_shape(OP, &ceil_div_tuple(OP, cotarget, &IntTuple::Int(new_stride.clone()))?)?;
    let (rest_stride, _) = compact_col_major(OP, &rest_shape, &new_stride)?;
    let mut shapes: Vec<IntTuple> = result_shape.into_iter().map(IntTuple::Int).collect();
    let mut strides: Vec<IntTuple> = result_stride.into_iter().map(IntTuple::Int).collect();
    shapes.push(rest_shape);
    strides.push(rest_stride);
    coalesce(&Layout::from_parts(IntTuple::Tuple(shapes), IntTuple::Tuple(strides)))
}

/// `min_stride / last_stride`, the size of a hole; 0 means the modes overlap.
fn gap(op: LayoutOp, d: &Int, last: &Int, a: &Layout) -> Result<Int> {
    match (d, last) {
        (_, Int::Static(1)) => Ok(d.clone()),
        (Int::Static(x), Int::Static(y)) if *y != 0 && x / y != 0 => Ok(Int::Static(x / y)),
        (Int::Static(_), Int::Static(_)) => Err(LayoutError::NotInjective { op, layout: a.to_string() }),
        _ => Err(LayoutError::NeedsStatic { op, name: d.to_string() }),
    }
}

/// `complement(A)`: the complement within `cosize(filter(A))`.
pub fn complement_default(a: &Layout) -> Result<Layout> {
    let cosize = filter(a)?.cosize()?;
    complement(a, &IntTuple::Int(cosize))
}

/// CuTe's `exchange_sort` of `(key, value)` pairs by key (not stable: equal keys can swap).
fn exchange_sort(a: &mut [(i64, usize)]) {
    // Distinct keys have one sorted order, whatever the algorithm: sort in O(n log n). Only equal keys need the
    // exchange sort's own order, which is quadratic in the modes.
    let mut sorted = a.to_vec();
    sorted.sort_unstable();
    if sorted.windows(2).all(|w| w[0].0 != w[1].0) {
        a.copy_from_slice(&sorted);
        return;
    }
    for i in 0..a.len() {
        for j in i + 1..a.len() {
            if a[j].0 < a[i].0 {
                a.swap(i, j);
            }
        }
    }
}

/// The flat modes of `coalesce(A)`, the exclusive prefix products of its shape, and the positions of its static
/// strides sorted by stride (CuTe's `SortByKey`).
struct Sorted {
    leaves: Vec<(Int, Int)>,
    preprod: Vec<Int>,
    order: Vec<usize>,
}

fn sorted_modes(op: LayoutOp, a: &Layout) -> Result<Sorted> {
    let leaves = coalesce(a)?.leaves();
    let mut preprod = vec![Int::Static(1)];
    for (s, _) in &leaves {
        let next = mul(op, preprod.last().expect("non-empty"), s)?;
        preprod.push(next);
    }
    let mut keyed: Vec<(i64, usize)> =
        leaves.iter().enumerate().filter_map(|(k, (_, d))| d.static_value().map(|v| (v, k))).collect();
    exchange_sort(&mut keyed);
    Ok(Sorted { leaves, preprod, order: keyed.into_iter().map(|(_, k)| k).collect() })
}

fn tuple_of(v: Vec<Int>) -> IntTuple {
    IntTuple::Tuple(v.into_iter().map(IntTuple::Int).collect())
}

/// `right_inverse(A)`: a layout `R` with `A(R(i)) == i` for all `0 <= i < size(R)`, as CuTe builds it: the
/// static strides of `coalesce(A)` in increasing order, each taken when it equals the running product
/// `s*d` of the modes taken so far (starting at 1), with the column-major stride of its position; coalesced.
/// @post composition(A, R) is identical to make_layout(shape(R)).
pub fn right_inverse(a: &Layout) -> Result<Layout> {
    const OP: LayoutOp = LayoutOp::RightInverse;
    let Sorted { leaves, preprod, order } = sorted_modes(OP, a)?;
    let mut shape = vec![Int::Static(1)];
    let mut stride = vec![Int::Static(0)];
    let mut curr = Int::Static(1);
    for k in order {
        let (s, d) = &leaves[k];
        if d.is_static() && curr.is_static() && *d == curr {
            shape.push(s.clone());
            stride.push(preprod[k].clone());
            curr = mul(OP, s, d)?;
        }
    }
    coalesce(&Layout::from_parts(tuple_of(shape), tuple_of(stride)))
}

/// `left_inverse(A)`: a layout `R` with `R(A(i)) == i` for all `0 <= i < size(A)`, as CuTe builds it: the non-zero
/// strides of `coalesce(A)` in increasing order, each giving the mode `d / size(so far)` with the column-major
/// stride of its position, and the shape of the largest-stride mode last; coalesced.
/// @pre A is injective, its strides are static and each divides the next ("left inverse divisibility").
pub fn left_inverse(a: &Layout) -> Result<Layout> {
    const OP: LayoutOp = LayoutOp::LeftInverse;
    let Sorted { leaves, preprod, order } = sorted_modes(OP, a)?;
    if order.len() != leaves.len() {
        return Err(invalid(OP, format!("{a} has dynamic strides (left inverse requires static strides)")));
    }
    let mut shape: Vec<Int> = Vec::new();
    let mut stride = vec![Int::Static(0)];
    let mut size = 1i64;
    for &k in &order {
        let d = leaves[k].1.need(OP)?;
        if d == 0 {
            continue;
        }
        if d % size != 0 || d / size < 1 {
            let what = format!("stride {d} of {a} and {size} (left inverse divisibility)");
            return Err(not_divisible(OP, what, Some(d), Some(size)));
        }
        shape.push(Int::Static(d / size));
        size = size.checked_mul(d / size).ok_or_else(|| LayoutError::Overflow { op: OP, what: a.to_string() })?;
        stride.push(preprod[k].clone());
    }
    match order.last() {
        Some(&k) => shape.push(leaves[k].0.clone()),
        None => return Err(invalid(OP, format!("{a} has no modes"))),
    }
    coalesce(&Layout::from_parts(tuple_of(shape), tuple_of(stride)))
}

/// `nullspace(A)`: the layout of the coordinates that `A` maps to 0: the static stride-0 modes of `flatten(A)`
/// with the column-major strides of their positions.
/// @post size(R) == size(A) / size(filter(A)), A(R(i)) == 0 for all i < size(R).
pub fn nullspace(a: &Layout) -> Result<Layout> {
    const OP: LayoutOp = LayoutOp::Nullspace;
    let flat = a.flatten();
    let (rstride, _) = compact_col_major(OP, &IntTuple::Tuple(flat.shape().modes().to_vec()), &Int::Static(1))?;
    let rstride = rstride.flatten();
    let (shape, stride): (Vec<IntTuple>, Vec<IntTuple>) = flat
        .leaves()
        .into_iter()
        .enumerate()
        .filter(|(_, (_, d))| d.is(0))
        .map(|(k, (s, _))| (IntTuple::Int(s), IntTuple::Int(rstride[k].clone())))
        .unzip();
    if shape.is_empty() {
        return Ok(Layout::trivial());
    }
    Ok(Layout::from_parts(IntTuple::Tuple(shape).unwrap_single(), IntTuple::Tuple(stride).unwrap_single()))
}

/// The first mode of `coalesce(A o right_inverse(B))` when it is a static stride-1 mode.
fn common_vector_mode(a: &Layout, b: &Layout) -> Result<(Layout, Option<Layout>)> {
    let inv_b = right_inverse(b)?;
    let common = coalesce(&composition(a, &inv_b)?)?;
    let first = common.mode(0)?;
    let contiguous =
        first.shape().as_int().is_some_and(Int::is_static) && first.stride().as_int().is_some_and(|d| d.is(1));
    Ok((inv_b, contiguous.then_some(first)))
}

/// `max_common_layout(A, B)`: a layout `R` pointing to the largest number of contiguous elements that
/// logically correspond in `A` and `B`.
/// @post A(R(i)) == i and B(R(i)) == i for all 0 <= i < size(R).
pub fn max_common_layout(a: &Layout, b: &Layout) -> Result<Layout> {
    match common_vector_mode(a, b)? {
        (inv_b, Some(first)) => composition(&inv_b, &first),
        (_, None) => Ok(Layout::trivial()),
    }
}

/// `max_common_vector(A, B)`: the number `N >= 1` of contiguous elements that logically correspond in `A` and
/// `B`. @post A(B.get_1d_coord(n)) == n for all 0 <= n < N.
pub fn max_common_vector(a: &Layout, b: &Layout) -> Result<Int> {
    match common_vector_mode(a, b)? {
        (_, Some(first)) => first.size(),
        (_, None) => Ok(Int::Static(1)),
    }
}

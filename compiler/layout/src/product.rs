//! Products (tiling by repetition): `logical_product` and its arrangements, the rank-sensitive
//! `blocked_product` and `raked_product`, `tile_to_shape`, `make_ordered_layout` and `make_layout_tv`.

use crate::complement::{complement, right_inverse};
use crate::composition::{Tiler, composition, pair};
use crate::divide::{by_mode, tile_unzip, unzip_modes};
use crate::error::{Result, invalid, not_divisible, rank_mismatch};
use crate::eval::LayoutOp;
use crate::int_tuple::{Int, IntTuple, ceil_div_tuple, compact_col_major, mul, product_each};
use crate::layout::Layout;

/// `logical_product(A, B)`: `(A, complement(A, size(A)*cosize(B)) o B)`, a rank-2 layout whose first mode is
/// `A` and whose second mode is `B` with each element replaced by a unique replication of `A`. A tuple tiler
/// multiplies mode by mode (the remaining modes are kept), `_` keeps a mode, an integer `n` is `n:1`.
/// @post rank(result) == 2 for a layout B, compatible(A, layout<0>(result)), compatible(B, layout<1>(result)).
pub fn logical_product(a: &Layout, tiler: &Tiler) -> Result<Layout> {
    const OP: LayoutOp = LayoutOp::LogicalProduct;
    match tiler {
        Tiler::Layout(b) => {
            let target = mul(OP, &a.size()?, &b.cosize()?)?;
            let rest = composition(&complement(a, &IntTuple::Int(target))?, b)?;
            Ok(pair(a.clone(), rest))
        }
        Tiler::Int(n) => logical_product(a, &Tiler::Layout(Layout::compact(IntTuple::Int(n.clone()))?)),
        Tiler::Underscore => Ok(a.clone()),
        Tiler::Tuple(ts) => by_mode(OP, a, ts, &logical_product),
    }
}

/// `zipped_product(A, B)`: `((M,N,...), (TileM,TileN,...,L,...))`.
pub fn zipped_product(a: &Layout, tiler: &Tiler) -> Result<Layout> {
    tile_unzip(LayoutOp::ZippedProduct, &logical_product(a, tiler)?, tiler)
}

/// `tiled_product(A, B)`: `((M,N,...), TileM, TileN, ..., L, ...)`: CuTe's `result(_, repeat<R1>(_))` of the
/// zipped product.
pub fn tiled_product(a: &Layout, tiler: &Tiler) -> Result<Layout> {
    unzip_modes(&zipped_product(a, tiler)?, false)
}

/// `flat_product(A, B)`: `(M, N, ..., TileM, TileN, ..., L, ...)`: CuTe's `result(repeat<R0>(_), repeat<R1>(_))`
/// of the zipped product.
pub fn flat_product(a: &Layout, tiler: &Tiler) -> Result<Layout> {
    unzip_modes(&zipped_product(a, tiler)?, true)
}

/// CuTe's `zip(A, B)` of two layouts: `((A0,B0), (A1,B1), ...)` over the modes of `A` (mode `j` of an integral
/// `B` is `B` itself); `((A, B))` when `A` is integral.
/// @pre when `A` is a tuple, `B` is a tuple of the same rank (CuTe's "Mismatched Ranks"; the error names `op`, the
/// product that zips).
fn zip(op: LayoutOp, a: &Layout, b: &Layout) -> Result<Layout> {
    if !a.shape().is_tuple() {
        return Ok(Layout::from_modes(vec![pair(a.clone(), b.clone())]));
    }
    if !b.shape().is_tuple() || b.rank() != a.rank() {
        return Err(rank_mismatch(op, format!("{a} and {b} have mismatched ranks")));
    }
    let modes = a.modes().into_iter().enumerate().map(|(j, m)| Ok(pair(m, b.mode(j)?))).collect::<Result<_>>()?;
    Ok(Layout::from_modes(modes))
}

/// The logical product of `block` and `tiler` padded to a common rank, zipped mode by mode with `first` before
/// `second` (CuTe does not coalesce the result).
fn rank_sensitive_product(block: &Layout, tiler: &Layout, raked: bool) -> Result<Layout> {
    let r = block.rank().max(tiler.rank());
    let result = logical_product(&block.append_to(r), &Tiler::Layout(tiler.append_to(r)))?;
    let (a, b) = (result.mode(0)?, result.mode(1)?);
    if raked { zip(LayoutOp::RakedProduct, &b, &a) } else { zip(LayoutOp::BlockedProduct, &a, &b) }
}

/// `blocked_product(A, B)`: reproduce the block `A` over the tiler `B`, mode by mode: mode `i` of the result
/// is `(A_i, B_i)` (each block contiguous).
/// @post rank(result) == max(rank(A), rank(B)).
pub fn blocked_product(block: &Layout, tiler: &Layout) -> Result<Layout> {
    rank_sensitive_product(block, tiler, false)
}

/// `raked_product(A, B)`: like `blocked_product` with the modes interleaved: mode `i` is `(B_i, A_i)`, so
/// the copies of `A` are raked across the tiler (a cyclic distribution).
/// @post rank(result) == max(rank(A), rank(B)).
pub fn raked_product(block: &Layout, tiler: &Layout) -> Result<Layout> {
    rank_sensitive_product(block, tiler, true)
}

/// `make_ordered_layout(shape, order)`: compact strides that follow `order` (the leaf with the smallest order
/// gets stride 1; equal orders are taken left to right). The order is congruent to the shape, or coarser:
/// an integer order for a tuple sub-shape makes that sub-shape column-major.
/// `make_ordered_layout((2,2,2,2), (0,2,3,1))` is `(2,2,2,2):(1,4,8,2)`.
pub fn make_ordered_layout(shape: &IntTuple, order: &IntTuple) -> Result<Layout> {
    const OP: LayoutOp = LayoutOp::MakeOrderedLayout;
    let mut units: Vec<(i64, usize, IntTuple)> = Vec::new();
    collect_units(OP, shape, order, &mut units)?;
    let mut sorted: Vec<usize> = (0..units.len()).collect();
    sorted.sort_by_key(|&k| (units[k].0, k));
    let mut strides: Vec<Option<IntTuple>> = vec![None; units.len()];
    let mut current = Int::Static(1);
    for k in sorted {
        let (stride, next) = compact_col_major(OP, &units[k].2, &current)?;
        strides[k] = Some(stride);
        current = next;
    }
    let mut it = strides.into_iter().map(|s| s.unwrap_or(IntTuple::int(0)));
    Layout::new(shape.clone(), assemble(shape, order, &mut it))
}

fn collect_units(
    op: LayoutOp,
    shape: &IntTuple,
    order: &IntTuple,
    out: &mut Vec<(i64, usize, IntTuple)>,
) -> Result<()> {
    match (shape, order) {
        (_, IntTuple::Int(o)) => {
            let n = out.len();
            out.push((o.need(op)?, n, shape.clone()));
            Ok(())
        }
        (IntTuple::Tuple(s), IntTuple::Tuple(o)) if s.len() == o.len() => {
            s.iter().zip(o).try_for_each(|(a, b)| collect_units(op, a, b, out))
        }
        _ => Err(rank_mismatch(op, format!("order {order} is not congruent with shape {shape}"))),
    }
}

fn assemble(shape: &IntTuple, order: &IntTuple, it: &mut dyn Iterator<Item = IntTuple>) -> IntTuple {
    match (shape, order) {
        (IntTuple::Tuple(s), IntTuple::Tuple(o)) => {
            IntTuple::Tuple(s.iter().zip(o).map(|(a, b)| assemble(a, b, it)).collect())
        }
        _ => it.next().unwrap_or(IntTuple::int(0)),
    }
}

/// `tile_to_shape(block, shape, order)`: repeat `block` (padded to the rank of `shape`) until it covers
/// `shape`, the repetitions ordered by `order` (column-major by default): CuTe's
/// `blocked_product(block, make_ordered_layout(product_shape, order))`, not coalesced.
/// @pre rank(block) <= rank(shape), and each mode of the block divides the target mode.
/// @post compatible(shape, shape(result)) as sizes per mode.
pub fn tile_to_shape(block: &Layout, target: &IntTuple, order: Option<&IntTuple>) -> Result<Layout> {
    const OP: LayoutOp = LayoutOp::TileToShape;
    let r = target.rank();
    if block.rank() > r {
        return Err(rank_mismatch(OP, format!("{block} has more modes than the target shape {target}")));
    }
    let padded = block.append_to(r);
    let block_shape = product_each(OP, padded.shape())?;
    let target_shape = product_each(OP, target)?;
    for (b, t) in block_shape.flatten().iter().zip(target_shape.flatten()) {
        if let (Some(b), Some(t)) = (b.static_value(), t.static_value())
            && (b == 0 || t % b != 0)
        {
            let what = format!("block shape {block_shape} of {block} does not divide the target shape {target_shape}");
            return Err(not_divisible(OP, what, Some(b), Some(t)));
        }
    }
    let product_shape = ceil_div_tuple(OP, &target_shape, &block_shape)?;
    let tiler = match order {
        Some(o) => make_ordered_layout(&product_shape, o)?,
        None => Layout::compact(product_shape.clone())?,
    };
    blocked_product(&padded, &tiler)
}

/// `make_layout_tv(thr, val)` (what CuTe's `make_tiled_copy` computes): the `(M,N)` tile covered by threads
/// laid out as `thr` each holding values laid out as `val`, and the thread-value layout
/// `(thread, value) -> index in the tile` (column-major in the tile).
/// `layout_mn = raked_product(thr, val)`, `tv = right_inverse(layout_mn) o (size(thr), size(val))`.
pub fn make_layout_tv(thr: &Layout, val: &Layout) -> Result<(IntTuple, Layout)> {
    const OP: LayoutOp = LayoutOp::MakeLayoutTv;
    let layout_mn = raked_product(thr, val)?;
    let tv_shape = IntTuple::Tuple(vec![IntTuple::Int(thr.size()?), IntTuple::Int(val.size()?)]);
    let tv = composition(&right_inverse(&layout_mn)?, &Layout::compact(tv_shape)?)?;
    let tiler = product_each(OP, layout_mn.shape())?;
    if tv.size()?.value() != mul(OP, &thr.size()?, &val.size()?)?.value() {
        return Err(invalid(OP, format!("threads {thr} and values {val} do not cover their tile {tiler} exactly")));
    }
    Ok((tiler, tv))
}

//! Divides (tiling): `logical_divide` and its zipped, tiled and flat arrangements; `local_tile` and
//! `local_partition` on layouts.

use crate::coalesce::coalesce;
use crate::complement::complement;
use crate::composition::{Tiler, composition, pair};
use crate::error::{Result, rank_mismatch};
use crate::eval::LayoutOp;
use crate::int_tuple::{Coord, Int, IntTuple, crd2idx, idx2crd};
use crate::layout::Layout;

/// Apply `f` to the first modes of `a` named by a tuple tiler, keeping the rest: CuTe's `transform_layout`
/// for by-mode divides and products.
pub(crate) fn by_mode(
    op: LayoutOp,
    a: &Layout,
    tiler: &[Tiler],
    f: &dyn Fn(&Layout, &Tiler) -> Result<Layout>,
) -> Result<Layout> {
    if tiler.len() > a.rank() {
        return Err(rank_mismatch(op, format!("the tiler has {} modes, more than {a}", tiler.len())));
    }
    let mut modes = a.modes();
    for (m, t) in modes.iter_mut().zip(tiler) {
        *m = f(m, t)?;
    }
    Ok(Layout::from_modes(modes))
}

/// `logical_divide(A, B)`: `A o (B, complement(B, shape(coalesce(A))))`, a rank-2 layout whose first mode is the tile `B`
/// and whose second mode iterates over the tiles. A tuple tiler divides mode by mode (the remaining modes
/// are kept), `_` keeps a mode.
/// @post layout<0>(result) == composition(A, B) as functions; size(result) == size(A) when B tiles A.
pub fn logical_divide(a: &Layout, tiler: &Tiler) -> Result<Layout> {
    match tiler {
        Tiler::Layout(b) => composition(a, &pair(b.clone(), complement(b, coalesce(a)?.shape())?)),
        Tiler::Int(n) => logical_divide(a, &Tiler::Layout(Layout::compact(IntTuple::Int(n.clone()))?)),
        Tiler::Underscore => Ok(a.clone()),
        Tiler::Tuple(ts) => by_mode(LayoutOp::LogicalDivide, a, ts, &logical_divide),
    }
}

/// CuTe's `zip2_by`: gather the rank-2 modes found at the leaves of `guide` into `((tiles...), (rests..., the
/// modes of `t` beyond the guide))`.
pub(crate) fn zip2_by(op: LayoutOp, t: &IntTuple, guide: &Tiler) -> Result<IntTuple> {
    match guide {
        Tiler::Tuple(g) => {
            let modes = t.modes();
            if g.len() > modes.len() {
                return Err(rank_mismatch(op, format!("{t} has fewer modes than the tiler {guide}")));
            }
            let mut firsts = Vec::with_capacity(g.len());
            let mut seconds = Vec::with_capacity(modes.len());
            for (m, gi) in modes.iter().zip(g) {
                match zip2_by(op, m, gi)? {
                    IntTuple::Tuple(mut v) if v.len() == 2 => {
                        let second = v.pop().expect("two");
                        firsts.push(v.pop().expect("two"));
                        seconds.push(second);
                    }
                    other => return Err(rank_mismatch(op, format!("mode {other} is not a (tile, rest) pair"))),
                }
            }
            seconds.extend(modes[g.len()..].iter().cloned());
            Ok(IntTuple::Tuple(vec![IntTuple::Tuple(firsts), IntTuple::Tuple(seconds)]))
        }
        _ => match t {
            IntTuple::Tuple(v) if v.len() == 2 => Ok(t.clone()),
            _ => Err(rank_mismatch(op, format!("mode {t} is not a (tile, rest) pair for the tiler {guide}"))),
        },
    }
}

/// CuTe's `tile_unzip`: `zip2_by` applied to the shape and the stride.
pub(crate) fn tile_unzip(op: LayoutOp, l: &Layout, tiler: &Tiler) -> Result<Layout> {
    Layout::new(zip2_by(op, l.shape(), tiler)?, zip2_by(op, l.stride(), tiler)?)
}

/// `zipped_divide(A, B)`: `((TileM,TileN,...), (RestM,RestN,...,L,...))`.
/// @post layout<0>(result) == composition(A, B) for a tuple tiler B.
pub fn zipped_divide(a: &Layout, tiler: &Tiler) -> Result<Layout> {
    tile_unzip(LayoutOp::ZippedDivide, &logical_divide(a, tiler)?, tiler)
}

/// `tiled_divide(A, B)`: `((TileM,TileN,...), RestM, RestN, ..., L, ...)`: CuTe's `result(_, repeat<R1>(_))`
/// of the zipped divide (a rest mode of rank 1 stays one tuple mode).
pub fn tiled_divide(a: &Layout, tiler: &Tiler) -> Result<Layout> {
    unzip_modes(&zipped_divide(a, tiler)?, false)
}

/// `flat_divide(A, B)`: `(TileM, TileN, ..., RestM, RestN, ..., L, ...)`: CuTe's
/// `result(repeat<R0>(_), repeat<R1>(_))` of the zipped divide.
pub fn flat_divide(a: &Layout, tiler: &Tiler) -> Result<Layout> {
    unzip_modes(&zipped_divide(a, tiler)?, true)
}

/// The slice `z(_, repeat<R1>(_))` (or `z(repeat<R0>(_), repeat<R1>(_))` when `both`) of a zipped layout:
/// the modes of mode 1 (and of mode 0) become top-level modes; a mode of rank 1 is kept whole.
pub(crate) fn unzip_modes(z: &Layout, both: bool) -> Result<Layout> {
    let r0 = z.mode(0)?.rank();
    let r1 = z.mode(1)?.rank();
    let first = if both { underscores(r0) } else { Coord::Underscore };
    Ok(z.slice_and_offset(&Coord::Tuple(vec![first, underscores(r1)]))?.0)
}

/// `repeat<n>(_)`: `_` for one mode, a tuple of `_` otherwise.
pub(crate) fn underscores(n: usize) -> Coord {
    if n == 1 { Coord::Underscore } else { Coord::Tuple(vec![Coord::Underscore; n]) }
}

/// `append<n>(coord, _)`: pad a tuple coordinate with `_` up to `n` modes.
fn pad_underscores(coord: &Coord, n: usize) -> Coord {
    match coord {
        Coord::Tuple(v) if v.len() < n => {
            let mut v = v.clone();
            v.resize(n, Coord::Underscore);
            Coord::Tuple(v)
        }
        _ => coord.clone(),
    }
}

/// `local_tile(A, tiler, coord)` on a layout (CuTe's `inner_partition`): the tile of `zipped_divide(A, tiler)`
/// at `coord` in the rest mode (missing trailing coordinates are `_`). Returns the tile's layout and the
/// offset of its first element: `A(tile(c)) + offset` addresses element `c` of the tile.
pub fn local_tile(a: &Layout, tiler: &Tiler, coord: &Coord) -> Result<(Layout, Int)> {
    let z = zipped_divide(a, tiler)?;
    let r0 = z.mode(0)?.rank();
    let r1 = z.mode(1)?.rank();
    z.slice_and_offset(&Coord::Tuple(vec![underscores(r0), pad_underscores(coord, r1)]))
}

/// `local_partition(A, tile, index)` on a layout (CuTe's `outer_partition`): the elements of
/// `zipped_divide(A, shape(tile))` owned by thread `index` of the thread layout `tile`, that is the rest mode at
/// the tile coordinate `tile.get_flat_coord(index)`. Returns the partition's layout and its offset.
pub fn local_partition(a: &Layout, tile: &Layout, index: &Int) -> Result<(Layout, Int)> {
    const OP: LayoutOp = LayoutOp::LocalPartition;
    let sizes: Vec<IntTuple> = tile.modes().iter().map(|m| m.size().map(IntTuple::Int)).collect::<Result<_>>()?;
    let tiler = Tiler::from_shape(&IntTuple::Tuple(sizes));
    // get_flat_coord: the hierarchical coordinate of `index`, then a 1-D coordinate per top-level mode.
    let hier = idx2crd(OP, &IntTuple::Int(index.clone()), tile.shape(), tile.stride())?;
    let flat: Vec<Coord> = tile
        .modes()
        .iter()
        .enumerate()
        .map(|(k, m)| {
            let c = Coord::from(hier.mode(k).unwrap_or(&hier));
            let (compact, _) = crate::int_tuple::compact_col_major(OP, m.shape(), &Int::Static(1))?;
            crd2idx(OP, &c, m.shape(), &compact).map(Coord::Int)
        })
        .collect::<Result<_>>()?;
    let z = zipped_divide(a, &tiler)?;
    let r0 = z.mode(0)?.rank();
    let r1 = z.mode(1)?.rank();
    z.slice_and_offset(&Coord::Tuple(vec![pad_underscores(&Coord::Tuple(flat), r0), underscores(r1)]))
}

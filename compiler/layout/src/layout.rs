//! `Layout`: a pair of congruent integer tuples, a shape and a stride, read as the function from coordinates to
//! indices `L(c) = sum(c_i * d_i)` (CuTe's `include/cute/layout.hpp`). This file holds the layout itself and
//! the operations that treat it like a tuple of modes; the algebra lives in the sibling modules.

use std::fmt;

use crate::error::{LayoutError, Result, invalid, not_divisible, rank_mismatch};
use crate::eval::LayoutOp;
use crate::int_tuple::{self, Coord, Int, IntTuple, Shape, compact_col_major, compact_row_major, crd2idx, mul};

/// A layout `shape:stride`. Invariants: `shape` and `stride` are congruent, and every known shape is positive.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Layout {
    shape: IntTuple,
    stride: IntTuple,
}

impl fmt::Display for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.shape, self.stride)
    }
}

/// The largest layout that `indices` and the pictures evaluate element by element.
pub const MAX_ENUMERATED_SIZE: i64 = 1 << 24;

impl Layout {
    /// `make_layout(shape, stride)`.
    /// @pre congruent(shape, stride), every known shape is positive.
    pub fn new(shape: IntTuple, stride: IntTuple) -> Result<Layout> {
        if !shape.congruent(&stride) {
            return Err(rank_mismatch(
                LayoutOp::MakeLayout,
                format!("shape {shape} and stride {stride} are not congruent"),
            ));
        }
        if let Some(s) = shape.flatten().iter().filter_map(Int::value).find(|&s| s < 1) {
            return Err(invalid(LayoutOp::MakeLayout, format!("shape {s} in {shape} is not positive")));
        }
        Ok(Layout { shape, stride })
    }

    /// A layout from congruent parts already known to be valid (internal results).
    pub(crate) fn from_parts(shape: IntTuple, stride: IntTuple) -> Layout {
        debug_assert!(shape.congruent(&stride));
        Layout { shape, stride }
    }

    /// `i:d` with static integers.
    pub fn int(shape: i64, stride: i64) -> Result<Layout> {
        Layout::new(IntTuple::int(shape), IntTuple::int(stride))
    }

    /// `make_layout(shape)`: compact column-major strides (`(4,8)` is `(4,8):(1,4)`); a static 1 gets stride 0.
    pub fn compact(shape: IntTuple) -> Result<Layout> {
        let (stride, _) = compact_col_major(LayoutOp::MakeLayout, &shape, &Int::Static(1))?;
        Layout::new(shape, stride)
    }

    /// `make_layout(shape, LayoutRight{})`: compact row-major strides.
    pub fn row_major(shape: IntTuple) -> Result<Layout> {
        let (stride, _) = compact_row_major(LayoutOp::MakeLayout, &shape, &Int::Static(1))?;
        Layout::new(shape, stride)
    }

    /// `make_layout(l0, l1, ...)`: the concatenation of layouts as the modes of a new one.
    pub fn from_modes(modes: Vec<Layout>) -> Layout {
        let (shape, stride) = modes.into_iter().map(|l| (l.shape, l.stride)).unzip();
        Layout { shape: IntTuple::Tuple(shape), stride: IntTuple::Tuple(stride) }
    }

    /// The trivial layout `1:0`.
    pub fn trivial() -> Layout {
        Layout { shape: IntTuple::int(1), stride: IntTuple::int(0) }
    }

    pub fn shape(&self) -> &IntTuple {
        &self.shape
    }

    pub fn stride(&self) -> &IntTuple {
        &self.stride
    }

    /// `rank(L)`: the number of top-level modes.
    pub fn rank(&self) -> usize {
        self.shape.rank()
    }

    /// `depth(L)`: the nesting depth of the shape.
    pub fn depth(&self) -> usize {
        self.shape.depth()
    }

    /// `size(L)`: the size of the domain, the product of the shape.
    pub fn size(&self) -> Result<Int> {
        self.shape.product(LayoutOp::Size)
    }

    /// `cosize(L)`: the size of the codomain, `L(size(L) - 1) + 1` with the strides taken in absolute value
    /// (CuTe's `coshape` protects against negative strides this way).
    pub fn cosize(&self) -> Result<Int> {
        let op = LayoutOp::Cosize;
        let mut hi: i64 = 0;
        for (s, d) in self.shape.flatten().iter().zip(self.stride.flatten()) {
            let term = (s.need(op)? - 1).checked_mul(d.need(op)?.checked_abs().unwrap_or(i64::MAX));
            hi = term
                .and_then(|t| hi.checked_add(t))
                .ok_or_else(|| LayoutError::Overflow { op, what: format!("the cosize of {self}") })?;
        }
        hi.checked_add(1).map(Int::Static).ok_or_else(|| LayoutError::Overflow { op, what: format!("{self}") })
    }

    /// Whether every shape and stride is static.
    pub fn is_static(&self) -> bool {
        self.shape.is_static() && self.stride.is_static()
    }

    /// `layout<i>(L)` (`get<i>`): mode `i`; mode 0 of a rank-1 integral layout is the layout itself.
    pub fn mode(&self, i: usize) -> Result<Layout> {
        match (self.shape.mode(i), self.stride.mode(i)) {
            (Some(s), Some(d)) => Ok(Layout { shape: s.clone(), stride: d.clone() }),
            _ => Err(LayoutError::IndexOutOfRange { op: LayoutOp::Get, index: i as i64, rank: self.rank() }),
        }
    }

    /// `get<i0, i1, ...>(L)`: the sub-layout at a path of mode indices.
    pub fn get(&self, path: &[usize]) -> Result<Layout> {
        path.iter().try_fold(self.clone(), |l, &i| l.mode(i))
    }

    /// The top-level modes as layouts.
    pub fn modes(&self) -> Vec<Layout> {
        self.shape
            .modes()
            .iter()
            .zip(self.stride.modes())
            .map(|(shape, stride)| Layout { shape: shape.clone(), stride: stride.clone() })
            .collect()
    }

    /// `select<i...>(L)`: the layout of the chosen modes, in that order.
    pub fn select(&self, modes: &[usize]) -> Result<Layout> {
        Ok(Layout::from_modes(modes.iter().map(|&i| self.mode(i)).collect::<Result<_>>()?))
    }

    /// `take<b,e>(L)`: modes `[b, e)`.
    pub fn take(&self, begin: usize, end: usize) -> Result<Layout> {
        if begin >= end || end > self.rank() {
            return Err(invalid(
                LayoutOp::Take,
                format!("range [{begin},{end}) of the rank-{} layout {self}", self.rank()),
            ));
        }
        self.select(&(begin..end).collect::<Vec<_>>())
    }

    /// `flatten(L)`: the leaves of the shape as the modes (an integral layout stays integral).
    pub fn flatten(&self) -> Layout {
        Layout { shape: self.shape.flattened(), stride: self.stride.flattened() }
    }

    /// The leaves, as `(shape, stride)` pairs.
    pub fn leaves(&self) -> Vec<(Int, Int)> {
        self.shape.flatten().into_iter().zip(self.stride.flatten()).collect()
    }

    /// `append<n>(L, 1:0)`: pad with trivial modes up to rank `n` (a layout of rank >= n is unchanged).
    pub fn append_to(&self, n: usize) -> Layout {
        if self.rank() >= n {
            return self.clone();
        }
        let mut modes = self.modes();
        modes.resize(n, Layout::trivial());
        Layout::from_modes(modes)
    }

    /// `L(c)`: `crd2idx(c, shape, stride)`; an integer coordinate is split colexicographically.
    pub fn call(&self, coord: &Coord) -> Result<Int> {
        crd2idx(LayoutOp::Crd2idx, coord, &self.shape, &self.stride)
    }

    /// `L(i)` for a static 1-D coordinate.
    pub fn index(&self, i: i64) -> Result<i64> {
        self.call(&Coord::Int(Int::Static(i)))?.need(LayoutOp::Crd2idx)
    }

    /// All values `L(0), ..., L(size(L) - 1)`.
    /// @pre the layout is static and of size at most [`MAX_ENUMERATED_SIZE`].
    pub fn indices(&self) -> Result<Vec<i64>> {
        let op = LayoutOp::Size;
        let leaves: Vec<(i64, i64)> =
            self.leaves().iter().map(|(s, d)| Ok((s.need(op)?, d.need(op)?))).collect::<Result<_>>()?;
        let size = self.size()?.need(op)?;
        if size > MAX_ENUMERATED_SIZE {
            return Err(invalid(op, format!("{self} has {size} elements, more than {MAX_ENUMERATED_SIZE}")));
        }
        self.cosize()?; // overflow check of the largest index
        let mut out = Vec::with_capacity(size as usize);
        let mut counter = vec![0i64; leaves.len()];
        let mut current = 0i64;
        for _ in 0..size {
            out.push(current);
            // Colexicographic odometer: the leftmost leaf runs fastest.
            for (k, &(s, d)) in leaves.iter().enumerate() {
                counter[k] += 1;
                current = current.wrapping_add(d);
                if counter[k] < s {
                    break;
                }
                counter[k] = 0;
                current = current.wrapping_sub(s.wrapping_mul(d));
            }
        }
        Ok(out)
    }

    /// `slice_and_offset(c, L)`: the layout of the modes where `c` is `_`, and the index `L(c)` with `_` as 0.
    /// Nested coordinate tuples flatten into the result one level, as CuTe's `slice` does.
    pub fn slice_and_offset(&self, coord: &Coord) -> Result<(Layout, Int)> {
        let offset = self.call(coord)?;
        let shape = slice(coord, &self.shape)?;
        let stride = slice(coord, &self.stride)?;
        Ok((Layout { shape, stride }, offset))
    }

    /// `upcast<N>(L)`: view elements as `N` times wider: a static stride `d` becomes `signum(d) * ceil_div(|d|, N)`
    /// and its shape `ceil_div(s, ceil_div(N, |d|))`; static-0 strides are kept; dynamic strides are divided by
    /// `N`. @pre `d % N == 0 || N % d == 0` for every static stride (CuTe's divisibility condition).
    pub fn upcast(&self, n: i64) -> Result<Layout> {
        let op = LayoutOp::Upcast;
        if n < 1 {
            return Err(invalid(op, format!("factor {n} is not positive")));
        }
        let big_n = Int::Static(n);
        let mut shapes = Vec::new();
        let mut strides = Vec::new();
        for (s, d) in self.leaves() {
            match d.static_value() {
                Some(0) => {
                    shapes.push(s);
                    strides.push(d);
                }
                Some(v) => {
                    if v % n != 0 && n % v != 0 {
                        let what = format!("stride {d} of {self} and {n} do not divide each other");
                        return Err(not_divisible(op, what, Some(v), Some(n)));
                    }
                    let ad = int_tuple::abs(op, &d)?;
                    shapes.push(int_tuple::ceil_div(op, &s, &int_tuple::ceil_div(op, &big_n, &ad)?)?);
                    strides.push(mul(op, &Int::Static(v.signum()), &int_tuple::ceil_div(op, &ad, &big_n)?)?);
                }
                None => {
                    shapes.push(s);
                    strides.push(int_tuple::safe_div(op, &d, &big_n)?);
                }
            }
        }
        Ok(self.with_leaves(shapes, strides))
    }

    /// `downcast<N>(L)`: view elements as `N` times narrower: the stride-±1 mode grows `N` times, every other
    /// stride is multiplied by `N`.
    /// @pre some stride is a static 1 ("downcast requires adjacent elements"; CuTe's `has_int1`).
    pub fn downcast(&self, n: i64) -> Result<Layout> {
        let op = LayoutOp::Downcast;
        if n < 1 {
            return Err(invalid(op, format!("factor {n} is not positive")));
        }
        if !self.leaves().iter().any(|(_, d)| d.is(1)) {
            return Err(invalid(op, format!("{self} has no stride-1 mode (downcast requires adjacent elements)")));
        }
        let n = Int::Static(n);
        let mut shapes = Vec::new();
        let mut strides = Vec::new();
        for (s, d) in self.leaves() {
            if d.is(1) || d.is(-1) {
                shapes.push(mul(op, &s, &n)?);
                strides.push(d);
            } else {
                shapes.push(s);
                strides.push(mul(op, &d, &n)?);
            }
        }
        Ok(self.with_leaves(shapes, strides))
    }

    /// The same profile with new leaves (in `flatten` order).
    pub(crate) fn with_leaves(&self, shapes: Vec<Int>, strides: Vec<Int>) -> Layout {
        let mut s = shapes.into_iter();
        let mut d = strides.into_iter();
        let shape = self.shape.map(|_| s.next().unwrap_or(Int::Static(1)));
        let stride = self.stride.map(|_| d.next().unwrap_or(Int::Static(0)));
        Layout { shape, stride }
    }
}

/// CuTe's `slice(c, t)`: keep the modes of `t` where `c` is `_`; a tuple coordinate concatenates the kept
/// modes of its elements (CuTe's `filter_tuple`), so nested tuples flatten one level.
pub fn slice(coord: &Coord, t: &IntTuple) -> Result<IntTuple> {
    match coord {
        Coord::Underscore => Ok(t.clone()),
        Coord::Int(_) => Ok(IntTuple::Tuple(vec![])),
        Coord::Tuple(c) => {
            let modes = t.modes();
            if c.len() != modes.len() || (!t.is_tuple() && c.len() != 1) {
                return Err(rank_mismatch(LayoutOp::Slice, format!("coordinate {coord} for {t}")));
            }
            let mut out = Vec::new();
            for (ci, ti) in c.iter().zip(modes) {
                match ci {
                    Coord::Underscore => out.push(ti.clone()),
                    Coord::Int(_) => {}
                    Coord::Tuple(_) => match slice(ci, ti)? {
                        IntTuple::Tuple(v) => out.extend(v),
                        leaf => out.push(leaf),
                    },
                }
            }
            Ok(IntTuple::Tuple(out))
        }
    }
}

//! Hierarchical integer tuples: CuTe's `IntTuple` (an integer or a tuple of `IntTuple`s) and the arithmetic of
//! shapes on them (`product`, `shape_div`, `ceil_div`, `elem_scale`, compact strides, `crd2idx`, `idx2crd`). The
//! tree itself is `cutec-symint`'s generic `IntTuple` with this module's [`Int`] as its leaf.
//!
//! An integer is [`Int::Static`] (known to the compiler) or [`Int::Dynamic`] (a run-time value: a
//! [`SymInt`] over dynamic dimensions and run-time values, and, where the caller knows it, a value). Dynamic
//! integers behave like CuTe's run-time integers: they never take part in static simplifications (coalescing,
//! `is_constant<1>` tests), products and quotients of them are formed symbolically (the tree `128*K`, never a
//! string), and an operation that must compare or branch on an unknown value fails with
//! [`LayoutError::NeedsStatic`].

use std::fmt;

pub use cutec_symint::{Op as SymOp, SymInt};

use crate::error::{LayoutError, Result, invalid, not_divisible, rank_mismatch};
use crate::eval::LayoutOp;

/// An integer of a shape, stride or coordinate.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Int {
    /// A compile-time integer (CuTe's `Int<N>`).
    Static(i64),
    /// A run-time integer: `sym` says how it is computed (and prints where the value is unknown); `value` is
    /// known in some contexts (tests, a specialisation), and then prints instead.
    Dynamic { sym: SymInt, value: Option<i64> },
}

impl Int {
    /// A dynamic dimension named `name`, value unknown.
    pub fn named(name: impl Into<String>) -> Int {
        Int::Dynamic { sym: SymInt::dim(name), value: None }
    }

    /// The integer a symbolic integer stands for: static when it is a constant.
    pub fn from_sym(sym: SymInt) -> Int {
        match sym {
            SymInt::Const(v) => Int::Static(v),
            sym => Int::Dynamic { sym, value: None },
        }
    }

    /// The symbolic form: a constant for a static integer.
    pub fn sym(&self) -> SymInt {
        match self {
            Int::Static(v) => SymInt::Const(*v),
            Int::Dynamic { sym, .. } => sym.clone(),
        }
    }

    /// The value, when it is known (static, or dynamic with a known value).
    pub fn value(&self) -> Option<i64> {
        match self {
            Int::Static(v) => Some(*v),
            Int::Dynamic { value, .. } => *value,
        }
    }

    pub fn is_static(&self) -> bool {
        matches!(self, Int::Static(_))
    }

    /// The value of a static integer.
    pub fn static_value(&self) -> Option<i64> {
        match self {
            Int::Static(v) => Some(*v),
            Int::Dynamic { .. } => None,
        }
    }

    /// CuTe's `is_constant<v, T>`: a static integer equal to `v`.
    pub fn is(&self, v: i64) -> bool {
        matches!(self, Int::Static(x) if *x == v)
    }

    /// The value, or [`LayoutError::NeedsStatic`] naming this integer.
    pub fn need(&self, op: LayoutOp) -> Result<i64> {
        match self {
            Int::Static(v) => Ok(*v),
            Int::Dynamic { value: Some(v), .. } => Ok(*v),
            Int::Dynamic { sym, value: None } => Err(LayoutError::NeedsStatic { op, name: sym.to_string() }),
        }
    }
}

impl From<i64> for Int {
    fn from(v: i64) -> Int {
        Int::Static(v)
    }
}

impl fmt::Display for Int {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Int::Static(v) | Int::Dynamic { value: Some(v), .. } => write!(f, "{v}"),
            Int::Dynamic { sym, value: None } => write!(f, "{sym}"),
        }
    }
}

fn overflow(op: LayoutOp, what: String) -> LayoutError {
    LayoutError::Overflow { op, what }
}

/// The most operations a dynamic integer of the algebra may hold. Each result copies its operands' trees, so
/// without a bound a product over many dynamic modes (`size`, the prefix products of `right_inverse`) grows
/// quadratically: 20,000 modes of shape `N` took minutes and 13 GB, and so deep a tree could overflow the stack
/// when dropped or printed. Real layouts hold a few operations per integer.
pub const MAX_SYM_OPS: usize = 1024;

/// The operations (inner nodes) of a symbolic integer, counted without recursion.
fn sym_ops(s: &SymInt) -> usize {
    let mut n = 0;
    let mut stack = vec![s];
    while let Some(x) = stack.pop() {
        if let SymInt::Op(_, a, b) = x {
            n += 1;
            stack.push(a);
            stack.push(b);
        }
    }
    n
}

fn ops_of(a: &Int) -> usize {
    match a {
        Int::Static(_) => 0,
        Int::Dynamic { sym, .. } => sym_ops(sym),
    }
}

/// The dynamic result `a sop b`, whose value is `f(a, b)` when both values are known; an error past
/// [`MAX_SYM_OPS`].
fn derived(op: LayoutOp, sop: SymOp, a: &Int, b: &Int, f: impl Fn(i64, i64) -> Result<i64>) -> Result<Int> {
    let value = match (a.value(), b.value()) {
        (Some(x), Some(y)) => Some(f(x, y)?),
        _ => None,
    };
    if ops_of(a) + ops_of(b) >= MAX_SYM_OPS {
        return Err(invalid(op, format!("a dynamic integer of more than {MAX_SYM_OPS} operations")));
    }
    Ok(Int::Dynamic { sym: SymInt::Op(sop, Box::new(a.sym()), Box::new(b.sym())), value })
}

/// `a * b`, static when both are; `0 * x = 0` and `1 * x = x` keep static zeros and dynamic names.
pub fn mul(op: LayoutOp, a: &Int, b: &Int) -> Result<Int> {
    let checked = |x: i64, y: i64| x.checked_mul(y).ok_or_else(|| overflow(op, format!("{x}*{y}")));
    match (a, b) {
        (Int::Static(x), Int::Static(y)) => Ok(Int::Static(checked(*x, *y)?)),
        (Int::Static(0), _) | (_, Int::Static(0)) => Ok(Int::Static(0)),
        (Int::Static(1), x) | (x, Int::Static(1)) => Ok(x.clone()),
        _ => derived(op, SymOp::Mul, a, b, checked),
    }
}

/// `a + b`, static when both are; `0 + x = x`.
pub fn add(op: LayoutOp, a: &Int, b: &Int) -> Result<Int> {
    let checked = |x: i64, y: i64| x.checked_add(y).ok_or_else(|| overflow(op, format!("{x}+{y}")));
    match (a, b) {
        (Int::Static(x), Int::Static(y)) => Ok(Int::Static(checked(*x, *y)?)),
        (Int::Static(0), x) | (x, Int::Static(0)) => Ok(x.clone()),
        _ => derived(op, SymOp::Add, a, b, checked),
    }
}

/// `|a|`: needs the value of a dynamic integer (the sign decides), and keeps it symbolic when it is already
/// non-negative.
pub fn abs(op: LayoutOp, a: &Int) -> Result<Int> {
    match a {
        Int::Static(x) => x.checked_abs().map(Int::Static).ok_or_else(|| overflow(op, format!("|{x}|"))),
        Int::Dynamic { value: Some(v), .. } if *v >= 0 => Ok(a.clone()),
        Int::Dynamic { sym, .. } => {
            let v = a.need(op)?;
            let value = v.checked_abs().ok_or_else(|| overflow(op, format!("|{v}|")))?;
            let negated = SymInt::Op(SymOp::Sub, Box::new(SymInt::Const(0)), Box::new(sym.clone()));
            Ok(Int::Dynamic { sym: negated, value: Some(value) })
        }
    }
}

fn signum(x: i64) -> i64 {
    x.signum()
}

/// CuTe's `shape_div` on integers: `a / b` rounded away from zero (`1` or `-1` when `|a| < |b|`), under the
/// divisibility condition `a % b == 0 || b % a == 0`, checked when both are static (CuTe waives it for dynamic
/// integers). `what` describes the operands for the error message.
pub fn shape_div(op: LayoutOp, a: &Int, b: &Int, what: &dyn Fn() -> String) -> Result<Int> {
    let div = |x: i64, y: i64| -> Result<i64> {
        if y == 0 {
            return Err(invalid(op, format!("division by zero: {}", what())));
        }
        let q = x.checked_div(y).ok_or_else(|| overflow(op, format!("{x}/{y}")))?;
        Ok(if q != 0 { q } else { signum(x) * signum(y) })
    };
    match (a, b) {
        (_, Int::Static(1)) => Ok(a.clone()),
        (Int::Static(x), Int::Static(y)) => {
            let divides = |p: i64, q: i64| p != 0 && q.checked_rem(p) == Some(0);
            if *y == 0 || !(divides(*y, *x) || divides(*x, *y) || *x == 0) {
                return Err(not_divisible(op, what(), Some(*x), Some(*y)));
            }
            Ok(Int::Static(div(*x, *y)?))
        }
        _ => derived(op, SymOp::ShapeDiv, a, b, div),
    }
}

/// Exact division `a / b` (CuTe's `safe_div`), checked when both are static.
pub fn safe_div(op: LayoutOp, a: &Int, b: &Int) -> Result<Int> {
    let div = |x: i64, y: i64| -> Result<i64> {
        if y == 0 || x.checked_rem(y) != Some(0) {
            return Err(not_divisible(op, format!("{y} does not divide {x}"), Some(y), Some(x)));
        }
        x.checked_div(y).ok_or_else(|| overflow(op, format!("{x}/{y}")))
    };
    match (a, b) {
        (_, Int::Static(1)) => Ok(a.clone()),
        (Int::Static(x), Int::Static(y)) => Ok(Int::Static(div(*x, *y)?)),
        _ => derived(op, SymOp::Div, a, b, div),
    }
}

/// `ceil(a / b)` for positive integers, as CuTe computes it: `(a + b - 1) / b`.
pub fn ceil_div(op: LayoutOp, a: &Int, b: &Int) -> Result<Int> {
    let div = |x: i64, y: i64| -> Result<i64> {
        if y == 0 {
            return Err(invalid(op, format!("ceil_div({x},0)")));
        }
        let n = x.checked_add(y - 1).ok_or_else(|| overflow(op, format!("ceil_div({x},{y})")))?;
        n.checked_div(y).ok_or_else(|| overflow(op, format!("ceil_div({x},{y})")))
    };
    match (a, b) {
        (_, Int::Static(1)) => Ok(a.clone()),
        (Int::Static(x), Int::Static(y)) => Ok(Int::Static(div(*x, *y)?)),
        _ => derived(op, SymOp::CeilDiv, a, b, div),
    }
}

/// `a / b` rounded toward negative infinity, for the non-negative indices and positive extents of coordinate
/// arithmetic (`idx2crd`, `crd2idx`); symbolic when either is dynamic (`div`, which agrees there).
pub fn div(op: LayoutOp, a: &Int, b: &Int) -> Result<Int> {
    let f = |x: i64, y: i64| -> Result<i64> {
        if y == 0 {
            return Err(invalid(op, format!("division by zero: {x}/0")));
        }
        x.checked_div_euclid(y).ok_or_else(|| overflow(op, format!("{x}/{y}")))
    };
    match (a, b) {
        (_, Int::Static(1)) => Ok(a.clone()),
        (Int::Static(0), _) => Ok(Int::Static(0)),
        (Int::Static(x), Int::Static(y)) => Ok(Int::Static(f(*x, *y)?)),
        _ => derived(op, SymOp::Div, a, b, f),
    }
}

/// `a mod b` (Euclidean), for the non-negative indices and positive extents of coordinate arithmetic;
/// symbolic when either is dynamic (`rem`, which agrees there).
pub fn rem(op: LayoutOp, a: &Int, b: &Int) -> Result<Int> {
    let f = |x: i64, y: i64| -> Result<i64> {
        if y == 0 {
            return Err(invalid(op, format!("division by zero: {x}%0")));
        }
        x.checked_rem_euclid(y).ok_or_else(|| overflow(op, format!("{x}%{y}")))
    };
    match (a, b) {
        (_, Int::Static(1)) | (Int::Static(0), _) => Ok(Int::Static(0)),
        (Int::Static(x), Int::Static(y)) => Ok(Int::Static(f(*x, *y)?)),
        _ => derived(op, SymOp::Rem, a, b, f),
    }
}

/// CuTe's `shape_min`: a static `1` is smaller than every shape; otherwise `min(a, b)`.
pub fn shape_min(op: LayoutOp, a: &Int, b: &Int) -> Result<Int> {
    match (a, b) {
        (Int::Static(1), _) | (_, Int::Static(1)) => Ok(Int::Static(1)),
        (Int::Static(x), Int::Static(y)) => Ok(Int::Static(*x.min(y))),
        _ => derived(op, SymOp::Min, a, b, |x, y| Ok(x.min(y))),
    }
}

/// An integer or a tuple of `IntTuple`s: shapes, strides, coordinates and profiles. The tree, its structure
/// (`rank`, `depth`, `modes`, `congruent`, `flatten`, `try_map`) and its printing are `cutec-symint`'s, shared
/// with the checker and the manifest; the arithmetic on shapes is [`Shape`]'s and this module's.
pub type IntTuple = cutec_symint::IntTuple<Int>;

pub(crate) use cutec_symint::int_tuple::write_tuple;

/// The arithmetic of a shape of the algebra's integers.
pub trait Shape {
    /// CuTe's `product` (`size` of a shape): the product of the leaves; `()` has size 1.
    fn product(&self, op: LayoutOp) -> Result<Int>;
    /// The values of all leaves, when all are known.
    fn values(&self) -> Option<Vec<i64>>;
    /// Whether every leaf is static.
    fn is_static(&self) -> bool;
}

impl Shape for IntTuple {
    fn product(&self, op: LayoutOp) -> Result<Int> {
        match self {
            IntTuple::Int(i) => Ok(i.clone()),
            IntTuple::Tuple(v) => v.iter().try_fold(Int::Static(1), |acc, t| mul(op, &acc, &t.product(op)?)),
        }
    }

    fn values(&self) -> Option<Vec<i64>> {
        self.leaves().into_iter().map(Int::value).collect()
    }

    fn is_static(&self) -> bool {
        self.leaves().into_iter().all(Int::is_static)
    }
}

/// CuTe's `product_each`: the size of each top-level mode, as a tuple (`transform(wrap(t), product)`: an
/// integer `n` gives `(n)`).
pub fn product_each(op: LayoutOp, t: &IntTuple) -> Result<IntTuple> {
    match t {
        IntTuple::Int(_) => Ok(IntTuple::Tuple(vec![t.clone()])),
        IntTuple::Tuple(v) => {
            Ok(IntTuple::Tuple(v.iter().map(|m| m.product(op).map(IntTuple::Int)).collect::<Result<_>>()?))
        }
    }
}

/// CuTe's `compact_major<LayoutLeft>(shape, current)`: column-major strides starting at `current`; a static
/// shape 1 gets stride 0. Returns the strides and `current * size(shape)`.
pub fn compact_col_major(op: LayoutOp, shape: &IntTuple, current: &Int) -> Result<(IntTuple, Int)> {
    match shape {
        IntTuple::Int(s) if s.is(1) => Ok((IntTuple::int(0), current.clone())),
        IntTuple::Int(s) => Ok((IntTuple::Int(current.clone()), mul(op, current, s)?)),
        IntTuple::Tuple(v) => {
            let mut cur = current.clone();
            let mut out = Vec::with_capacity(v.len());
            for m in v {
                let (d, next) = compact_col_major(op, m, &cur)?;
                out.push(d);
                cur = next;
            }
            Ok((IntTuple::Tuple(out), cur))
        }
    }
}

/// CuTe's `compact_major<LayoutRight>(shape)`: row-major strides (the last mode is contiguous).
pub fn compact_row_major(op: LayoutOp, shape: &IntTuple, current: &Int) -> Result<(IntTuple, Int)> {
    match shape {
        IntTuple::Int(_) => compact_col_major(op, shape, current),
        IntTuple::Tuple(v) => {
            let mut cur = current.clone();
            let mut out = vec![IntTuple::int(0); v.len()];
            for (k, m) in v.iter().enumerate().rev() {
                let (d, next) = compact_row_major(op, m, &cur)?;
                out[k] = d;
                cur = next;
            }
            Ok((IntTuple::Tuple(out), cur))
        }
    }
}

/// CuTe's `shape_div` on tuples: element-wise for tuple/tuple, a fold of the divisor through the modes for
/// tuple/int (`shape_div((4,5,6),40) = (1,1,3)`), and by the product for int/tuple.
pub fn shape_div_tuple(op: LayoutOp, a: &IntTuple, b: &IntTuple) -> Result<IntTuple> {
    match (a, b) {
        (IntTuple::Tuple(x), IntTuple::Tuple(y)) => {
            if x.len() != y.len() {
                return Err(rank_mismatch(op, format!("shape_div of {a} by {b}")));
            }
            Ok(IntTuple::Tuple(x.iter().zip(y).map(|(p, q)| shape_div_tuple(op, p, q)).collect::<Result<_>>()?))
        }
        (IntTuple::Tuple(x), IntTuple::Int(d)) => {
            let mut rest = d.clone();
            let mut out = Vec::with_capacity(x.len());
            for m in x {
                out.push(shape_div_tuple(op, m, &IntTuple::Int(rest.clone()))?);
                let size = m.product(op)?;
                rest = shape_div(op, &rest, &size, &|| format!("{rest} and {size} in shape_div of {a} by {b}"))?;
            }
            Ok(IntTuple::Tuple(out))
        }
        (IntTuple::Int(_), IntTuple::Tuple(_)) => shape_div_tuple(op, a, &IntTuple::Int(b.product(op)?)),
        (IntTuple::Int(x), IntTuple::Int(y)) => {
            Ok(IntTuple::Int(shape_div(op, x, y, &|| format!("{x} and {y} do not divide each other"))?))
        }
    }
}

/// CuTe's `ceil_div` on tuples: element-wise (missing modes of `b` are 1), a fold for tuple/int, by the product
/// for int/tuple.
pub fn ceil_div_tuple(op: LayoutOp, a: &IntTuple, b: &IntTuple) -> Result<IntTuple> {
    match (a, b) {
        (IntTuple::Tuple(x), IntTuple::Tuple(y)) => {
            if x.len() < y.len() {
                return Err(rank_mismatch(op, format!("ceil_div of {a} by {b}")));
            }
            let one = IntTuple::int(1);
            Ok(IntTuple::Tuple(
                x.iter()
                    .enumerate()
                    .map(|(k, p)| ceil_div_tuple(op, p, y.get(k).unwrap_or(&one)))
                    .collect::<Result<_>>()?,
            ))
        }
        (IntTuple::Tuple(x), IntTuple::Int(d)) => {
            let mut rest = d.clone();
            let mut out = Vec::with_capacity(x.len());
            for m in x {
                out.push(ceil_div_tuple(op, m, &IntTuple::Int(rest.clone()))?);
                rest = ceil_div(op, &rest, &m.product(op)?)?;
            }
            Ok(IntTuple::Tuple(out))
        }
        (IntTuple::Int(_), IntTuple::Tuple(_)) => ceil_div_tuple(op, a, &IntTuple::Int(b.product(op)?)),
        (IntTuple::Int(x), IntTuple::Int(y)) => Ok(IntTuple::Int(ceil_div(op, x, y)?)),
    }
}

/// CuTe's `coalesce` of a shape: adjacent leaves of the same staticness multiply together.
/// @post size(result) == size(shape), depth(result) <= 1.
pub fn coalesce_shape(op: LayoutOp, shape: &IntTuple) -> Result<IntTuple> {
    let leaves = shape.flatten();
    let mut out: Vec<Int> = Vec::new();
    for l in leaves {
        match out.last_mut() {
            Some(back) if back.is_static() == l.is_static() => *back = mul(op, back, &l)?,
            _ => out.push(l),
        }
    }
    Ok(match out.len() {
        0 => IntTuple::int(1),
        1 => IntTuple::Int(out.remove(0)),
        _ => IntTuple::Tuple(out.into_iter().map(IntTuple::Int).collect()),
    })
}

/// A coordinate: an integer, CuTe's `_` (keep this mode when slicing), or a tuple of coordinates.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Coord {
    Int(Int),
    Underscore,
    Tuple(Vec<Coord>),
}

impl From<&IntTuple> for Coord {
    fn from(t: &IntTuple) -> Coord {
        match t {
            IntTuple::Int(i) => Coord::Int(i.clone()),
            IntTuple::Tuple(v) => Coord::Tuple(v.iter().map(Coord::from).collect()),
        }
    }
}

impl From<i64> for Coord {
    fn from(v: i64) -> Coord {
        Coord::Int(Int::Static(v))
    }
}

impl Coord {
    /// Whether some leaf is `_`.
    pub fn has_underscore(&self) -> bool {
        match self {
            Coord::Int(_) => false,
            Coord::Underscore => true,
            Coord::Tuple(v) => v.iter().any(Coord::has_underscore),
        }
    }
}

impl fmt::Display for Coord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Coord::Int(i) => write!(f, "{i}"),
            Coord::Underscore => f.write_str("_"),
            Coord::Tuple(v) => crate::int_tuple::write_tuple(f, v),
        }
    }
}

/// CuTe's `crd2idx(coord, shape, stride)`; `_` counts as 0 (the offset of a slice).
///  * int coordinate, int shape: `c * d`;
///  * int coordinate, tuple shape: colexicographic split, `c % size(s0)` into mode 0 and `c / size(s0)` onward
///    (the last mode takes the rest unreduced);
///  * tuple coordinate: the sum over modes.
pub fn crd2idx(op: LayoutOp, coord: &Coord, shape: &IntTuple, stride: &IntTuple) -> Result<Int> {
    match (coord, shape, stride) {
        (Coord::Underscore, _, _) => Ok(Int::Static(0)),
        (Coord::Tuple(c), IntTuple::Tuple(s), IntTuple::Tuple(d)) => {
            if c.len() != s.len() || s.len() != d.len() {
                return Err(rank_mismatch(op, format!("coordinate {coord} for shape {shape}")));
            }
            let mut sum = Int::Static(0);
            for ((ci, si), di) in c.iter().zip(s).zip(d) {
                sum = add(op, &sum, &crd2idx(op, ci, si, di)?)?;
            }
            Ok(sum)
        }
        (Coord::Tuple(c), IntTuple::Int(_), IntTuple::Int(_)) if c.len() == 1 => crd2idx(op, &c[0], shape, stride),
        (Coord::Tuple(_), _, _) => Err(rank_mismatch(op, format!("coordinate {coord} for shape {shape}"))),
        (Coord::Int(c), IntTuple::Tuple(s), IntTuple::Tuple(d)) => {
            if s.len() != d.len() {
                return Err(rank_mismatch(op, format!("shape {shape} and stride {stride}")));
            }
            if s.is_empty() {
                return Ok(Int::Static(0));
            }
            if c.is(0) {
                return Ok(Int::Static(0));
            }
            let mut rest = c.clone();
            let mut sum = Int::Static(0);
            for (k, (si, di)) in s.iter().zip(d).enumerate() {
                if k + 1 == s.len() {
                    sum = add(op, &sum, &crd2idx(op, &Coord::Int(rest.clone()), si, di)?)?;
                    break;
                }
                let size = si.product(op)?;
                if size.static_value().is_some_and(|v| v <= 0) {
                    return Err(invalid(op, format!("shape {shape} has a non-positive mode")));
                }
                // The colexicographic split: `rest % size` indexes this mode, `rest / size` the ones after it
                // (symbolic for run-time coordinates or shapes).
                sum = add(op, &sum, &crd2idx(op, &Coord::Int(rem(op, &rest, &size)?), si, di)?)?;
                rest = div(op, &rest, &size)?;
            }
            Ok(sum)
        }
        (Coord::Int(c), IntTuple::Int(_), IntTuple::Int(d)) => mul(op, c, d),
        _ => Err(rank_mismatch(op, format!("shape {shape} and stride {stride} are not congruent"))),
    }
}

/// CuTe's `idx2crd(idx, shape, stride)`: the coordinate of `idx` in a compact layout, `(idx / d) % s` per leaf
/// (a static shape 1 gives 0).
/// @post crd2idx(result, shape, stride) == idx for compact (shape, stride) and idx < size(shape).
pub fn idx2crd(op: LayoutOp, idx: &IntTuple, shape: &IntTuple, stride: &IntTuple) -> Result<IntTuple> {
    match (idx, shape, stride) {
        (IntTuple::Tuple(i), IntTuple::Tuple(s), IntTuple::Tuple(d)) => {
            if i.len() != s.len() || s.len() != d.len() {
                return Err(rank_mismatch(op, format!("index {idx} for shape {shape}")));
            }
            Ok(IntTuple::Tuple(i.iter().zip(s).zip(d).map(|((a, b), c)| idx2crd(op, a, b, c)).collect::<Result<_>>()?))
        }
        (IntTuple::Int(_), IntTuple::Tuple(s), IntTuple::Tuple(d)) => {
            if s.len() != d.len() {
                return Err(rank_mismatch(op, format!("shape {shape} and stride {stride}")));
            }
            Ok(IntTuple::Tuple(s.iter().zip(d).map(|(b, c)| idx2crd(op, idx, b, c)).collect::<Result<_>>()?))
        }
        (IntTuple::Int(i), IntTuple::Int(s), IntTuple::Int(d)) => {
            if s.is(1) {
                return Ok(IntTuple::int(0));
            }
            if let (Some(iv), Some(sv), Some(dv)) = (i.value(), s.value(), d.value()) {
                if dv == 0 || sv == 0 {
                    return Err(invalid(op, format!("idx2crd of {iv} with shape {sv} and stride {dv}")));
                }
                let q = iv.checked_div(dv).ok_or_else(|| overflow(op, format!("{iv}/{dv}")))?;
                return Ok(IntTuple::int(q.checked_rem_euclid(sv).ok_or_else(|| overflow(op, format!("{q}%{sv}")))?));
            }
            // `(i / d) % s`, symbolic for a run-time index (non-negative, with positive extents and strides).
            Ok(IntTuple::Int(rem(op, &div(op, i, d)?, s)?))
        }
        _ => Err(rank_mismatch(op, format!("index {idx} for shape {shape} and stride {stride}"))),
    }
}

/// CuTe's `idx2crd(idx, shape)` without a stride: a tuple index splits mode by mode, an integer index is split
/// colexicographically over a tuple shape (compact column-major strides).
pub fn idx2crd_compact(op: LayoutOp, idx: &IntTuple, shape: &IntTuple) -> Result<IntTuple> {
    match (idx, shape) {
        (IntTuple::Tuple(i), IntTuple::Tuple(s)) => {
            if i.len() != s.len() {
                return Err(rank_mismatch(op, format!("index {idx} for shape {shape}")));
            }
            Ok(IntTuple::Tuple(i.iter().zip(s).map(|(a, b)| idx2crd_compact(op, a, b)).collect::<Result<_>>()?))
        }
        (IntTuple::Int(_), IntTuple::Tuple(_)) => {
            let (stride, _) = compact_col_major(op, shape, &Int::Static(1))?;
            idx2crd(op, idx, shape, &stride)
        }
        (IntTuple::Int(_), IntTuple::Int(_)) => Ok(idx.clone()),
        _ => Err(rank_mismatch(op, format!("index {idx} for shape {shape}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> IntTuple {
        crate::parse_int_tuple(s).unwrap()
    }

    #[test]
    fn shape_div_rounds_away_from_zero_and_checks_divisibility() {
        let what = || String::new();
        assert_eq!(shape_div(LayoutOp::Size, &Int::Static(2), &Int::Static(4), &what).unwrap(), Int::Static(1));
        assert_eq!(shape_div(LayoutOp::Size, &Int::Static(-2), &Int::Static(4), &what).unwrap(), Int::Static(-1));
        assert_eq!(shape_div(LayoutOp::Size, &Int::Static(12), &Int::Static(4), &what).unwrap(), Int::Static(3));
        assert!(shape_div(LayoutOp::Size, &Int::Static(6), &Int::Static(4), &what).is_err());
        assert!(shape_div(LayoutOp::Size, &Int::Static(6), &Int::Static(0), &what).is_err());
        assert_eq!(shape_div_tuple(LayoutOp::Size, &t("(4,5,6)"), &t("40")).unwrap(), t("(1,1,3)"));
    }

    #[test]
    fn ceil_div_folds_through_tuples() {
        assert_eq!(ceil_div_tuple(LayoutOp::Size, &t("(3,3,1)"), &t("8")).unwrap(), t("(1,1,1)"));
        assert_eq!(ceil_div_tuple(LayoutOp::Size, &t("(6,5)"), &t("2")).unwrap(), t("(3,5)"));
        assert_eq!(ceil_div_tuple(LayoutOp::Size, &t("(6,5)"), &t("(4)")).unwrap(), t("(2,5)"));
    }

    #[test]
    fn arithmetic_is_checked_and_symbolic() {
        assert!(mul(LayoutOp::Size, &Int::Static(i64::MAX), &Int::Static(2)).is_err());
        assert_eq!(mul(LayoutOp::Size, &Int::named("M"), &Int::Static(1)).unwrap(), Int::named("M"));
        assert_eq!(mul(LayoutOp::Size, &Int::named("M"), &Int::Static(0)).unwrap(), Int::Static(0));
        assert_eq!(mul(LayoutOp::Size, &Int::named("M"), &Int::named("K")).unwrap().to_string(), "M*K");
        let m = Int::Dynamic { sym: SymInt::dim("M"), value: Some(6) };
        assert_eq!(mul(LayoutOp::Size, &m, &Int::Static(2)).unwrap().value(), Some(12));
        assert!(Int::named("M").need(LayoutOp::Size).is_err());
    }

    #[test]
    fn compact_strides_skip_size_one() {
        let (d, next) = compact_col_major(LayoutOp::Size, &t("(4,(1,2))"), &Int::Static(1)).unwrap();
        assert_eq!((d, next), (t("(1,(0,4))"), Int::Static(8)));
        let (d, _) = compact_row_major(LayoutOp::Size, &t("(4,8)"), &Int::Static(1)).unwrap();
        assert_eq!(d, t("(8,1)"));
        assert_eq!(coalesce_shape(LayoutOp::Size, &t("(2,(3,M),4)")).unwrap(), t("(6,M,4)"));
    }

    #[test]
    fn coordinates() {
        let (shape, stride) = (t("(3,(2,3))"), t("(3,(12,1))"));
        assert_eq!(crd2idx(LayoutOp::Size, &Coord::from(16), &shape, &stride).unwrap(), Int::Static(17));
        assert_eq!(idx2crd_compact(LayoutOp::Size, &t("16"), &shape).unwrap(), t("(1,(1,2))"));
        assert!(crd2idx(LayoutOp::Size, &Coord::from(&t("(1,2,3)")), &shape, &stride).is_err());
    }
}

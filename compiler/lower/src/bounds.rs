//! Bounds: an access through a view of a kernel argument that may fall outside the argument is predicated (a
//! load gives 0, a store is skipped), unless the compiler proves it inside ([`super::prove`]).
//!
//! A view of a kernel argument carries, beside its layout, a *coordinate layout* ([`Coords`]): the same shape,
//! with strides that are multiples of one tag per leaf of the argument's shape (`#0`, `#1`, ...: the basis
//! elements `E<m>` of CuTe's identity tensors). Every operation applied to the view's layout is applied to it
//! too, so the coordinate of element `c` of the view along leaf `m` of the argument is the `#m` component of
//! `offset + coords(c)`. The algebra only multiplies strides, so components are linear in the tags. An operation
//! that gives the coordinate layout another shape than the data layout (it merged modes of the argument that the
//! data layout merged because they are contiguous in memory) loses the coordinates ([`Bounds::Lost`]); an access
//! through such a view that would need a predicate is then refused (E0308), never guessed.

use super::value::{CoordV, TensorView};
use super::{LResult, Lower};
use crate::error::LowerError;
use cutec_diagnostics::Span;
use cutec_ir::{BinaryOp, CompareOp, Expr, Handle};
use cutec_layout::{Int, IntTuple, Layout, LayoutError};
use cutec_sema::{SymInt, SymOp};

/// What the compiler knows of where a view's elements are in the kernel argument it views.
#[derive(Clone, Debug)]
pub(crate) enum Bounds {
    /// Not a view of a kernel argument (registers, shared memory): nothing to check.
    Free,
    Tracked(Box<Coords>),
    /// A view whose coordinates an operation lost: `why` says which. Its accesses are then kept inside the
    /// argument's memory, `[0, cosize)` elements from its base, where that is known.
    Lost(Box<Lost>),
}

/// A view of the kernel argument `param` whose coordinates an operation lost (`why` says which).
#[derive(Clone, Debug)]
pub(crate) struct Lost {
    pub param: String,
    pub why: String,
    /// The argument's cosize, when known: the view's accesses are kept inside `[0, cosize)` from its base.
    pub cosize: Option<SymInt>,
}

/// The coordinates of a view's elements in the kernel argument `param`.
#[derive(Clone, Debug)]
pub(crate) struct Coords {
    pub param: String,
    /// The argument's extent along each leaf of its shape.
    pub extents: Vec<SymInt>,
    /// The view's shape; strides over the tags `#m`.
    pub layout: Layout,
    pub offset: SymInt,
    /// The argument's cosize, when no stride may be negative.
    pub cosize: Option<SymInt>,
}

/// `a + b`, folded when `b` is 0 or both are constants.
fn plus(a: &SymInt, b: &SymInt) -> SymInt {
    if b.as_const() == Some(0) { a.clone() } else { SymInt::op(SymOp::Add, a.clone(), b.clone()) }
}

/// The tag of leaf `m` of an argument's shape.
fn tag(m: usize) -> SymInt {
    SymInt::dim(format!("#{m}"))
}

/// The `#m` component of `s`, where `s` is linear in the tags.
fn component(s: &SymInt, m: usize) -> Option<SymInt> {
    let c = s.substitute(&|leaf| match leaf {
        SymInt::Dim(n) if n.starts_with('#') => Some(SymInt::Const(i64::from(n[1..].parse() == Ok(m)))),
        _ => None,
    });
    linear_in_tags(s).then_some(c)
}

/// Whether the tags occur in `s` only under sums, differences and products with a side free of them.
fn linear_in_tags(s: &SymInt) -> bool {
    let tagged = |x: &SymInt| x.any_leaf(&mut |l| matches!(l, SymInt::Dim(n) if n.starts_with('#')));
    match s {
        SymInt::Op(SymOp::Add | SymOp::Sub, a, b) => linear_in_tags(a) && linear_in_tags(b),
        SymInt::Op(SymOp::Mul, a, b) => match (tagged(a), tagged(b)) {
            (true, true) => false,
            _ => linear_in_tags(a) && linear_in_tags(b),
        },
        SymInt::Op(..) => !tagged(s),
        _ => true,
    }
}

impl Bounds {
    /// The bounds of a kernel argument of layout `layout`: its coordinates are itself. `nonneg` says which
    /// dynamic dimensions cannot be negative (those read from shapes).
    pub fn of_argument(param: &str, layout: &Layout, nonneg: &dyn Fn(&str) -> bool) -> Bounds {
        let leaves = layout.leaves();
        let extents = leaves.iter().map(|(s, _)| s.sym()).collect();
        // 1 + sum of (s - 1) * d, when no stride may be negative.
        let cosize = leaves.iter().try_fold(SymInt::Const(1), |acc, (s, d)| {
            let d = d.sym();
            let ok = match &d {
                SymInt::Const(c) => *c >= 0,
                SymInt::Dim(n) => nonneg(n),
                _ => false,
            };
            let extent = SymInt::op(SymOp::Sub, s.sym(), SymInt::Const(1));
            ok.then(|| plus(&acc, &SymInt::op(SymOp::Mul, extent, d)))
        });
        let mut next = 0;
        let strides = with_leaves(layout.shape(), &mut |_| {
            next += 1;
            Int::from_sym(tag(next - 1))
        });
        let param = param.to_owned();
        match Layout::new(layout.shape().clone(), strides) {
            Ok(layout) => {
                Bounds::Tracked(Box::new(Coords { param, extents, layout, offset: SymInt::Const(0), cosize }))
            }
            Err(e) => Bounds::Lost(Box::new(Lost { param, why: format!("its layout: {e}"), cosize })),
        }
    }

    /// The bounds of the view that `op` makes of this one, where `data` is the view's new layout and `op`
    /// computes, from a layout of this view, the new layout and the offset it adds.
    pub fn follow(&self, data: &Layout, op: impl FnOnce(&Layout) -> Result<(Layout, SymInt), LayoutError>) -> Bounds {
        let Bounds::Tracked(c) = self else { return self.clone() };
        let lost = |why: String| Bounds::Lost(Box::new(Lost { param: c.param.clone(), why, cosize: c.cosize.clone() }));
        match op(&c.layout) {
            Ok((layout, _)) if layout.shape() != data.shape() => lost(format!(
                "the operation maps `{}`'s modes onto the layout {data}, but its coordinates onto the shape {}",
                c.param,
                layout.shape()
            )),
            Ok((layout, delta)) => Bounds::Tracked(Box::new(Coords {
                layout,
                offset: SymInt::op(SymOp::Add, c.offset.clone(), delta),
                ..(**c).clone()
            })),
            Err(e) => lost(format!("its coordinates could not be followed: {e}")),
        }
    }
}

impl Coords {
    /// For each leaf `m` of the argument's shape, the coordinate along `m` of every element of the view (in the
    /// colexicographic order of the view's shape), relative to the view's origin `offset`; `None` unless every
    /// stride is a constant multiple of each tag.
    pub fn element_coords(&self) -> Option<Vec<Vec<i64>>> {
        (0..self.extents.len())
            .map(|m| {
                let mut ok = true;
                let strides = with_leaves(self.layout.stride(), &mut |d| match component(&d.sym(), m) {
                    Some(SymInt::Const(c)) => Int::Static(c),
                    _ => {
                        ok = false;
                        Int::Static(0)
                    }
                });
                let layout = Layout::new(self.layout.shape().clone(), strides).ok()?;
                if !ok {
                    return None;
                }
                layout.indices().ok()
            })
            .collect()
    }

    /// The `#m` component of the view's origin: its coordinate along leaf `m` of the argument.
    pub fn origin(&self, m: usize) -> Option<SymInt> {
        component(&self.offset, m)
    }
}

/// A tuple of the same profile as `t`, each leaf replaced by `f(leaf)`.
fn with_leaves(t: &IntTuple, f: &mut dyn FnMut(&Int) -> Int) -> IntTuple {
    match t {
        IntTuple::Int(i) => IntTuple::Int(f(i)),
        IntTuple::Tuple(v) => IntTuple::Tuple(v.iter().map(|x| with_leaves(x, f)).collect()),
    }
}

/// The range of one coordinate of a set of elements: `base + lo ..= base + hi`.
struct Span1 {
    base: SymInt,
    lo: i64,
    hi: i64,
}

impl Lower<'_> {
    /// The coordinates to test the accesses of `t` against: `None` for a view of no argument; for a view whose
    /// coordinates were lost, its element offsets against the argument's cosize (one leaf: tag `#0` times the
    /// offset).
    fn coords_of(&mut self, t: &TensorView, span: Span) -> LResult<Option<Coords>> {
        match &t.bounds {
            Bounds::Free => Ok(None),
            Bounds::Tracked(c) => Ok(Some((**c).clone())),
            Bounds::Lost(l) => {
                let (param, why) = (&l.param, &l.why);
                let Some(cosize) = &l.cosize else { return self.lost(param, why, span) };
                let by_tag = |x: SymInt| SymInt::op(SymOp::Mul, x, tag(0));
                let strides = t.layout.stride().clone();
                let strides = with_leaves(&strides, &mut |d| Int::from_sym(by_tag(d.sym())));
                match Layout::new(t.layout.shape().clone(), strides) {
                    Ok(layout) => Ok(Some(Coords {
                        param: param.clone(),
                        extents: vec![cosize.clone()],
                        layout,
                        offset: by_tag(t.offset.clone()),
                        cosize: Some(cosize.clone()),
                    })),
                    Err(e) => self.lost(param, &format!("{why}; {e}"), span),
                }
            }
        }
    }

    /// The predicate of the element at `coord` of `t`: `None` when it is proven inside (or `t` is not a view of
    /// an argument).
    pub fn element_pred(&mut self, t: &TensorView, coord: &CoordV, span: Span) -> LResult<Option<Handle<Expr>>> {
        let Some(c) = self.coords_of(t, span)? else { return Ok(None) };
        let r = cutec_layout::int_tuple::crd2idx(
            cutec_layout::LayoutOp::Crd2idx,
            &coord.to_layout(),
            c.layout.shape(),
            c.layout.stride(),
        );
        let idx = self.layout_result(r, span)?.sym();
        let idx = plus(&c.offset, &idx);
        let mut pred = None;
        for (m, extent) in c.extents.iter().enumerate() {
            let Some(x) = component(&idx, m) else {
                let why = format!("the coordinate `{idx}` is not linear in `{}`'s coordinates", c.param);
                return self.lost(&c.param, &why, span);
            };
            let p = self.range_pred(&Span1 { base: x, lo: 0, hi: 0 }, extent, Some((&c.param, m)), span)?;
            pred = self.and(pred, p);
        }
        Ok(pred)
    }

    /// For an access to every element of `t` (a `copy` or `fill`, `n` elements in the colexicographic order of
    /// its shape): the predicate that all are inside (`None` when proven), and a function of the element index
    /// giving each element's own predicate, built where it is called.
    pub fn tile_pred(&mut self, t: &TensorView, n: usize, span: Span) -> LResult<Option<TilePred>> {
        let Some(c) = self.coords_of(t, span)? else { return Ok(None) };
        // Per leaf of the argument: the offset's component, and each element's constant part.
        let mut per_elem: Vec<Vec<SymInt>> = vec![Vec::with_capacity(n); c.extents.len()];
        for i in 0..n {
            let r = cutec_layout::int_tuple::crd2idx(
                cutec_layout::LayoutOp::Crd2idx,
                &cutec_layout::Coord::Int(Int::Static(i as i64)),
                c.layout.shape(),
                c.layout.stride(),
            );
            let idx = self.layout_result(r, span)?.sym();
            for (m, col) in per_elem.iter_mut().enumerate() {
                match component(&idx, m) {
                    Some(x) => col.push(x),
                    None => return self.lost(&c.param, "a stride is not linear in its coordinates", span),
                }
            }
        }
        let mut all = None;
        let mut spans = Vec::with_capacity(c.extents.len());
        for (m, extent) in c.extents.iter().enumerate() {
            let Some(base) = component(&c.offset, m) else {
                return self.lost(&c.param, "the view's offset is not linear in its coordinates", span);
            };
            let consts: Option<Vec<i64>> = per_elem[m].iter().map(SymInt::as_const).collect();
            let whole = match &consts {
                Some(k) if !k.is_empty() => Span1 {
                    base: base.clone(),
                    lo: k.iter().copied().min().unwrap_or(0),
                    hi: k.iter().copied().max().unwrap_or(0),
                },
                // Dynamic strides inside the tile: no whole-tile test (every element is tested).
                _ => {
                    spans.push((base, per_elem[m].clone(), extent.clone(), true));
                    continue;
                }
            };
            let p = self.range_pred(&whole, extent, None, span)?;
            // A leaf whose whole range is proven needs no per-element test either.
            if p.is_some() {
                spans.push((base, per_elem[m].clone(), extent.clone(), false));
            }
            all = self.and(all, p);
        }
        if spans.is_empty() {
            return Ok(None);
        }
        if spans.iter().any(|s| s.3) {
            // Some leaf cannot be tested as a whole: the fast path is taken never (`false`), every element tested.
            all = Some(self.b.bool(false));
        }
        Ok(Some(TilePred { all, leaves: spans }))
    }

    /// The predicate of element `i` of a [`TilePred`], built here.
    pub fn tile_elem_pred(&mut self, p: &TilePred, i: usize, span: Span) -> LResult<Option<Handle<Expr>>> {
        let mut pred = None;
        for (base, consts, extent, _) in &p.leaves {
            let Some(k) = consts.get(i) else { continue };
            let x = plus(base, k);
            let q = self.range_pred(&Span1 { base: x, lo: 0, hi: 0 }, extent, None, span)?;
            pred = self.and(pred, q);
        }
        Ok(pred)
    }

    /// `0 <= base + lo && base + hi < extent`, each side left out where proven; `None` when both are. A side
    /// known at compile time to fail is an error for a single element (`single`), else the constant `false`.
    fn range_pred(
        &mut self,
        s: &Span1,
        extent: &SymInt,
        single: Option<(&str, usize)>,
        span: Span,
    ) -> LResult<Option<Handle<Expr>>> {
        let low = plus(&s.base, &SymInt::Const(s.lo));
        let high = plus(&s.base, &SymInt::Const(s.hi));
        let below = !self.proves_below(&high, extent);
        let negative = !self.proves_nonneg(&low);
        // Outside whatever the arguments: every coordinate at or past the extent, or below zero.
        let past = SymInt::op(SymOp::Sub, low.clone(), extent.clone());
        if (below && self.proves_nonneg(&past)) || (negative && self.proves_below(&high, &SymInt::Const(0))) {
            return match single {
                Some((param, m)) => self.outside(param, m, extent, span),
                None => Ok(Some(self.b.bool(false))),
            };
        }
        let mut pred = None;
        if negative {
            let x = self.materialize(&low, span)?;
            let zero = self.b.i32(0);
            pred = Some(self.b.compare(CompareOp::Ge, x, zero));
        }
        if below {
            let x = self.materialize(&high, span)?;
            let e = self.materialize(extent, span)?;
            let p = self.b.compare(CompareOp::Lt, x, e);
            pred = self.and(pred, Some(p));
        }
        Ok(pred)
    }

    /// A coordinate outside its extent whatever the arguments.
    fn outside<T>(&mut self, param: &str, mode: usize, extent: &SymInt, span: Span) -> LResult<T> {
        self.fail(span, LowerError::OutsideTensor { param: param.to_owned(), mode, extent: extent.clone() })
    }

    fn and(&mut self, a: Option<Handle<Expr>>, b: Option<Handle<Expr>>) -> Option<Handle<Expr>> {
        match (a, b) {
            (Some(a), Some(b)) => Some(self.b.binary(BinaryOp::And, a, b)),
            (a, None) => a,
            (None, b) => b,
        }
    }

    fn lost<T>(&mut self, param: &str, why: &str, span: Span) -> LResult<T> {
        self.fail(span, LowerError::UnprovenAccess { param: param.to_owned(), why: why.to_owned() })
    }
}

/// The predicates of an access to a whole tile ([`Lower::tile_pred`]).
pub(crate) struct TilePred {
    /// All elements inside (`None`: proven).
    pub all: Option<Handle<Expr>>,
    /// Per leaf that needs a test: the offset's component, each element's part, the extent, and whether the
    /// parts are not all constants.
    leaves: Vec<(SymInt, Vec<SymInt>, SymInt, bool)>,
}

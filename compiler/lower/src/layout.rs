//! Layouts in the lowering: from the checker's symbolic layouts and from values to `cutec-layout` layouts, and
//! CuTe's `crd2idx` as IR index arithmetic.

use super::value::{CoordV, Value};
use super::{LResult, Lower};
use crate::error::LowerError;
use cutec_diagnostics::Span;
use cutec_ir::{BinaryOp, CompareOp, Expr, Handle, Scalar};
use cutec_layout::{ComposedLayout, Int, IntTuple, Layout, LayoutError, Tiler};
use cutec_sema::{SymInt, SymLayout, SymOp};

impl Lower<'_> {
    /// A parameter's layout as written in its type: constants folded by the checker, dynamic dimensions by name.
    pub fn sym_layout(&mut self, l: &SymLayout, span: Span) -> LResult<Layout> {
        let shape = l.shape.try_map(|s| self.layout_entry(s, span))?;
        let stride = l.stride.try_map(|s| self.layout_entry(s, span))?;
        self.layout_result(Layout::new(shape, stride), span)
    }

    /// An entry of a parameter's layout type as the algebra's integer.
    fn layout_entry(&mut self, s: &SymInt, span: Span) -> LResult<Int> {
        Ok(match s {
            SymInt::Const(v) => Int::Static(*v),
            SymInt::Dim(name) => Int::named(name.clone()),
            SymInt::Generic(name) => return self.no_value(name, span),
            other => {
                let problem =
                    format!("the layout entry `{other}` is not supported (use a constant or a dimension name)");
                return self.fail(span, LowerError::Layout { problem });
            }
        })
    }

    /// A value as the layout algebra sees it: integers become static or symbolic ([`SymInt`]) integers, tensors
    /// their layouts (the caller keeps the view).
    pub fn algebra_value(&mut self, v: &Value, span: Span) -> LResult<cutec_layout::Value> {
        use cutec_layout::Value as A;
        Ok(match v {
            Value::Const(c) => A::Int(Int::Static(*c)),
            Value::Scalar(h, s) if s.is_integer() => {
                let h = self.index_i32(*h, *s);
                A::Int(Int::from_sym(self.sym_value(h, 1)))
            }
            Value::Tuple(items) => A::Tuple(items.iter().map(|i| self.algebra_value(i, span)).collect::<LResult<_>>()?),
            Value::Wildcard => A::Underscore,
            Value::Layout(l) => A::Layout(l.clone()),
            Value::Swizzle(s) => A::Swizzle(*s),
            Value::Composed(c) => A::Composed(c.clone()),
            Value::Tensor(t) => match &t.swizzle {
                None => A::Layout(t.layout.clone()),
                Some(s) => A::Composed(ComposedLayout {
                    swizzle: *s,
                    offset: Int::from_sym(t.offset.clone()),
                    layout: t.layout.clone(),
                }),
            },
            _ => {
                return self
                    .fail(span, LowerError::Layout { problem: "expected a value of the layout algebra".into() });
            }
        })
    }

    /// A value of the layout algebra as a lowering value: symbolic integers are built in IR here.
    pub fn value_of_algebra(&mut self, v: cutec_layout::Value, span: Span) -> LResult<Value> {
        use cutec_layout::Value as A;
        Ok(match v {
            A::Int(Int::Static(c)) => Value::Const(c),
            A::Int(Int::Dynamic { sym, .. }) => Value::Scalar(self.materialize(&sym, span)?, cutec_sema::Scalar::Int),
            A::Underscore => Value::Wildcard,
            A::Tuple(items) => {
                Value::Tuple(items.into_iter().map(|i| self.value_of_algebra(i, span)).collect::<LResult<_>>()?)
            }
            A::Layout(l) => Value::Layout(l),
            A::Swizzle(s) => Value::Swizzle(s),
            A::Composed(c) => Value::Composed(c),
            A::Text(_) => return self.unsupported(span, "a picture of a layout in a kernel"),
        })
    }

    /// Reports a layout-algebra error at `span`.
    pub fn layout_result<T>(&mut self, r: Result<T, LayoutError>, span: Span) -> LResult<T> {
        r.or_else(|error| self.fail(span, LowerError::LayoutAlgebra { error }))
    }

    /// A compile-time integer tuple (a shape) from a value.
    pub fn int_tuple(&mut self, v: &Value, span: Span) -> LResult<IntTuple> {
        match v {
            Value::Const(c) => Ok(IntTuple::int(*c)),
            Value::Tuple(items) => {
                Ok(IntTuple::Tuple(items.iter().map(|i| self.int_tuple(i, span)).collect::<LResult<_>>()?))
            }
            Value::Scalar(..) => self.fail(
                span,
                LowerError::NotConstant {
                    problem:
                        "this shape must be known at compile time (a constant, a const generic, or arithmetic on them)"
                            .into(),
                },
            ),
            _ => self.fail(
                span,
                LowerError::Layout { problem: "expected a shape (an integer or a tuple of integers)".into() },
            ),
        }
    }

    /// A layout from a value: a layout, or a shape standing for its compact column-major layout.
    pub fn layout_of(&mut self, v: &Value, span: Span) -> LResult<Layout> {
        match v {
            Value::Layout(l) => Ok(l.clone()),
            Value::Tensor(t) => Ok(t.layout.clone()),
            _ => {
                let shape = self.int_tuple(v, span)?;
                self.layout_result(Layout::compact(shape), span)
            }
        }
    }

    /// A tiler from a value: a layout, or a tuple of shapes and `_`.
    pub fn tiler_of(&mut self, v: &Value, span: Span) -> LResult<Tiler> {
        match v {
            Value::Layout(l) => Ok(Tiler::Layout(l.clone())),
            Value::Wildcard => Ok(Tiler::Underscore),
            Value::Const(_) => Ok(Tiler::from_shape(&self.int_tuple(v, span)?)),
            Value::Tuple(items) => {
                Ok(Tiler::Tuple(items.iter().map(|i| self.tiler_of(i, span)).collect::<LResult<_>>()?))
            }
            _ => self.fail(span, LowerError::Layout { problem: "expected a tiler (a shape, a layout or `_`)".into() }),
        }
    }

    /// A coordinate from a value.
    pub fn coord_of(&mut self, v: &Value, span: Span) -> LResult<CoordV> {
        Ok(match v {
            Value::Wildcard => CoordV::Underscore,
            Value::Tuple(items) => CoordV::Tuple(items.iter().map(|i| self.coord_of(i, span)).collect::<LResult<_>>()?),
            _ => CoordV::Int(self.idx_of(v, span)?),
        })
    }

    /// An index from an integer value.
    pub fn idx_of(&mut self, v: &Value, span: Span) -> LResult<SymInt> {
        match v {
            Value::Const(c) => Ok(SymInt::Const(*c)),
            Value::Scalar(h, s) if s.is_integer() => {
                let h = self.index_i32(*h, *s);
                Ok(self.sym_value(h, 1))
            }
            _ => self.fail(span, LowerError::Expected { what: "an integer index" }),
        }
    }

    /// An `int`-typed handle for an integer of another width (indices are `i32`).
    fn index_i32(&mut self, h: Handle<Expr>, s: cutec_sema::Scalar) -> Handle<Expr> {
        if matches!(s, cutec_sema::Scalar::Int | cutec_sema::Scalar::I32) { h } else { self.b.convert(h, Scalar::I32) }
    }

    /// The IR value `h` as a symbolic integer leaf, known to be a multiple of `div`. It prints as `?` (a value
    /// known only at run time): the IR's names (`%5`) must not reach a message, and a layout printed in one
    /// (`(4,?):(1,4)`) says what a reader can know. The leaf's identity is its id, not its name.
    pub fn sym_value(&mut self, h: Handle<Expr>, div: i64) -> SymInt {
        self.divisors.insert(h.into(), div.max(1));
        SymInt::value(h.into(), "?")
    }

    /// Where an element offset `s` is, in words a user can read: the offset itself when it is written with source
    /// names only (constants, dimensions, const generics, scalar parameters), else "an offset computed at run
    /// time" and what is known of it. The IR's names (`%5`) of run-time values never reach a message.
    pub fn describe_offset(&self, s: &SymInt) -> String {
        if !s.any_leaf(&mut |leaf| matches!(leaf, SymInt::Value { .. })) {
            return format!("element {s}");
        }
        match self.divisor(s) {
            1 => "an offset computed at run time".to_owned(),
            d => format!("an offset computed at run time (known to be a multiple of {d} elements only)"),
        }
    }

    /// A positive integer known to divide `s` (`i64::MAX` for zero): constants, products and sums of them, the
    /// divisors recorded for the IR values it mentions, and what the kernel requires of its dynamic dimensions
    /// (`static_assert(N % 4 == 0)`: the runtime refuses a launch that breaks it, so a row of N f32 is then a
    /// whole number of 16-byte vectors).
    pub fn divisor(&self, s: &SymInt) -> i64 {
        s.known_divisor_by(&|leaf| match leaf {
            SymInt::Value { id, .. } => self.divisors.get(id).copied().unwrap_or(1),
            SymInt::Dim(name) => self.required_divisor(name),
            _ => 1,
        })
    }

    /// The `i32` IR value of a symbolic integer, built here: constants as literals, dynamic dimensions as their
    /// kernel parameters, IR values as themselves, operations as IR arithmetic with the same semantics
    /// ([`SymOp`]: `div` and `rem` truncate, `ceil_div` rounds up, `shape_div` rounds a zero quotient away
    /// from zero).
    pub fn materialize(&mut self, s: &SymInt, span: Span) -> LResult<Handle<Expr>> {
        match s {
            SymInt::Const(c) => match i32::try_from(*c) {
                Ok(c) => Ok(self.b.i32(c)),
                Err(_) => self.unsupported(span, format!("the index {c}, which does not fit in 32 bits,")),
            },
            SymInt::Dim(name) => match self.kernel_info.dim_id(name).and_then(|d| self.dims.get(d.index())) {
                Some(h) => Ok(*h),
                None => self.fail(
                    span,
                    LowerError::Layout {
                        problem: format!(
                            "the layout depends on `{name}`, which is not a dynamic dimension of this kernel"
                        ),
                    },
                ),
            },
            SymInt::Value { id, .. }
                if self.divisors.contains_key(id)
                    && let Some(h) = Handle::from_value_id(*id) =>
            {
                Ok(h)
            }
            SymInt::Generic(name) => self.no_value(name, span),
            SymInt::Param { .. } | SymInt::Value { .. } => {
                self.internal(span, format!("the run-time integer `{s}` reached the lowering without an IR value"))
            }
            SymInt::Op(op, a, b) => {
                let (x, y) = (self.materialize(a, span)?, self.materialize(b, span)?);
                Ok(self.int_op(*op, x, y))
            }
        }
    }

    /// IR arithmetic for one operation of a symbolic integer (`i32` operands).
    fn int_op(&mut self, op: SymOp, x: Handle<Expr>, y: Handle<Expr>) -> Handle<Expr> {
        match op {
            SymOp::Add => self.b.add(x, y),
            SymOp::Sub => self.b.sub(x, y),
            SymOp::Mul => self.b.mul(x, y),
            SymOp::Div => self.b.div(x, y),
            SymOp::Rem => self.b.binary(BinaryOp::Rem, x, y),
            SymOp::CeilDiv => {
                // (x + y - 1) / y, CuTe's `ceil_div` (its operands are positive extents).
                let one = self.b.i32(1);
                let sum = self.b.add(x, y);
                let top = self.b.sub(sum, one);
                self.b.div(top, y)
            }
            SymOp::ShapeDiv => {
                // q = x / y, or sign(x) * sign(y) where q == 0.
                let q = self.b.div(x, y);
                let zero = self.b.i32(0);
                let sx = self.sign(x);
                let sy = self.sign(y);
                let s = self.b.mul(sx, sy);
                let q0 = self.b.compare(CompareOp::Eq, q, zero);
                self.b.select(q0, s, q)
            }
            SymOp::Min | SymOp::Max => {
                let cmp = if op == SymOp::Min { CompareOp::Lt } else { CompareOp::Gt };
                let c = self.b.compare(cmp, x, y);
                self.b.select(c, x, y)
            }
        }
    }

    /// `-1`, `0` or `1`.
    fn sign(&mut self, x: Handle<Expr>) -> Handle<Expr> {
        let zero = self.b.i32(0);
        let (one, minus) = (self.b.i32(1), self.b.i32(-1));
        let pos = self.b.compare(CompareOp::Gt, x, zero);
        let neg = self.b.compare(CompareOp::Lt, x, zero);
        let s = self.b.select(neg, minus, zero);
        self.b.select(pos, one, s)
    }

    /// `a + b`, folded for constants, otherwise built in IR here.
    pub fn idx_add(&mut self, a: &SymInt, b: &SymInt, span: Span) -> LResult<SymInt> {
        match (a, b) {
            (SymInt::Const(x), SymInt::Const(y)) if x.checked_add(*y).is_some() => Ok(SymInt::Const(x + y)),
            (SymInt::Const(0), d) | (d, SymInt::Const(0)) => Ok(d.clone()),
            _ => {
                let div = SymInt::gcd(self.divisor(a), self.divisor(b));
                let (x, y) = (self.materialize(a, span)?, self.materialize(b, span)?);
                let h = self.b.add(x, y);
                Ok(self.sym_value(h, div))
            }
        }
    }

    /// The known divisor of a layout integer (`32*K` is a multiple of 32).
    pub fn stride_divisor(&self, i: &Int) -> i64 {
        self.divisor(&i.sym())
    }

    /// Reports an error of the layout algebra at `span`; a coordinate that does not fit its shape says so.
    pub fn crd_result<T>(&mut self, r: Result<T, LayoutError>, span: Span) -> LResult<T> {
        match r {
            Err(LayoutError::RankMismatch { what, .. }) => {
                self.fail(span, LowerError::Layout { problem: format!("a coordinate that does not fit: {what}") })
            }
            r => self.layout_result(r, span),
        }
    }

    /// CuTe's `crd2idx(coord, shape, stride)` (`_` counts as 0), computed by the layout algebra over symbolic
    /// integers: the result is a [`SymInt`] over the coordinate's IR values and the layout's dynamic
    /// dimensions, built in IR where it is used.
    pub fn crd2idx(&mut self, coord: &CoordV, shape: &IntTuple, stride: &IntTuple, span: Span) -> LResult<SymInt> {
        let r = cutec_layout::int_tuple::crd2idx(cutec_layout::LayoutOp::Crd2idx, &coord.to_layout(), shape, stride);
        match r {
            Ok(i) => Ok(i.sym()),
            Err(LayoutError::RankMismatch { .. }) => self.fail(
                span,
                LowerError::Layout { problem: format!("a coordinate that does not fit the shape {shape}") },
            ),
            Err(e) => self.layout_result(Err(e), span),
        }
    }

    /// CuTe's `idx2crd(idx, shape, stride)`: `(idx / d) % s` per leaf (0 for a leaf of shape 1), by the layout
    /// algebra over symbolic integers.
    pub fn idx2crd(&mut self, idx: &SymInt, shape: &IntTuple, stride: &IntTuple, span: Span) -> LResult<CoordV> {
        let i = IntTuple::Int(Int::from_sym(idx.clone()));
        let r = cutec_layout::int_tuple::idx2crd(cutec_layout::LayoutOp::Idx2crd, &i, shape, stride);
        let c = self.layout_result(r, span)?;
        Ok(CoordV::from_layout(&c))
    }
}

//! Layouts in the lowering: from the checker's symbolic layouts and from values to `cutec-layout` layouts, and
//! CuTe's `crd2idx` as IR index arithmetic.

use super::value::{CoordV, Idx, Value};
use super::{LResult, Lower};
use crate::{BinaryOp, codes};
use cutec_diagnostics::Span;
use cutec_layout::{Int, IntTuple, Layout, LayoutError, Tiler};
use cutec_sema::{SymInt, SymLayout};

impl Lower<'_> {
    /// A parameter's layout as written in its type: constants folded by the checker, dynamic dimensions by name.
    pub fn sym_layout(&mut self, l: &SymLayout, span: Span) -> LResult<Layout> {
        let shape = self.sym_tuple(&l.shape, span)?;
        let stride = self.sym_tuple(&l.stride, span)?;
        self.layout_result(Layout::new(shape, stride), span)
    }

    fn sym_tuple(&mut self, t: &cutec_sema::IntTuple, span: Span) -> LResult<IntTuple> {
        Ok(match t {
            cutec_sema::IntTuple::Leaf(s) => IntTuple::Int(match s {
                SymInt::Const(v) => Int::Static(*v),
                SymInt::DynDim(name) => Int::named(name.clone()),
                SymInt::ConstGeneric(name) => return self.no_value(name, span),
                other => {
                    return self.error(
                        codes::UNSUPPORTED_LAYOUT,
                        span,
                        format!("the layout entry `{other}` is not supported by codegen v0 (use a constant or a dimension name)"),
                    );
                }
            }),
            cutec_sema::IntTuple::Tuple(v) => {
                IntTuple::Tuple(v.iter().map(|m| self.sym_tuple(m, span)).collect::<LResult<_>>()?)
            }
        })
    }

    /// Reports a layout-algebra error at `span`.
    pub fn layout_result<T>(&mut self, r: Result<T, LayoutError>, span: Span) -> LResult<T> {
        r.or_else(|e| self.error(codes::UNSUPPORTED_LAYOUT, span, format!("layout algebra: {e}")))
    }

    /// A compile-time integer tuple (a shape) from a value.
    pub fn int_tuple(&mut self, v: &Value, span: Span) -> LResult<IntTuple> {
        match v {
            Value::Const(c) => Ok(IntTuple::int(*c)),
            Value::Tuple(items) => {
                Ok(IntTuple::Tuple(items.iter().map(|i| self.int_tuple(i, span)).collect::<LResult<_>>()?))
            }
            Value::Scalar(..) => self.error(
                codes::NOT_CONSTANT,
                span,
                "this shape must be known at compile time (a constant, a const generic, or arithmetic on them)",
            ),
            _ => self.error(codes::UNSUPPORTED_LAYOUT, span, "expected a shape (an integer or a tuple of integers)"),
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
            _ => self.error(codes::UNSUPPORTED_LAYOUT, span, "expected a tiler (a shape, a layout or `_`)"),
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
    pub fn idx_of(&mut self, v: &Value, span: Span) -> LResult<Idx> {
        match v {
            Value::Const(c) => Ok(Idx::Const(*c)),
            Value::Scalar(h, s) if s.is_integer() => {
                let h = self.index_i32(*h, *s);
                Ok(Idx::Dyn { h, div: 1 })
            }
            _ => self.error(codes::UNSUPPORTED, span, "expected an integer index"),
        }
    }

    /// An `int`-typed handle for an integer of another width (indices are `i32`).
    fn index_i32(&mut self, h: crate::Handle<crate::Expr>, s: cutec_sema::Scalar) -> crate::Handle<crate::Expr> {
        if matches!(s, cutec_sema::Scalar::Int | cutec_sema::Scalar::I32) {
            h
        } else {
            self.b.convert(h, crate::Scalar::I32)
        }
    }

    /// The IR value of an index.
    pub fn idx_value(&mut self, i: Idx) -> crate::Handle<crate::Expr> {
        match i {
            Idx::Const(c) => self.b.i32(c as i32),
            Idx::Dyn { h, .. } => h,
        }
    }

    pub fn idx_add(&mut self, a: Idx, b: Idx) -> Idx {
        match (a, b) {
            (Idx::Const(x), Idx::Const(y)) => Idx::Const(x.wrapping_add(y)),
            (Idx::Const(0), d) | (d, Idx::Const(0)) => d,
            _ => {
                let div = gcd(divisor(a), divisor(b));
                let (x, y) = (self.idx_value(a), self.idx_value(b));
                Idx::Dyn { h: self.b.add(x, y), div }
            }
        }
    }

    pub fn idx_mul(&mut self, a: Idx, b: Idx) -> Idx {
        match (a, b) {
            (Idx::Const(x), Idx::Const(y)) => Idx::Const(x.wrapping_mul(y)),
            (Idx::Const(0), _) | (_, Idx::Const(0)) => Idx::Const(0),
            (Idx::Const(1), d) | (d, Idx::Const(1)) => d,
            _ => {
                let div = divisor(a).saturating_mul(divisor(b));
                let (x, y) = (self.idx_value(a), self.idx_value(b));
                Idx::Dyn { h: self.b.mul(x, y), div }
            }
        }
    }

    fn idx_binary(&mut self, op: BinaryOp, a: Idx, b: Idx) -> Idx {
        let (x, y) = (self.idx_value(a), self.idx_value(b));
        Idx::Dyn { h: self.b.binary(op, x, y), div: 1 }
    }

    /// The value of a layout integer: a constant, or the kernel parameter of a dynamic dimension.
    fn layout_int(&mut self, i: &Int, span: Span) -> LResult<Idx> {
        match i {
            Int::Static(v) => Ok(Idx::Const(*v)),
            Int::Dynamic { name, .. } => match self.dynamic_product(name) {
                Some(i) => Ok(i),
                None => self.error(
                    codes::UNSUPPORTED_LAYOUT,
                    span,
                    format!("the layout depends on `{name}`, which codegen v0 cannot compute at run time"),
                ),
            },
        }
    }

    /// The known divisor of a layout integer: itself when static, the product of the static factors of a
    /// named product (`32*K` is a multiple of 32), 1 for a dimension; `None` when it cannot be computed.
    pub fn stride_divisor(&self, i: &Int) -> Option<i64> {
        match i {
            Int::Static(v) => Some(*v),
            // The static factors of a product of known dimensions (no IR is built for a divisor).
            Int::Dynamic { name, .. } => name.split('*').try_fold(1i64, |acc, f| match f.parse::<i64>() {
                Ok(v) => acc.checked_mul(v),
                Err(_) => self.dims.contains_key(f).then_some(acc),
            }),
        }
    }

    /// The value of a dynamic layout integer the algebra named: a dimension (`K`), or a product of dimensions
    /// and integers (`128*K`, what tiling a dynamic stride gives). Other derived names (`ceil_div(N,128)`) are
    /// not computed in v0; they occur in the shapes of rest modes, which element offsets never need.
    fn dynamic_product(&mut self, name: &str) -> Option<Idx> {
        let mut product = Idx::Const(1);
        for factor in name.split('*') {
            let f = match factor.parse::<i64>() {
                Ok(v) => Idx::Const(v),
                Err(_) => Idx::Dyn { h: *self.dims.get(factor)?, div: 1 },
            };
            product = self.idx_mul(product, f);
        }
        Some(product)
    }

    /// CuTe's `crd2idx(coord, shape, stride)` as IR arithmetic (`_` counts as 0): an integer coordinate of a
    /// tuple mode is split colexicographically (`c % size(s0)`, `c / size(s0)`, the last mode taking the rest).
    pub fn crd2idx(&mut self, coord: &CoordV, shape: &IntTuple, stride: &IntTuple, span: Span) -> LResult<Idx> {
        match (coord, shape, stride) {
            (CoordV::Underscore, _, _) => Ok(Idx::Const(0)),
            (CoordV::Tuple(c), IntTuple::Tuple(s), IntTuple::Tuple(d)) if c.len() == s.len() && s.len() == d.len() => {
                let mut sum = Idx::Const(0);
                for ((ci, si), di) in c.iter().zip(s).zip(d) {
                    let part = self.crd2idx(ci, si, di, span)?;
                    sum = self.idx_add(sum, part);
                }
                Ok(sum)
            }
            (CoordV::Tuple(c), IntTuple::Int(_), IntTuple::Int(_)) if c.len() == 1 => {
                self.crd2idx(&c[0], shape, stride, span)
            }
            (CoordV::Int(c), IntTuple::Int(_), IntTuple::Int(d)) => {
                let d = self.layout_int(d, span)?;
                Ok(self.idx_mul(*c, d))
            }
            (CoordV::Int(c), IntTuple::Tuple(s), IntTuple::Tuple(d)) if s.len() == d.len() && !s.is_empty() => {
                let mut rest = *c;
                let mut sum = Idx::Const(0);
                for (k, (si, di)) in s.iter().zip(d).enumerate() {
                    let part_coord = if k + 1 == s.len() {
                        rest
                    } else {
                        let size = self.layout_result(si.product("crd2idx"), span)?;
                        let size = self.layout_int(&size, span)?;
                        let (part, next) = self.divmod(rest, size);
                        rest = next;
                        part
                    };
                    let part = self.crd2idx(&CoordV::Int(part_coord), si, di, span)?;
                    sum = self.idx_add(sum, part);
                }
                Ok(sum)
            }
            _ => {
                self.error(codes::UNSUPPORTED_LAYOUT, span, format!("a coordinate that does not fit the shape {shape}"))
            }
        }
    }

    /// CuTe's `idx2crd(idx, shape, stride)` for a static `(shape, stride)`: `(idx / d) % s` per leaf (0 for a
    /// leaf of shape 1).
    pub fn idx2crd(&mut self, idx: Idx, shape: &IntTuple, stride: &IntTuple, span: Span) -> LResult<CoordV> {
        match (shape, stride) {
            (IntTuple::Tuple(s), IntTuple::Tuple(d)) if s.len() == d.len() => Ok(CoordV::Tuple(
                s.iter().zip(d).map(|(si, di)| self.idx2crd(idx, si, di, span)).collect::<LResult<_>>()?,
            )),
            (IntTuple::Int(s), IntTuple::Int(d)) => match (s.static_value(), d.static_value()) {
                (Some(1), _) => Ok(CoordV::Int(Idx::Const(0))),
                (Some(s), Some(d)) if s > 0 && d > 0 => {
                    let (_, q) = self.divmod(idx, Idx::Const(d));
                    let (r, _) = self.divmod(q, Idx::Const(s));
                    Ok(CoordV::Int(r))
                }
                _ => self.error(codes::UNSUPPORTED_LAYOUT, span, format!("idx2crd with shape {s} and stride {d}")),
            },
            _ => self.error(codes::UNSUPPORTED_LAYOUT, span, format!("idx2crd with shape {shape} and stride {stride}")),
        }
    }

    /// `(c % n, c / n)`, folded for constants.
    fn divmod(&mut self, c: Idx, n: Idx) -> (Idx, Idx) {
        match (c, n) {
            (Idx::Const(x), Idx::Const(y)) if y > 0 => (Idx::Const(x.rem_euclid(y)), Idx::Const(x.div_euclid(y))),
            (_, Idx::Const(1)) => (Idx::Const(0), c),
            _ => {
                let r = self.idx_binary(BinaryOp::Rem, c, n);
                let q = self.idx_binary(BinaryOp::Div, c, n);
                (r, q)
            }
        }
    }
}

fn divisor(i: Idx) -> i64 {
    match i {
        Idx::Const(c) => c,
        Idx::Dyn { div, .. } => div,
    }
}

fn gcd(a: i64, b: i64) -> i64 {
    let (mut a, mut b) = (a.unsigned_abs(), b.unsigned_abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    (a as i64).max(1)
}

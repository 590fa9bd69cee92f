//! The values of layout expressions.

use std::fmt;

use crate::composition::Tiler;
use crate::error::{LayoutError, Result, invalid};
use crate::eval::LayoutOp;
use crate::int_tuple::{Coord, Int, IntTuple};
use crate::layout::Layout;
use crate::swizzle::{ComposedLayout, Swizzle};

/// A value of the layout expression language: what `eval` returns and `apply` takes.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Value {
    Int(Int),
    /// CuTe's `_`.
    Underscore,
    /// A tuple of values: a shape, a coordinate, a tiler of layouts, a pair of results.
    Tuple(Vec<Value>),
    Layout(Layout),
    Swizzle(Swizzle),
    Composed(ComposedLayout),
    /// A picture (`print_layout`).
    Text(String),
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Int(i) => write!(f, "{i}"),
            Value::Underscore => f.write_str("_"),
            Value::Tuple(v) => crate::int_tuple::write_tuple(f, v),
            Value::Layout(l) => write!(f, "{l}"),
            Value::Swizzle(s) => write!(f, "{s}"),
            Value::Composed(c) => write!(f, "{c}"),
            Value::Text(t) => f.write_str(t.trim_end_matches('\n')),
        }
    }
}

impl From<Layout> for Value {
    fn from(l: Layout) -> Value {
        Value::Layout(l)
    }
}

impl From<IntTuple> for Value {
    fn from(t: IntTuple) -> Value {
        match t {
            IntTuple::Int(i) => Value::Int(i),
            IntTuple::Tuple(v) => Value::Tuple(v.into_iter().map(Value::from).collect()),
        }
    }
}

impl From<Int> for Value {
    fn from(i: Int) -> Value {
        Value::Int(i)
    }
}

impl Value {
    /// A short name of the kind of value, for error messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Value::Int(_) => "an integer",
            Value::Underscore => "`_`",
            Value::Tuple(_) => "a tuple",
            Value::Layout(_) => "a layout",
            Value::Swizzle(_) => "a swizzle",
            Value::Composed(_) => "a swizzled layout",
            Value::Text(_) => "a picture",
        }
    }

    /// The integer tuple of an integer or a tuple of integer tuples.
    pub fn to_int_tuple(&self) -> Option<IntTuple> {
        match self {
            Value::Int(i) => Some(IntTuple::Int(i.clone())),
            Value::Tuple(v) => v.iter().map(Value::to_int_tuple).collect::<Option<Vec<_>>>().map(IntTuple::Tuple),
            _ => None,
        }
    }

    pub(crate) fn int_tuple(&self, op: LayoutOp) -> Result<IntTuple> {
        self.to_int_tuple().ok_or_else(|| wrong_kind(op, "a shape", self))
    }

    pub(crate) fn dyn_int(&self, op: LayoutOp) -> Result<Int> {
        match self {
            Value::Int(i) => Ok(i.clone()),
            _ => Err(wrong_kind(op, "an integer", self)),
        }
    }

    /// A layout; a shape stands for its compact column-major layout.
    pub(crate) fn layout(&self, op: LayoutOp) -> Result<Layout> {
        match self {
            Value::Layout(l) => Ok(l.clone()),
            _ => match self.to_int_tuple() {
                Some(t) => Layout::compact(t),
                None => Err(wrong_kind(op, "a layout", self)),
            },
        }
    }

    /// A tiler: a layout, an integer `n` (`n:1`), `_`, or a tuple of tilers.
    pub(crate) fn tiler(&self, op: LayoutOp) -> Result<Tiler> {
        match self {
            Value::Layout(l) => Ok(Tiler::Layout(l.clone())),
            Value::Int(i) => Ok(Tiler::from_shape(&IntTuple::Int(i.clone()))),
            Value::Underscore => Ok(Tiler::Underscore),
            Value::Tuple(v) => Ok(Tiler::Tuple(v.iter().map(|x| x.tiler(op)).collect::<Result<_>>()?)),
            _ => Err(wrong_kind(op, "a tiler", self)),
        }
    }

    /// A coordinate: integers, `_`, tuples of them.
    pub(crate) fn coord(&self, op: LayoutOp) -> Result<Coord> {
        match self {
            Value::Int(i) => Ok(Coord::Int(i.clone())),
            Value::Underscore => Ok(Coord::Underscore),
            Value::Tuple(v) => Ok(Coord::Tuple(v.iter().map(|x| x.coord(op)).collect::<Result<_>>()?)),
            _ => Err(wrong_kind(op, "a coordinate", self)),
        }
    }
}

/// Error for a value of the wrong kind; a swizzle or swizzled layout where a plain value is needed is
/// [`LayoutError::Swizzled`].
pub(crate) fn wrong_kind(op: LayoutOp, expected: &str, found: &Value) -> LayoutError {
    let what = format!("expected {expected}, found {} {found}", found.kind());
    match found {
        Value::Swizzle(_) | Value::Composed(_) => LayoutError::Swizzled { op, what },
        _ => invalid(op, what),
    }
}

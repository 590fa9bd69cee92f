//! The table of layout operations, in one place: names (CuTe's), arities, and [`apply`], the dispatch used
//! by the evaluator and by the type checker to fold calls whose arguments are already values.

use std::fmt;

use crate::coalesce::{coalesce, coalesce_by, filter, filter_by};
use crate::complement::{
    complement, complement_default, left_inverse, max_common_layout, max_common_vector, nullspace, right_inverse,
};
use crate::composition::{Tiler, composition_tiler};
use crate::divide::{flat_divide, local_partition, local_tile, logical_divide, tiled_divide, zipped_divide};
use crate::error::{LayoutError, Result, invalid, swizzled};
use crate::eval::value::{Value, wrong_kind};
use crate::int_tuple::{self, Int, Shape, ceil_div_tuple, product_each, shape_div_tuple};
use crate::layout::Layout;
use crate::picture::print_layout;
use crate::product::{
    blocked_product, flat_product, logical_product, make_layout_tv, make_ordered_layout, raked_product, tile_to_shape,
    tiled_product, zipped_product,
};
use crate::swizzle::ComposedLayout;

/// An operation of the algebra: the key of [`OPS`] and of [`apply`]. The language's builtins map to these
/// (`cutec-sema`'s `Builtin::layout_op`, tied to this table by a test).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LayoutOp {
    MakeLayout,
    MakeOrderedLayout,
    Size,
    Cosize,
    Rank,
    Depth,
    Shape,
    Stride,
    Get,
    Select,
    Take,
    Flatten,
    Crd2idx,
    Idx2crd,
    Slice,
    SliceAndOffset,
    Coalesce,
    Filter,
    Composition,
    Complement,
    RightInverse,
    LeftInverse,
    Nullspace,
    MaxCommonVector,
    MaxCommonLayout,
    LogicalDivide,
    ZippedDivide,
    TiledDivide,
    FlatDivide,
    LogicalProduct,
    ZippedProduct,
    TiledProduct,
    FlatProduct,
    BlockedProduct,
    RakedProduct,
    TileToShape,
    Upcast,
    Downcast,
    MakeLayoutTv,
    LocalTile,
    LocalPartition,
    Product,
    ProductEach,
    CeilDiv,
    ShapeDiv,
    PrintLayout,
}

impl LayoutOp {
    /// Every operation, in table order.
    pub const ALL: [LayoutOp; 46] = [
        LayoutOp::MakeLayout,
        LayoutOp::MakeOrderedLayout,
        LayoutOp::Size,
        LayoutOp::Cosize,
        LayoutOp::Rank,
        LayoutOp::Depth,
        LayoutOp::Shape,
        LayoutOp::Stride,
        LayoutOp::Get,
        LayoutOp::Select,
        LayoutOp::Take,
        LayoutOp::Flatten,
        LayoutOp::Crd2idx,
        LayoutOp::Idx2crd,
        LayoutOp::Slice,
        LayoutOp::SliceAndOffset,
        LayoutOp::Coalesce,
        LayoutOp::Filter,
        LayoutOp::Composition,
        LayoutOp::Complement,
        LayoutOp::RightInverse,
        LayoutOp::LeftInverse,
        LayoutOp::Nullspace,
        LayoutOp::MaxCommonVector,
        LayoutOp::MaxCommonLayout,
        LayoutOp::LogicalDivide,
        LayoutOp::ZippedDivide,
        LayoutOp::TiledDivide,
        LayoutOp::FlatDivide,
        LayoutOp::LogicalProduct,
        LayoutOp::ZippedProduct,
        LayoutOp::TiledProduct,
        LayoutOp::FlatProduct,
        LayoutOp::BlockedProduct,
        LayoutOp::RakedProduct,
        LayoutOp::TileToShape,
        LayoutOp::Upcast,
        LayoutOp::Downcast,
        LayoutOp::MakeLayoutTv,
        LayoutOp::LocalTile,
        LayoutOp::LocalPartition,
        LayoutOp::Product,
        LayoutOp::ProductEach,
        LayoutOp::CeilDiv,
        LayoutOp::ShapeDiv,
        LayoutOp::PrintLayout,
    ];

    /// The operation's row of [`OPS`].
    pub fn info(self) -> &'static OpInfo {
        // OPS lists the operations in declaration order (checked by a test).
        &OPS[self as usize]
    }

    /// CuTe's name of the operation (`zipped_divide`).
    pub fn name(self) -> &'static str {
        self.info().name
    }

    /// The operation named `name`.
    pub fn from_name(name: &str) -> Option<LayoutOp> {
        OPS.iter().find(|o| o.name == name).map(|o| o.op)
    }
}

impl fmt::Display for LayoutOp {
    /// CuTe's name of the operation.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How an operation is called: `name<generics>(args)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpInfo {
    pub op: LayoutOp,
    pub name: &'static str,
    /// Fewest and most arguments.
    pub args: (usize, usize),
    /// Fewest and most integer generic arguments (`get<1,0>`).
    pub generics: (usize, usize),
    /// The call as documented, e.g. `complement(L, M)`.
    pub signature: &'static str,
    /// One line on what it computes.
    pub summary: &'static str,
}

const fn op(
    op: LayoutOp,
    name: &'static str,
    args: (usize, usize),
    generics: (usize, usize),
    signature: &'static str,
    summary: &'static str,
) -> OpInfo {
    OpInfo { op, name, args, generics, signature, summary }
}

const ANY: usize = usize::MAX;

/// Every operation of the algebra that expressions may call.
pub static OPS: &[OpInfo] = &[
    op(
        LayoutOp::MakeLayout,
        "make_layout",
        (1, ANY),
        (0, 0),
        "make_layout(shape[, stride]) | make_layout(L0, L1, ...)",
        "a layout from a shape and stride, or the concatenation of layouts",
    ),
    op(
        LayoutOp::MakeOrderedLayout,
        "make_ordered_layout",
        (2, 2),
        (0, 0),
        "make_ordered_layout(shape, order)",
        "compact strides in the given mode order",
    ),
    op(LayoutOp::Size, "size", (1, 1), (0, ANY), "size<I...>(x)", "the number of elements (of a mode)"),
    op(LayoutOp::Cosize, "cosize", (1, 1), (0, ANY), "cosize<I...>(L)", "the size of the codomain, L(size-1)+1"),
    op(LayoutOp::Rank, "rank", (1, 1), (0, ANY), "rank<I...>(x)", "the number of top-level modes"),
    op(LayoutOp::Depth, "depth", (1, 1), (0, ANY), "depth<I...>(x)", "the nesting depth"),
    op(LayoutOp::Shape, "shape", (1, 1), (0, ANY), "shape<I...>(L)", "the shape (of a mode)"),
    op(LayoutOp::Stride, "stride", (1, 1), (0, ANY), "stride<I...>(L)", "the stride (of a mode)"),
    op(LayoutOp::Get, "get", (1, 1), (1, ANY), "get<I...>(x)", "the mode at a path"),
    op(LayoutOp::Select, "select", (1, 1), (1, ANY), "select<I...>(L)", "the chosen modes"),
    op(LayoutOp::Take, "take", (1, 1), (2, 2), "take<B,E>(L)", "modes [B,E)"),
    op(LayoutOp::Flatten, "flatten", (1, 1), (0, 0), "flatten(L)", "the leaves as modes"),
    op(
        LayoutOp::Crd2idx,
        "crd2idx",
        (2, 3),
        (0, 0),
        "crd2idx(coord, L) | crd2idx(coord, shape[, stride])",
        "the index of a coordinate",
    ),
    op(
        LayoutOp::Idx2crd,
        "idx2crd",
        (2, 3),
        (0, 0),
        "idx2crd(idx, shape[, stride])",
        "the coordinate of an index (colexicographic)",
    ),
    op(LayoutOp::Slice, "slice", (2, 2), (0, 0), "slice(coord, L)", "the sub-layout where coord is `_`"),
    op(
        LayoutOp::SliceAndOffset,
        "slice_and_offset",
        (2, 2),
        (0, 0),
        "slice_and_offset(coord, L)",
        "the slice and the offset L(coord)",
    ),
    op(
        LayoutOp::Coalesce,
        "coalesce",
        (1, 2),
        (0, 0),
        "coalesce(L[, profile])",
        "merge modes without changing the function",
    ),
    op(
        LayoutOp::Filter,
        "filter",
        (1, 2),
        (0, 0),
        "filter(L[, profile])",
        "remove stride-0 and size-1 modes, then coalesce",
    ),
    op(
        LayoutOp::Composition,
        "composition",
        (2, 2),
        (0, 0),
        "composition(A, B)",
        "the layout of A(B(c)); B may be a tiler",
    ),
    op(
        LayoutOp::Complement,
        "complement",
        (1, 2),
        (0, 0),
        "complement(L[, M])",
        "the layout of the rest of L's image within M",
    ),
    op(LayoutOp::RightInverse, "right_inverse", (1, 1), (0, 0), "right_inverse(L)", "R with L(R(i)) == i"),
    op(LayoutOp::LeftInverse, "left_inverse", (1, 1), (0, 0), "left_inverse(L)", "R with R(L(i)) == i"),
    op(LayoutOp::Nullspace, "nullspace", (1, 1), (0, 0), "nullspace(L)", "the coordinates that L maps to 0"),
    op(
        LayoutOp::MaxCommonVector,
        "max_common_vector",
        (2, 2),
        (0, 0),
        "max_common_vector(A, B)",
        "how many contiguous elements A and B share",
    ),
    op(
        LayoutOp::MaxCommonLayout,
        "max_common_layout",
        (2, 2),
        (0, 0),
        "max_common_layout(A, B)",
        "the layout of the elements A and B share",
    ),
    op(
        LayoutOp::LogicalDivide,
        "logical_divide",
        (2, 2),
        (0, 0),
        "logical_divide(A, tiler)",
        "((tile, rest), ...) mode by mode",
    ),
    op(LayoutOp::ZippedDivide, "zipped_divide", (2, 2), (0, 0), "zipped_divide(A, tiler)", "((tiles...), (rests...))"),
    op(LayoutOp::TiledDivide, "tiled_divide", (2, 2), (0, 0), "tiled_divide(A, tiler)", "((tiles...), rests...)"),
    op(LayoutOp::FlatDivide, "flat_divide", (2, 2), (0, 0), "flat_divide(A, tiler)", "(tiles..., rests...)"),
    op(
        LayoutOp::LogicalProduct,
        "logical_product",
        (2, 2),
        (0, 0),
        "logical_product(A, tiler)",
        "(A, complement(A) o B)",
    ),
    op(LayoutOp::ZippedProduct, "zipped_product", (2, 2), (0, 0), "zipped_product(A, tiler)", "((A...), (B...))"),
    op(LayoutOp::TiledProduct, "tiled_product", (2, 2), (0, 0), "tiled_product(A, tiler)", "((A...), B...)"),
    op(LayoutOp::FlatProduct, "flat_product", (2, 2), (0, 0), "flat_product(A, tiler)", "(A..., B...)"),
    op(
        LayoutOp::BlockedProduct,
        "blocked_product",
        (2, 2),
        (0, 0),
        "blocked_product(A, B)",
        "A repeated over B, blocks contiguous",
    ),
    op(
        LayoutOp::RakedProduct,
        "raked_product",
        (2, 2),
        (0, 0),
        "raked_product(A, B)",
        "A repeated over B, interleaved",
    ),
    op(
        LayoutOp::TileToShape,
        "tile_to_shape",
        (2, 3),
        (0, 0),
        "tile_to_shape(L, shape[, order])",
        "L repeated to fill a shape",
    ),
    op(LayoutOp::Upcast, "upcast", (1, 1), (1, 1), "upcast<N>(L)", "the layout of elements N times wider"),
    op(LayoutOp::Downcast, "downcast", (1, 1), (1, 1), "downcast<N>(L)", "the layout of elements N times narrower"),
    op(
        LayoutOp::MakeLayoutTv,
        "make_layout_tv",
        (2, 2),
        (0, 0),
        "make_layout_tv(thr, val)",
        "(tile shape, (thread,value) -> index)",
    ),
    op(
        LayoutOp::LocalTile,
        "local_tile",
        (3, 3),
        (0, 0),
        "local_tile(L, tiler, coord)",
        "(the tile at coord, its offset)",
    ),
    op(
        LayoutOp::LocalPartition,
        "local_partition",
        (3, 3),
        (0, 0),
        "local_partition(L, threads, index)",
        "(thread index's part, its offset)",
    ),
    op(LayoutOp::Product, "product", (1, 1), (0, 0), "product(shape)", "the product of the leaves"),
    op(LayoutOp::ProductEach, "product_each", (1, 1), (0, 0), "product_each(shape)", "the size of each mode"),
    op(LayoutOp::CeilDiv, "ceil_div", (2, 2), (0, 0), "ceil_div(a, b)", "ceiling division of shapes"),
    op(LayoutOp::ShapeDiv, "shape_div", (2, 2), (0, 0), "shape_div(a, b)", "CuTe's shape division"),
    op(
        LayoutOp::PrintLayout,
        "print_layout",
        (1, 1),
        (0, 0),
        "print_layout(L)",
        "CuTe's text picture of a rank-2 layout",
    ),
];

/// The table entry of an operation.
pub fn op_info(name: &str) -> Option<&'static OpInfo> {
    OPS.iter().find(|o| o.name == name)
}

/// Whether `name` is an operation of the layout algebra.
pub fn is_layout_op(name: &str) -> bool {
    op_info(name).is_some()
}

fn count(n: usize) -> String {
    if n == ANY { "any number of".to_string() } else { n.to_string() }
}

/// [`apply`] by CuTe's name of the operation, for the expression evaluator.
pub fn apply_named(name: &str, generics: &[i64], args: &[Value]) -> Result<Value> {
    let op = LayoutOp::from_name(name).ok_or_else(|| LayoutError::UnknownOp { name: name.to_owned() })?;
    apply(op, generics, args)
}

/// Apply an operation to values: `apply(LayoutOp::Get, &[1], &[layout])` is `get<1>(layout)`.
pub fn apply(op: LayoutOp, generics: &[i64], args: &[Value]) -> Result<Value> {
    let info = op.info();
    if args.len() < info.args.0 || args.len() > info.args.1 {
        let (lo, hi) = info.args;
        let want = if lo == hi { count(lo) } else { format!("{} to {}", count(lo), count(hi)) };
        return Err(invalid(op, format!("takes {want} arguments, found {} ({})", args.len(), info.signature)));
    }
    if generics.len() < info.generics.0 || generics.len() > info.generics.1 {
        let (lo, hi) = info.generics;
        let want = if lo == hi {
            count(lo)
        } else if hi == ANY {
            format!("at least {lo}")
        } else {
            format!("{lo} to {hi}")
        };
        return Err(invalid(
            op,
            format!("takes {want} generic arguments, found {} ({})", generics.len(), info.signature),
        ));
    }
    let path = || -> Result<Vec<usize>> {
        let mut out = Vec::with_capacity(generics.len());
        for &g in generics {
            let Ok(i) = usize::try_from(g) else {
                // A negative index is reported with the rank of what it indexes (it once said "rank 0").
                let within = args.first().map(|a| get_path(op, a, &out));
                let rank = match within {
                    Some(Ok(Value::Layout(l))) => l.rank(),
                    Some(Ok(Value::Composed(c))) => c.layout.rank(),
                    Some(Ok(v)) => rank_of(&v),
                    Some(Err(e)) => return Err(e),
                    None => 0,
                };
                return Err(LayoutError::IndexOutOfRange { op, index: g, rank });
            };
            out.push(i);
        }
        Ok(out)
    };
    let a = &args[0];
    match op {
        LayoutOp::MakeLayout => make_layout(op, args),
        LayoutOp::MakeOrderedLayout => {
            Ok(make_ordered_layout(&args[0].int_tuple(op)?, &args[1].int_tuple(op)?)?.into())
        }
        LayoutOp::Size | LayoutOp::Cosize | LayoutOp::Rank | LayoutOp::Depth | LayoutOp::Shape | LayoutOp::Stride => {
            measure(op, &get_path(op, a, &path()?)?)
        }
        LayoutOp::Get => get_path(op, a, &path()?),
        LayoutOp::Select => map_layout(op, a, |l| l.select(&path()?)),
        LayoutOp::Take => {
            let p = path()?;
            map_layout(op, a, |l| l.take(p[0], p[1]))
        }
        LayoutOp::Flatten => match a.to_int_tuple() {
            Some(t) => Ok(t.flattened().into()),
            None => map_layout(op, a, |l| Ok(l.flatten())),
        },
        LayoutOp::Crd2idx => crd2idx(op, args),
        LayoutOp::Idx2crd => idx2crd(op, args),
        LayoutOp::Slice | LayoutOp::SliceAndOffset => {
            let coord = args[0].coord(op)?;
            let (sliced, offset) = match &args[1] {
                Value::Composed(c) => {
                    let (s, o) = c.slice_and_offset(&coord)?;
                    (Value::Composed(s), o)
                }
                v => {
                    let (s, o) = v.layout(op)?.slice_and_offset(&coord)?;
                    (Value::Layout(s), o)
                }
            };
            Ok(if op == LayoutOp::Slice { sliced } else { Value::Tuple(vec![sliced, Value::Int(offset)]) })
        }
        LayoutOp::Coalesce => match args.get(1) {
            Some(p) => {
                let p = p.int_tuple(op)?;
                map_layout(op, a, |l| coalesce_by(l, &p))
            }
            None => map_layout(op, a, coalesce),
        },
        LayoutOp::Filter => match args.get(1) {
            Some(p) => {
                let p = p.int_tuple(op)?;
                map_layout(op, a, |l| filter_by(l, &p))
            }
            None => map_layout(op, a, filter),
        },
        LayoutOp::Composition => compose(op, a, &args[1]),
        LayoutOp::Complement => {
            let l = plain_or_inner(op, a)?;
            Ok(match args.get(1) {
                Some(m) => complement(&l, &m.int_tuple(op)?)?,
                None => complement_default(&l)?,
            }
            .into())
        }
        LayoutOp::RightInverse => Ok(right_inverse(&plain(op, a)?)?.into()),
        LayoutOp::LeftInverse => Ok(left_inverse(&plain(op, a)?)?.into()),
        LayoutOp::Nullspace => Ok(nullspace(&plain(op, a)?)?.into()),
        LayoutOp::MaxCommonVector => max_common(op, a, &args[1]),
        LayoutOp::MaxCommonLayout => Ok(max_common_layout(&plain(op, a)?, &plain(op, &args[1])?)?.into()),
        LayoutOp::LogicalDivide => by_tiler(op, a, &args[1], logical_divide),
        LayoutOp::ZippedDivide => by_tiler(op, a, &args[1], zipped_divide),
        LayoutOp::TiledDivide => by_tiler(op, a, &args[1], tiled_divide),
        LayoutOp::FlatDivide => by_tiler(op, a, &args[1], flat_divide),
        LayoutOp::LogicalProduct => by_tiler(op, a, &args[1], logical_product),
        LayoutOp::ZippedProduct => by_tiler(op, a, &args[1], zipped_product),
        LayoutOp::TiledProduct => by_tiler(op, a, &args[1], tiled_product),
        LayoutOp::FlatProduct => by_tiler(op, a, &args[1], flat_product),
        LayoutOp::BlockedProduct => {
            let b = args[1].layout(op)?;
            map_layout(op, a, |l| blocked_product(l, &b))
        }
        LayoutOp::RakedProduct => {
            let b = args[1].layout(op)?;
            map_layout(op, a, |l| raked_product(l, &b))
        }
        LayoutOp::TileToShape => {
            let shape = args[1].int_tuple(op)?;
            let order = args.get(2).map(|o| o.int_tuple(op)).transpose()?;
            map_layout(op, a, |l| tile_to_shape(l, &shape, order.as_ref()))
        }
        LayoutOp::Upcast | LayoutOp::Downcast => {
            let n = generics[0];
            let up = op == LayoutOp::Upcast;
            match a {
                Value::Swizzle(s) => Ok(Value::Swizzle(if up { s.upcast(n)? } else { s.downcast(n)? })),
                Value::Composed(c) => Ok(Value::Composed(if up { c.upcast(n)? } else { c.downcast(n)? })),
                v => {
                    let l = v.layout(op)?;
                    Ok(Value::Layout(if up { l.upcast(n)? } else { l.downcast(n)? }))
                }
            }
        }
        LayoutOp::MakeLayoutTv => {
            let (tiler, tv) = make_layout_tv(&args[0].layout(op)?, &args[1].layout(op)?)?;
            Ok(Value::Tuple(vec![tiler.into(), tv.into()]))
        }
        LayoutOp::LocalTile => {
            let tiler = args[1].tiler(op)?;
            let coord = args[2].coord(op)?;
            with_offset(op, a, |l| local_tile(l, &tiler, &coord))
        }
        LayoutOp::LocalPartition => {
            let threads = args[1].layout(op)?;
            let index = args[2].dyn_int(op)?;
            with_offset(op, a, |l| local_partition(l, &threads, &index))
        }
        LayoutOp::Product => Ok(a.int_tuple(op)?.product(op)?.into()),
        LayoutOp::ProductEach => Ok(product_each(op, &a.int_tuple(op)?)?.into()),
        LayoutOp::CeilDiv => Ok(ceil_div_tuple(op, &a.int_tuple(op)?, &args[1].int_tuple(op)?)?.into()),
        LayoutOp::ShapeDiv => Ok(shape_div_tuple(op, &a.int_tuple(op)?, &args[1].int_tuple(op)?)?.into()),
        LayoutOp::PrintLayout => match a {
            Value::Composed(c) => Ok(Value::Text(print_layout(c)?)),
            v => Ok(Value::Text(print_layout(&v.layout(op)?)?)),
        },
    }
}

/// A divide or product of `a` by the tiler `tiler`.
fn by_tiler(op: LayoutOp, a: &Value, tiler: &Value, f: fn(&Layout, &Tiler) -> Result<Layout>) -> Result<Value> {
    let tiler = tiler.tiler(op)?;
    map_layout(op, a, |l| f(l, &tiler))
}

/// `make_layout(shape)`, `make_layout(shape, stride)`, or `make_layout(L0, L1, ...)`.
fn make_layout(op: LayoutOp, args: &[Value]) -> Result<Value> {
    if args.iter().all(|v| matches!(v, Value::Layout(_))) {
        return Ok(Layout::from_modes(args.iter().map(|v| v.layout(op)).collect::<Result<_>>()?).into());
    }
    match args {
        [shape] => Ok(Layout::compact(shape.int_tuple(op)?)?.into()),
        [shape, stride] => Ok(Layout::new(shape.int_tuple(op)?, stride.int_tuple(op)?)?.into()),
        _ => Err(invalid(op, "expects a shape and a stride, or layouts to concatenate")),
    }
}

/// A plain layout (a shape counts as its compact layout).
fn plain(op: LayoutOp, v: &Value) -> Result<Layout> {
    match v {
        Value::Composed(_) | Value::Swizzle(_) => Err(swizzled(op, format!("is not defined for {} {v}", v.kind()))),
        _ => v.layout(op),
    }
}

/// The layout, or the inner layout of a swizzled one (as CuTe's complement of a `ComposedLayout`).
fn plain_or_inner(op: LayoutOp, v: &Value) -> Result<Layout> {
    match v {
        Value::Composed(c) => Ok(c.layout.clone()),
        _ => plain(op, v),
    }
}

/// Apply a shape operation to a layout, or to the inner layout of a swizzled one.
fn map_layout(op: LayoutOp, v: &Value, f: impl FnOnce(&Layout) -> Result<Layout>) -> Result<Value> {
    match v {
        Value::Composed(c) => Ok(Value::Composed(c.map(f)?)),
        Value::Swizzle(_) | Value::Text(_) | Value::Underscore => Err(wrong_kind(op, "a layout", v)),
        _ => Ok(Value::Layout(f(&v.layout(op)?)?)),
    }
}

/// Like [`map_layout`] for operations that also return an offset (`local_tile`, `local_partition`); for a
/// swizzled layout the offset moves inside it, as CuTe does.
fn with_offset(op: LayoutOp, v: &Value, f: impl FnOnce(&Layout) -> Result<(Layout, Int)>) -> Result<Value> {
    match v {
        Value::Composed(c) => {
            let (l, off) = f(&c.layout)?;
            let offset = int_tuple::add(op, &c.offset, &off)?;
            let inner = ComposedLayout { swizzle: c.swizzle, offset, layout: l };
            Ok(Value::Tuple(vec![Value::Composed(inner), Value::Int(Int::Static(0))]))
        }
        _ => {
            let (l, off) = f(&v.layout(op)?)?;
            Ok(Value::Tuple(vec![l.into(), off.into()]))
        }
    }
}

/// `get<I...>` on a layout, a swizzled layout or a tuple.
fn get_path(op: LayoutOp, v: &Value, path: &[usize]) -> Result<Value> {
    let mut cur = v.clone();
    for &i in path {
        cur = match cur {
            Value::Layout(l) => Value::Layout(l.mode(i)?),
            Value::Composed(c) => Value::Composed(c.map(|l| l.mode(i))?),
            Value::Tuple(t) => {
                let rank = t.len();
                t.into_iter().nth(i).ok_or(LayoutError::IndexOutOfRange { op, index: i as i64, rank })?
            }
            Value::Int(_) if i == 0 => cur,
            other => return Err(LayoutError::IndexOutOfRange { op, index: i as i64, rank: rank_of(&other) }),
        };
    }
    Ok(cur)
}

fn rank_of(v: &Value) -> usize {
    match v {
        Value::Tuple(t) => t.len(),
        _ => 1,
    }
}

/// `size`, `cosize`, `rank`, `depth`, `shape`, `stride` of a value.
fn measure(op: LayoutOp, v: &Value) -> Result<Value> {
    let layout = match v {
        Value::Composed(c) => c.layout.clone(),
        Value::Layout(l) => l.clone(),
        _ => {
            let t = v.int_tuple(op)?;
            return match op {
                LayoutOp::Size => Ok(t.product(op)?.into()),
                LayoutOp::Rank => Ok(Value::Int(Int::Static(t.rank() as i64))),
                LayoutOp::Depth => Ok(Value::Int(Int::Static(t.depth() as i64))),
                LayoutOp::Shape => Ok(t.into()),
                _ => Layout::compact(t).and_then(|l| measure(op, &Value::Layout(l))),
            };
        }
    };
    Ok(match op {
        LayoutOp::Size => layout.size()?.into(),
        LayoutOp::Cosize => layout.cosize()?.into(),
        LayoutOp::Rank => Value::Int(Int::Static(layout.rank() as i64)),
        LayoutOp::Depth => Value::Int(Int::Static(layout.depth() as i64)),
        LayoutOp::Shape => layout.shape().clone().into(),
        _ => match v {
            Value::Composed(_) => return Err(swizzled(op, "a swizzled layout has no strides")),
            _ => layout.stride().clone().into(),
        },
    })
}

/// `crd2idx(coord, L)` or `crd2idx(coord, shape[, stride])` (compact column-major without a stride).
fn crd2idx(op: LayoutOp, args: &[Value]) -> Result<Value> {
    let coord = args[0].coord(op)?;
    match &args[1..] {
        [Value::Composed(c)] => Ok(Value::Int(Int::Static(c.call(&coord)?))),
        [Value::Layout(l)] => Ok(l.call(&coord)?.into()),
        [shape] => Ok(Layout::compact(shape.int_tuple(op)?)?.call(&coord)?.into()),
        [shape, stride] => Ok(Layout::new(shape.int_tuple(op)?, stride.int_tuple(op)?)?.call(&coord)?.into()),
        _ => Err(invalid(op, "expects a coordinate and a layout or a shape")),
    }
}

/// `idx2crd(idx, shape[, stride])` or `idx2crd(idx, L)`.
fn idx2crd(op: LayoutOp, args: &[Value]) -> Result<Value> {
    let idx = args[0].int_tuple(op)?;
    let (shape, stride) = match &args[1..] {
        [Value::Layout(l)] => (l.shape().clone(), l.stride().clone()),
        [shape] => return Ok(int_tuple::idx2crd_compact(op, &idx, &shape.int_tuple(op)?)?.into()),
        [shape, stride] => (shape.int_tuple(op)?, stride.int_tuple(op)?),
        _ => return Err(invalid(op, "expects an index and a shape")),
    };
    Ok(int_tuple::idx2crd(op, &idx, &shape, &stride)?.into())
}

/// `composition(A, B)` for layouts, tilers and swizzles.
fn compose(op: LayoutOp, a: &Value, b: &Value) -> Result<Value> {
    match (a, b) {
        (Value::Swizzle(s), Value::Layout(_) | Value::Int(_) | Value::Tuple(_)) => {
            Ok(Value::Composed(ComposedLayout::new(*s, b.layout(op)?)))
        }
        (Value::Composed(c), _) => {
            let tiler = b.tiler(op)?;
            Ok(Value::Composed(c.map(|l| composition_tiler(l, &tiler))?))
        }
        (_, Value::Swizzle(_) | Value::Composed(_)) => {
            Err(swizzled(op, format!("composing a layout with {} is not supported", b.kind())))
        }
        _ => Ok(composition_tiler(&plain(op, a)?, &b.tiler(op)?)?.into()),
    }
}

/// `max_common_vector(A, B)`, with CuTe's bounds for swizzled layouts (`2^M` elements stay contiguous).
fn max_common(op: LayoutOp, a: &Value, b: &Value) -> Result<Value> {
    let vector = |x: &Layout, y: &Layout| max_common_vector(x, y);
    let bound = |m: i64| Int::Static(1i64 << m.min(62));
    let min = |x: Int, y: Int| int_tuple::shape_min(op, &x, &y);
    Ok(Value::Int(match (a, b) {
        (Value::Composed(x), Value::Composed(y)) => {
            let v = vector(&x.layout, &y.layout)?;
            if x.swizzle == y.swizzle { v } else { min(min(v, bound(x.swizzle.base()))?, bound(y.swizzle.base()))? }
        }
        (Value::Composed(x), y) | (y, Value::Composed(x)) => {
            min(vector(&x.layout, &plain(op, y)?)?, bound(x.swizzle.base()))?
        }
        _ => vector(&plain(op, a)?, &plain(op, b)?)?,
    }))
}

//! `cutec-layout`: CuTe's layout algebra with CuTe's exact semantics (CUTLASS `include/cute/layout.hpp`,
//! `int_tuple.hpp`, `stride.hpp`, `swizzle.hpp`, `layout_composed.hpp`, `swizzle_layout.hpp`), dependency-free.
//!
//! A [`Layout`] is a pair of congruent hierarchical integer tuples ([`IntTuple`]), a shape and a stride, read as
//! the function `L(c) = sum(c_i * d_i)` from coordinates to indices; an integer coordinate is split
//! colexicographically over the shape (`idx2crd`). The algebra is built from a few primitives, each in its
//! module and each documented with its definition and post-condition:
//!
//! | module | operations |
//! | --- | --- |
//! | [`int_tuple`] | `IntTuple`, `product`, `shape_div`, `ceil_div`, compact strides, `crd2idx`, `idx2crd` |
//! | [`layout`] | `Layout`, `size`, `cosize`, `rank`, `depth`, `get`, `select`, `take`, `flatten`, slicing, `upcast`, `downcast` |
//! | [`coalesce`](mod@coalesce) | `coalesce`, `filter` (with and without a profile) |
//! | [`composition`](mod@composition) | `composition` of layouts and tilers (`_` in tilers) |
//! | [`complement`](mod@complement) | `complement`, `right_inverse`, `left_inverse`, `nullspace`, `max_common_vector/layout` |
//! | [`divide`] | `logical/zipped/tiled/flat_divide`, `local_tile`, `local_partition` |
//! | [`product`] | `logical/zipped/tiled/flat/blocked/raked_product`, `tile_to_shape`, `make_ordered_layout`, `make_layout_tv` |
//! | [`swizzle`] | `Swizzle<B,M,S>`, swizzled layouts `Sw o offset o L` |
//! | [`parse`], `Display` | CuTe's notation: `((2,2),3):((24,2),8)`, `Sw<3,4,3> o 0 o (8,64):(64,1)` |
//! | [`eval`](mod@eval) | the expression evaluator and [`eval::apply`], the one table of operations |
//! | [`picture`], [`svg`] | `print_layout`, `svg_layout`, `svg_tv` |
//! | [`doc`] | `check_doc_block` for the book's `cute-layout` blocks, the book's pictures |
//!
//! # Invariants
//!
//! * **No panics.** Every operation returns [`Result`]; errors ([`LayoutError`]) are values naming the operation
//!   and the operands. Arithmetic is checked (overflow is an error), recursion in the evaluator is bounded.
//! * **Layouts are valid**: shape and stride are congruent and every known shape is positive
//!   ([`Layout::new`] checks it; internal results preserve it).
//! * **Static and dynamic integers.** [`Int::Static`] values are computed. [`Int::Dynamic`] values (a name, maybe
//!   a value) behave as CuTe's run-time integers: they never take part in static simplifications (coalescing
//!   merges only static modes, `_1` tests are static), products and quotients of them are formed symbolically
//!   (`128*K`), and an operation that must compare or branch on an unknown value returns
//!   [`LayoutError::NeedsStatic`].
//! * **Printing**: CuTe's notation without spaces and without CuTe's `_` marks on static integers; an unknown
//!   dynamic integer prints its name, a known one its value. `parse(print(x)) == x` for static layouts and
//!   layouts whose dynamic integers are plain unknown names.
//!
//! # Where CUTLASS C++ and pycute differ (we follow C++)
//!
//! Each point is pinned by a test in `tests/main.rs` (module `divergences`).
//!
//! 1. **Negative strides.** `cosize` takes strides in absolute value (C++'s `coshape`), pycute evaluates
//!    `L(size-1)+1` with signed strides: `cosize(4:-1)` is 4 here, -2 in pycute. `right_inverse` follows C++
//!    (absolute strides, the sign moved into the result); `complement` of a layout with a negative stride is an
//!    error here (CuTe's result is meaningless).
//! 2. **`logical_product` with an integer tiler** is `logical_product(A, n:1)` in C++; pycute calls
//!    `logical_divide` there (a bug).
//! 3. **Composition divisibility.** C++ checks both the stride and the shape divisibility conditions for static
//!    integers; pycute checks only the stride one: `composition((4,5):(1,5), 6:1)` is an error here and `4:1`
//!    in pycute. C++'s `coalesce_x` also keeps a trailing size-1 mode of `A` (as size 2), so the mode before it
//!    is checked where pycute has merged it away.
//! 4. **Composition with a tuple tiler** keeps only the modes the tiler names in C++ ("drop any modes of lhs that
//!    aren't hit by rhs"); pycute keeps the remaining modes of `A`.
//! 5. **Results' form, and A outside its domain.** C++ coalesces inside `composition` (`bw_coalesce`) and
//!    keeps the function of `A` beyond `size(A)` (`coalesce_x`); pycute's `coalesce` forgets the last stride
//!    of `A` there: `composition((1):(10), (4):(16))` is `(4):(160)` here, `(4):(0)` in pycute. The shapes of
//!    equal functions can differ (`composition((4,5):(1,5), 1:1)` is `1:0`).
//! 6. **`_` in zipped/tiled/flat tilers**: C++ requires the mode under `_` to be a (tile, rest) pair; pycute
//!    makes it `(1:0, mode)`.
//! 7. **Swizzled layouts** (no pycute counterpart for most operations): slicing keeps the swizzle and moves the
//!    offset inside (`layout_composed.hpp`); CuTe's decay of a sliced swizzle layout to a plain layout
//!    (`swizzle_layout.hpp`) is not attempted. `print` writes CuTe's `Sw<B,M,S> o offset o L`.
//! 8. **Blocked/raked products of rank 1** give a rank-1 tuple layout `(x):(y)` (C++'s `tuple_repeat<1>` profile).
//! 9. **`right_inverse`** coalesces first, skips stride-0 modes and follows the first mode of each stride
//!    (C++'s `inverse_seq`); pycute sorts the uncoalesced modes, stops at a stride-0 mode, and so can return a
//!    smaller inverse (`right_inverse((1,4,2,2):(8,1,0,8))` is `4:1` here, `1:0` in pycute).
//! 10. **`logical_divide` takes the complement within `shape(A)`** (a tuple: `ceil_div` folds mode by mode),
//!     pycute within `size(A)`; they differ when the tile does not divide the shape mode by mode
//!     (`logical_divide((3,3,1):(1,3,9), 4:2)` is `(4,2):(2,1)` here, `(4,(2,2)):(2,(1,8))` in pycute).

pub mod coalesce;
pub mod complement;
pub mod composition;
pub mod divide;
pub mod doc;
pub mod error;
pub mod eval;
pub mod int_tuple;
pub mod layout;
pub mod parse;
pub mod picture;
pub mod product;
pub mod svg;
pub mod swizzle;

pub use coalesce::{coalesce, coalesce_by, filter, filter_by};
pub use complement::{
    complement, complement_default, left_inverse, max_common_layout, max_common_vector, nullspace, right_inverse,
};
pub use composition::{Tiler, composition, composition_tiler};
pub use divide::{flat_divide, local_partition, local_tile, logical_divide, tiled_divide, zipped_divide};
pub use doc::{book_pictures, check_doc_block, doc_blocks};
pub use error::{LayoutError, Result};
pub use eval::{EvalError, LayoutOp, OPS, OpInfo, Value, apply, apply_named, eval, eval_lines, is_layout_op, op_info};
pub use int_tuple::{Coord, Int, IntTuple};
pub use layout::Layout;
pub use parse::{ParseError, parse_composed, parse_int_tuple, parse_layout, parse_swizzle};
pub use picture::{Drawable, print_layout};
pub use product::{
    blocked_product, flat_product, logical_product, make_layout_tv, make_ordered_layout, raked_product, tile_to_shape,
    tiled_product, zipped_product,
};
pub use svg::{svg_layout, svg_tv};
pub use swizzle::{ComposedLayout, Swizzle};

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
//! | [`gmma`] | Hopper `wgmma`: smem matrix descriptors derived from a layout and checked element by element, the accumulator layout |
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
//! # The oracle: CUTLASS 4.2's C++ headers
//!
//! The semantics are CUTLASS 4.2.0's C++ (`nvidia-cutlass==4.2.0.0`), checked by a differential test that
//! compiles thousands of seeded random cases of every operation of [`OPS`] (swizzled layouts included) with g++
//! against the headers (`tests/suite/cpp.rs`; `scripts/install-cute-headers.sh` installs them; `CUTEC_REQUIRE_CPP`
//! makes their absence a failure, as CI sets it). Results are compared as printed text (shape and stride, not
//! only the function); a case that C++ rejects with a `static_assert` must be an error here. Run it with
//! `cargo test -p cutec-layout cpp -- --nocapture` (2,300 cases, 50 per generator; `CUTEC_CPP_CASES`,
//! `CUTEC_SEED`). What it does not cover: `print_layout` (a picture), slicing a swizzled layout (CuTe decays it
//! to a plain layout where it can, see 7), identity swizzles `Sw<0,M,S>` (CuTe drops them, we keep them).
//!
//! # Where CUTLASS C++ and pycute differ (we follow C++)
//!
//! Each point is pinned by a test in `tests/main.rs` (module `divergences`); the pycute test counts them.
//!
//! 1. **Negative strides.** `cosize` takes strides in absolute value (C++'s `coshape`), pycute evaluates
//!    `L(size-1)+1` with signed strides: `cosize(4:-1)` is 4 here, -2 in pycute. `right_inverse` compares
//!    strides as they are, so it never follows a negative one (`right_inverse(4:-1)` is `1:0`); `complement` of a
//!    layout with a negative stride is an error here (CuTe's result is meaningless).
//! 2. **`logical_product` with an integer tiler** is `logical_product(A, make_layout(n))` in C++; pycute calls
//!    `logical_divide` there (a bug). An integer tiler is `make_layout(n)` in every divide and product, so a
//!    static 1 is `1:0`; in `composition` it is `n:1`.
//! 3. **Composition divisibility.** C++ 4.2 checks weak conditions for static integers: the stride one
//!    (`d % s == 0 || d < s`) and the shape one (`rest % min(ceil_div(s, d), rest) == 0`); pycute checks a strong
//!    stride condition only. Each can accept what the other rejects: `composition((4,5):(1,5), 6:1)` is an error
//!    here and `4:1` in pycute; `composition((3,3,4):(17,1,3), (6,2):(2,1))` is `((2,3),2):((34,1),17)` here and
//!    an assertion in pycute. `composition((6,4):(4,1), 4:1)` is `4:4`. C++'s `coalesce_x` keeps a trailing
//!    size-1 mode of `A` (as size 2).
//! 4. **Composition with a tuple tiler** keeps only the modes the tiler names in C++ ("drop any modes of lhs that
//!    aren't hit by rhs"); pycute keeps the remaining modes of `A`.
//! 5. **Results' form, and A outside its domain.** C++'s composition walks the modes of `coalesce_x(A)` with
//!    `ceil_div` and does not coalesce its result; a size-1 result keeps the stride it reached
//!    (`composition((4,5):(1,5), 1:1)` is `1:5`); `coalesce_x` keeps the function of `A` beyond `size(A)`
//!    (`composition((1):(10), (4):(16))` is `(4):(160)`, `(4):(0)` in pycute). `tiled_*` and `flat_*` slice the
//!    zipped result (`z(_, repeat<R1>(_))`), so a rest of rank 1 stays one tuple mode: `tiled_divide((4):(8), (4))`
//!    is `((4),(1)):((8),(0))`. `product_each(n)` is `(n)`.
//! 6. **`_` in zipped/tiled/flat tilers**: C++ requires the mode under `_` to be a (tile, rest) pair; pycute
//!    makes it `(1:0, mode)`.
//! 7. **Swizzled layouts** (no pycute counterpart for most operations): slicing keeps the swizzle and moves the
//!    offset inside (`layout_composed.hpp`); CuTe's decay of a sliced swizzle layout to a plain layout
//!    (`swizzle_layout.hpp`) is not attempted. `print` writes CuTe's `Sw<B,M,S> o offset o L`.
//! 8. **Blocked/raked products and `tile_to_shape`** are C++'s `zip` of the two halves of the logical product,
//!    not coalesced (`blocked_product(4:1, 3:1)` is `((4,3)):((1,4))`); `zip` needs both halves to have the
//!    same rank, else it is an error (`blocked_product((1):(1), 2:1)`).
//! 9. **The inverses** follow C++: `right_inverse` coalesces, sorts the static strides (CuTe's `exchange_sort`)
//!    and takes each one equal to the running `s*d`; `left_inverse` gives every hole its own mode
//!    (`left_inverse(4:2)` is `(2,4):(0,1)`, pycute `(2,4):(4,1)`: equal on the image of `A`).
//! 10. **`logical_divide` takes the complement within `shape(coalesce(A))`** (CUTLASS 4.2; earlier versions
//!     used `shape(A)`), which here agrees with pycute's `size(A)` for compact `A`. `upcast<N>` uses
//!     `ceil_div` for shapes and strides (`Stride % N == 0 or N % Stride == 0` is required).

pub mod coalesce;
pub mod complement;
pub mod composition;
pub mod divide;
pub mod doc;
pub mod error;
pub mod eval;
pub mod gmma;
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
pub use error::{LayoutError, Result, SwizzleRule};
pub use eval::{EvalError, LayoutOp, OPS, OpInfo, Value, apply, apply_named, eval, eval_lines, is_layout_op, op_info};
pub use gmma::{
    GmmaError, GmmaSwizzle, Major, OperandDescriptors, SmemDescriptor, descriptor_address, operand_descriptor,
    wgmma_a_register_layout, wgmma_accumulator_layout,
};
pub use int_tuple::{Coord, Int, IntTuple, Shape};
pub use layout::Layout;
pub use parse::{ParseError, parse_composed, parse_int_tuple, parse_layout, parse_swizzle};
pub use picture::{Drawable, print_layout};
pub use product::{
    blocked_product, flat_product, logical_product, make_layout_tv, make_ordered_layout, raked_product, tile_to_shape,
    tiled_product, zipped_product,
};
pub use svg::{svg_layout, svg_tv};
pub use swizzle::{ComposedLayout, Swizzle};

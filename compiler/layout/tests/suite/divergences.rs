//! Where CUTLASS C++ and pycute differ, we follow C++: one pinned test per divergence listed in the crate docs.

use cutec_layout::eval;

fn answer(expr: &str) -> String {
    match eval(expr) {
        Ok(v) => v.to_string(),
        Err(e) => format!("error: {e}"),
    }
}

/// 1. Negative strides: cosize uses |stride| (pycute: `L(size-1)+1` = -2); right_inverse never follows a
///    negative stride (C++ compares strides as they are); complement refuses them.
#[test]
fn negative_strides() {
    assert_eq!(answer("cosize(4:-1)"), "4");
    assert_eq!(answer("right_inverse((4,2):(-1,4))"), "1:0");
    assert_eq!(answer("complement(4:-1, 8)"), "error: complement: negative stride -1 in 4:-1 is not supported");
}

/// 2. `logical_product` with an integer tiler is the product with `n:1` (pycute calls logical_divide).
#[test]
fn logical_product_with_an_integer() {
    assert_eq!(answer("logical_product((2,2):(4,1), 6)"), "((2,2),(2,3)):((4,1),(2,8))");
}

/// 3. Composition checks the shape divisibility condition (pycute: `(4,5):(1,5) o 6:1` is `4:1`).
#[test]
fn composition_shape_divisibility() {
    assert_eq!(
        answer("composition((4,5):(1,5), 6:1)"),
        "error: composition: shape 6 and shape 4 of (4,5):(1,5) do not divide each other (shape divisibility)"
    );
}

/// 4. A tuple tiler drops the modes of A it does not name (pycute keeps them).
#[test]
fn composition_with_a_short_tiler() {
    assert_eq!(answer("composition((4,8,2):(1,4,32), (2,4))"), "(2,4):(1,4)");
    assert_eq!(answer("logical_divide((4,8,2):(1,4,32), (2,4))"), "((2,2),(4,2),2):((1,2),(4,16),32)");
}

/// 5. The forms of results: composition keeps A's function outside A's domain (`coalesce_x`) and does not
///    coalesce its result; a size-1 result keeps the stride it walked to.
#[test]
fn result_forms() {
    assert_eq!(answer("composition((4,5):(1,5), 1:1)"), "1:5");
    assert_eq!(answer("composition((1):(10), (4):(16))"), "(4):(160)");
    assert_eq!(answer("right_inverse((2,4):(4,1))"), "(4,2):(2,1)");
}

/// 6. `_` in a zipped tiler needs a (tile, rest) pair under it.
#[test]
fn underscore_in_zipped_tilers() {
    assert_eq!(
        answer("zipped_divide((8,4):(1,8), (2,_))"),
        "error: zipped_divide: rank mismatch: mode 4 is not a (tile, rest) pair for the tiler _"
    );
    assert_eq!(answer("logical_divide((8,4):(1,8), (2,_))"), "((2,4),4):((1,2),8)");
}

/// 7. Swizzled layouts keep the swizzle when sliced; the offset moves inside.
#[test]
fn swizzled_slices() {
    assert_eq!(answer("local_tile(Sw<3,4,3> o (64,64):(64,1), (8,64), (2,0))"), "(Sw<3,4,3> o 1024 o (8,64):(64,1),0)");
}

/// 8. Blocked and raked products are C++'s `zip` of the two halves, not coalesced: rank 1 gives `((A,B))`.
#[test]
fn rank_one_products() {
    assert_eq!(answer("blocked_product(4:1, 3:1)"), "((4,3)):((1,4))");
    assert_eq!(answer("raked_product(4:1, 3:1)"), "((3,4)):((4,1))");
}

/// 9. `right_inverse` skips stride-0 modes and coalesces first (pycute stops at a stride-0 mode).
#[test]
fn right_inverse_with_stride_zero() {
    assert_eq!(answer("right_inverse((1,4,2,2):(8,1,0,8))"), "4:1");
}

/// 10. `logical_divide` takes the complement within `shape(coalesce(A))` (CUTLASS 4.2; it was `shape(A)`);
///     here that agrees with pycute's `size(A)`.
#[test]
fn divide_complement_within_the_coalesced_shape() {
    assert_eq!(answer("logical_divide((3,3,1):(1,3,9), 4:2)"), "(4,(2,2)):(2,(1,8))");
}

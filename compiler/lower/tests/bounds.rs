//! Bounds: accesses through views of kernel arguments are predicated where they may fall outside, and not where
//! the compiler proves they stay inside.

use super::lower::{example, lowered_and_optimized, optimized_with_interface};

/// The number of lines of `text` that contain `pat`.
fn count(text: &str, pat: &str) -> usize {
    text.lines().filter(|l| l.contains(pat)).count()
}

#[test]
fn ragged_gemm_tiles_are_predicated_along_every_dynamic_extent() {
    let (_, text) = lowered_and_optimized(&example("gemm_simt.cute"), "gemm_simt", &[]);
    for dim in ["%M", "%N", "%K"] {
        assert!(text.lines().any(|l| l.contains("cmp.lt") && l.contains(dim)), "no test against {dim}:\n{text}");
    }
    // Coordinates built from thread and block indices are never negative: no lower test.
    assert_eq!(count(&text, "cmp.ge"), 0, "{text}");
}

#[test]
fn required_divisibility_removes_every_predicate_and_reaches_the_manifest() {
    let src = example("gemm_simt.cute").replace(
        "    let sa = make_tensor",
        "    static_assert(M % BM == 0 && N % BN == 0 && K % BK == 0, \"tiles divide the matrices\");\n    let sa = make_tensor",
    );
    let (_, iface, text) = optimized_with_interface(&src, "gemm_simt", &[]);
    assert_eq!(count(&text, "cmp."), 0, "{text}");
    let req: Vec<(&str, i64)> = iface.requires.iter().map(|r| (r.dim.as_str(), r.multiple_of)).collect();
    assert_eq!(req, [("M", 128), ("N", 128), ("K", 8)]);
    assert!(iface.requires.iter().all(|r| r.message.as_deref() == Some("tiles divide the matrices")));
}

#[test]
fn a_tile_crossing_a_static_edge_keeps_exactly_the_elements_inside() {
    let src = "kernel k(x: Tensor<f32, 100:1, gmem>, y: Tensor<f32, 100:1, gmem>) launch(grid = (1), block = (1)) {
    copy(local_tile(x, 128, 0), local_tile(y, 128, 0));
}";
    let (_, text) = lowered_and_optimized(src, "k", &[]);
    // Elements 100..128 are outside whatever the arguments: their accesses are gone, the others need no test.
    assert_eq!(count(&text, "store "), 100, "{text}");
    assert_eq!(count(&text, "if "), 0, "{text}");
}

#[test]
fn a_thread_index_needs_only_the_upper_test_and_an_enclosing_condition_none() {
    let bare = "kernel k(x: Tensor<f32, N:1, gmem>) launch(grid = (ceil_div(N, 256)), block = (256)) {
    x[block_idx.x * 256 + thread_idx.x] = 1.0;
}";
    let (_, text) = lowered_and_optimized(bare, "k", &[]);
    assert_eq!((count(&text, "cmp.lt"), count(&text, "cmp."), count(&text, "if ")), (1, 1, 1), "{text}");

    let guarded = "kernel k(x: Tensor<f32, N:1, gmem>) launch(grid = (ceil_div(N, 256)), block = (256)) {
    let i = block_idx.x * 256 + thread_idx.x;
    if i < N {
        x[i] = 1.0;
    }
}";
    let (_, text) = lowered_and_optimized(guarded, "k", &[]);
    assert_eq!((count(&text, "cmp."), count(&text, "if ")), (1, 1), "only the program's own test:\n{text}");
}

#[test]
fn a_loop_bounded_by_the_extent_needs_no_predicate_and_one_past_it_does() {
    let src = |end: &str| {
        format!(
            "kernel k(x: Tensor<f32, N:1, gmem>) launch(grid = (1), block = (1)) {{
    for i in 0..{end} {{
        x[i] = 1.0;
    }}
}}"
        )
    };
    let (_, inside) = lowered_and_optimized(&src("N"), "k", &[]);
    assert_eq!(count(&inside, "if "), 0, "{inside}");
    let (_, past) = lowered_and_optimized(&src("N + 1"), "k", &[]);
    assert_eq!(count(&past, "if "), 1, "{past}");
}

#[test]
fn loads_outside_give_zero() {
    let src = "kernel k(x: Tensor<f32, N:1, gmem>, y: Tensor<f32, 256:1, gmem>) launch(grid = (1), block = (256)) {
    y[thread_idx.x] = x[thread_idx.x];
}";
    let (_, text) = lowered_and_optimized(src, "k", &[]);
    // The load of `x` is guarded and its variable starts at 0; the store into `y` (256 elements, 256 threads) is
    // proven inside.
    assert!(text.contains("= 0.0"), "{text}");
    assert_eq!((count(&text, "cmp.lt"), count(&text, "if ")), (1, 1), "{text}");
}

#[test]
fn a_view_whose_modes_merged_stays_inside_the_buffer() {
    // The column-major (8, 4) is contiguous: composing with 32:1 walks across its columns, and the compiler
    // checks each access against the 32 elements of the buffer instead.
    let src = "kernel k(x: Tensor<f32, (8, 4):(1, 8), gmem>) launch(grid = (1), block = (64)) {
    let v = composition(x, 32:1);
    v[thread_idx.x % 32] = 1.0;
    let w = composition(x, 64:1);
    w[thread_idx.x] = 2.0;
}";
    let (_, text) = lowered_and_optimized(src, "k", &[]);
    assert_eq!(count(&text, "cmp.lt"), 1, "only `w`, of 64 elements, needs a test:\n{text}");
    assert!(text.lines().any(|l| l.contains("cmp.lt") && l.contains(", 32")), "{text}");
}

/// Tiles of static tensors at constant tile coordinates: every predicate is decided at compile time, and the
/// loads that remain must be exactly the elements of the tile inside the tensor (row-major and column-major
/// tensors, tiles that divide or not, tiles past the edge).
#[test]
fn static_tiles_keep_exactly_their_elements_inside() {
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = |n: i64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n as u64) as i64
    };
    for case in 0..40 {
        let (m, n) = (1 + next(40), 1 + next(40));
        let (a, b) = (1 + next(9), 1 + next(9));
        let (i, j) = (next(m / a + 2), next(n / b + 2));
        let stride = if case % 2 == 0 { format!("({n}, 1)") } else { format!("(1, {m})") };
        let src = format!(
            "kernel k(x: Tensor<f32, ({m}, {n}):{stride}, gmem>) launch(grid = (1), block = (1)) {{
    let t = local_tile(x, ({a}, {b}), ({i}, {j}));
    let r = make_fragment_like(t);
    copy(t, r);
    let mut s = 0.0;
    for e in 0..size(r) unroll {{
        s += r[e];
    }}
    x[0, 0] = s;
}}"
        );
        // A mode with one tile has stride 0 in `zipped_divide` (CuTe's complement is `1:0`): any tile index is tile 0.
        let inside = |t: i64, size: i64, ext: i64| {
            let t = if (ext + size - 1) / size == 1 { 0 } else { t };
            (t * size..t * size + size).filter(|&c| c < ext).count()
        };
        let expected = inside(i, a, m) * inside(j, b, n);
        let (_, text) = lowered_and_optimized(&src, "k", &[]);
        // The loads through pointers into `x`, and the elements each carries (vectors along a contiguous mode).
        let global: Vec<&str> = text
            .lines()
            .filter(|l| l.contains(": ptr<global> = offset %x"))
            .filter_map(|l| l.trim().split(':').next())
            .chain(["%x"])
            .collect();
        let elements: usize = text
            .lines()
            .filter_map(|l| l.split(" = load ").nth(1))
            .filter(|rest| {
                rest.split(", ").nth(1).and_then(|p| p.split_whitespace().next()).is_some_and(|p| global.contains(&p))
            })
            .map(|rest| rest.strip_prefix("f32x").and_then(|w| w.split(',').next()?.parse().ok()).unwrap_or(1))
            .sum();
        let loads = elements;
        assert_eq!(elements, expected, "case {case} ({loads} load lines):\n{src}\n{text}");
        assert_eq!(count(&text, "if "), 0, "case {case}: every predicate is static:\n{src}\n{text}");
    }
}

#[test]
fn a_clamped_index_needs_no_predicate_when_the_grid_needs_the_extent() {
    // `min(i, N - 1)` is below N, and not negative once N >= 1: a grid of ceil_div(N, 256) CTAs, which the
    // runtime requires to be at least 1, needs N >= 1.
    let src = |grid: &str| {
        format!(
            "kernel k(x: Tensor<f32, N:1, gmem>, y: Tensor<f32, M:1, gmem>) launch(grid = ({grid}), block = (256)) {{
    let i = block_idx.x * 256 + thread_idx.x;
    if i < M {{
        y[i] = x[min(i, N - 1)];
    }}
}}"
        )
    };
    let (_, clamped) = lowered_and_optimized(&src("ceil_div(M, 256) * ceil_div(N, 1 << 30)"), "k", &[]);
    // The one test left is the store's `i < M`.
    assert_eq!((count(&clamped, "cmp."), count(&clamped, "if ")), (1, 1), "{clamped}");
    // Without N in the grid, N may be 0 and `N - 1` negative: the load keeps its lower test.
    let (_, open) = lowered_and_optimized(&src("ceil_div(M, 256)"), "k", &[]);
    assert!(count(&open, "cmp.") > 1, "{open}");
}

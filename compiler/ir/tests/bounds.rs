//! Bounds: accesses through views of kernel arguments are predicated where they may fall outside, and not where
//! the compiler proves they stay inside.

use super::lower::{example, lowered_and_optimized};

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
    let (module, text) = lowered_and_optimized(&src, "gemm_simt", &[]);
    assert_eq!(count(&text, "cmp."), 0, "{text}");
    let iface = module.kernels[0].interface.as_ref().expect("a manifest entry");
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

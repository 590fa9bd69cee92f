//! The remaining examples and listings on the CPU: row-wise kernels, clusters and distributed shared memory,
//! batched and transposed GEMMs, fused epilogues, fp8 with scales, split-K.

use super::{assert_close, matmul_nt, run, run_with_scalars};

fn rows(x: &[f64], n: usize) -> impl Iterator<Item = &[f64]> {
    x.chunks_exact(n)
}

fn softmax_rows(x: &[f64], n: usize) -> Vec<f64> {
    rows(x, n)
        .flat_map(|r| {
            let max = r.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let sum: f64 = r.iter().map(|v| (v - max).exp()).sum();
            r.iter().map(move |v| (v - max).exp() / sum).collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn softmaxes_match_the_reference() {
    for (file, kernel, n) in
        [("examples/softmax.cute", "softmax", 2048), ("examples/softmax_warp.cute", "softmax_warp", 128)]
    {
        let t = run(file, kernel, &[("N", n)], &[("M", 13)], &["x"], &["y"]);
        assert_close(kernel, t.get("y"), &softmax_rows(t.get("x"), n as usize), 1e-5);
    }
}

#[test]
fn rmsnorm_matches_the_reference() {
    // N a multiple of THREADS * VEC, as the kernel asserts.
    let n = 2048;
    let t = run_with_scalars(
        "examples/rmsnorm.cute",
        "rmsnorm",
        &[("N", n)],
        &[("M", 9)],
        &["x", "w"],
        &["y"],
        &[("eps", "1e-5")],
    );
    let w = t.get("w");
    let want: Vec<f64> = rows(t.get("x"), n as usize)
        .flat_map(|r| {
            let scale = 1.0 / (r.iter().map(|v| v * v).sum::<f64>() / n as f64 + 1e-5).sqrt();
            r.iter().zip(w).map(move |(v, w)| v * scale * w).collect::<Vec<_>>()
        })
        .collect();
    assert_close("rmsnorm", t.get("y"), &want, 1.0 / 128.0);
}

#[test]
fn cluster_row_sum_and_dsmem_exchange_match_the_reference() {
    let t = run("book/listings/cluster_row_sum.cute", "cluster_row_sum", &[], &[("M", 3)], &["x"], &["y"]);
    let want: Vec<f64> = rows(t.get("x"), 4096).map(|r| r.iter().sum()).collect();
    assert_close("cluster_row_sum", t.get("y"), &want, 1e-5);

    let (m, n) = (6, 300);
    let t = run("examples/dsmem_exchange.cute", "dsmem_exchange", &[], &[("M", m), ("N", n)], &["x"], &["y"]);
    let x = t.get("x");
    let n = n as usize;
    let want: Vec<f64> = (0..m as usize * n).map(|i| x[i] + x[((i / n) ^ 1) * n + i % n]).collect();
    assert_close("dsmem_exchange", t.get("y"), &want, 1e-6);
}

#[test]
fn tma_copy_batched_copies_every_matrix() {
    let dims = [("B", 3), ("M", 45), ("N", 200), ("BS", 45 * 200)];
    let t = run("examples/tma_copy_batched.cute", "tma_copy_batched", &[], &dims, &["x"], &["y"]);
    assert_eq!(t.get("y"), t.get("x"));
}

/// `a (M x K) * b (K x N)`.
fn matmul_nn(a: &[f64], b: &[f64], m: usize, n: usize, k: usize) -> Vec<f64> {
    let bt: Vec<f64> = (0..n * k).map(|i| b[(i % k) * n + i / k]).collect();
    matmul_nt(a, &bt, m, n, k)
}

#[test]
fn gemms_with_b_k_by_n_match_the_reference() {
    for kernel in ["gemm_kn", "gemm_sm90_kn"] {
        let (m, n, k) = (129, 264, 72);
        let t =
            run(&format!("examples/{kernel}.cute"), kernel, &[], &[("M", m), ("N", n), ("K", k)], &["a", "b"], &["c"]);
        let want = matmul_nn(t.get("a"), t.get("b"), m as usize, n as usize, k as usize);
        assert_close(kernel, t.get("c"), &want, 1.0 / 128.0);
    }
}

#[test]
fn batched_and_swapped_gemms_match_the_reference() {
    let (l, m, n, k) = (2usize, 65usize, 136usize, 40usize);
    let dims = [("L", l), ("M", m), ("N", n), ("K", k), ("SA", m * k), ("SB", n * k), ("SC", m * n)];
    let dims: Vec<(&str, i64)> = dims.iter().map(|&(d, v)| (d, v as i64)).collect();
    let t = run("examples/gemm_batched.cute", "gemm_batched", &[], &dims, &["a", "b"], &["c"]);
    let (a, b) = (t.get("a"), t.get("b"));
    let want: Vec<f64> = (0..l)
        .flat_map(|i| matmul_nt(&a[i * m * k..(i + 1) * m * k], &b[i * n * k..(i + 1) * n * k], m, n, k))
        .collect();
    assert_close("gemm_batched", t.get("c"), &want, 1.0 / 128.0);

    let (m, n, k) = (16, 200, 72);
    let t =
        run("examples/gemm_swap_ab.cute", "gemm_swap_ab", &[], &[("M", m), ("N", n), ("K", k)], &["a", "b"], &["ct"]);
    let c = matmul_nt(t.get("a"), t.get("b"), m as usize, n as usize, k as usize);
    let (m, n) = (m as usize, n as usize);
    // The file holds C^T, an (N, M) array.
    let want: Vec<f64> = (0..n * m).map(|i| c[(i % m) * n + i / m]).collect();
    assert_close("gemm_swap_ab", t.get("ct"), &want, 1.0 / 128.0);
}

fn bf16(x: f64) -> f64 {
    let bits = cutec_interp::numeric::from_f64(cutec_ir::Scalar::BF16, x);
    cutec_interp::numeric::to_f64(cutec_ir::Scalar::BF16, bits)
}

#[test]
fn fused_bias_gelu_epilogues_match_the_reference() {
    let gelu = |v: f64| 0.5 * v * (1.0 + (v * (0.7978845608 + 0.0356774081 * v * v)).tanh());
    for kernel in ["gemm_bias_gelu", "gemm_bias_gelu_manual"] {
        let file = if kernel == "gemm_bias_gelu" {
            "examples/gemm_epilogue.cute"
        } else {
            "examples/gemm_epilogue_manual.cute"
        };
        let (m, n, k) = (129, 264, 72);
        let t = run(file, kernel, &[], &[("M", m), ("N", n), ("K", k)], &["a", "b", "bias"], &["c"]);
        let acc = matmul_nt(t.get("a"), t.get("b"), m as usize, n as usize, k as usize);
        let bias = t.get("bias");
        let want: Vec<f64> = acc.iter().enumerate().map(|(i, v)| gelu(bf16(*v) + bias[i % n as usize])).collect();
        assert_close(kernel, t.get("c"), &want, 1.0 / 64.0);
    }
}

#[test]
fn scaled_fp8_gemms_match_the_reference() {
    let (m, n, k) = (129, 264, 64);
    let dims = [("M", m), ("N", n), ("K", k)];
    let (mu, nu, ku) = (m as usize, n as usize, k as usize);
    let scales = [("scale_a", "0.5"), ("scale_b", "3")];
    let t =
        run_with_scalars("examples/gemm_fp8_manual.cute", "gemm_fp8_manual", &[], &dims, &["a", "b"], &["c"], &scales);
    let want: Vec<f64> = matmul_nt(t.get("a"), t.get("b"), mu, nu, ku).iter().map(|v| 1.5 * v).collect();
    assert_close("gemm_fp8_manual", t.get("c"), &want, 1.0 / 128.0);

    let t = run(
        "examples/gemm_fp8_rowwise.cute",
        "gemm_fp8_rowwise",
        &[],
        &dims,
        &["a", "b", "scale_a", "scale_b"],
        &["c"],
    );
    let (sa, sb) = (t.get("scale_a"), t.get("scale_b"));
    let acc = matmul_nt(t.get("a"), t.get("b"), mu, nu, ku);
    let want: Vec<f64> = acc.iter().enumerate().map(|(i, v)| sa[i / nu] * sb[i % nu] * v).collect();
    assert_close("gemm_fp8_rowwise", t.get("c"), &want, 1.0 / 128.0);

    // An e4m3 C's rows are TMA-stored: N % 16 == 0.
    let (n, nu) = (272, 272);
    let dims = [("M", m), ("N", n), ("K", k)];
    let scales = [("scale_a", "0.5"), ("scale_b", "3"), ("scale_c", "0.25")];
    let t = run_with_scalars(
        "examples/gemm_fp8_e4m3_out.cute",
        "gemm_fp8_e4m3_out",
        &[],
        &dims,
        &["a", "b"],
        &["c"],
        &scales,
    );
    let fp8 = |x: f64| {
        let bits = cutec_interp::numeric::from_f64(cutec_ir::Scalar::E4M3, x);
        cutec_interp::numeric::to_f64(cutec_ir::Scalar::E4M3, bits)
    };
    let want: Vec<f64> = matmul_nt(t.get("a"), t.get("b"), mu, nu, ku).iter().map(|v| fp8(0.375 * v)).collect();
    // e4m3 output: 3 bits of mantissa, so one rounding step (2^-3 relative) between neighbours.
    assert_close("gemm_fp8_e4m3_out", t.get("c"), &want, 1.0 / 8.0);
}

#[test]
fn split_k_and_its_reduction_match_the_reference() {
    let (m, n, k, s) = (65usize, 136usize, 256usize, 3usize);
    let dims: Vec<(&str, i64)> =
        [("M", m), ("N", n), ("K", k), ("S", s), ("SW", m * n)].iter().map(|&(d, v)| (d, v as i64)).collect();
    let t = run("examples/gemm_splitk.cute", "gemm_splitk", &[], &dims, &["a", "b"], &["w"]);
    let want = matmul_nt(t.get("a"), t.get("b"), m, n, k);
    let w = t.get("w");
    let summed: Vec<f64> = (0..m * n).map(|i| (0..s).map(|j| w[j * m * n + i]).sum()).collect();
    assert_close("gemm_splitk", &summed, &want, 1e-4);

    let dims: Vec<(&str, i64)> =
        [("M", m), ("N", n), ("S", s), ("SW", m * n)].iter().map(|&(d, v)| (d, v as i64)).collect();
    let t = run("examples/gemm_splitk.cute", "splitk_reduce", &[], &dims, &["w"], &["c"]);
    let w = t.get("w");
    let want: Vec<f64> = (0..m * n).map(|i| (0..s).map(|j| w[j * m * n + i]).sum()).collect();
    assert_close("splitk_reduce", t.get("c"), &want, 1.0 / 128.0);
}

/// Builds `src` (an example with an edit) and runs it on the CPU, expecting the interpreter to stop.
fn interp_error(name: &str, src: &str, kernel: &str, dims: &[(&str, i64)]) -> cutec_interp::InterpError {
    use cutec::build::{BuildOptions, build_source};
    use cutec::run::{RunError, RunOptions, run_cpu};
    let opts = BuildOptions { kernel: Some(kernel.to_string()), ..BuildOptions::default() };
    let (_, art) = build_source(name, src, &opts).unwrap_or_else(|f| panic!("{name} builds: {:?}", f.diagnostics));
    let opts = RunOptions {
        kernel: kernel.to_string(),
        dims: dims.iter().map(|(n, v)| (n.to_string(), *v)).collect(),
        ..RunOptions::default()
    };
    match run_cpu(&opts, cutec::run::CpuOptions::default(), &art.scheduled, &art.manifest, &mut Vec::new()) {
        Err(RunError::Interp(e)) => e,
        other => panic!("{name}: expected the interpreter to stop, got {other:?}"),
    }
}

/// The source text a location covers.
fn text_at(src: &str, loc: cutec_ir::Loc) -> &str {
    src.get(loc.span.start as usize..loc.span.end as usize).unwrap_or("")
}

#[test]
fn transpose_without_its_barrier_races_at_the_store_and_the_load() {
    let src = std::fs::read_to_string(cutec_tests::repo_root().join("examples/transpose.cute")).expect("exists");
    let racy = src.replace("    sync_threads();\n", "");
    assert_ne!(racy, src, "the example has the barrier this test removes");
    match interp_error("transpose_racy.cute", &racy, "transpose", &[("M", 40), ("N", 40)]) {
        // Which comes first depends on the order threads run in: a read then another thread's write over it,
        // or a write then another thread's read.
        cutec_interp::InterpError::Race { kind, first, second, .. } => {
            use cutec_interp::RaceKind::{ReadWrite, WriteRead};
            assert!(matches!(kind, ReadWrite | WriteRead), "{kind:?}");
            let mut texts = [text_at(&racy, first), text_at(&racy, second)];
            texts.sort();
            assert_eq!(texts, ["s[r, thread_idx.x]", "s[thread_idx.x, r]"]);
        }
        other => panic!("expected a race, got {other:?}"),
    }
}

#[test]
fn transpose_reading_past_its_tile_is_out_of_bounds_at_the_load() {
    let src = std::fs::read_to_string(cutec_tests::repo_root().join("examples/transpose.cute")).expect("exists");
    let past = src.replacen("= s[thread_idx.x, r]", "= s[thread_idx.x + TILE, r]", 1);
    assert_ne!(past, src, "the example has the load this test moves");
    match interp_error("transpose_oob.cute", &past, "transpose", &[("M", 40), ("N", 40)]) {
        cutec_interp::InterpError::OutOfBounds { offset, size, loc, memory, .. } => {
            // The 32 x 32 f32 tile, read from row 32 on.
            assert_eq!(size, 4 * 32 * 32);
            assert!(offset >= 4 * 32 * 32, "{offset}");
            assert!(memory.contains("shared allocation"), "{memory}");
            assert_eq!(text_at(&past, loc), "s[thread_idx.x + TILE, r]");
        }
        other => panic!("expected an out-of-bounds access, got {other:?}"),
    }
}

#[test]
fn fp8_split_k_direct_and_swapped_gemms_match_the_reference() {
    let scales = [("scale_a", "0.5"), ("scale_b", "3")];
    let (m, n, k, s) = (65usize, 136usize, 256usize, 3usize);
    let dims: Vec<(&str, i64)> =
        [("M", m), ("N", n), ("K", k), ("S", s), ("SW", m * n)].iter().map(|&(d, v)| (d, v as i64)).collect();
    let t = run_with_scalars("examples/gemm_splitk.cute", "gemm_splitk_fp8", &[], &dims, &["a", "b"], &["w"], &scales);
    let want: Vec<f64> = matmul_nt(t.get("a"), t.get("b"), m, n, k).iter().map(|v| 1.5 * v).collect();
    let w = t.get("w");
    let summed: Vec<f64> = (0..m * n).map(|i| (0..s).map(|j| w[j * m * n + i]).sum()).collect();
    assert_close("gemm_splitk_fp8", &summed, &want, 1e-4);

    let dims = [("M", m as i64), ("N", n as i64), ("K", k as i64)];
    let t = run_with_scalars("examples/gemm_splitk.cute", "gemm_direct_fp8", &[], &dims, &["a", "b"], &["c"], &scales);
    let want: Vec<f64> = matmul_nt(t.get("a"), t.get("b"), m, n, k).iter().map(|v| 1.5 * v).collect();
    assert_close("gemm_direct_fp8", t.get("c"), &want, 1.0 / 128.0);

    let (m, n, k) = (16usize, 200usize, 64usize);
    let dims = [("M", m as i64), ("N", n as i64), ("K", k as i64)];
    let t =
        run_with_scalars("examples/gemm_swap_ab.cute", "gemm_swap_ab_fp8", &[], &dims, &["a", "b"], &["ct"], &scales);
    let c = matmul_nt(t.get("a"), t.get("b"), m, n, k);
    let want: Vec<f64> = (0..n * m).map(|i| 1.5 * c[(i % m) * n + i / m]).collect();
    assert_close("gemm_swap_ab_fp8", t.get("ct"), &want, 1.0 / 128.0);
}

/// Every kernel of `examples/` and `book/listings/` that the tests of this module run on the CPU.
const RUN_ON_THE_CPU: &[&str] = &[
    "copy",
    "grid_copy",
    "transpose",
    "row_sum",
    "tma_copy",
    "gemm_simt",
    "gemm",
    "gemm_pipelined",
    "gemm_persistent",
    "gemm_sm90_manual",
    "gemm_sm90_pingpong",
    "wgmma_rs",
    "gemm_direct",
    "gemm_splitk_cluster",
    "gemm_splitk_cluster_ws",
    "gemm_one_stage",
    "gemm_ring",
    "gemm_fp8",
    "softmax",
    "softmax_warp",
    "rmsnorm",
    "cluster_row_sum",
    "dsmem_exchange",
    "tma_copy_batched",
    "gemm_kn",
    "gemm_sm90_kn",
    "gemm_batched",
    "gemm_swap_ab",
    "gemm_bias_gelu",
    "gemm_bias_gelu_manual",
    "gemm_fp8_manual",
    "gemm_fp8_rowwise",
    "gemm_fp8_e4m3_out",
    "gemm_splitk",
    "splitk_reduce",
    "gemm_splitk_fp8",
    "gemm_direct_fp8",
    "gemm_swap_ab_fp8",
];

/// A new example or listing gets a CPU run with a reference here: this fails until it is in the list above.
#[test]
fn every_kernel_of_the_examples_and_listings_runs_on_the_cpu() {
    let mut missing = Vec::new();
    for dir in ["examples", "book/listings"] {
        for file in cutec_tests::cute_files(dir) {
            let src = std::fs::read_to_string(&file).expect("readable");
            for line in src.lines() {
                let Some(rest) = line.strip_prefix("kernel ") else { continue };
                let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                if !RUN_ON_THE_CPU.contains(&name.as_str()) {
                    missing.push(format!("{} {name}", file.display()));
                }
            }
        }
    }
    assert!(missing.is_empty(), "kernels no CPU test runs: {missing:?}");
}

//! The Hopper examples refuse the parameters they cannot run with, at compile time: a ring of one stage
//! deadlocks by design (each ring example says why in its `static_assert`).

use super::{code, cutec, stderr};

#[test]
fn the_ring_examples_refuse_a_single_stage() {
    for example in ["examples/gemm_sm90_kn.cute", "examples/gemm_sm90_manual.cute"] {
        let o = cutec(&["check", example, "-D", "STAGES=1"]);
        let err = stderr(&o);
        assert_eq!(code(&o), 1, "{example}: {err}");
        assert!(err.contains("error[E0141]: static assertion failed: the ring needs at least 2 stages"), "{err}");
        let o = cutec(&["check", example, "-D", "STAGES=2"]);
        assert_eq!(code(&o), 0, "{example}: {}", stderr(&o));
    }
}

/// The TMA-store epilogue stores BN / EPI_N pieces of 64 x EPI_N: pieces wider than the tile (zero of them, C
/// never written), that do not divide it, or narrower than a TMA box are refused; EPI_N follows BN by default.
/// EPI_N = 0 is refused too, by the division in the assertion (constant `&&` evaluates both sides).
#[test]
fn the_hand_written_gemms_refuse_epilogue_pieces_that_do_not_tile_the_row() {
    let refused = [
        (["-D", "BN=128", "-D", "EPI_N=256"], "error[E0141]: static assertion failed: the epilogue's pieces"),
        (["-D", "BN=256", "-D", "EPI_N=96"], "error[E0141]: static assertion failed: the epilogue's pieces"),
        (["-D", "BN=256", "-D", "EPI_N=32"], "error[E0141]: static assertion failed: the epilogue's pieces"),
        (["-D", "BN=256", "-D", "EPI_N=0"], "error[E0143]: integer `%` by zero"),
    ];
    for example in ["examples/gemm_sm90_manual.cute", "examples/gemm_fp8_manual.cute"] {
        for (defines, message) in &refused {
            let o = cutec(&[&["check", example][..], &defines[..]].concat());
            let err = stderr(&o);
            assert_eq!(code(&o), 1, "{example} {defines:?}: {err}");
            assert!(err.contains(message), "{example} {defines:?}: {err}");
        }
        let o = cutec(&["check", example, "-D", "BN=128", "-D", "STAGES=4"]);
        assert_eq!(code(&o), 0, "{example}: {}", stderr(&o));
    }
}

/// A role budget above its accumulator's registers (so not E0333) but below what ptxas needs: ptxas ignores the
/// `setmaxnreg` (C7507), and `cutec build --emit cubin` says so as warning E0440 at the kernel.
#[test]
fn a_register_budget_ptxas_ignores_is_a_warning_when_assembling() {
    let src = std::fs::read_to_string(super::root().join("examples/gemm_sm90_manual.cute")).expect("the example");
    assert!(src.contains("registers = 232"), "the example's consumer budget changed");
    let dir = super::temp_dir("ptxas-advisory");
    let file = dir.join("budget.cute");
    std::fs::write(&file, src.replace("registers = 232", "registers = 136")).expect("write");
    let (file, out) = (file.to_str().expect("utf-8"), dir.to_str().expect("utf-8"));
    let o = cutec(&["build", file, "--emit", "cubin", "-o", out]);
    let err = stderr(&o);
    assert_eq!(code(&o), 0, "{err}");
    assert!(err.contains("warning[E0440]: ptxas: (C7507)"), "{err}");
    assert!(err.contains("in the machine code of this kernel"), "{err}");
    // The example as written assembles without any advisory.
    let o = cutec(&["build", "examples/gemm_sm90_manual.cute", "--emit", "cubin", "-o", out]);
    assert!(!stderr(&o).contains("E0440"), "{}", stderr(&o));
}

/// The epilogue's `store` into shared memory picks `stmatrix` only where the warps are whole: under a condition
/// on loaded data (which may differ between threads) it stores element by element, rather than choosing an
/// instruction that the proof of collectives then refuses (E0312 about a `stmatrix` nobody wrote).
#[test]
fn an_epilogue_under_a_data_condition_stores_without_stmatrix() {
    let kernel = |cond: &str| {
        format!(
            "kernel k(c: Tensor<bf16, (M, N):(N, 1), gmem>, flag: Tensor<i32, (1):(1), gmem>) launch(grid = (1), \
             block = (128)) {{\n    let sa = make_tensor<bf16, smem>(tile_to_shape(SW128_K<bf16>, (64, 64)));\n    \
             let sb = make_tensor<bf16, smem>(tile_to_shape(SW128_K<bf16>, (128, 64)));\n    \
             let sc = make_tensor<bf16, smem>(tile_to_shape(SW128_K<bf16>, (64, 128)));\n    \
             let mma = tiled_mma(wgmma<64, 128, 16, bf16, bf16, f32>, (1, 1, 1));\n    \
             let acc = mma.fragment_c((64, 128));\n    fill(acc, 0.0);\n    gemm(mma, sa, sb, acc);\n    \
             wgmma_wait<0>();\n    if {cond} {{\n        store(acc, mma.partition_c(sc));\n    }}\n}}\n"
        )
    };
    let dir = super::temp_dir("epilogue-condition");
    for (cond, stmatrix) in [("flag[0] == 1", false), ("block_idx.x == 0", true)] {
        let file = dir.join("k.cute");
        std::fs::write(&file, kernel(cond)).expect("write");
        let ptx_file = dir.join("k.ptx");
        let o =
            cutec(&["build", file.to_str().expect("utf-8"), "--emit", "ptx", "-o", ptx_file.to_str().expect("utf-8")]);
        assert_eq!(code(&o), 0, "{cond}: {}", stderr(&o));
        let ptx = std::fs::read_to_string(&ptx_file).expect("the PTX");
        assert_eq!(ptx.contains("stmatrix"), stmatrix, "{cond}");
    }
}

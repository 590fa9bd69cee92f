//! `cutec run --cpu` on the examples and book listings: each kernel compiled, run by the interpreter at small,
//! ragged shapes on seeded random inputs, and its outputs compared with a reference computed here in `f64`.

use cutec::build::{BuildOptions, build_source};
use cutec::run::{CpuOptions, RunOptions, run_cpu};
use cutec_tests::repo_root;
use std::collections::HashMap;
use std::path::PathBuf;

mod more;
mod placement;

/// A run's tensors (inputs as the kernel received them, outputs as it wrote them), as `f64`, row-major.
pub(crate) struct Tensors(HashMap<String, (Vec<usize>, Vec<f64>)>);

impl Tensors {
    pub(crate) fn get(&self, name: &str) -> &[f64] {
        &self.0[name].1
    }
}

fn read_f64(path: &PathBuf) -> (Vec<usize>, Vec<f64>) {
    let file = std::fs::File::open(path).expect("the run wrote the file");
    let array = cutec_runtime::npy::read_npy(file, &mut |_| {}).expect("a valid .npy file");
    let shape = array.shape.clone();
    // The run writes f32 for every float format numpy lacks (bf16, fp8), and f32 and f64 as they are.
    let values = match array.descr().as_str() {
        "<f4" => array.bytes.chunks_exact(4).map(|c| f64::from(f32::from_le_bytes([c[0], c[1], c[2], c[3]]))).collect(),
        "<f8" => array.bytes.chunks_exact(8).map(|c| f64::from_le_bytes(c.try_into().unwrap_or([0; 8]))).collect(),
        other => panic!("{}: elements of type {other}", path.display()),
    };
    (shape, values)
}

/// Runs `kernel` of `file` (relative to the repository root) on the CPU with `dims`, seeded random `inputs`,
/// and returns the inputs and `outputs`.
pub(super) fn run(
    file: &str,
    kernel: &str,
    defines: &[(&str, i64)],
    dims: &[(&str, i64)],
    inputs: &[&str],
    outputs: &[&str],
) -> Tensors {
    run_with_scalars(file, kernel, defines, dims, inputs, outputs, &[])
}

/// [`run`] with scalar arguments.
pub(super) fn run_with_scalars(
    file: &str,
    kernel: &str,
    defines: &[(&str, i64)],
    dims: &[(&str, i64)],
    inputs: &[&str],
    outputs: &[&str],
    scalars: &[(&str, &str)],
) -> Tensors {
    run_scheduled(file, kernel, defines, dims, inputs, outputs, scalars, CpuOptions::default())
}

/// [`run_with_scalars`] with TMA loads landing as `cpu` says, on its number of SMs.
#[allow(clippy::too_many_arguments)]
pub(super) fn run_scheduled(
    file: &str,
    kernel: &str,
    defines: &[(&str, i64)],
    dims: &[(&str, i64)],
    inputs: &[&str],
    outputs: &[&str],
    scalars: &[(&str, &str)],
    cpu: CpuOptions,
) -> Tensors {
    let path = repo_root().join(file);
    let src = std::fs::read_to_string(&path).expect("the example exists");
    let opts = BuildOptions {
        kernel: Some(kernel.to_string()),
        defines: defines.iter().map(|(n, v)| (n.to_string(), cutec_sema::DefineValue::Int(*v))).collect(),
        ..BuildOptions::default()
    };
    let (_, art) = build_source(file, &src, &opts).unwrap_or_else(|f| panic!("{file} builds: {:?}", f.diagnostics));
    run_built(&art, kernel, dims, inputs, outputs, scalars, cpu).unwrap_or_else(|e| panic!("{file} {e}"))
}

/// Runs `kernel` of a build on the CPU with `dims`, `scalars` and seeded random `inputs`, and returns the
/// inputs and `outputs`; or why it could not (the interpreter's error and the run's report).
#[allow(clippy::too_many_arguments)]
pub(crate) fn run_built(
    art: &cutec::build::Artifacts,
    kernel: &str,
    dims: &[(&str, i64)],
    inputs: &[&str],
    outputs: &[&str],
    scalars: &[(&str, &str)],
    cpu: CpuOptions,
) -> Result<Tensors, String> {
    let dir = tempfile_dir(kernel);
    let npy = |name: &str| dir.join(format!("{name}.npy"));
    let opts = RunOptions {
        kernel: kernel.to_string(),
        dims: dims.iter().map(|(n, v)| (n.to_string(), *v)).collect(),
        save_inputs: inputs.iter().map(|n| (n.to_string(), npy(n))).collect(),
        outputs: outputs.iter().map(|n| (n.to_string(), npy(n))).collect(),
        scalars: scalars.iter().map(|(n, v)| (n.to_string(), v.to_string())).collect(),
        seed: 7,
        ..RunOptions::default()
    };
    let mut report = Vec::new();
    if let Err(e) = run_cpu(&opts, cpu, &art.scheduled, &art.manifest, &mut report) {
        return Err(format!("{kernel} {dims:?}: {e}\n{}", String::from_utf8_lossy(&report)));
    }
    let tensors = Tensors(inputs.iter().chain(outputs).map(|n| (n.to_string(), read_f64(&npy(n)))).collect());
    let _ = std::fs::remove_dir_all(&dir);
    Ok(tensors)
}

/// A fresh directory for one run (runs of the same kernel may be concurrent).
fn tempfile_dir(kernel: &str) -> PathBuf {
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let run = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("cutec-interp-test-{}-{kernel}-{run}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    dir
}

/// Every element of `got` within `tol * (1 + |want|)` of `want`.
pub(crate) fn assert_close(what: &str, got: &[f64], want: &[f64], tol: f64) {
    assert_eq!(got.len(), want.len(), "{what}: element count");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!((g - w).abs() <= tol * (1.0 + w.abs()), "{what}: element {i} is {g}, the reference {w}");
    }
}

/// `a (M x K) * b^T (b is N x K)`, row-major `M x N`.
pub(crate) fn matmul_nt(a: &[f64], b: &[f64], m: usize, n: usize, k: usize) -> Vec<f64> {
    let mut c = vec![0.0; m * n];
    for i in 0..m {
        for j in 0..n {
            c[i * n + j] = (0..k).map(|l| a[i * k + l] * b[j * k + l]).sum();
        }
    }
    c
}

#[test]
fn copy_and_grid_copy_copy() {
    for (file, kernel) in [("examples/copy.cute", "copy"), ("examples/grid_copy.cute", "grid_copy")] {
        let t = run(file, kernel, &[], &[("N", 1003)], &["x"], &["y"]);
        assert_eq!(t.get("y"), t.get("x"), "{kernel}");
    }
}

#[test]
fn transpose_transposes_a_ragged_matrix() {
    let (m, n) = (37, 70);
    let t = run("examples/transpose.cute", "transpose", &[], &[("M", m), ("N", n)], &["x"], &["y"]);
    let (m, n) = (m as usize, n as usize);
    let want: Vec<f64> = (0..n * m).map(|i| t.get("x")[(i % m) * n + i / m]).collect();
    assert_eq!(t.get("y"), want);
}

#[test]
fn row_sum_sums_rows() {
    let (m, n) = (45, 300);
    let t = run("examples/row_sum.cute", "row_sum", &[], &[("M", m), ("N", n)], &["x"], &["y"]);
    let x = t.get("x");
    let n = n as usize;
    let want: Vec<f64> = (0..m as usize).map(|i| x[i * n..(i + 1) * n].iter().sum()).collect();
    assert_close("row_sum", t.get("y"), &want, 1e-5);
}

#[test]
fn tma_copy_copies_through_tensor_maps() {
    let t = run("examples/tma_copy.cute", "tma_copy", &[], &[("M", 45), ("N", 300)], &["x"], &["y"]);
    assert_eq!(t.get("y"), t.get("x"));
}

#[test]
fn gemm_simt_matches_the_reference() {
    let (m, n, k) = (33, 20, 24);
    let t = run(
        "examples/gemm_simt.cute",
        "gemm_simt",
        &[("BM", 32), ("BN", 32)],
        &[("M", m), ("N", n), ("K", k)],
        &["a", "b"],
        &["c"],
    );
    let want = matmul_nt(t.get("a"), t.get("b"), m as usize, n as usize, k as usize);
    assert_close("gemm_simt", t.get("c"), &want, 1e-5);
}

/// The wgmma GEMMs (bf16 in, f32 accumulation, bf16 out): TMA rings, mbarriers, warpgroup roles, clusters.
#[test]
fn hopper_gemms_match_the_reference() {
    let cases: &[(&str, &str)] = &[
        ("examples/gemm_sm90.cute", "gemm"),
        ("examples/gemm_pipelined.cute", "gemm_pipelined"),
        ("examples/gemm_sm90_persistent.cute", "gemm_persistent"),
        ("examples/gemm_sm90_manual.cute", "gemm_sm90_manual"),
        ("examples/gemm_sm90_pingpong.cute", "gemm_sm90_pingpong"),
        ("examples/wgmma_rs.cute", "wgmma_rs"),
        ("examples/gemm_splitk.cute", "gemm_direct"),
        ("examples/gemm_splitk_cluster.cute", "gemm_splitk_cluster"),
        ("examples/gemm_splitk_cluster.cute", "gemm_splitk_cluster_ws"),
        ("book/listings/hopper_1_one_wgmma.cute", "gemm_one_stage"),
        ("book/listings/hopper_2_ring.cute", "gemm_ring"),
    ];
    for &(file, kernel) in cases {
        for (m, n, k) in [(1, 8, 8), (129, 264, 72), (200, 136, 192)] {
            let t = run(file, kernel, &[], &[("M", m), ("N", n), ("K", k)], &["a", "b"], &["c"]);
            let want = matmul_nt(t.get("a"), t.get("b"), m as usize, n as usize, k as usize);
            // bf16 output: a relative rounding of 2^-8, plus the accumulation's order.
            assert_close(&format!("{kernel} {m}x{n}x{k}"), t.get("c"), &want, 1.0 / 128.0);
        }
        // A race-free kernel computes the same bits whenever its TMA loads land.
        let dims = [("M", 129), ("N", 264), ("K", 72)];
        let earliest = run(file, kernel, &[], &dims, &["a", "b"], &["c"]);
        for schedule in [cutec_interp::Schedule::Latest, cutec_interp::Schedule::Seeded(3)] {
            let cpu = CpuOptions { schedule, ..CpuOptions::default() };
            let t = run_scheduled(file, kernel, &[], &dims, &["a", "b"], &["c"], &[], cpu);
            assert_eq!(t.get("c"), earliest.get("c"), "{kernel} under {schedule:?}");
        }
    }
}

/// fp8 (e4m3) operands, f32 accumulation, bf16 out; K a multiple of 16 bytes for the tensor maps.
#[test]
fn fp8_gemm_matches_the_reference() {
    for (m, n, k) in [(1, 8, 32), (129, 264, 64)] {
        let dims = [("M", m), ("N", n), ("K", k)];
        let scalars = [("scale_a", "0.5"), ("scale_b", "3")];
        let t = run_with_scalars("examples/gemm_fp8.cute", "gemm_fp8", &[], &dims, &["a", "b"], &["c"], &scalars);
        let mut want = matmul_nt(t.get("a"), t.get("b"), m as usize, n as usize, k as usize);
        want.iter_mut().for_each(|w| *w *= 1.5);
        assert_close(&format!("gemm_fp8 {m}x{n}x{k}"), t.get("c"), &want, 1.0 / 128.0);
    }
}

/// Persistent GEMMs on a GPU of two SMs: each CTA loops over several output tiles, and the TMA ring wraps across
/// them (its stages and phases carried from one tile to the next), under each schedule.
#[test]
fn persistent_gemms_with_several_tiles_per_cta_match_the_reference() {
    let (m, n, k) = (520usize, 600usize, 200usize);
    let dims = [("M", m as i64), ("N", n as i64), ("K", k as i64)];
    for (file, kernel) in [("examples/gemm_sm90.cute", "gemm"), ("examples/gemm_pipelined.cute", "gemm_pipelined")] {
        for schedule in [cutec_interp::Schedule::Earliest, cutec_interp::Schedule::Seeded(11)] {
            let cpu = CpuOptions { schedule, sms: 2 };
            let t = run_scheduled(file, kernel, &[], &dims, &["a", "b"], &["c"], &[], cpu);
            let want = matmul_nt(t.get("a"), t.get("b"), m, n, k);
            assert_close(&format!("{kernel} on 2 SMs under {schedule:?}"), t.get("c"), &want, 1.0 / 128.0);
        }
    }
}

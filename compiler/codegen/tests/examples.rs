//! The examples, end to end: `.cute` → checker → IR → passes → LLVM → PTX → ptxas.

use crate::common::{assemble, assert_no_spills, compile_ok};
use cutec_diagnostics::SourceMap;
use cutec_ir::{PipelineOptions, run_pipeline};

/// Compiles kernel `kernel` of `examples/<file>` with `defines`.
fn compile_example(file: &str, kernel: &str, defines: &[(&str, i64)]) -> cutec_codegen::Output {
    let path = format!("{}/../../examples/{file}", env!("CARGO_MANIFEST_DIR"));
    let source = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut map = SourceMap::new();
    let root = map.add(file, source);
    let defines: Vec<(String, cutec_sema::DefineValue)> =
        defines.iter().map(|(n, v)| (n.to_string(), (*v).into())).collect();
    let checked = cutec_sema::check(&mut map, root, &defines);
    assert!(!checked.has_errors(), "{:#?}", checked.diagnostics);
    let cutec_lower::Lowered { mut module, interfaces } =
        cutec_lower::lower(&checked.program, kernel).unwrap_or_else(|d| panic!("{d:#?}"));
    run_pipeline(&mut module, PipelineOptions { verify_each: true, ..Default::default() })
        .unwrap_or_else(|e| panic!("{e}\n{}", cutec_ir::print(&module)));
    compile_ok(&module, &interfaces)
}

fn has_line(text: &str, parts: &[&str]) -> bool {
    text.lines().any(|l| parts.iter().all(|p| l.contains(p)))
}

#[test]
fn copy_example_assembles_with_16_byte_accesses() {
    let out = compile_example("copy.cute", "copy", &[]);
    assert!(has_line(&out.ptx, &["ld.global", ".v4."]), "{}", out.ptx);
    assert!(has_line(&out.ptx, &["st.global", ".v4."]), "{}", out.ptx);
    let k = &out.manifest.kernels[0];
    assert_eq!(k.name, "copy");
    out.manifest.validate().unwrap_or_else(|e| panic!("{e}\n{}", out.manifest.to_json_pretty()));
    if let Some(report) = assemble(&out.ptx) {
        assert_no_spills(&report);
    }
}

#[test]
fn softmax_example_assembles_without_spills() {
    let out = compile_example("softmax.cute", "softmax", &[("N", 4096)]);
    let ptx = &out.ptx;
    assert!(has_line(ptx, &["ld.global", ".v4."]), "{ptx}");
    assert!(has_line(ptx, &["st.global", ".v4."]), "{ptx}");
    for needle in ["shfl.sync.bfly.b32", "bar.sync", "ex2.approx"] {
        assert!(ptx.contains(needle), "no {needle} in\n{ptx}");
    }
    assert!(!ptx.contains("ld.local") && !ptx.contains("st.local"), "{ptx}");
    let k = &out.manifest.kernels[0];
    assert_eq!(k.launch.static_smem_bytes, 256);
    out.manifest.validate().unwrap_or_else(|e| panic!("{e}\n{}", out.manifest.to_json_pretty()));
    if let Some(report) = assemble(ptx) {
        assert_no_spills(&report);
    }
}

#[test]
fn rmsnorm_and_simt_gemm_examples_assemble_without_spills() {
    for (file, kernel, defines) in
        [("rmsnorm.cute", "rmsnorm", &[("N", 4096)][..]), ("gemm_simt.cute", "gemm_simt", &[][..])]
    {
        let out = compile_example(file, kernel, defines);
        out.manifest.validate().unwrap_or_else(|e| panic!("{e}\n{}", out.manifest.to_json_pretty()));
        if let Some(report) = assemble(&out.ptx) {
            assert_no_spills(&report);
        }
    }
}

/// wgmma with A in registers: each `wgmma.mma_async` takes A as four 32-bit registers and ends with the RS form's
/// three immediates (scale-a, scale-b, transpose-b: A in registers has no transpose), B as a descriptor; the
/// prefetch of B's tensor map is `prefetch.tensormap`.
#[test]
fn wgmma_rs_example_passes_a_as_four_registers() {
    let out = compile_example("wgmma_rs.cute", "wgmma_rs", &[]);
    let ptx = &out.ptx;
    let wgmmas: Vec<&str> = ptx.lines().filter(|l| l.contains("wgmma.mma_async")).collect();
    assert_eq!(wgmmas.len(), 4, "{ptx}");
    for line in wgmmas {
        assert!(line.contains("wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {"), "{line}");
        // After the accumulator's braces: `{%r1, %r2, %r3, %r4}, %rdN, p, 1, 1, 0;`.
        let (_, rest) = line.split_once("}, ").unwrap_or_else(|| panic!("no accumulator list: {line}"));
        let (a, tail) = rest.split_once("}, ").unwrap_or_else(|| panic!("no A register list: {line}"));
        let regs: Vec<&str> = a.trim_start_matches('{').split(", ").collect();
        assert!(regs.len() == 4 && regs.iter().all(|r| r.starts_with("%r") && !r.starts_with("%rd")), "{line}");
        let operands: Vec<&str> = tail.trim_end_matches(';').split(", ").collect();
        assert!(operands.len() == 5 && operands[0].starts_with("%rd"), "{line}");
        assert_eq!(operands[1..], ["p", "1", "1", "0"], "{line}");
    }
    assert!(ptx.contains("prefetch.tensormap"), "{ptx}");
    if let Some(report) = assemble(ptx) {
        assert_no_spills(&report);
    }
}

#[test]
fn a_cluster_of_one_cta_is_not_declared() {
    // Clusters of two CTAs sharing B: the kernel requires them.
    let two = compile_example("gemm_sm90_manual.cute", "gemm_sm90_manual", &[]);
    assert!(has_line(&two.ptx, &[".reqnctapercluster 2, 1, 1"]), "{}", two.ptx);
    assert!(two.manifest.kernels[0].launch.cluster.is_some());
    // CLUSTER_M = 1: the cluster operations stay (every launch has an implicit cluster of one CTA), the directive
    // goes; the manifest keeps the launch clause's cluster, which the runtime launches plainly when it is one CTA.
    let one = compile_example("gemm_sm90_manual.cute", "gemm_sm90_manual", &[("CLUSTER_M", 1)]);
    assert!(!one.ptx.contains("reqnctapercluster") && !one.ptx.contains("explicitcluster"), "{}", one.ptx);
    assert!(one.ptx.contains("barrier.cluster.arrive"), "{}", one.ptx);
    // The rank of a CTA alone in its cluster is 0, which LLVM no longer learns from the directive.
    assert!(!one.ptx.contains("%cluster_ctarank") && two.ptx.contains("%cluster_ctarank"), "{}", one.ptx);
}

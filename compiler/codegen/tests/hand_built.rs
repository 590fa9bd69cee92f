//! IR built by hand → LLVM → PTX → ptxas, before the lowering exists.

use crate::common::{assemble, assert_no_spills, compile_ok};
use cutec_ir::{PipelineOptions, fixtures, run_pipeline};

/// The pipeline, then code generation.
fn pipeline_then_compile(mut module: cutec_ir::Module) -> cutec_codegen::Output {
    if let Err(e) = run_pipeline(&mut module, PipelineOptions { verify_each: true, ..Default::default() }) {
        panic!("{e}\n{}", cutec_ir::print(&module));
    }
    compile_ok(&module)
}

/// Whether some line of `text` contains every one of `parts` (`ld.global.nc.v4.b32` and `ld.global.v4.f32`
/// both have `ld.global` and `.v4.`).
fn has_line(text: &str, parts: &[&str]) -> bool {
    text.lines().any(|l| parts.iter().all(|p| l.contains(p)))
}

#[test]
fn copy_uses_16_byte_vector_accesses() {
    let out = pipeline_then_compile(fixtures::copy());
    let ir = out.llvm_ir.as_deref().unwrap_or_default();
    assert!(ir.contains("ptx_kernel void @copy"), "{ir}");
    assert!(out.ptx.contains(".entry copy"), "{}", out.ptx);
    assert!(out.ptx.contains(".reqntid 256, 1, 1"), "{}", out.ptx);
    assert!(has_line(&out.ptx, &["ld.global", ".v4."]), "{}", out.ptx);
    assert!(has_line(&out.ptx, &["st.global", ".v4."]), "{}", out.ptx);
    if let Some(report) = assemble(&out.ptx) {
        assert_no_spills(&report);
        assert!(report.kernel("copy").is_some());
    }
}

#[test]
fn softmax_keeps_its_row_in_registers() {
    let out = pipeline_then_compile(fixtures::softmax());
    let ptx = &out.ptx;
    assert!(has_line(ptx, &["ld.global", ".v4."]), "{ptx}");
    assert!(has_line(ptx, &["st.global", ".v4."]), "{ptx}");
    for needle in ["shfl.sync.bfly.b32", "bar.sync", "ex2.approx", "st.shared", "ld.shared"] {
        assert!(ptx.contains(needle), "no {needle} in\n{ptx}");
    }
    // The register array was promoted: no local memory.
    assert!(!ptx.contains(".local"), "{ptx}");
    assert!(!ptx.contains("ld.local") && !ptx.contains("st.local"), "{ptx}");
    if let Some(report) = assemble(ptx) {
        assert_no_spills(&report);
        let k = report.kernel("softmax").expect("softmax in the report");
        assert!(k.shared_bytes >= 256, "two 32-float partial buffers: {k:?}");
        assert!(k.barriers >= 1);
    }
}

#[test]
fn every_expression_kind_assembles() {
    let out = pipeline_then_compile(fixtures::kitchen_sink());
    let ptx = &out.ptx;
    for needle in [
        "cvt.rn.bf16.f32",
        "tanh.approx.f32",
        "rsqrt.approx",
        "sqrt.rn.f32",
        "ex2.approx",
        "shfl.sync.down",
        "shfl.sync.up",
        "shfl.sync.idx",
        "%laneid",
    ] {
        assert!(ptx.contains(needle), "no {needle} in\n{ptx}");
    }
    // The loop marked unroll(disable) stays a loop.
    let ir = out.llvm_ir.as_deref().unwrap_or_default();
    assert!(ir.contains("llvm.loop.unroll.disable"), "{ir}");
    if let Some(report) = assemble(ptx) {
        assert_no_spills(&report);
    }
}

#[test]
fn codegen_rejects_invalid_ir_without_panicking() {
    let mut module = fixtures::copy();
    // Emit the same expression twice: the validator's error comes back as an error, not a panic.
    let kernel = &mut module.kernels[0];
    let first = kernel.body.stmts()[0].clone();
    kernel.body.push(first, cutec_ir::Loc::NONE);
    let err = cutec_codegen::compile(&module, &cutec_codegen::Options::default()).unwrap_err();
    assert!(matches!(err, cutec_codegen::CodegenError::Invalid(_)), "{err}");
}

/// The Hopper operations compile to their PTX instructions; warpgroup regions (which no pass makes yet) are a
/// coded "not supported yet" error, never a panic.
#[test]
fn hopper_operations_compile_and_warpgroup_regions_are_not_supported_yet() {
    let options = cutec_codegen::Options::default();
    let cases: [(&str, &[&str]); 2] = [
        (
            include_str!("../../ir/tests/ir/tma_ring.ir"),
            &[
                "mbarrier.init.shared.b64",
                "mbarrier.arrive.expect_tx.shared.b64",
                "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes",
                "mbarrier.try_wait.parity.shared.b64",
                ".param .align 64 .b8",
            ],
        ),
        (
            include_str!("../../ir/tests/ir/wgmma_group.ir"),
            &[
                "wgmma.fence.sync.aligned",
                "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16",
                "wgmma.commit_group.sync.aligned",
                "wgmma.wait_group.sync.aligned",
            ],
        ),
    ];
    for (text, instructions) in cases {
        let module = cutec_ir::parse(text).expect("parses");
        let out = cutec_codegen::compile(&module, &options).unwrap_or_else(|e| panic!("{e}"));
        for i in instructions {
            assert!(out.ptx.contains(i), "no `{i}` in\n{}", out.ptx);
        }
    }
    let ws = cutec_ir::parse(include_str!("../../ir/tests/ir/warp_specialized.ir")).expect("parses");
    match cutec_codegen::compile(&ws, &options) {
        Err(cutec_codegen::CodegenError::Unsupported { what }) => assert!(!what.is_empty()),
        Err(e) => panic!("expected Unsupported, got {e}"),
        Ok(_) => panic!("expected Unsupported"),
    }
    // A `while` loop compiles.
    let module = cutec_ir::parse(include_str!("../../ir/tests/ir/while_loop.ir")).expect("parses");
    let out = cutec_codegen::compile(&module, &cutec_codegen::Options::default()).expect("compiles");
    assert_eq!(out.ptx.matches("st.global.b32").count() + out.ptx.matches("st.global.f32").count(), 1, "{}", out.ptx);
}

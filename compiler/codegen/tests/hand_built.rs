//! IR built by hand → LLVM → PTX → ptxas, before the lowering exists.

use crate::common::{assemble, assert_no_spills, compile_ok};
use cutec_ir::{PipelineOptions, fixtures, run_pipeline};

/// The pipeline, then code generation.
fn pipeline_then_compile(mut module: cutec_ir::Module) -> cutec_codegen::Output {
    if let Err(e) = run_pipeline(&mut module, PipelineOptions { verify_each: true, ..Default::default() }) {
        panic!("{e}\n{}", cutec_ir::print(&module));
    }
    compile_ok(&module, &[])
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
    let err = cutec_codegen::compile(&module, &[], &cutec_codegen::Options::default()).unwrap_err();
    assert!(matches!(err, cutec_codegen::CodegenError::Invalid(_)), "{err}");
}

/// The Hopper operations compile to their PTX instructions.
#[test]
fn hopper_operations_compile() {
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
        let out = cutec_codegen::compile(&module, &[], &options).unwrap_or_else(|e| panic!("{e}"));
        for i in instructions {
            assert!(out.ptx.contains(i), "no `{i}` in\n{}", out.ptx);
        }
    }
    // Shared-memory pointers are 32 bits (`-nvptx-short-ptr`, in the module's data layout too, so that LLVM's
    // passes and its back end agree), and a TMA load's destination is the shared::cta address itself, never
    // converted through a generic address.
    let module = cutec_ir::parse(include_str!("../../ir/tests/ir/tma_ring.ir")).expect("parses");
    let out = cutec_codegen::compile(&module, &[], &options).unwrap_or_else(|e| panic!("{e}"));
    let llvm = out.llvm_ir.as_deref().expect("kept");
    assert!(llvm.contains("p3:32:32") && llvm.contains("p7:32:32"), "{llvm}");
    for converted in ["cvta.shared", "cvta.to.shared::cluster", "cvt.u32.u64"] {
        assert!(!out.ptx.contains(converted), "`{converted}` in\n{}", out.ptx);
    }
    // A `while` loop compiles.
    let module = cutec_ir::parse(include_str!("../../ir/tests/ir/while_loop.ir")).expect("parses");
    let out = cutec_codegen::compile(&module, &[], &cutec_codegen::Options::default()).expect("compiles");
    assert_eq!(out.ptx.matches("st.global.b32").count() + out.ptx.matches("st.global.f32").count(), 1, "{}", out.ptx);
}

/// The k-steps of a wgmma group after the first take their descriptors from the first's plus the distance, which
/// LLVM folds: one shift and mask per operand for the group, not per step. Each later step's descriptor is
/// the first's with 2, 4, 6 (32, 64, 96 bytes in 16-byte units) in its start address field.
#[test]
fn later_wgmma_steps_offset_the_first_steps_descriptors() {
    let module = cutec_ir::parse(include_str!("../../ir/tests/ir/wgmma_steps.ir")).expect("parses");
    let out =
        cutec_codegen::compile(&module, &[], &cutec_codegen::Options::default()).unwrap_or_else(|e| panic!("{e}"));
    let ptx = &out.ptx;
    assert_eq!(ptx.matches("wgmma.mma_async").count(), 4, "{ptx}");
    let count = |op: &str| ptx.lines().filter(|l| l.trim_start().starts_with(op)).count();
    assert_eq!(count("shr.u32"), 2, "one shift (and mask) per operand\n{ptx}");
    // The fixed fields: 128-byte swizzle (1 << 62), SBO 1024 / 16 = 64 (<< 32), LBO 16 / 16 = 1 (<< 16).
    let fixed: u64 = (1 << 62) | (64 << 32) | (1 << 16);
    for step in 1..4u64 {
        let with = format!(", {};", fixed | (2 * step));
        assert_eq!(
            ptx.lines().filter(|l| l.trim_start().starts_with("or.b64") && l.ends_with(&with)).count(),
            2,
            "step {step}: both operands' descriptors are the first's with {} added\n{ptx}",
            2 * step
        );
    }
    if let Some(report) = assemble(ptx) {
        assert_no_spills(&report);
    }
}

/// fp8: the wgmma has both types and no transpose immediates, and conversions to and from `e4m3`/`e5m2` are the
/// packed `cvt`s, two lanes each (16 lanes: 8 of each way), with the pair's lane 1 as the upper operand; ptxas
/// assembles it without spilling.
#[test]
fn fp8_mma_and_conversions_compile_to_packed_cvt() {
    let module = cutec_ir::parse(include_str!("../../ir/tests/ir/wgmma_fp8.ir")).expect("parses");
    let out = compile_ok(&module, &[]);
    let ptx = &out.ptx;
    let wgmmas: Vec<&str> = ptx.lines().filter(|l| l.contains("wgmma.mma_async")).collect();
    assert_eq!(wgmmas.len(), 2, "{ptx}");
    for line in wgmmas {
        assert!(line.contains("wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e5m2 {"), "{line}");
        assert!(line.trim_end().ends_with("p, 1, 1;"), "no transpose immediates in fp8: {line}");
    }
    // Widening 16 e4m3: 8 packed cvt to f16x2; narrowing 16 f32 to e5m2: 8 packed cvt; one more for the scalar.
    assert_eq!(ptx.matches("cvt.rn.f16x2.e4m3x2").count(), 8, "{ptx}");
    assert_eq!(ptx.matches("cvt.rn.satfinite.e5m2x2.f32").count(), 8, "{ptx}");
    assert_eq!(ptx.matches("cvt.rn.satfinite.e4m3x2.f32").count(), 1, "{ptx}");
    assert!(has_line(ptx, &["st.global", ".v4.b32"]), "16 e5m2 stored as one 16-byte vector\n{ptx}");
    if let Some(report) = assemble(ptx) {
        assert_no_spills(&report);
    }
}

/// A warpgroup region is a test of the thread's warpgroup, then the region's `setmaxnreg` (`.dec` under the
/// registers at entry, `.inc` over them), then its body; the kernel then says how many threads it has at most
/// and that it wants one CTA per SM, without which ptxas ignores `setmaxnreg`.
#[test]
fn warpgroup_regions_test_the_warpgroup_and_set_their_registers() {
    let options = cutec_codegen::Options::default();
    let o0 =
        cutec_codegen::Options { opt_level: cutec_codegen::OptLevel::from_level(0).expect("-O0"), ..options.clone() };
    let text = include_str!("../../ir/tests/ir/warp_specialized.ir");
    // 256 threads: 248 registers each at entry, so 40 and 232 are both decreases; 384 threads: 168, so 232 is an
    // increase.
    let cases = [
        ("block(256, 1, 1)", "consumer 1..2", "setmaxnreg.dec.sync.aligned.u32 \t232;", 1),
        ("block(384, 1, 1)", "consumer 1..3", "setmaxnreg.inc.sync.aligned.u32 \t232;", 2),
    ];
    for (block, consumers, consumer, count) in cases {
        let text = text.replace("block(256, 1, 1)", block).replace("consumer 1..2", consumers);
        let module = cutec_ir::parse(&text).expect("parses");
        cutec_ir::validate(&module).unwrap_or_else(|e| panic!("{e}"));
        let ptx = cutec_codegen::compile(&module, &[], &options).unwrap_or_else(|e| panic!("{e}")).ptx;
        assert!(ptx.contains("setmaxnreg.dec.sync.aligned.u32 \t40;"), "{ptx}");
        assert!(ptx.contains(consumer), "{ptx}");
        assert!(ptx.contains(".maxntid") && ptx.contains(".minnctapersm 1") && !ptx.contains(".reqntid"), "{ptx}");
        // Each region tests `thread_idx.x / 128 - first <u count`, then sets its registers (seen unoptimized:
        // LLVM merges the two tests of this kernel).
        let ir =
            cutec_codegen::compile(&module, &[], &o0).unwrap_or_else(|e| panic!("{e}")).llvm_ir.unwrap_or_default();
        for (name, first, count) in [("producer", 0, 1), ("consumer", 1, count)] {
            let test = format!("%{name} = icmp ult i32 %");
            let line = ir.lines().find(|l| l.contains(&test)).unwrap_or_else(|| panic!("no `{test}` in {ir}"));
            assert!(line.ends_with(&format!(", {count}")), "{line}");
            let rank = ir.lines().filter(|l| l.contains("= sub i32 %wg") && l.ends_with(&format!(", {first}")));
            assert_eq!(rank.count(), 1, "{ir}");
            // The region's block, `producer1:` (LLVM numbers names it has seen).
            let region = ir
                .split(&format!("\n{name}"))
                .skip(1)
                .find(|b| b.trim_start_matches(|c: char| c.is_ascii_digit()).starts_with(':'))
                .unwrap_or_else(|| panic!("no block `{name}` in {ir}"));
            let first_call = region.lines().find(|l| l.contains("call ")).unwrap_or_default();
            assert!(first_call.contains("setmaxnreg"), "{name} starts with {first_call}");
        }
    }
}

/// The regions of one role chain are one chain of tests: the consumer's test is reached only when the producer's
/// fails, never from the end of the producer's body (ptxas then treats the consumer as entered by whole warps).
/// Two chains, even of disjoint warpgroups, are separate tests, one after the other: codegen follows the IR's
/// construct and does not rediscover chains from statements that happen to be adjacent.
#[test]
fn disjoint_warpgroup_regions_are_tested_as_one_chain() {
    let o0 = cutec_codegen::Options {
        opt_level: cutec_codegen::OptLevel::from_level(0).expect("-O0"),
        ..cutec_codegen::Options::default()
    };
    let text = include_str!("../../ir/tests/ir/warp_specialized.ir");
    // The LLVM block that holds a role's test, with its `; preds = ..` comment.
    let block_of = |ir: &str, name: &str| -> String {
        let test = format!("%{name} = icmp ult");
        let at = ir.find(&test).unwrap_or_else(|| panic!("no `{test}` in {ir}"));
        let start = ir[..at].rfind("\n\n").map_or(0, |i| i + 2);
        ir[start..at].lines().next().unwrap_or_default().to_string()
    };
    let module = cutec_ir::parse(text).expect("parses");
    let ir = cutec_codegen::compile(&module, &[], &o0).expect("compiles").llvm_ir.unwrap_or_default();
    let header = block_of(&ir, "consumer");
    assert!(header.starts_with("nextrole"), "{header}");
    assert!(header.ends_with("preds = %entry"), "the producer's test alone leads there: {header}");
    // The same regions as two chains.
    let apart = text.replace("} else warpgroup consumer", "}\n  warpgroup consumer");
    assert_ne!(apart, text);
    let module = cutec_ir::parse(&apart).expect("parses");
    let ir = cutec_codegen::compile(&module, &[], &o0).expect("compiles").llvm_ir.unwrap_or_default();
    let header = block_of(&ir, "consumer");
    assert!(header.starts_with("endrole"), "{header}");
}

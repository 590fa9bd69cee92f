use cutec_codegen::{Options, Output, PtxasReport, assemble_with_ptxas, compile};

/// Compiles with default options (`-O3`, `sm_90a`), panicking with the error.
pub fn compile_ok(module: &cutec_ir::Module, interfaces: &[cutec_manifest::Kernel]) -> Output {
    match compile(module, interfaces, &Options::default()) {
        Ok(o) => o,
        Err(e) => panic!("codegen failed: {e}"),
    }
}

/// Assembles with ptxas. `None` when ptxas is not installed, unless `CUTEC_REQUIRE_PTXAS` is set (CI sets it).
pub fn assemble(ptx: &str) -> Option<PtxasReport> {
    match assemble_with_ptxas(ptx) {
        Ok(r) => Some(r),
        Err(cutec_codegen::PtxasError::NotFound) if std::env::var_os("CUTEC_REQUIRE_PTXAS").is_none() => {
            eprintln!("ptxas not found: skipping assembly");
            None
        }
        Err(e) => panic!("{e}\n--- PTX ---\n{ptx}"),
    }
}

/// Asserts that every kernel assembled without spilling or a stack frame, and prints the report.
pub fn assert_no_spills(report: &PtxasReport) {
    for k in &report.kernels {
        eprintln!(
            "{}: {} registers, {} bytes stack, {} / {} bytes spilled (stores / loads), {} bytes smem",
            k.name, k.registers, k.stack_frame_bytes, k.spill_store_bytes, k.spill_load_bytes, k.shared_bytes
        );
        assert!(!k.spills(), "{} spills:\n{}", k.name, report.log);
        assert_eq!(k.stack_frame_bytes, 0, "{} uses local memory:\n{}", k.name, report.log);
    }
}

//! The runtime's own PTX (`runtime/src/fill.ptx`, the seeded random fill) is hand-written: ptxas 13.0 must
//! assemble it for sm_90a, with one entry per element type, no spills and no stack. (Its values are checked on the
//! GPU against the host reference by `scripts/gpu/fill_check.sh`.)

use cutec_manifest::DType;
use cutec_runtime::fill::{FILL_PTX, fill_kernel_name};

#[test]
fn fill_ptx_assembles_for_sm_90a_without_spills() {
    let report = match cutec_codegen::assemble_with_ptxas(FILL_PTX) {
        Ok(r) => r,
        Err(e) => panic!("{e}"),
    };
    assert!(!report.cubin.is_empty(), "no cubin");
    assert!(report.warnings.is_empty(), "ptxas warnings: {:?}", report.warnings);
    assert_eq!(report.kernels.len(), DType::ALL.len(), "{}", report.log);
    for dtype in DType::ALL {
        let name = fill_kernel_name(dtype);
        let k = report.kernel(&name).unwrap_or_else(|| panic!("no entry {name}:\n{}", report.log));
        assert_eq!((k.spill_store_bytes, k.spill_load_bytes, k.stack_frame_bytes), (0, 0, 0), "{k:?}");
        assert!(k.registers > 0 && k.registers <= 32, "{name}: {} registers", k.registers);
    }
}

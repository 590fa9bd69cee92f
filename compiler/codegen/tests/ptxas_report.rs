//! Reading `ptxas -v`.

use cutec_codegen::ptxas_parse_report as parse;

#[test]
fn reads_registers_spills_and_shared_memory() {
    let log = "ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'softmax' for 'sm_90a'
ptxas info    : Function properties for softmax
    8 bytes stack frame, 4 bytes spill stores, 12 bytes spill loads
ptxas info    : Used 40 registers, used 1 barriers, 256 bytes smem, 400 bytes cmem[0]
ptxas info    : Compile time = 20.403 ms
ptxas info    : Compiling entry function 'copy' for 'sm_90a'
ptxas info    : Function properties for copy
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 13 registers, 368 bytes cmem[0]
";
    let r = parse(log);
    assert_eq!(r.kernels.len(), 2);
    let s = r.kernel("softmax").unwrap();
    assert_eq!((s.registers, s.barriers, s.shared_bytes), (40, 1, 256));
    assert_eq!((s.stack_frame_bytes, s.spill_store_bytes, s.spill_load_bytes), (8, 4, 12));
    assert!(s.spills());
    let c = r.kernel("copy").unwrap();
    assert_eq!(c.registers, 13);
    assert!(!c.spills());
}

//! Options: optimization levels and PTX versions.

use cutec_codegen::{OptLevel, Options, compile};
use cutec_ir::fixtures;

#[test]
fn every_opt_level_produces_ptx_for_sm_90a() {
    for level in 0..=3 {
        let options = Options { opt_level: OptLevel::from_level(level).unwrap(), ..Options::default() };
        let out = compile(&fixtures::softmax(), &[], &options).unwrap_or_else(|e| panic!("-O{level}: {e}"));
        assert!(out.ptx.contains(".target sm_90a"), "{}", out.ptx);
        assert!(out.ptx.contains(".version 8.8"), "{}", out.ptx);
    }
}

#[test]
fn ptx_version_follows_the_option() {
    let options = Options { ptx_version: 80, ..Options::default() };
    let out = compile(&fixtures::copy(), &[], &options).unwrap();
    assert!(out.ptx.contains(".version 8.0"), "{}", out.ptx);
}

#[test]
fn hand_built_kernels_have_no_manifest_entry() {
    let out = compile(&fixtures::copy(), &[], &Options::default()).unwrap();
    assert_eq!(out.manifest.target, "sm_90a");
    assert!(out.manifest.kernels.is_empty());
}

#[test]
fn inline_ptx_helper_builds_a_fence() {
    let context = inkwell::context::Context::create();
    let (ty, asm) = cutec_codegen::inline_ptx::wgmma_fence(&context);
    assert_eq!(ty.count_param_types(), 0);
    assert!(asm.is_const() || !asm.is_null());
}

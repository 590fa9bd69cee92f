//! The first-light kernels through every later stage: IR, scheduled IR, LLVM IR, PTX and the manifest are
//! snapshotted, and ptxas 13.0 must assemble the PTX for sm_90a without spilling.

use cutec::build::{BuildOptions, build_source};

/// (example, const overrides) of the kernels the compiler generates code for today.
const KERNELS: &[(&str, &[(&str, i64)])] = &[
    ("copy", &[]),
    ("grid_copy", &[]),
    ("softmax", &[("N", 4096)]),
    ("softmax_warp", &[("N", 1024)]),
    ("rmsnorm", &[("N", 4096)]),
];

fn build(example: &str, defines: &[(&str, i64)]) -> cutec::build::Artifacts {
    let path = cutec_tests::repo_root().join(format!("examples/{example}.cute"));
    let src = std::fs::read_to_string(&path).expect("example is readable");
    let opts = BuildOptions {
        defines: defines.iter().map(|(n, v)| (n.to_string(), (*v).into())).collect(),
        assemble: true,
        module_file: format!("{example}.ptx"),
        llvm_ir: true,
        ..BuildOptions::default()
    };
    match build_source(&format!("examples/{example}.cute"), &src, &opts) {
        Ok((_, art)) => art,
        Err(f) => panic!("{example} does not build:\n{}", cutec_diagnostics::render_plain(&f.map, &f.diagnostics)),
    }
}

/// LLVM's module header names the module and the host; the data layout string is LLVM's, not ours.
fn scrub_llvm(text: &str) -> String {
    text.lines()
        .filter(|l| {
            !l.starts_with("; ModuleID") && !l.starts_with("source_filename") && !l.starts_with("target datalayout")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn stages_are_pinned() {
    for (example, defines) in KERNELS {
        let art = build(example, defines);
        assert!(art.warnings.is_empty(), "{example}: unexpected warnings {:?}", art.warnings);
        // The text form reads back: parse(print(m)) prints the same, before and after the passes.
        let (ir, ir_scheduled) = (art.ir(), art.ir_scheduled());
        for text in [&ir, &ir_scheduled] {
            let again = cutec_ir::parse(text).unwrap_or_else(|e| panic!("{example}: {e}\n{text}"));
            assert_eq!(&cutec_ir::print(&again), text, "{example}: the IR text does not round-trip");
        }
        insta::assert_snapshot!(format!("{example}.ir"), ir);
        insta::assert_snapshot!(format!("{example}.sched.ir"), ir_scheduled);
        insta::assert_snapshot!(format!("{example}.ll"), scrub_llvm(art.llvm.as_deref().unwrap_or_default()));
        insta::assert_snapshot!(format!("{example}.ptx"), art.ptx);
        insta::assert_snapshot!(format!("{example}.json"), art.manifest.to_json_pretty());
    }
}

#[test]
fn ptxas_assembles_without_spills() {
    for (example, defines) in KERNELS {
        let art = build(example, defines);
        let report = art.ptxas.expect("assembled");
        assert!(!report.cubin.is_empty(), "{example}: no cubin");
        for k in &report.kernels {
            assert_eq!((k.spill_store_bytes, k.spill_load_bytes, k.stack_frame_bytes), (0, 0, 0), "{example}: {k:?}");
            assert!(k.registers > 0 && k.registers <= 64, "{example}: {} registers", k.registers);
        }
        assert_eq!(report.kernels.len(), 1, "{example}: {}", report.log);
    }
}

/// The kernels of `ir` (IR text) that store to global memory.
fn kernels_storing_to_global(ir: &str) -> Vec<String> {
    let module = cutec_ir::parse(ir).unwrap_or_else(|e| panic!("{e}\n{ir}"));
    let global = |k: &&cutec_ir::Kernel| cutec_ir::effects::has_store_to(k, cutec_ir::AddrSpace::Global);
    module.kernels.iter().filter(global).map(|k| k.name.clone()).collect()
}

/// The PTX of one `.entry`: from its name to the next entry.
fn entry<'a>(ptx: &'a str, name: &str) -> &'a str {
    let start = ptx.find(&format!(".entry {name}(")).unwrap_or_else(|| panic!("no entry {name} in\n{ptx}"));
    let rest = &ptx[start..];
    &rest[..rest[1..].find(".entry ").map_or(rest.len(), |e| e + 1)]
}

/// No IR the compiler produces lets LLVM fold a store away (as it would after undefined behaviour, such as a
/// division by zero it can see): every kernel whose IR stores to global memory still does in its PTX.
#[test]
fn every_global_store_reaches_the_ptx() {
    for (example, defines) in KERNELS {
        let art = build(example, defines);
        let kernels = kernels_storing_to_global(&art.ir_scheduled());
        assert!(!kernels.is_empty(), "{example}: no kernel stores to global memory");
        for k in kernels {
            assert!(entry(&art.ptx, &k).contains("st.global"), "{example}: {k} lost its stores:\n{}", art.ptx);
        }
    }
}

#[test]
fn copy_uses_16_byte_accesses() {
    let ptx = build("copy", &[]).ptx;
    assert!(ptx.contains("ld.global.v4"), "copy must load 16 bytes at a time:\n{ptx}");
    assert!(ptx.contains("st.global.v4"), "copy must store 16 bytes at a time:\n{ptx}");
    let manifest = build("copy", &[]).manifest.to_json_pretty();
    assert!(manifest.contains("\"align_bytes\": 16"), "16-byte accesses need 16-byte aligned tensors:\n{manifest}");
}

/// Stores whose value divides by zero or shifts past the width (known only after unrolling) are kept with defined
/// values: LLVM would otherwise treat them as undefined and delete them, silently.
#[test]
fn division_by_zero_and_oversized_shifts_have_defined_results() {
    let src = "kernel k(x: Tensor<int, 4:1, gmem>) launch(grid = (1), block = (1)) {
    for i in 0..2 unroll {
        x[i] = 7 / i;
        x[i + 2] = 1 << (i * 40);
    }
}";
    let opts = BuildOptions { module_file: "k.ptx".into(), ..BuildOptions::default() };
    let art = match build_source("k.cute", src, &opts) {
        Ok((_, art)) => art,
        Err(f) => panic!("{}", cutec_diagnostics::render_plain(&f.map, &f.diagnostics)),
    };
    let mut stores: Vec<&str> = art.ptx.lines().map(str::trim).filter(|l| l.starts_with("st.global")).collect();
    stores.sort();
    // x = [7 / 0, 7 / 1, 1 << 0, 1 << 40] = [-1, 7, 1, 0].
    assert_eq!(
        stores,
        [
            "st.global.b32 \t[%rd1+12], 0;",
            "st.global.b32 \t[%rd1+4], 7;",
            "st.global.b32 \t[%rd1+8], 1;",
            "st.global.b32 \t[%rd1], -1;"
        ],
        "{}",
        art.ptx
    );
}

/// No IR the compiler produces lets LLVM delete every store of a kernel: each kernel that writes a tensor has a
/// `st.global` in its PTX.
#[test]
fn every_kernel_that_writes_keeps_its_stores() {
    let mut all: Vec<(&str, &[(&str, i64)])> = KERNELS.to_vec();
    all.extend([("transpose", &[][..]), ("gemm_simt", &[][..])]);
    for (example, defines) in all {
        let art = build(example, defines);
        let writes =
            art.manifest.kernels.iter().flat_map(|k| k.tensors()).any(|t| t.access != cutec_manifest::Access::Read);
        assert!(writes, "{example} writes no tensor");
        assert!(art.ptx.contains("st.global"), "{example}: its stores were folded away:\n{}", art.ptx);
    }
}

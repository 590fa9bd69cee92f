//! Lowering the examples and the diagnostics of what v0 does not support.

use cutec_diagnostics::{Diagnostic, SourceMap};
use cutec_ir::{PipelineOptions, print, run_pipeline, validate};
use cutec_lower::{Lowered, lower};

pub(crate) fn example(name: &str) -> String {
    let path = format!("{}/../../examples/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Checks `source`, which must have no errors, and lowers `kernel`.
pub(crate) fn lower_source(
    source: &str,
    kernel: &str,
    defines: &[(&str, i64)],
) -> Result<cutec_ir::Module, Vec<Diagnostic>> {
    lower_with_interface(source, kernel, defines).map(|l| l.module)
}

/// Checks `source`, which must have no errors, and lowers `kernel` with its manifest entry.
pub(crate) fn lower_with_interface(
    source: &str,
    kernel: &str,
    defines: &[(&str, i64)],
) -> Result<Lowered, Vec<Diagnostic>> {
    let mut map = SourceMap::new();
    let root = map.add("test.cute", source);
    let defines: Vec<(String, cutec_sema::DefineValue)> =
        defines.iter().map(|(n, v)| (n.to_string(), (*v).into())).collect();
    let out = cutec_sema::check(&mut map, root, &defines);
    assert!(!out.has_errors(), "{:#?}", out.diagnostics);
    lower(&out.program, kernel)
}

pub(crate) fn lowered_and_optimized(source: &str, kernel: &str, defines: &[(&str, i64)]) -> (cutec_ir::Module, String) {
    let (module, _, text) = optimized_with_interface(source, kernel, defines);
    (module, text)
}

/// [`lowered_and_optimized`], with the kernel's manifest entry.
pub(crate) fn optimized_with_interface(
    source: &str,
    kernel: &str,
    defines: &[(&str, i64)],
) -> (cutec_ir::Module, cutec_manifest::Kernel, String) {
    let Lowered { mut module, mut interfaces } =
        lower_with_interface(source, kernel, defines).unwrap_or_else(|d| panic!("{d:#?}"));
    let before = print(&module);
    validate(&module).unwrap_or_else(|e| panic!("{e}\n{before}"));
    run_pipeline(&mut module, PipelineOptions { verify_each: true, ..Default::default() })
        .unwrap_or_else(|e| panic!("{e}\n{before}"));
    let text = print(&module);
    assert_eq!(interfaces.len(), 1, "one manifest entry for one kernel");
    (module, interfaces.remove(0), text)
}

#[test]
fn copy_uses_one_vector_per_thread_and_requires_16_byte_arguments() {
    let (module, iface, text) = optimized_with_interface(&example("copy.cute"), "copy", &[]);
    insta::assert_snapshot!(text);
    let k = &module.kernels[0];
    assert_eq!(k.block_size, Some([256, 1, 1]));
    let names: Vec<_> = k.params.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["x", "y", "N"]);
    for p in &iface.params {
        let cutec_manifest::Param::Tensor(t) = p else { panic!("{p:?}") };
        assert_eq!(t.align_bytes, 16, "{t:?}");
    }
    assert_eq!(iface.dims.len(), 1);
    assert_eq!(iface.launch.grid.len(), 1);
}

#[test]
fn softmax_unrolls_its_fragment_loops() {
    let (module, text) = lowered_and_optimized(&example("softmax.cute"), "softmax", &[("N", 4096)]);
    insta::assert_snapshot!(text);
    let k = &module.kernels[0];
    let shared: Vec<_> = k.allocs.iter().filter(|(_, a)| a.space == cutec_ir::AddrSpace::Shared).collect();
    assert_eq!(shared.len(), 2, "one `partial` per inlined block reduction:\n{text}");
    assert_eq!(k.shared_bytes(), 256);
}

#[test]
fn a_const_generic_without_value_is_reported_at_its_declaration() {
    let source = example("softmax.cute");
    let err = lower_source(&source, "softmax", &[]).unwrap_err();
    assert_eq!(err.len(), 1, "{err:#?}");
    let d = &err[0];
    assert_eq!((d.code, d.message.as_str()), ("E0305", "the const generic `N` has no value"));
    assert!(d.help.iter().any(|h| h.contains("-D N=")), "{d:#?}");
    let primary = d.primary().expect("a primary label");
    assert_eq!(&source[primary.span.range()], "const N: int");
    assert_eq!(primary.message, "declared here without a default");
    let used = d.labels.iter().find(|l| !l.primary).expect("a label at the use");
    assert_eq!(&source[used.span.range()], "N");
    assert!(source[..used.span.start as usize].ends_with("x: Tensor<f32, (M, "), "the first use in `x`'s type");
    assert_eq!(used.message, "needed by the layout of `x`");
    // A const generic only the launch clause needs.
    let source = "kernel k<const B: int>(x: Tensor<f32, N:1, gmem>) launch(grid = (ceil_div(N, B)), block = (128)) {\n    \
                  fill(x, 0.0);\n}\n";
    let err = lower_source(source, "k", &[]).unwrap_err();
    let d = &err[0];
    assert_eq!(&source[d.primary().expect("primary").span.range()], "const B: int");
    let used = d.labels.iter().find(|l| !l.primary).expect("a label at the use");
    assert_eq!((&source[used.span.range()], used.message.as_str()), ("B", "needed by the launch clause"));
}

#[test]
fn static_assert_emits_nothing() {
    let src = example("softmax.cute");
    let without =
        src.replace("static_assert(N % (THREADS * VEC) == 0, \"N must be a multiple of THREADS * VEC\");", "");
    assert_ne!(src, without);
    let (_, a) = lowered_and_optimized(&src, "softmax", &[("N", 4096)]);
    let (_, b) = lowered_and_optimized(&without, "softmax", &[("N", 4096)]);
    assert_eq!(a, b);
}

#[test]
fn while_loops_lower_to_a_header_and_a_body() {
    let source = "kernel k(x: Tensor<f32, N:1, gmem>) launch(grid = (1), block = (32)) {\n    let mut i = thread_idx.x;\n    while i < N {\n        if i == 77 { break; }\n        x[i] = 0.0;\n        i += 32;\n    }\n}\n";
    let (_, text) = lowered_and_optimized(source, "k", &[]);
    insta::assert_snapshot!(text);
}

#[test]
fn loop_attributes_and_the_launch_clause_reach_the_ir() {
    let source = "kernel k(x: Tensor<f32, N:1, gmem>) launch(grid = (2), block = (128)) {\n    for i in 0..8 unroll(2) {\n        x[i] = 0.0;\n    }\n    for j in 0..N pipelined(stages = 3) {\n        x[j] = 1.0;\n    }\n}\n";
    let module = lower_source(source, "k", &[]).unwrap_or_else(|d| panic!("{d:#?}"));
    insta::assert_snapshot!(print(&module));
    let mut m = module;
    let err = run_pipeline(&mut m, PipelineOptions::default()).unwrap_err();
    let d = err.to_diagnostic();
    // A pipelined loop without a `tma_load` has nothing to put in a ring: refused at the loop, never dropped.
    assert_eq!(d.code, "E0324");
    assert!(source[d.primary().unwrap().span.range()].starts_with("for j in 0..N pipelined(stages = 3)"));
}

#[test]
fn unknown_kernels_are_errors() {
    let err = lower_source(&example("copy.cute"), "nope", &[]).unwrap_err();
    assert_eq!(err[0].code, "E0300");
}

#[test]
fn the_examples_have_no_warnings_and_a_run_time_fragment_index_has_one() {
    let (module, _) = lowered_and_optimized(&example("softmax.cute"), "softmax", &[("N", 4096)]);
    assert!(cutec_ir::warnings(&module).is_empty());
    let source = "kernel k(x: Tensor<f32, N:1, gmem>) launch(grid = (1), block = (32)) {\n    \
                  let f = make_fragment_like(local_tile(x, 4, 0));\n    \
                  f[thread_idx.x % 4] = 1.0;\n    \
                  copy(f, local_tile(x, 4, block_idx.x));\n}\n";
    let (module, text) = lowered_and_optimized(source, "k", &[]);
    let w = cutec_ir::warnings(&module);
    assert_eq!(w.len(), 1, "{text}");
    assert_eq!(w[0].code, "E0301");
    let span = w[0].primary().unwrap().span;
    assert_eq!(&source[span.range()], "f[thread_idx.x % 4]");
}

#[test]
fn a_run_time_fragment_index_in_an_unrolled_loop_is_reported_once() {
    let source = "kernel k(x: Tensor<f32, N:1, gmem>) launch(grid = (1), block = (32)) {\n    \
                  let f = make_fragment_like(local_tile(x, 16, 0));\n    \
                  for i in 0..16 unroll {\n        f[(thread_idx.x + i) % 16] = 1.0;\n    }\n    \
                  copy(f, local_tile(x, 16, block_idx.x));\n}\n";
    let (module, text) = lowered_and_optimized(source, "k", &[]);
    insta::assert_snapshot!(text);
    let w = cutec_ir::warnings(&module);
    assert_eq!(w.len(), 1, "{w:#?}");
    assert_eq!(&source[w[0].primary().unwrap().span.range()], "f[(thread_idx.x + i) % 16]");
    assert!(w[0].notes.iter().any(|n| n.contains("may be placed in local memory")), "{w:#?}");
    assert!(w[0].help.iter().any(|h| h.contains("compile-time constants")), "{w:#?}");
}

#[test]
fn size_of_a_mode_is_the_size_of_that_mode() {
    // A run-time partition index keeps the checker from folding `size<0>(acc)`: lowering computes it, and must
    // take the mode, not the whole fragment (8 x 8 per thread here, so the loops run 8 times, not 64).
    let (module, text) = lowered_and_optimized(&example("gemm_simt.cute"), "gemm_simt", &[]);
    assert!(cutec_ir::warnings(&module).is_empty(), "{:?}", cutec_ir::warnings(&module));
    let source = "kernel k(x: Tensor<f32, (16, 32):(32, 1), gmem>) launch(grid = (1), block = (32)) {\n    \
                  let t = local_partition(x, (4, 8):(8, 1), thread_idx.x);\n    \
                  let f = make_fragment_like(t);\n    \
                  for i in 0..size<0>(f) {\n        \
                  for j in 0..size<1>(f) {\n            \
                  f[i, j] = 1.0;\n        \
                  }\n    \
                  }\n    \
                  copy(f, t);\n}\n";
    let module = lower_source(source, "k", &[]).unwrap_or_else(|d| panic!("{d:#?}"));
    let lowered = print(&module);
    // size<0> and size<1> of the (4, 4) fragment are 4: the loops run 4 times.
    insta::assert_snapshot!(lowered);
    assert_eq!(text.matches("for ").count(), 1, "only the k-tile loop is left after unrolling:\n{text}");
}

#[test]
fn a_required_divisor_of_a_dimension_proves_vector_alignment() {
    // Row `block_idx.x` of an (M, N) f32 tensor starts at block_idx.x * N: 16-byte aligned only when N % 4 == 0,
    // which the kernel may require (the runtime refuses a launch that breaks it). Without the requirement the
    // copy must stay scalar; with it, one 16-byte load and store per thread, and the manifest asks for 16-byte
    // aligned arguments.
    let source = |req: &str| {
        format!(
            "kernel k(x: Tensor<f32, (M, N):(N, 1), gmem>, y: Tensor<f32, (M, N):(N, 1), gmem>) \
             launch(grid = (M), block = (32)) {{\n    {req}\n    let t = (32, 4):(4, 1);\n    \
             copy(composition(x[block_idx.x, _], t)[thread_idx.x, _], composition(y[block_idx.x, _], t)[thread_idx.x, _]);\n}}\n"
        )
    };
    let (_, plain, scalar) = optimized_with_interface(&source(""), "k", &[]);
    let (_, required, vector) =
        optimized_with_interface(&source("static_assert(N % 4 == 0, \"whole vectors\");"), "k", &[]);
    let vector_loads = |text: &str| text.lines().filter(|l| l.contains("= load f32x4")).count();
    assert_eq!(vector_loads(&scalar), 0, "{scalar}");
    assert!(vector_loads(&vector) >= 1, "{vector}");
    let align = |k: &cutec_manifest::Kernel| {
        k.params
            .iter()
            .filter_map(|p| match p {
                cutec_manifest::Param::Tensor(t) => Some(t.align_bytes),
                cutec_manifest::Param::Scalar(_) => None,
            })
            .max()
    };
    assert_eq!((align(&plain), align(&required)), (Some(4), Some(16)));
}

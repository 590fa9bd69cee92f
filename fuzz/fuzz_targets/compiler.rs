//! The whole compiler short of LLVM never panics: whatever the checker accepts is lowered to IR or refused with a
//! located, coded diagnostic; the IR's text reads back to the same text; the pass pipeline (validating after every
//! pass) transforms it or refuses with a coded error that is not an internal one.
//!
//! Input: one byte choosing the `-D` values (the examples' kernels take `N`), then the `.cute` source. Codegen is
//! left out: the driver links LLVM, which this workspace does not build (see README.md).
#![no_main]

use cutec_diagnostics::SourceMap;
use libfuzzer_sys::fuzz_target;

const DEFINES: &[&[(&str, i64)]] = &[&[], &[("N", 4096)], &[("N", 1024)], &[("N", 4096), ("THREADS", 128)]];

fuzz_target!(|data: &[u8]| {
    let Some((&choice, rest)) = data.split_first() else { return };
    let Ok(source) = std::str::from_utf8(rest) else { return };
    let defines: Vec<(String, cutec_sema::DefineValue)> =
        DEFINES[usize::from(choice) % DEFINES.len()].iter().map(|&(n, v)| (n.to_string(), v.into())).collect();

    let mut map = SourceMap::new();
    let root = map.add("fuzz.cute", source);
    let output = cutec_sema::check(&mut map, root, &defines);
    if output.diagnostics.iter().any(|d| d.is_error()) {
        return; // the front end's target checks its diagnostics
    }
    let located = |d: &cutec_diagnostics::Diagnostic| {
        d.primary().is_some_and(|l| l.span.start <= l.span.end && l.span.end as usize <= map.source(l.file).len())
    };
    let mut module = match cutec_lower::lower_all(&output.program) {
        Ok(lowered) => lowered.module,
        Err(diagnostics) => {
            for d in &diagnostics {
                assert!(located(d), "lowering: {} `{}` has no primary label inside its file: {d:?}", d.code, d.message);
            }
            let _ = cutec_diagnostics::render_plain(&map, &diagnostics);
            return;
        }
    };
    let text = cutec_ir::print(&module);
    match cutec_ir::parse(&text) {
        Ok(again) => assert_eq!(cutec_ir::print(&again), text, "the lowered IR's text does not round-trip"),
        Err(e) => panic!("the lowered IR's text does not parse: {e}\n{text}"),
    }
    let options = cutec_ir::PipelineOptions { verify_each: true, ..Default::default() };
    match cutec_ir::run_pipeline(&mut module, options) {
        Ok(_) => {
            let text = cutec_ir::print(&module);
            let again = cutec_ir::parse(&text).unwrap_or_else(|e| panic!("scheduled IR does not parse: {e}\n{text}"));
            assert_eq!(cutec_ir::print(&again), text, "the scheduled IR's text does not round-trip");
            let _ = cutec_ir::warnings(&module);
        }
        Err(cutec_ir::passes::PipelineError::Pass(e)) if e.code() != cutec_ir::codes::INTERNAL => {
            let d = e.to_diagnostic();
            assert!(located(&d), "pass error {} has no primary label inside its file: {d:?}", d.code);
        }
        Err(e) => panic!("the pipeline broke a module lowering produced: {e}\n{text}"),
    }
});

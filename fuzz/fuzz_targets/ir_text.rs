//! The IR's text form is input too (`.ir` fixtures, `--dump-after` output read back): parsing any text gives a
//! module or a `ParseError`; a module that passes validation goes through the pass pipeline or is refused with an
//! error, and nothing panics.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(mut module) = cutec_ir::parse(text) else { return };
    let printed = cutec_ir::print(&module);
    if cutec_ir::validate(&module).is_err() {
        return;
    }
    let options = cutec_ir::PipelineOptions { verify_each: true, ..Default::default() };
    if cutec_ir::run_pipeline(&mut module, options).is_ok() {
        let _ = cutec_ir::print(&module);
    }
    let _ = printed;
});

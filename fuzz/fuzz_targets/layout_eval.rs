//! The layout evaluator never panics: every failure is an `EvalError` (or an `error:` line).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let _ = cutec_layout::eval(text);
    let _ = cutec_layout::eval_lines(text);
});

//! `cutec`: the command-line interface. Exit codes: 0 success, 1 the input has errors, 2 bad usage.

mod build_cmd;
mod cli;
mod layout_cmd;
mod run_cmd;
mod tune_cmd;
mod tuning;
mod usage;

use cutec_diagnostics::{ColorMode, Diagnostic, ErrorFormat, SourceMap, render_json, render_text};
use std::process::ExitCode;
use std::sync::OnceLock;

/// The `--error-format` of this run, once the command line is parsed: even a panic is reported in it.
pub(crate) static ERROR_FORMAT: OnceLock<ErrorFormat> = OnceLock::new();

/// The stack of the thread that runs the compiler. The front end, the lowering, the passes, codegen and LLVM
/// recurse over trees whose depth the parser and the lowering bound (256 levels of nesting in a file, 512 blocks
/// after inlining); at those depths a debug build needs about 6 MiB, close to the main thread's usual 8 MiB, which
/// is the user's `ulimit -s` anyway. This one is ours, with room to spare; only the pages used are committed.
const STACK_BYTES: usize = 64 << 20;

fn main() -> ExitCode {
    // An internal error is a bug in cutec, never the user's fault: say so (E0402) and where to report it, like
    // rustc, in the format of every other diagnostic.
    std::panic::set_hook(Box::new(|info| {
        // A reader that stopped reading (`cutec explain E0313 | head`): nothing is wrong, and there is nobody
        // left to tell. `print!` panics on it; Unix tools end quietly.
        if panic_message(info).is_some_and(|m| m.starts_with("failed printing to stdout") && m.contains("Broken pipe"))
        {
            std::process::exit(0);
        }
        let d = Diagnostic::unlocated(cutec::codes::INTERNAL, format!("internal compiler error: {info}"))
            .with_note("cutec should never panic; please report this with the input that caused it");
        let mut err = std::io::stderr().lock();
        let _ = match ERROR_FORMAT.get() {
            Some(ErrorFormat::Json) => render_json(&SourceMap::new(), &[d], &mut err),
            _ => render_text(&SourceMap::new(), &[d], ColorMode::Auto, &mut err),
        };
    }));
    let compiler = std::thread::Builder::new().name("cutec".into()).stack_size(STACK_BYTES);
    match compiler.spawn(|| std::panic::catch_unwind(cli::main)).map(|t| t.join()) {
        Ok(Ok(Ok(code))) => code,
        Ok(_) => ExitCode::from(101),
        Err(e) => {
            eprintln!("error: cannot start the compiler's thread: {e}");
            ExitCode::from(101)
        }
    }
}

/// The message a panic was raised with, when it is text.
fn panic_message<'a>(info: &'a std::panic::PanicHookInfo<'_>) -> Option<&'a str> {
    let payload = info.payload();
    payload.downcast_ref::<&str>().copied().or_else(|| payload.downcast_ref::<String>().map(String::as_str))
}

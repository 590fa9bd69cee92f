//! `cutec`: the command-line interface. Exit codes: 0 success, 1 the input has errors, 2 bad usage.

mod build_cmd;
mod cli;
mod layout_cmd;
mod run_cmd;
mod usage;

use cutec_diagnostics::{ColorMode, Diagnostic, ErrorFormat, SourceMap, render_json, render_text};
use std::process::ExitCode;
use std::sync::OnceLock;

/// The `--error-format` of this run, once the command line is parsed: even a panic is reported in it.
pub(crate) static ERROR_FORMAT: OnceLock<ErrorFormat> = OnceLock::new();

fn main() -> ExitCode {
    // An internal error is a bug in cutec, never the user's fault: say so (E0402) and where to report it, like
    // rustc, in the format of every other diagnostic.
    std::panic::set_hook(Box::new(|info| {
        let d = Diagnostic::unlocated(cutec::codes::INTERNAL, format!("internal compiler error: {info}"))
            .with_note("cutec should never panic; please report this with the input that caused it");
        let mut err = std::io::stderr().lock();
        let _ = match ERROR_FORMAT.get() {
            Some(ErrorFormat::Json) => render_json(&SourceMap::new(), &[d], &mut err),
            _ => render_text(&SourceMap::new(), &[d], ColorMode::Auto, &mut err),
        };
    }));
    match std::panic::catch_unwind(cli::main) {
        Ok(code) => code,
        Err(_) => ExitCode::from(101),
    }
}

//! `cutec`: the command-line interface. Exit codes: 0 success, 1 the input has errors, 2 bad usage.

mod build_cmd;
mod cli;
mod layout_cmd;
mod run_cmd;
mod usage;

use std::process::ExitCode;

fn main() -> ExitCode {
    // An internal error is a bug in cutec, never the user's fault: say so and where to report it, like rustc.
    std::panic::set_hook(Box::new(|info| {
        eprintln!("error: internal compiler error: {info}");
        eprintln!("note: cutec should never panic; please report this with the input that caused it");
    }));
    match std::panic::catch_unwind(cli::main) {
        Ok(code) => code,
        Err(_) => ExitCode::from(101),
    }
}

//! Usage errors (exit status 2) found before any work: what clap rejects, names given twice, and options that
//! contradict each other or would be ignored. No option the user wrote is dropped without a word.

use crate::build_cmd::spell_emits;
use crate::cli::{Command, Reporter};
use cutec::codes;
use cutec_diagnostics::{ColorMode, Diagnostic, ErrorFormat, SourceMap};
use std::ffi::{OsStr, OsString};
use std::path::PathBuf;
use std::process::ExitCode;

/// `--error-format` and `--color` read from raw arguments, for reporting an error clap found in them.
pub(crate) fn reporter_from_args(args: &[OsString]) -> Reporter {
    let value = |flag: &str| -> Option<String> {
        let prefix = format!("{flag}=");
        let mut found = None;
        for (i, a) in args.iter().enumerate() {
            let Some(a) = a.to_str() else { continue };
            if let Some(v) = a.strip_prefix(&prefix) {
                found = Some(v.to_owned());
            } else if a == flag {
                found = args.get(i + 1).and_then(|v| v.to_str()).map(str::to_owned);
            }
        }
        found
    };
    let format =
        if value("--error-format").as_deref() == Some("json") { ErrorFormat::Json } else { ErrorFormat::Human };
    let color = match value("--color").as_deref() {
        Some("always") => ColorMode::Always,
        Some("never") => ColorMode::Never,
        _ => ColorMode::Auto,
    };
    Reporter { format, color }
}

/// An error clap found in the arguments, as E0403: its message, the offending argument spelled out when clap
/// names it, and clap's usage line and tips as notes.
pub(crate) fn clap_error(reporter: &Reporter, e: &clap::Error) -> ExitCode {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    let context = |kind: ContextKind| match e.get(kind) {
        Some(ContextValue::String(s)) => Some(s.clone()),
        _ => None,
    };
    let mut map = SourceMap::new();
    let d = if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
        Diagnostic::unlocated(
            codes::BAD_ARGUMENT,
            "`cutec` needs a command: check, build, layout, run, tune or explain",
        )
        .with_help("`cutec --help` describes them")
    } else {
        let rendered = e.render().to_string();
        let mut lines = rendered.lines().map(str::trim).filter(|l| !l.is_empty());
        let first = lines.next().unwrap_or("invalid command line");
        let message = first.strip_prefix("error: ").unwrap_or(first).to_owned();
        // `-D <NAME=VALUE>` names the option with its placeholder: keep the option.
        let option = context(ContextKind::InvalidArg).map(|a| a.split(' ').next().unwrap_or_default().to_owned());
        let part = match (option, context(ContextKind::InvalidValue)) {
            (Some(o), Some(v)) => Some((format!("{o} {v}"), "invalid value")),
            (Some(o), None) if e.kind() == ErrorKind::UnknownArgument => Some((o, "unknown option")),
            _ => None,
        };
        let d = match part {
            Some((text, label)) => {
                cutec::command_line::command_line_error(&mut map, codes::BAD_ARGUMENT, message, &[(&text, label)])
            }
            None => Diagnostic::unlocated(codes::BAD_ARGUMENT, message),
        };
        lines.fold(d, |d, l| d.with_note(l))
    };
    reporter.fail(&map, &[d])
}

/// Checks the options of `command` against each other; `Some(exit status)` after reporting a usage error.
pub(crate) fn check_options(reporter: &Reporter, command: &Command) -> Option<ExitCode> {
    let conflict =
        |message: String, parts: &[(&str, &str)]| Some(reporter.usage(codes::CONFLICTING_OPTIONS, message, parts));
    match command {
        Command::Check { defines, .. } => given_twice(reporter, "-D", defines),
        Command::Build {
            file,
            emit,
            defines,
            opt_level,
            llvm_passes,
            kernel,
            print_passes,
            dump_after,
            timings,
            tuning,
            shape,
            ..
        } => {
            if let Some(code) = given_twice(reporter, "-D", defines) {
                return Some(code);
            }
            if tuning.is_none()
                && let Some(s) = shape
            {
                let option = format!("--shape {}", cutec::tune::space::spell_shape(s));
                return conflict(
                    format!("{option} selects an entry of --tuning, which is not given"),
                    &[(&option, "would be ignored")],
                );
            }
            if *print_passes && let Some(f) = file {
                let file = f.display().to_string();
                return conflict(
                    format!("--print-passes prints the pass pipeline and compiles nothing: `{file}` would be ignored"),
                    &[(&file, "would be ignored"), ("--print-passes", "compiles nothing")],
                );
            }
            if let Some(passes) = llvm_passes
                && let Err(e) = cutec_codegen::check_llvm_passes(passes)
            {
                let option = format!("--llvm-passes {passes}");
                return Some(reporter.usage(
                    codes::BAD_ARGUMENT,
                    format!("LLVM cannot run the pass pipeline `{passes}`: {e}"),
                    &[(&option, "the syntax of `opt -passes=`, e.g. default<O3>")],
                ));
            }
            if let Some(pass) = dump_after {
                let mut map = SourceMap::new();
                if let Some(d) = cutec::build::unknown_pass(&mut map, pass) {
                    return Some(reporter.fail(&map, &[d]));
                }
            }
            // Options of the back end do nothing when only the front end's stages are asked for.
            if emit.iter().any(|e| e.needs_codegen()) {
                return None;
            }
            let emitted = spell_emits(emit);
            let front = "tokens and ast come from the parser alone";
            let ignored = [
                dump_after.as_ref().map(|p| (format!("--dump-after {p}"), "shows the IR after a pass")),
                kernel.as_ref().map(|k| (format!("--kernel {k}"), "selects the kernel to lower")),
                opt_level.map(|o| (format!("-O {o}"), "sets LLVM's optimisation level")),
                llvm_passes.as_ref().map(|p| (format!("--llvm-passes {p}"), "sets LLVM's pass pipeline")),
                timings.then(|| ("--timings".to_owned(), "times the stages of a build")),
                tuning.as_ref().map(|t| (format!("--tuning {}", t.display()), "sets const parameters")),
            ];
            let (option, what) = ignored.into_iter().flatten().next()?;
            conflict(
                format!("{option} {what}, but {emitted} builds nothing after parsing: it would be ignored"),
                &[(&option, "would be ignored"), (&emitted, front)],
            )
        }
        Command::Run(args) => {
            let paths = |v: &[(String, PathBuf)]| -> Vec<(String, String)> {
                v.iter().map(|(n, p)| (n.clone(), p.display().to_string())).collect()
            };
            let twice = given_twice(reporter, "-D", &args.defines)
                .or_else(|| given_twice(reporter, "--dim", &args.dims))
                .or_else(|| given_twice(reporter, "--input", &paths(&args.inputs)))
                .or_else(|| given_twice(reporter, "--output", &paths(&args.outputs)))
                .or_else(|| given_twice(reporter, "--save-input", &paths(&args.save_inputs)))
                .or_else(|| given_twice(reporter, "--scalar", &args.scalars));
            if twice.is_some() {
                return twice;
            }
            let module = args.module.display().to_string();
            let is_cute = args.module.extension().is_some_and(|e| e == "cute");
            if is_cute && let Some(m) = &args.manifest {
                let option = format!("--manifest {}", m.display());
                return conflict(
                    "--manifest names the manifest of a compiled module; a .cute file is compiled with its own".into(),
                    &[(&option, "would be ignored"), (&module, "a .cute file")],
                );
            }
            if !is_cute && let Some((name, value)) = args.defines.first() {
                let option = format!("-D {name}={value}");
                return conflict(
                    "-D sets a const generic of a .cute file; a compiled module was built with its values".into(),
                    &[(&option, "would be ignored"), (&module, "a compiled module")],
                );
            }
            if !is_cute && let Some(t) = &args.tuning {
                let option = format!("--tuning {}", t.display());
                return conflict(
                    "--tuning sets const parameters of a .cute file; a compiled module was built with its values"
                        .into(),
                    &[(&option, "would be ignored"), (&module, "a compiled module")],
                );
            }
            if !args.bench {
                let count = args.warmup.map(|w| format!("--warmup {w}")).or(args.iters.map(|i| format!("--iters {i}")));
                if let Some(option) = count {
                    return conflict(
                        format!("{option} counts the launches of --bench, which is not given"),
                        &[(&option, "would be ignored")],
                    );
                }
            }
            None
        }
        Command::Layout { eval_file, table, svg, tv, .. } => {
            let tv_text = tv.map(|(m, n)| format!("--tv {m},{n}"));
            if let Some(file) = eval_file {
                let file = format!("--eval-file {}", file.display());
                let svg_text = svg.as_ref().map(|p| format!("--svg {}", p.display()));
                let drawing = table.then(|| "--table".to_owned()).or(svg_text).or(tv_text.clone());
                if let Some(d) = drawing {
                    return conflict(
                        format!("{d} draws one expression; --eval-file answers each line of a file in text"),
                        &[(&d, "would be ignored"), (&file, "one answer per line")],
                    );
                }
            }
            if let Some(t) = tv_text
                && svg.is_none()
            {
                return conflict(
                    format!("{t} labels the cells of --svg, which is not given"),
                    &[(&t, "would be ignored")],
                );
            }
            None
        }
        Command::Explain { .. } => None,
        Command::Tune(args) => {
            let paths = |v: &[(String, PathBuf)]| -> Vec<(String, String)> {
                v.iter().map(|(n, p)| (n.clone(), p.display().to_string())).collect()
            };
            given_twice(reporter, "-D", &args.defines)
                .or_else(|| given_twice(reporter, "--scalar", &args.scalars))
                .or_else(|| given_twice(reporter, "--reference", &paths(&args.references)))
        }
    }
}

/// A name given twice with `flag` (E0407): `-D N=1024 -D N=4096` leaves which value is meant unclear.
fn given_twice<V: std::fmt::Display>(reporter: &Reporter, flag: &str, items: &[(String, V)]) -> Option<ExitCode> {
    for (k, (name, value)) in items.iter().enumerate() {
        if let Some((_, first)) = items[..k].iter().find(|(n, _)| n == name) {
            let (a, b) = (format!("{flag} {name}={first}"), format!("{flag} {name}={value}"));
            return Some(reporter.usage(
                codes::GIVEN_TWICE,
                format!("{flag} {name} is given twice ({first} and {value}); give each name once"),
                &[(&b, "given again here"), (&a, "first given here")],
            ));
        }
    }
    None
}

/// `NAME=FILE` of `--input` and `--output`. The file stays an `OsString`: a path need not be UTF-8.
pub(crate) fn parse_path_arg(s: OsString) -> Result<(String, PathBuf), String> {
    let (name, path) = split_at_eq(&s).ok_or_else(|| format!("expected NAME=FILE, found `{}`", s.display()))?;
    let name = name.to_str().ok_or_else(|| format!("`{}` is not a parameter name", name.display()))?;
    Ok((name.trim().to_string(), PathBuf::from(path)))
}

/// Splits at the first `=` without going through UTF-8.
#[cfg(unix)]
fn split_at_eq(s: &OsStr) -> Option<(&OsStr, &OsStr)> {
    use std::os::unix::ffi::OsStrExt;
    let bytes = s.as_bytes();
    let i = bytes.iter().position(|&b| b == b'=')?;
    Some((OsStr::from_bytes(&bytes[..i]), OsStr::from_bytes(&bytes[i + 1..])))
}

#[cfg(not(unix))]
fn split_at_eq(s: &OsStr) -> Option<(&OsStr, &OsStr)> {
    let (a, b) = s.to_str()?.split_once('=')?;
    Some((OsStr::new(a), OsStr::new(b)))
}

pub(crate) fn parse_scalar_arg(s: &str) -> Result<(String, String), String> {
    let (name, value) = s.split_once('=').ok_or_else(|| format!("expected NAME=VALUE, found `{s}`"))?;
    Ok((name.trim().to_string(), value.trim().to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(unix)]
    fn path_arguments_keep_bytes_that_are_not_utf8() {
        use std::os::unix::ffi::OsStrExt;
        let arg = OsStr::from_bytes(b"x=in\xff.npy").to_owned();
        let (name, path) = parse_path_arg(arg).expect("NAME=FILE");
        assert_eq!(name, "x");
        assert_eq!(path.as_os_str().as_bytes(), b"in\xff.npy");
        assert!(parse_path_arg(OsString::from("x.npy")).is_err());
    }
}

//! `cutec build`: where each stage goes, the checks that nothing is written where it must not be, and the writes.

use crate::cli::{Emit, Reporter, read};
use cutec::build::{BuildOptions, build_source, manifest_summary};
use cutec::codes;
use cutec::command_line::path_error;
use cutec::paths::same_file;
use cutec::{Checked, check_source, emit_ast, emit_tokens};
use cutec_diagnostics::SourceMap;
use std::ffi::{OsStr, OsString};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// `--emit a,b` as typed, for messages.
pub(crate) fn spell_emits(emits: &[Emit]) -> String {
    let names: Vec<String> = emits.iter().map(|e| e.stage_name()).collect();
    format!("--emit {}", names.join(","))
}

/// `STEM.EXT`, kept as an `OsString`: a file name need not be UTF-8.
fn with_extension(stem: &OsStr, ext: &str) -> OsString {
    let mut name = stem.to_owned();
    name.push(".");
    name.push(ext);
    name
}

pub(crate) fn build(
    reporter: &Reporter,
    path: &Path,
    output: Option<&Path>,
    emits: &[Emit],
    mut opts: BuildOptions,
    timings: bool,
) -> ExitCode {
    let Some(src) = read(reporter, path) else { return ExitCode::from(1) };
    let name = path.display().to_string();
    let stem = path.file_stem().map_or_else(|| OsString::from("out"), OsStr::to_owned);
    // Where the files go: one stage without -o goes to stdout, the rest into a directory.
    let to_stdout = output == Some(Path::new("-")) || (output.is_none() && emits.len() == 1 && emits[0] != Emit::Cubin);
    // `-o out/` or an existing directory is a directory even for one stage.
    let is_dir = output.is_some_and(|p| p.is_dir() || p.as_os_str().as_encoded_bytes().ends_with(b"/"));
    let single_file = output.filter(|_| emits.len() == 1 && !to_stdout && !is_dir);
    let dir = if to_stdout || single_file.is_some() { None } else { Some(output.unwrap_or(Path::new("."))) };
    let file_for = |emit: Emit| -> PathBuf {
        match (single_file, dir) {
            (Some(f), _) => f.to_path_buf(),
            (None, Some(d)) => d.join(with_extension(&stem, emit.extension())),
            (None, None) => PathBuf::from("-"),
        }
    };
    // The manifest is JSON text: it names the module lossily if the name is not UTF-8.
    opts.module_file = file_for(Emit::Ptx).file_name().map_or("module.ptx".into(), |f| f.to_string_lossy().into());
    // Usage errors, before compiling: several stages cannot share standard output, and no output may be the input.
    let emitted = spell_emits(emits);
    if to_stdout && emits.len() > 1 {
        return reporter.usage(
            codes::OUTPUT_REFUSED,
            format!("`-o -` takes one stage, not {}; write several stages into a directory with -o DIR", emits.len()),
            &[("-o -", "standard output takes one stage"), (&emitted, "several stages")],
        );
    }
    if let Some(d) = dir
        && d.exists()
        && !d.is_dir()
    {
        let option = format!("-o {}", d.display());
        return reporter.usage(
            codes::OUTPUT_REFUSED,
            format!("`{}` is a file; several stages are written into a directory (-o DIR)", d.display()),
            &[(&option, "a file, not a directory"), (&emitted, "several stages")],
        );
    }
    if !to_stdout {
        for &emit in emits {
            let target = file_for(emit);
            if same_file(&target, path) {
                let message = format!(
                    "`{}` is the input; refusing to write the {} stage over it",
                    target.display(),
                    emit.stage_name()
                );
                let mut map = SourceMap::new();
                let d = path_error(&mut map, codes::OUTPUT_REFUSED, message, &target, "this is the input file")
                    .with_help("write the outputs elsewhere with -o FILE or -o DIR");
                return reporter.fail(&map, &[d]);
            }
        }
    }

    let mut outputs: Vec<(Emit, Vec<u8>)> = Vec::new();
    let mut summary = String::new();
    if emits.iter().any(|e| e.needs_codegen()) {
        match build_source(&name, &src, &opts) {
            Ok((checked, art)) => {
                reporter.report(&checked.map, &art.warnings);
                if let Some(dump) = &art.dump {
                    eprint!("{dump}");
                }
                if timings {
                    let total: std::time::Duration = art.timings.iter().map(|(_, d)| *d).sum();
                    for (stage, d) in &art.timings {
                        eprintln!("time: {:>8.3} ms  {stage}", d.as_secs_f64() * 1e3);
                        // The passes that cost something, each on its own line (like rustc's -Z time-passes).
                        let passes = match *stage {
                            "IR passes" => art.pass_timings.as_slice(),
                            // Each check's own time, beside code generation (the stage is what was left to wait).
                            cutec::build::CHECKS_STAGE => art.check_timings.as_slice(),
                            _ => &[],
                        };
                        for (pass, d) in passes.iter().filter(|(_, d)| d.as_secs_f64() >= 1e-3) {
                            eprintln!("time: {:>8.3} ms    {pass}", d.as_secs_f64() * 1e3);
                        }
                    }
                    eprintln!("time: {:>8.3} ms  total", total.as_secs_f64() * 1e3);
                }
                summary = manifest_summary(&art.manifest);
                for r in art.ptxas.iter().flat_map(|r| &r.kernels) {
                    summary.push_str(&format!(
                        "  ptxas sm_90a {}: {} registers, {} B stack, {} B spill stores, {} B spill loads, {} B shared\n",
                        r.name, r.registers, r.stack_frame_bytes, r.spill_store_bytes, r.spill_load_bytes, r.shared_bytes
                    ));
                }
                // ptxas's warnings and performance advisories (a serialized wgmma, an ignored setmaxnreg).
                for w in art.ptxas.iter().flat_map(|r| &r.warnings) {
                    summary.push_str(&format!("  ptxas: {w}\n"));
                }
                for &emit in emits {
                    let bytes = match emit {
                        Emit::Tokens => emit_tokens(&src).into_bytes(),
                        Emit::Ast => emit_ast(&src).into_bytes(),
                        Emit::Ir => art.ir().into_bytes(),
                        Emit::IrScheduled => art.ir_scheduled().into_bytes(),
                        Emit::Llvm => art.llvm.clone().unwrap_or_default().into_bytes(),
                        Emit::Ptx => art.ptx.clone().into_bytes(),
                        Emit::Cubin => art.ptxas.as_ref().map(|r| r.cubin.clone()).unwrap_or_default(),
                        Emit::Deps => art.deps.clone().unwrap_or_default().into_bytes(),
                        Emit::Manifest => {
                            let mut m = art.manifest.to_json_pretty();
                            m.push('\n');
                            m.into_bytes()
                        }
                    };
                    outputs.push((emit, bytes));
                }
            }
            Err(f) => {
                if let Some(dump) = &f.dump {
                    eprint!("{dump}");
                }
                return reporter.fail(&f.map, &f.diagnostics);
            }
        }
    } else {
        let checked: Checked = check_source(&name, &src, &opts.defines);
        if checked.has_errors() {
            return reporter.fail(&checked.map, checked.diagnostics());
        }
        reporter.report(&checked.map, checked.diagnostics());
        for &emit in emits {
            let text = if emit == Emit::Tokens { emit_tokens(&src) } else { emit_ast(&src) };
            outputs.push((emit, text.into_bytes()));
        }
    }
    let write_error = |target: &Path, e: std::io::Error| {
        let mut map = SourceMap::new();
        let message = format!("cannot write `{}`: {e}", target.display());
        let d = path_error(&mut map, codes::WRITE_FAILED, message, target, "cannot be written");
        reporter.fail(&map, &[d])
    };
    if let Some(d) = dir
        && let Err(e) = std::fs::create_dir_all(d)
    {
        return write_error(d, e);
    }
    let mut written = Vec::new();
    for (emit, bytes) in &outputs {
        let target = file_for(*emit);
        let result = if to_stdout {
            std::io::stdout().lock().write_all(bytes)
        } else {
            written.push(target.display().to_string());
            std::fs::write(&target, bytes)
        };
        if let Err(e) = result {
            return write_error(&target, e);
        }
    }
    if !to_stdout {
        for w in &written {
            println!("wrote {w}");
        }
        print!("{summary}");
    }
    ExitCode::SUCCESS
}

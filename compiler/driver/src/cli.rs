//! Argument parsing (clap) and the subcommands.

use clap::{Parser, Subcommand, ValueEnum};
use cutec::{Checked, check_source, code_tables, emit_ast, emit_tokens, parse_define};
use cutec_diagnostics::{ColorMode, Diagnostic, ErrorFormat, SourceMap, explain, render_json, render_text};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "cutec", version, about = "A compiler for CuTe-like GPU kernels on NVIDIA Hopper")]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// How diagnostics are printed.
    #[arg(long, global = true, value_enum, default_value_t = Format::Human)]
    error_format: Format,
    /// When diagnostics are coloured.
    #[arg(long, global = true, value_enum, default_value_t = Color::Auto)]
    color: Color,
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    Human,
    Json,
}

#[derive(Clone, Copy, ValueEnum)]
enum Color {
    Auto,
    Always,
    Never,
}

#[derive(Subcommand)]
enum Command {
    /// Parse, resolve and type-check files; print every diagnostic.
    Check {
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Set a const generic parameter: -D N=4096.
        #[arg(short = 'D', value_name = "NAME=VALUE", value_parser = parse_define)]
        defines: Vec<(String, i64)>,
    },
    /// Compile a file and write what each requested stage produced.
    Build {
        file: PathBuf,
        /// Output file (with one --emit) or directory (several); `-` is standard output.
        #[arg(short = 'o', value_name = "OUT")]
        output: Option<PathBuf>,
        /// Stages to write.
        #[arg(long, value_enum, value_delimiter = ',', default_value = "tokens")]
        emit: Vec<Emit>,
        #[arg(short = 'D', value_name = "NAME=VALUE", value_parser = parse_define)]
        defines: Vec<(String, i64)>,
    },
    /// Explain an error code: `cutec explain E0101`.
    Explain { code: String },
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum, Debug)]
enum Emit {
    Tokens,
    Ast,
}

impl Emit {
    fn extension(self) -> &'static str {
        match self {
            Emit::Tokens => "tokens",
            Emit::Ast => "ast",
        }
    }
}

struct Reporter {
    format: ErrorFormat,
    color: ColorMode,
}

impl Reporter {
    fn report(&self, map: &SourceMap, diags: &[Diagnostic]) {
        let mut err = std::io::stderr().lock();
        // A closed stderr is no reason to fail differently: the exit code still says what happened.
        let _ = match self.format {
            ErrorFormat::Human => render_text(map, diags, self.color, &mut err),
            ErrorFormat::Json => render_json(map, diags, &mut err),
        };
    }
}

pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            // clap: --help and --version are successes, anything else is bad usage (2).
            return if e.use_stderr() { ExitCode::from(2) } else { ExitCode::SUCCESS };
        }
    };
    let reporter = Reporter {
        format: match cli.error_format {
            Format::Human => ErrorFormat::Human,
            Format::Json => ErrorFormat::Json,
        },
        color: match cli.color {
            Color::Auto => ColorMode::Auto,
            Color::Always => ColorMode::Always,
            Color::Never => ColorMode::Never,
        },
    };
    match cli.command {
        Command::Check { files, defines } => check(&reporter, &files, &defines),
        Command::Build { file, output, emit, defines } => build(&reporter, &file, output.as_deref(), &emit, &defines),
        Command::Explain { code } => match explain(&code_tables(), &code) {
            Some(info) => {
                println!("{}: {}\n\n{}", info.code, info.title, info.explanation.trim_end());
                ExitCode::SUCCESS
            }
            None => {
                eprintln!("error: no error code `{code}`; codes look like E0101 (see `cutec explain --help`)");
                ExitCode::from(2)
            }
        },
    }
}

/// Reads a file; an unreadable file is reported as diagnostic E0400 against the command line.
fn read(reporter: &Reporter, path: &Path) -> Option<String> {
    match std::fs::read_to_string(path) {
        Ok(s) => Some(s),
        Err(e) => {
            let mut map = SourceMap::new();
            let file = map.add("<command line>", path.display().to_string());
            let span = cutec_diagnostics::Span::new(0, path.display().to_string().len());
            let d = Diagnostic::error("E0400", format!("cannot read `{}`: {e}", path.display()), file, span);
            reporter.report(&map, &[d]);
            None
        }
    }
}

fn check(reporter: &Reporter, files: &[PathBuf], defines: &[(String, i64)]) -> ExitCode {
    let mut failed = false;
    for path in files {
        let Some(src) = read(reporter, path) else {
            failed = true;
            continue;
        };
        let checked: Checked = check_source(&path.display().to_string(), &src, defines);
        reporter.report(&checked.map, checked.diagnostics());
        failed |= checked.has_errors();
    }
    if failed { ExitCode::from(1) } else { ExitCode::SUCCESS }
}

fn build(
    reporter: &Reporter,
    path: &Path,
    output: Option<&Path>,
    emits: &[Emit],
    defines: &[(String, i64)],
) -> ExitCode {
    let Some(src) = read(reporter, path) else { return ExitCode::from(1) };
    let mut outputs: Vec<(Emit, String)> = Vec::new();
    for &emit in emits {
        match emit {
            Emit::Tokens => outputs.push((emit, emit_tokens(&src))),
            Emit::Ast => outputs.push((emit, emit_ast(&src))),
        }
    }
    let checked = check_source(&path.display().to_string(), &src, defines);
    reporter.report(&checked.map, checked.diagnostics());
    if checked.has_errors() {
        return ExitCode::from(1);
    }
    write_outputs(path, output, &outputs)
}

/// One --emit and `-o FILE`: that file; several: a directory with one file per stage; no `-o`: stdout.
fn write_outputs(input: &Path, output: Option<&Path>, outputs: &[(Emit, String)]) -> ExitCode {
    let stem = input.file_stem().map_or("out".into(), |s| s.to_string_lossy().into_owned());
    let result = match output {
        None => outputs.iter().try_for_each(|(_, text)| std::io::stdout().lock().write_all(text.as_bytes())),
        Some(p) if p == Path::new("-") => {
            outputs.iter().try_for_each(|(_, text)| std::io::stdout().lock().write_all(text.as_bytes()))
        }
        Some(p) if outputs.len() == 1 => std::fs::write(p, &outputs[0].1),
        Some(dir) => std::fs::create_dir_all(dir).and_then(|_| {
            outputs
                .iter()
                .try_for_each(|(emit, text)| std::fs::write(dir.join(format!("{stem}.{}", emit.extension())), text))
        }),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: cannot write output: {e}");
            ExitCode::from(1)
        }
    }
}

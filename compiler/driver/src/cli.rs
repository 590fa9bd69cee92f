//! Argument parsing (clap) and the subcommands.

use crate::layout_cmd::LayoutArgs;
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
    /// Load a compiled module on the GPU, launch one kernel with .npy or seeded random inputs, check, time.
    Run {
        /// The module: PTX or cubin written by `cutec build` (its manifest is MODULE with extension .json).
        module: PathBuf,
        /// The manifest, if not next to the module.
        #[arg(long)]
        manifest: Option<PathBuf>,
        /// The kernel to launch.
        #[arg(long)]
        kernel: String,
        /// A dynamic dimension: --dim M=4096.
        #[arg(long = "dim", value_name = "NAME=VALUE", value_parser = parse_define)]
        dims: Vec<(String, i64)>,
        /// A tensor read from a .npy file: --input x=x.npy (others get seeded random data).
        #[arg(long = "input", value_name = "NAME=FILE", value_parser = parse_path_arg)]
        inputs: Vec<(String, PathBuf)>,
        /// A tensor written to a .npy file after the launch: --output y=y.npy.
        #[arg(long = "output", value_name = "NAME=FILE", value_parser = parse_path_arg)]
        outputs: Vec<(String, PathBuf)>,
        /// A scalar argument: --scalar eps=1e-5.
        #[arg(long = "scalar", value_name = "NAME=VALUE", value_parser = parse_scalar_arg)]
        scalars: Vec<(String, String)>,
        #[arg(long, default_value_t = 0)]
        seed: u64,
        #[arg(long, default_value_t = 0)]
        device: usize,
        /// Time many launches with CUDA events; print the median and GB/s.
        #[arg(long)]
        bench: bool,
        #[arg(long, default_value_t = 10)]
        warmup: usize,
        #[arg(long, default_value_t = 100)]
        iters: usize,
    },
    /// Evaluate a layout expression in CuTe's notation: `cutec layout --eval 'composition((6,2):(8,2), (4,3):(3,1))'`.
    Layout {
        /// The expression (also accepted as --eval).
        expr: Option<String>,
        #[arg(long = "eval", value_name = "EXPR", conflicts_with = "expr")]
        eval: Option<String>,
        /// Evaluate one expression per line; print one result (or `error: ...`) per line.
        #[arg(long, value_name = "FILE", conflicts_with_all = ["expr", "eval"])]
        eval_file: Option<PathBuf>,
        /// Print the layout as a grid of indices, as CuTe's print_layout does.
        #[arg(long)]
        table: bool,
        /// Draw the layout as a coloured grid into FILE.
        #[arg(long, value_name = "FILE")]
        svg: Option<PathBuf>,
        /// With --svg: the layout is a (thread, value) layout over an M x N tile; cells are labelled T#/V#.
        #[arg(long, value_name = "M,N", value_parser = crate::layout_cmd::parse_tile)]
        tv: Option<(i64, i64)>,
    },
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
        Command::Layout { expr, eval, eval_file, table, svg, tv } => crate::layout_cmd::run(&LayoutArgs {
            expr: expr.as_deref().or(eval.as_deref()),
            eval_file: eval_file.as_deref(),
            table,
            svg: svg.as_deref(),
            tv,
        }),
        Command::Run {
            module,
            manifest,
            kernel,
            dims,
            inputs,
            outputs,
            scalars,
            seed,
            device,
            bench,
            warmup,
            iters,
        } => {
            let opts = cutec::run::RunOptions {
                manifest_path: manifest.unwrap_or_else(|| module.with_extension("json")),
                ptx_path: module,
                kernel,
                dims,
                inputs,
                outputs,
                scalars,
                seed,
                device,
                bench,
                warmup,
                iters,
            };
            match cutec::run::run(&opts, &mut std::io::stdout().lock()) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("error: {e}");
                    ExitCode::from(1)
                }
            }
        }
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

fn parse_path_arg(s: &str) -> Result<(String, PathBuf), String> {
    let (name, path) = s.split_once('=').ok_or_else(|| format!("expected NAME=FILE, found `{s}`"))?;
    Ok((name.trim().to_string(), PathBuf::from(path)))
}

fn parse_scalar_arg(s: &str) -> Result<(String, String), String> {
    let (name, value) = s.split_once('=').ok_or_else(|| format!("expected NAME=VALUE, found `{s}`"))?;
    Ok((name.trim().to_string(), value.trim().to_string()))
}

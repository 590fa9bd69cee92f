//! Argument parsing (clap) and the subcommands.

use crate::layout_cmd::LayoutArgs;
use clap::{Parser, Subcommand, ValueEnum};
use cutec::build::{BuildOptions, build_source, manifest_summary};
use cutec::{Checked, check_source, code_tables, emit_ast, emit_tokens, parse_define};
use cutec_codegen::OptLevel;
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
        /// The `.cute` files to check.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Set a const generic parameter: -D N=4096.
        #[arg(short = 'D', value_name = "NAME=VALUE", value_parser = parse_define)]
        defines: Vec<(String, i64)>,
    },
    /// Compile a file and write what each requested stage produced.
    ///
    /// Without -o, one text stage goes to standard output; anything else is written into the current directory
    /// as FILE_STEM.EXT (.tokens .ast .ir .sched.ir .ll .ptx .cubin .json).
    Build {
        /// The `.cute` file to compile.
        #[arg(required_unless_present = "print_passes")]
        file: Option<PathBuf>,
        /// Output file (one --emit) or directory (several); `-` is standard output.
        #[arg(short = 'o', value_name = "OUT")]
        output: Option<PathBuf>,
        /// Stages to write, comma-separated.
        #[arg(long, value_enum, value_delimiter = ',', default_value = "ptx,manifest")]
        emit: Vec<Emit>,
        /// Set a const generic parameter: -D N=4096.
        #[arg(short = 'D', value_name = "NAME=VALUE", value_parser = parse_define)]
        defines: Vec<(String, i64)>,
        /// LLVM optimisation level, 0 to 3.
        #[arg(short = 'O', value_name = "LEVEL", default_value_t = 3, value_parser = clap::value_parser!(u8).range(0..=3))]
        opt_level: u8,
        /// Compile only this kernel.
        #[arg(long)]
        kernel: Option<String>,
        /// Print the IR pass pipeline and exit.
        #[arg(long)]
        print_passes: bool,
        /// Print the IR as it is after PASS (to standard error).
        #[arg(long, value_name = "PASS")]
        dump_after: Option<String>,
        /// Print the wall time of each stage (to standard error).
        #[arg(long)]
        timings: bool,
    },
    /// Explain an error code: `cutec explain E0101`.
    Explain {
        /// An error code such as E0101 (case does not matter).
        code: String,
    },
    /// Load a compiled module on the GPU, launch one kernel with .npy or seeded random inputs, check, time.
    Run(RunArgs),
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

#[derive(clap::Args)]
struct RunArgs {
    /// A `.cute` file (compiled first, with -D), or a PTX/cubin module written by `cutec build` (its manifest is
    /// MODULE with extension .json unless --manifest says otherwise).
    module: PathBuf,
    /// With a `.cute` file: set a const generic parameter, -D N=4096.
    #[arg(short = 'D', value_name = "NAME=VALUE", value_parser = parse_define)]
    defines: Vec<(String, i64)>,
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
    /// A tensor written to a .npy file before the launch, as the kernel receives it (e.g. its seeded random
    /// data): --save-input x=x.npy.
    #[arg(long = "save-input", value_name = "NAME=FILE", value_parser = parse_path_arg)]
    save_inputs: Vec<(String, PathBuf)>,
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
    /// Measure the host time of a launch call (checked, prepared, bare driver call); use a tiny problem.
    #[arg(long)]
    launch_overhead: bool,
    #[arg(long, default_value_t = 10)]
    warmup: usize,
    #[arg(long, default_value_t = 100)]
    iters: usize,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum, Debug)]
enum Emit {
    Tokens,
    Ast,
    /// The IR as lowered from the checked program.
    Ir,
    /// The IR after the pass pipeline: what codegen sees.
    IrScheduled,
    Llvm,
    Ptx,
    /// Machine code for sm_90a, assembled by ptxas.
    Cubin,
    /// The kernel manifest (JSON) that the runtime reads.
    Manifest,
}

impl Emit {
    /// The stage as `--emit` spells it.
    fn stage_name(self) -> String {
        self.to_possible_value().map_or_else(|| self.extension().to_owned(), |v| v.get_name().to_owned())
    }
    fn extension(self) -> &'static str {
        match self {
            Emit::Tokens => "tokens",
            Emit::Ast => "ast",
            Emit::Ir => "ir",
            Emit::IrScheduled => "sched.ir",
            Emit::Llvm => "ll",
            Emit::Ptx => "ptx",
            Emit::Cubin => "cubin",
            Emit::Manifest => "json",
        }
    }
    /// Stages that need the whole compiler, not only the front end.
    fn needs_codegen(self) -> bool {
        !matches!(self, Emit::Tokens | Emit::Ast)
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
    // A name given twice with -D is a mistake on the command line, not "the last one wins".
    let defines = match &cli.command {
        Command::Check { defines, .. } | Command::Build { defines, .. } => defines.as_slice(),
        Command::Run(args) => args.defines.as_slice(),
        _ => &[],
    };
    for (k, (name, value)) in defines.iter().enumerate() {
        if let Some((_, first)) = defines[..k].iter().find(|(n, _)| n == name) {
            eprintln!("error: -D {name} is given twice ({first} and {value}); give each const generic once");
            return ExitCode::from(2);
        }
    }
    match cli.command {
        Command::Check { files, defines } => check(&reporter, &files, &defines),
        Command::Build { file, output, emit, defines, opt_level, kernel, print_passes, dump_after, timings } => {
            if print_passes {
                print!("{}", cutec_ir::describe_pipeline());
                return ExitCode::SUCCESS;
            }
            let Some(file) = file else { return ExitCode::from(2) };
            // A mistyped pass name is a mistake on the command line: say so before compiling anything.
            if let Some(pass) = dump_after.as_deref()
                && cutec_ir::find_pass(pass).is_none()
            {
                let names: Vec<&str> = cutec_ir::pipeline().iter().map(|p| p.name()).collect();
                let close = names.iter().copied().find(|n| n.starts_with(pass) || n.contains(pass));
                let hint = close.or_else(|| cutec_diagnostics::suggest(pass, names.iter().copied()));
                eprintln!("error: --dump-after: no pass named `{pass}`");
                if let Some(h) = hint {
                    eprintln!("help: did you mean `{h}`?");
                }
                eprintln!("note: the passes are: {}", names.join(", "));
                return ExitCode::from(2);
            }
            let opts = BuildOptions {
                defines,
                opt_level: match opt_level {
                    0 => OptLevel::O0,
                    1 => OptLevel::O1,
                    2 => OptLevel::O2,
                    _ => OptLevel::O3,
                },
                kernel,
                dump_after,
                assemble: emit.contains(&Emit::Cubin),
                module_file: String::new(),
            };
            build(&reporter, &file, output.as_deref(), &emit, opts, timings)
        }
        Command::Layout { expr, eval, eval_file, table, svg, tv } => crate::layout_cmd::run(&LayoutArgs {
            expr: expr.as_deref().or(eval.as_deref()),
            eval_file: eval_file.as_deref(),
            table,
            svg: svg.as_deref(),
            tv,
        }),
        Command::Run(args) => run(&reporter, args),
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
    mut opts: BuildOptions,
    timings: bool,
) -> ExitCode {
    let Some(src) = read(reporter, path) else { return ExitCode::from(1) };
    let name = path.display().to_string();
    let stem = path.file_stem().map_or("out".into(), |s| s.to_string_lossy().into_owned());
    // Where the files go: one stage without -o goes to stdout, the rest into a directory.
    let to_stdout = output == Some(Path::new("-")) || (output.is_none() && emits.len() == 1 && emits[0] != Emit::Cubin);
    // `-o out/` or an existing directory is a directory even for one stage.
    let is_dir = output.is_some_and(|p| p.is_dir() || p.as_os_str().to_string_lossy().ends_with('/'));
    let single_file = output.filter(|_| emits.len() == 1 && !to_stdout && !is_dir);
    let dir = if to_stdout || single_file.is_some() { None } else { Some(output.unwrap_or(Path::new("."))) };
    let file_for = |emit: Emit| -> PathBuf {
        match (single_file, dir) {
            (Some(f), _) => f.to_path_buf(),
            (None, Some(d)) => d.join(format!("{stem}.{}", emit.extension())),
            (None, None) => PathBuf::from("-"),
        }
    };
    opts.module_file = file_for(Emit::Ptx).file_name().map_or("module.ptx".into(), |f| f.to_string_lossy().into());
    // Usage errors, before compiling: several stages cannot share standard output, and no output may be the input.
    if to_stdout && emits.len() > 1 {
        let names: Vec<String> = emits.iter().map(|e| e.stage_name()).collect();
        eprintln!(
            "error: `-o -` takes one stage, not {}; write several stages into a directory with -o DIR",
            names.join(", ")
        );
        return ExitCode::from(2);
    }
    if let Some(d) = dir
        && d.exists()
        && !d.is_dir()
    {
        eprintln!("error: `{}` is a file; several stages are written into a directory (-o DIR)", d.display());
        return ExitCode::from(2);
    }
    if !to_stdout {
        for &emit in emits {
            let target = file_for(emit);
            if same_file(&target, path) {
                eprintln!(
                    "error: `{}` is the input; refusing to write the {} stage over it",
                    target.display(),
                    emit.extension()
                );
                return ExitCode::from(2);
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
                    }
                    eprintln!("time: {:>8.3} ms  total", total.as_secs_f64() * 1e3);
                }
                summary = manifest_summary(&art.manifest);
                for r in art.ptxas.iter().flat_map(|r| &r.kernels) {
                    summary.push_str(&format!(
                        "  ptxas sm_90a {}: {} registers, {} B stack, {} B spill stores, {} B shared\n",
                        r.name, r.registers, r.stack_frame_bytes, r.spill_store_bytes, r.shared_bytes
                    ));
                }
                for &emit in emits {
                    let bytes = match emit {
                        Emit::Tokens => emit_tokens(&src).into_bytes(),
                        Emit::Ast => emit_ast(&src).into_bytes(),
                        Emit::Ir => art.ir.clone().into_bytes(),
                        Emit::IrScheduled => art.ir_scheduled.clone().into_bytes(),
                        Emit::Llvm => art.llvm.clone().into_bytes(),
                        Emit::Ptx => art.ptx.clone().into_bytes(),
                        Emit::Cubin => art.ptxas.as_ref().map(|r| r.cubin.clone()).unwrap_or_default(),
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
                reporter.report(&f.map, &f.diagnostics);
                return ExitCode::from(1);
            }
        }
    } else {
        let checked: Checked = check_source(&name, &src, &opts.defines);
        reporter.report(&checked.map, checked.diagnostics());
        if checked.has_errors() {
            return ExitCode::from(1);
        }
        for &emit in emits {
            let text = if emit == Emit::Tokens { emit_tokens(&src) } else { emit_ast(&src) };
            outputs.push((emit, text.into_bytes()));
        }
    }
    if let Some(d) = dir
        && let Err(e) = std::fs::create_dir_all(d)
    {
        eprintln!("error: cannot create `{}`: {e}", d.display());
        return ExitCode::from(1);
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
            eprintln!("error: cannot write `{}`: {e}", target.display());
            return ExitCode::from(1);
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

fn run(reporter: &Reporter, args: RunArgs) -> ExitCode {
    // A .cute file is compiled first; its PTX and manifest go to a private temporary directory.
    let compiled = if args.module.extension().is_some_and(|e| e == "cute") {
        match compile_for_run(reporter, &args.module, &args.kernel, &args.defines) {
            Some(paths) => Some(paths),
            None => return ExitCode::from(1),
        }
    } else {
        None
    };
    let (ptx_path, manifest_path) = match &compiled {
        Some((_, ptx, json)) => (ptx.clone(), json.clone()),
        None => (args.module.clone(), args.manifest.unwrap_or_else(|| args.module.with_extension("json"))),
    };
    let opts = cutec::run::RunOptions {
        manifest_path,
        ptx_path,
        kernel: args.kernel,
        dims: args.dims,
        inputs: args.inputs,
        outputs: args.outputs,
        save_inputs: args.save_inputs,
        scalars: args.scalars,
        seed: args.seed,
        device: args.device,
        bench: args.bench,
        launch_overhead: args.launch_overhead,
        warmup: args.warmup,
        iters: args.iters,
    };
    let result = cutec::run::run(&opts, &mut std::io::stdout().lock());
    // The temporary directory (if any) is removed here.
    drop(compiled);
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // Options that do not fit the kernel (an unknown kernel, parameter or dimension) are bad usage.
        Err(e @ cutec::run::RunError::Usage(_)) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}

/// `cutec run FILE.cute`: compiles `kernel` and writes its PTX and manifest into a fresh temporary directory;
/// returns (directory, PTX path, manifest path), or `None` after reporting why it could not.
/// Whether two paths name the same existing file (a path that does not exist yet is no input).
fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}

fn compile_for_run(
    reporter: &Reporter,
    path: &Path,
    kernel: &str,
    defines: &[(String, i64)],
) -> Option<(tempfile::TempDir, PathBuf, PathBuf)> {
    let src = read(reporter, path)?;
    let stem = path.file_stem().map_or("module".into(), |s| s.to_string_lossy().into_owned());
    let opts = BuildOptions {
        defines: defines.to_vec(),
        kernel: Some(kernel.to_string()),
        module_file: format!("{stem}.ptx"),
        ..BuildOptions::default()
    };
    let art = match build_source(&path.display().to_string(), &src, &opts) {
        Ok((checked, art)) => {
            reporter.report(&checked.map, &art.warnings);
            art
        }
        Err(f) => {
            reporter.report(&f.map, &f.diagnostics);
            return None;
        }
    };
    // A private directory (mode 0700, an unpredictable name, created exclusively): nothing another user planted
    // in the temporary directory is followed or overwritten. It is removed when dropped.
    let dir = match tempfile::Builder::new().prefix("cutec-run-").tempdir() {
        Ok(d) => d,
        Err(e) => {
            eprintln!("error: cannot create a temporary directory for the compiled module: {e}");
            return None;
        }
    };
    let ptx = dir.path().join(format!("{stem}.ptx"));
    let json = dir.path().join(format!("{stem}.json"));
    let written = std::fs::write(&ptx, &art.ptx).and_then(|_| std::fs::write(&json, art.manifest.to_json_pretty()));
    match written {
        Ok(()) => Some((dir, ptx, json)),
        Err(e) => {
            eprintln!("error: cannot write the compiled module into `{}`: {e}", dir.path().display());
            None
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

//! Argument parsing (clap) and the subcommands.

use crate::layout_cmd::LayoutArgs;
use crate::usage;
use clap::builder::TypedValueParser;
use clap::{Parser, Subcommand, ValueEnum};
use cutec::build::BuildOptions;
use cutec::codes;
use cutec::command_line::command_line_error;
use cutec::files;
use cutec::tune::space::{Flops, Shape, SpaceArg};
use cutec::{Checked, DefineValue, check_source, code_tables, parse_const_define, parse_define};
use cutec_codegen::OptLevel;
use cutec_diagnostics::{ColorMode, Diagnostic, ErrorFormat, SourceMap, explain, render_json, render_text};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "cutec", version, about = "A compiler for CuTe-like GPU kernels on NVIDIA Hopper")]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub command: Command,
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
pub(crate) enum Command {
    /// Parse, resolve and type-check files; print every diagnostic.
    Check {
        /// The `.cute` files to check.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Set a const generic parameter: -D N=4096.
        #[arg(short = 'D', value_name = "NAME=VALUE", value_parser = parse_const_define)]
        defines: Vec<(String, DefineValue)>,
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
        #[arg(short = 'D', value_name = "NAME=VALUE", value_parser = parse_const_define)]
        defines: Vec<(String, DefineValue)>,
        /// LLVM optimisation level, 0 to 3 (default 3).
        ///
        /// -O1 and -O2 run LLVM's default<O1> and default<O2>; -O3 runs default<O3> without the passes that change
        /// nothing cutec emits (the same PTX, in less time).
        #[arg(short = 'O', value_name = "LEVEL", value_parser = clap::value_parser!(u8).range(0..=3))]
        opt_level: Option<u8>,
        /// Run this LLVM pass pipeline instead of the level's (the syntax of `opt -passes=`), e.g. default<O3>.
        #[arg(long, value_name = "PIPELINE")]
        llvm_passes: Option<String>,
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
        /// Compile the consts that `cutec tune` found for --shape (needs --kernel if the file has several kernels).
        /// Entries match exactly (source text, kernel, device, shape); without a match the source's defaults are
        /// used, with a note. A -D overrides the file's value.
        #[arg(long, value_name = "FILE", requires = "shape")]
        tuning: Option<PathBuf>,
        /// With --tuning: the shape to compile for, the values of the kernel's dynamic dimensions: M=4096,N=4096.
        #[arg(long, value_name = "DIM=N,...", value_parser = cutec::tune::space::parse_shape)]
        shape: Option<Shape>,
        /// With --tuning: the device whose entry to use (`NVIDIA H200`); needed only if the file has entries for
        /// this shape on several devices.
        #[arg(long, value_name = "NAME", requires = "tuning")]
        tuning_device: Option<String>,
    },
    /// Sweep const parameters for given shapes on the GPU; keep the fastest per shape in a tuning file.
    ///
    /// The configurations are the cartesian product of the --space values, plus the source's defaults, which are
    /// the reference: every configuration's outputs must agree with the default's (or --reference) within the
    /// output type's tolerance before it is timed. Timing: interleaved rounds of CUDA-event-timed launches, the
    /// median over rounds. The best configuration per shape is merged into the tuning file (-o), which `cutec
    /// build --tuning` and `cutec run --tuning` read.
    Tune(TuneArgs),
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
pub(crate) struct RunArgs {
    /// A `.cute` file (compiled first, with -D), or a PTX/cubin module written by `cutec build` (its manifest is
    /// MODULE with extension .json unless --manifest says otherwise).
    pub module: PathBuf,
    /// With a `.cute` file: set a const generic parameter, -D N=4096.
    #[arg(short = 'D', value_name = "NAME=VALUE", value_parser = parse_const_define)]
    pub defines: Vec<(String, DefineValue)>,
    /// The manifest, if not next to the module.
    #[arg(long)]
    pub manifest: Option<PathBuf>,
    /// The kernel to launch.
    #[arg(long)]
    pub kernel: String,
    /// A dynamic dimension: --dim M=4096.
    #[arg(long = "dim", value_name = "NAME=VALUE", value_parser = parse_define)]
    pub dims: Vec<(String, i64)>,
    /// A tensor read from a .npy file: --input x=x.npy (others get seeded random data).
    #[arg(long = "input", value_name = "NAME=FILE", value_parser = clap::builder::OsStringValueParser::new().try_map(usage::parse_path_arg))]
    pub inputs: Vec<(String, PathBuf)>,
    /// A tensor written to a .npy file after the launch: --output y=y.npy.
    #[arg(long = "output", value_name = "NAME=FILE", value_parser = clap::builder::OsStringValueParser::new().try_map(usage::parse_path_arg))]
    pub outputs: Vec<(String, PathBuf)>,
    /// A tensor written to a .npy file before the launch, as the kernel receives it (e.g. its seeded random
    /// data): --save-input x=x.npy.
    #[arg(long = "save-input", value_name = "NAME=FILE", value_parser = clap::builder::OsStringValueParser::new().try_map(usage::parse_path_arg))]
    pub save_inputs: Vec<(String, PathBuf)>,
    /// A scalar argument: --scalar eps=1e-5.
    #[arg(long = "scalar", value_name = "NAME=VALUE", value_parser = usage::parse_scalar_arg)]
    pub scalars: Vec<(String, String)>,
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    #[arg(long, default_value_t = 0)]
    pub device: usize,
    /// Time many launches with CUDA events; print the median and GB/s.
    #[arg(long)]
    pub bench: bool,
    /// Measure the host time of a launch call (checked, prepared, bare driver call); use a tiny problem.
    #[arg(long)]
    pub launch_overhead: bool,
    /// With --bench: untimed launches first (default 10).
    #[arg(long)]
    pub warmup: Option<usize>,
    /// With --bench: timed launches (default 100).
    #[arg(long)]
    pub iters: Option<usize>,
    /// With a `.cute` file: compile the consts `cutec tune` found for this run's shape (its --dim values and
    /// input files) on this device. Entries match exactly (source text, kernel, device, shape); without a match
    /// the source's defaults are used, with a note. A -D overrides the file's value.
    #[arg(long, value_name = "FILE")]
    pub tuning: Option<PathBuf>,
    /// Run the kernel's scheduled IR on the CPU (no GPU needed; a `.cute` file only): every thread of every
    /// block, bit-exact, with deadlocks and out-of-bounds accesses reported at their statements.
    #[arg(long)]
    pub cpu: bool,
    /// With --cpu: when TMA loads land: `earliest` (when issued, the default), `latest` (only when no thread
    /// can go on without one), or `seed=N` (at points drawn from N).
    #[arg(long, value_name = "WHEN", requires = "cpu", value_parser = parse_schedule)]
    pub schedule: Option<cutec_interp::Schedule>,
    /// With --cpu: the SMs of the GPU a persistent kernel's grid is made for (default 132, an H100's); fewer
    /// give each CTA more tiles.
    #[arg(long, value_name = "N", requires = "cpu", value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub sms: Option<u32>,
}

fn parse_schedule(s: &str) -> Result<cutec_interp::Schedule, String> {
    match s {
        "earliest" => Ok(cutec_interp::Schedule::Earliest),
        "latest" => Ok(cutec_interp::Schedule::Latest),
        _ => match s.strip_prefix("seed=").map(str::parse) {
            Some(Ok(seed)) => Ok(cutec_interp::Schedule::Seeded(seed)),
            _ => Err(format!("`{s}` is not a schedule: earliest, latest or seed=N")),
        },
    }
}

#[derive(clap::Args)]
pub(crate) struct TuneArgs {
    /// The `.cute` file.
    pub file: PathBuf,
    /// The kernel to tune (default: the file's only kernel).
    #[arg(long)]
    pub kernel: Option<String>,
    /// A shape to tune for: the values of the kernel's dynamic dimensions, M=4096,N=4096,K=4096 (repeatable).
    #[arg(long = "shape", value_name = "DIM=N,...", required = true, value_parser = cutec::tune::space::parse_shape)]
    pub shapes: Vec<Shape>,
    /// A const parameter and the values to try: --space BN=128,256 (repeatable; the product is swept).
    #[arg(long = "space", value_name = "NAME=V1,V2,...", value_parser = cutec::tune::space::parse_space)]
    pub space: Vec<SpaceArg>,
    /// Fix a const parameter for every configuration: -D N=4096.
    #[arg(short = 'D', value_name = "NAME=VALUE", value_parser = parse_const_define)]
    pub defines: Vec<(String, DefineValue)>,
    /// The tuning file the best configurations are merged into (entries of the same key are replaced).
    #[arg(short = 'o', value_name = "FILE", default_value = "tuning.json")]
    pub output: PathBuf,
    /// Compiling threads (default: the machine's cores).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub jobs: Option<u32>,
    /// Compile (and assemble) the space and report which configurations build; no GPU, nothing written.
    #[arg(long)]
    pub compile_only: bool,
    /// With --compile-only: run every configuration that builds on the CPU at each shape and compare its outputs
    /// with the default's, as tune does on the GPU (exit status 1 if one disagrees, races or fails).
    #[arg(long, requires = "compile_only")]
    pub cpu: bool,
    /// Untimed launches before each configuration's timed ones, in every round.
    #[arg(long, default_value_t = 3)]
    pub warmup: usize,
    /// Timed launches per configuration per round (the round's sample is their median).
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u64).range(1..=100_000).map(|v| v as usize))]
    pub iters: usize,
    /// Rounds over all configurations (the result is the median over rounds).
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..=1000).map(|v| v as usize))]
    pub rounds: usize,
    /// Seed of the random inputs.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    #[arg(long, default_value_t = 0)]
    pub device: usize,
    /// A scalar argument: --scalar eps=1e-5.
    #[arg(long = "scalar", value_name = "NAME=VALUE", value_parser = usage::parse_scalar_arg)]
    pub scalars: Vec<(String, String)>,
    /// The expected value of an output (one --shape only): --reference c=c.npy; by default the default
    /// configuration's output is the reference.
    #[arg(long = "reference", value_name = "NAME=FILE", value_parser = clap::builder::OsStringValueParser::new().try_map(usage::parse_path_arg))]
    pub references: Vec<(String, PathBuf)>,
    /// Relative tolerance of the output check (default by output type: bf16 1.6e-2, f16 2e-3, f32 1e-4).
    #[arg(long)]
    pub rtol: Option<f64>,
    /// Absolute tolerance of the output check (default by output type: bf16 1e-2, f16 1e-3, f32 1e-4).
    #[arg(long)]
    pub atol: Option<f64>,
    /// The work of one launch, as a product of integers and dimensions (2*M*N*K): prints TFLOP/s.
    #[arg(long, value_name = "EXPR", value_parser = cutec::tune::space::parse_flops)]
    pub flops: Option<Flops>,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum, Debug)]
pub(crate) enum Emit {
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
    /// The dependency graph of each loop of the lowered IR, what the pipeliner schedules (Graphviz DOT).
    Deps,
}

impl Emit {
    /// The stage as `--emit` spells it.
    pub fn stage_name(self) -> String {
        self.to_possible_value().map_or_else(|| self.extension().to_owned(), |v| v.get_name().to_owned())
    }
    pub fn extension(self) -> &'static str {
        match self {
            Emit::Tokens => "tokens",
            Emit::Ast => "ast",
            Emit::Ir => "ir",
            Emit::IrScheduled => "sched.ir",
            Emit::Llvm => "ll",
            Emit::Ptx => "ptx",
            Emit::Cubin => "cubin",
            Emit::Manifest => "json",
            Emit::Deps => "deps.dot",
        }
    }
    /// Stages that need the whole compiler, not only the front end.
    pub fn needs_codegen(self) -> bool {
        !matches!(self, Emit::Tokens | Emit::Ast)
    }
}

/// Prints diagnostics in the chosen format; the exit status follows from their codes.
pub(crate) struct Reporter {
    pub format: ErrorFormat,
    pub color: ColorMode,
}

impl Reporter {
    pub fn report(&self, map: &SourceMap, diags: &[Diagnostic]) {
        let mut err = std::io::stderr().lock();
        // A closed stderr is no reason to fail differently: the exit code still says what happened.
        let _ = match self.format {
            ErrorFormat::Human => render_text(map, diags, self.color, &mut err),
            ErrorFormat::Json => render_json(map, diags, &mut err),
        };
    }

    /// Reports `diags` and returns the exit status of their class: 2 for a usage error, else 1.
    pub fn fail(&self, map: &SourceMap, diags: &[Diagnostic]) -> ExitCode {
        self.report(map, diags);
        ExitCode::from(codes::exit_status(diags).max(1))
    }

    /// Reports one error about the command-line `parts` (see [`command_line_error`]).
    pub fn usage(&self, code: &'static str, message: impl Into<String>, parts: &[(&str, &str)]) -> ExitCode {
        let mut map = SourceMap::new();
        let d = command_line_error(&mut map, code, message, parts);
        self.fail(&map, &[d])
    }
}

pub fn main() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().collect();
    let cli = match Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        // clap: --help and --version are successes, anything else is bad usage (E0403, exit 2).
        Err(e) if !e.use_stderr() => {
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        Err(e) => return usage::clap_error(&usage::reporter_from_args(&args), &e),
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
    let _ = crate::ERROR_FORMAT.set(reporter.format);
    if let Some(code) = usage::check_options(&reporter, &cli.command) {
        return code;
    }
    match cli.command {
        Command::Check { files, defines } => check(&reporter, &files, &defines),
        Command::Build {
            file,
            output,
            emit,
            mut defines,
            opt_level,
            llvm_passes,
            kernel,
            print_passes,
            dump_after,
            timings,
            tuning,
            shape,
            tuning_device,
        } => {
            if print_passes {
                print!("{}", cutec_ir::describe_pipeline());
                return ExitCode::SUCCESS;
            }
            let Some(file) = file else {
                return reporter.usage(codes::BAD_ARGUMENT, "give the file to compile: cutec build FILE", &[]);
            };
            if let (Some(t), Some(shape)) = (&tuning, &shape) {
                let request = crate::tuning::Request {
                    file: t,
                    kernel: kernel.as_deref(),
                    shape,
                    device: tuning_device.as_deref(),
                    device_known: tuning_device.is_some(),
                };
                match crate::tuning::tuned_defines(&reporter, &file, &request, &defines) {
                    Ok(d) => defines = d,
                    Err(code) => return code,
                }
            }
            let opts = BuildOptions {
                defines,
                opt_level: match opt_level.unwrap_or(3) {
                    0 => OptLevel::O0,
                    1 => OptLevel::O1,
                    2 => OptLevel::O2,
                    _ => OptLevel::O3,
                },
                kernel,
                dump_after,
                assemble: emit.contains(&Emit::Cubin),
                module_file: String::new(),
                llvm_ir: emit.contains(&Emit::Llvm),
                llvm_passes,
                dep_graphs: emit.contains(&Emit::Deps),
            };
            crate::build_cmd::build(&reporter, &file, output.as_deref(), &emit, opts, timings)
        }
        Command::Layout { expr, eval, eval_file, table, svg, tv } => {
            let args = LayoutArgs {
                expr: expr.as_deref().or(eval.as_deref()),
                eval_file: eval_file.as_deref(),
                table,
                svg: svg.as_deref(),
                tv,
            };
            match crate::layout_cmd::run(&args) {
                Ok(()) => ExitCode::SUCCESS,
                Err(f) => reporter.fail(&f.map, &[f.diagnostic]),
            }
        }
        Command::Run(args) => crate::run_cmd::run(&reporter, args),
        Command::Tune(args) => crate::tune_cmd::tune(&reporter, args),
        Command::Explain { code } => match explain(&code_tables(), &code) {
            Some(info) => {
                println!("{}: {}\n\n{}", info.code, info.title, info.explanation.trim_end());
                ExitCode::SUCCESS
            }
            None => reporter.usage(
                codes::BAD_ARGUMENT,
                format!("no error code `{code}`; codes look like E0101"),
                &[(&code, "no such code")],
            ),
        },
    }
}

/// Reads a source file ([`files::read_source`]), reporting why it cannot be read.
pub(crate) fn read(reporter: &Reporter, path: &Path) -> Option<String> {
    match files::read_source(path) {
        Ok(s) => Some(s),
        Err(e) => {
            let (map, d) = *e;
            reporter.report(&map, &[d]);
            None
        }
    }
}

fn check(reporter: &Reporter, files: &[PathBuf], defines: &[(String, DefineValue)]) -> ExitCode {
    // The worst class over the files: 2 if any error is a usage error (a bad `-D`), else 1 if any failed.
    let mut status = 0;
    for path in files {
        let Some(src) = read(reporter, path) else {
            status = status.max(1);
            continue;
        };
        let checked: Checked = check_source(&path.display().to_string(), &src, defines);
        reporter.report(&checked.map, checked.diagnostics());
        status = status.max(codes::exit_status(checked.diagnostics()));
    }
    ExitCode::from(status)
}

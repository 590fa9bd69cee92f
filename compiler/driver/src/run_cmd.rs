//! `cutec run`: compile a `.cute` file first if given one, then run the module; every error is a diagnostic.

use crate::cli::{Reporter, RunArgs, read};
use cutec::build::{BuildOptions, build_source};
use cutec::codes;
use cutec::command_line::path_error;
use cutec_diagnostics::{Diagnostic, SourceMap};
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

pub(crate) fn run(reporter: &Reporter, args: RunArgs) -> ExitCode {
    if args.cpu {
        return run_on_cpu(reporter, args);
    }
    // A .cute file is compiled first; its PTX and manifest go to a private temporary directory.
    let compiled = if args.module.extension().is_some_and(|e| e == "cute") {
        let defines = match &args.tuning {
            Some(t) => match tuned_for_run(reporter, &args, t) {
                Ok(d) => d,
                Err(code) => return code,
            },
            None => args.defines.clone(),
        };
        match compile_for_run(reporter, &args.module, &args.kernel, &defines) {
            Ok(paths) => Some(paths),
            Err(code) => return code,
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
        warmup: args.warmup.unwrap_or(10),
        iters: args.iters.unwrap_or(100),
    };
    let result = cutec::run::run(&opts, &mut std::io::stdout().lock());
    // The temporary directory (if any) is removed here.
    drop(compiled);
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let mut map = SourceMap::new();
            let d = e.to_diagnostic(&mut map);
            reporter.fail(&map, &[d])
        }
    }
}

/// The `-D` values of `run --tuning FILE`: the entry for this run's shape on this device. The shape is the
/// kernel's dynamic dimensions: `--dim` values, else the extent of an input file the checker reads the dimension
/// from. The device's name comes from the driver; without one the lookup takes any device (the run fails later,
/// saying why).
fn tuned_for_run(
    reporter: &Reporter,
    args: &RunArgs,
    file: &Path,
) -> Result<Vec<(String, cutec_sema::DefineValue)>, ExitCode> {
    let src = read(reporter, &args.module).ok_or(ExitCode::from(1))?;
    let checked = cutec::check_source(&args.module.display().to_string(), &src, &args.defines);
    let mut shape: Vec<(String, i64)> = Vec::new();
    if let Some(k) = checked.output.program.kernel(&args.kernel) {
        for d in &k.dyn_dims {
            if let Some((_, v)) = args.dims.iter().find(|(n, _)| *n == d.name) {
                shape.push((d.name.clone(), *v));
                continue;
            }
            let site = &d.source;
            let param = k.params.get(site.param).map(|p| p.name.as_str());
            let input = args.inputs.iter().find(|(n, _)| Some(n.as_str()) == param).map(|(_, p)| p);
            let extent = match (input, site.path.as_slice(), site.component) {
                (Some(path), [mode], cutec_sema::DimComponent::Shape) => std::fs::File::open(path)
                    .ok()
                    .and_then(|f| cutec_runtime::npy::read_npy(f, &mut |_| {}).ok())
                    .and_then(|a| a.shape.get(*mode).copied()),
                _ => None,
            };
            // A dimension without a value: the run reports it; the lookup uses what is known.
            if let Some(e) = extent.and_then(|e| i64::try_from(e).ok()) {
                shape.push((d.name.clone(), e));
            }
        }
    }
    let device = cutec_runtime::Context::new(args.device).and_then(|c| c.device_name()).ok();
    let request = crate::tuning::Request {
        file,
        kernel: Some(&args.kernel),
        shape: &shape,
        device: device.as_deref(),
        device_known: device.is_some(),
    };
    crate::tuning::tuned_defines(reporter, &args.module, &request, &args.defines)
}

/// `cutec run FILE.cute`: compiles `kernel` and writes its PTX and manifest into a fresh temporary directory;
/// returns (directory, PTX path, manifest path), or the exit status after reporting why it could not.
fn compile_for_run(
    reporter: &Reporter,
    path: &Path,
    kernel: &str,
    defines: &[(String, cutec_sema::DefineValue)],
) -> Result<(tempfile::TempDir, PathBuf, PathBuf), ExitCode> {
    let src = read(reporter, path).ok_or(ExitCode::from(1))?;
    let stem = path.file_stem().map_or_else(|| OsString::from("module"), OsStr::to_owned);
    let file = |ext: &str| {
        let mut name = stem.clone();
        name.push(ext);
        name
    };
    let opts = BuildOptions {
        defines: defines.to_vec(),
        kernel: Some(kernel.to_string()),
        module_file: file(".ptx").to_string_lossy().into_owned(),
        ..BuildOptions::default()
    };
    let art = match build_source(&path.display().to_string(), &src, &opts) {
        Ok((checked, art)) => {
            reporter.report(&checked.map, &art.warnings);
            art
        }
        Err(f) => return Err(reporter.fail(&f.map, &f.diagnostics)),
    };
    let write_failed = |what: &Path, e: std::io::Error| {
        let mut map = SourceMap::new();
        let message = format!("cannot write the compiled module into `{}`: {e}", what.display());
        let d: Diagnostic = path_error(&mut map, codes::WRITE_FAILED, message, what, "cannot be written");
        reporter.fail(&map, &[d])
    };
    // A private directory (mode 0700, an unpredictable name, created exclusively): nothing another user planted
    // in the temporary directory is followed or overwritten. It is removed when dropped.
    let dir =
        tempfile::Builder::new().prefix("cutec-run-").tempdir().map_err(|e| write_failed(&std::env::temp_dir(), e))?;
    let ptx = dir.path().join(file(".ptx"));
    let json = dir.path().join(file(".json"));
    std::fs::write(&ptx, &art.ptx)
        .and_then(|_| std::fs::write(&json, art.manifest.to_json_pretty()))
        .map_err(|e| write_failed(dir.path(), e))?;
    Ok((dir, ptx, json))
}

/// `cutec run FILE.cute --cpu`: compiles the kernel and runs its scheduled IR in the interpreter; its errors are
/// located in the source, through the build's source map.
fn run_on_cpu(reporter: &Reporter, args: RunArgs) -> ExitCode {
    let refuse = |message: &str, option: String, label: &str| {
        let mut map = SourceMap::new();
        let d =
            cutec::command_line::command_line_error(&mut map, codes::CONFLICTING_OPTIONS, message, &[(&option, label)]);
        reporter.fail(&map, &[d])
    };
    if args.module.extension().is_none_or(|e| e != "cute") {
        let message =
            "--cpu runs the compiler's IR, so it needs the `.cute` file: a PTX or cubin module does not hold it";
        return refuse(message, args.module.display().to_string(), "not a `.cute` file");
    }
    for (given, option) in
        [(args.bench, "--bench"), (args.launch_overhead, "--launch-overhead"), (args.tuning.is_some(), "--tuning")]
    {
        if given {
            return refuse(
                &format!("{option} measures or tunes on a GPU; --cpu runs on none"),
                option.to_string(),
                "not with --cpu",
            );
        }
    }
    let Some(src) = read(reporter, &args.module) else { return ExitCode::from(1) };
    let opts =
        BuildOptions { defines: args.defines.clone(), kernel: Some(args.kernel.clone()), ..BuildOptions::default() };
    let (checked, art) = match build_source(&args.module.display().to_string(), &src, &opts) {
        Ok(built) => built,
        Err(f) => return reporter.fail(&f.map, &f.diagnostics),
    };
    reporter.report(&checked.map, &art.warnings);
    let opts = cutec::run::RunOptions {
        manifest_path: PathBuf::new(),
        ptx_path: args.module.clone(),
        kernel: args.kernel,
        dims: args.dims,
        inputs: args.inputs,
        outputs: args.outputs,
        save_inputs: args.save_inputs,
        scalars: args.scalars,
        seed: args.seed,
        ..cutec::run::RunOptions::default()
    };
    let cpu = cutec::run::CpuOptions {
        schedule: args.schedule.unwrap_or_default(),
        sms: args.sms.unwrap_or(cutec::run::CPU_SMS),
    };
    match cutec::run::run_cpu(&opts, cpu, &art.scheduled, &art.manifest, &mut std::io::stdout().lock()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let mut map = checked.map.clone();
            let d = e.to_diagnostic(&mut map);
            reporter.fail(&map, &[d])
        }
    }
}

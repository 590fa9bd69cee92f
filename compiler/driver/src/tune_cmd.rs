//! `cutec tune`: the options checked against the kernel, the space compiled in parallel, then (with a GPU) each
//! shape checked and timed, the tables printed and the tuning file merged. See `cutec::tune` for the parts.

use crate::cli::{Reporter, TuneArgs, read};
use cutec::build::BuildOptions;
use cutec::codes;
use cutec::command_line::{command_line_error, path_error};
use cutec::tune::compile::{Outcome, compile_all};
use cutec::tune::file::{ConstJson, Entry, TuningFile, source_hash};
use cutec::tune::measure::{Candidate, MeasureOptions, Measured, measure_shape};
use cutec::tune::report::{Row, best, table};
use cutec::tune::space::{Config, Factor, check_space, spell_shape};
use cutec::tune::{Status, space::Space};
use cutec::{Checked, check_source};
use cutec_diagnostics::SourceMap;
use std::process::ExitCode;
use std::time::Instant;

pub(crate) fn tune(reporter: &Reporter, args: TuneArgs) -> ExitCode {
    let Some(src) = read(reporter, &args.file) else { return ExitCode::from(1) };
    let name = args.file.display().to_string();
    // The kernel and its parameters, as checked with the fixed -D values.
    let mut checked: Checked = check_source(&name, &src, &args.defines);
    if checked.has_errors() {
        return reporter.fail(&checked.map, checked.diagnostics());
    }
    let kernels: Vec<String> = checked
        .output
        .program
        .kernels()
        .filter(|k| k.module == cutec_sema::ModuleId::ROOT)
        .map(|k| k.name.clone())
        .collect();
    let kernel_name = match (&args.kernel, kernels.as_slice()) {
        (Some(k), _) => k.clone(),
        (None, [one]) => one.clone(),
        (None, _) => {
            let file = args.file.display().to_string();
            let message = if kernels.is_empty() {
                "this file has no kernel to tune".to_owned()
            } else {
                format!("this file has several kernels ({}); choose one with --kernel", kernels.join(", "))
            };
            return reporter.usage(codes::UNKNOWN_KERNEL, message, &[(&file, "which kernel?")]);
        }
    };
    let Some(kernel) = checked.output.program.kernel(&kernel_name).cloned() else {
        let option = format!("--kernel {kernel_name}");
        let mut map = SourceMap::new();
        let mut d = command_line_error(
            &mut map,
            codes::UNKNOWN_KERNEL,
            format!("no kernel named `{kernel_name}`"),
            &[(&option, "no such kernel")],
        );
        if let Some(s) = cutec_diagnostics::suggest(&kernel_name, kernels.iter().map(String::as_str)) {
            d = d.with_help(format!("did you mean `{s}`?"));
        }
        return reporter.fail(&map, &[d.with_note(format!("the kernels of this file are: {}", kernels.join(", ")))]);
    };
    let space: Space = match check_space(&mut checked.map, &kernel, &args.space, &args.defines, &args.shapes) {
        Ok(s) => s,
        Err(d) => return reporter.fail(&checked.map, &[d]),
    };
    if let Some(code) = check_extras(reporter, &args, &kernel) {
        return code;
    }
    // The file the results go into is read first: a sweep must not end on a file it cannot merge into.
    let mut tuning = match TuningFile::read_or_new(&args.output) {
        Ok(t) => t,
        Err(e) => {
            let mut map = SourceMap::new();
            let message = format!("cannot merge into `{}`: {e}", args.output.display());
            let d = path_error(&mut map, codes::TUNING_FILE, message, &args.output, "not a usable tuning file")
                .with_help("remove it, or write elsewhere with -o FILE");
            return reporter.fail(&map, &[d]);
        }
    };

    let configs = space.configurations();
    let Some(baseline) = configs.iter().position(|c| c.is_default).or(if configs.is_empty() { None } else { Some(0) })
    else {
        return reporter.usage(codes::TUNE_OPTIONS, "the space has no configuration", &[]);
    };
    let jobs = args.jobs.map_or_else(|| std::thread::available_parallelism().map_or(1, usize::from), |j| j as usize);
    let assemble = cutec_codegen::find_ptxas().is_some();
    let dims: Vec<String> = space.params.iter().map(|p| format!("{}: {}", p.name, p.values.len())).collect();
    println!(
        "tune {kernel_name} in {name}: {} configurations ({}; baseline {}), {} shape(s)",
        configs.len(),
        if dims.is_empty() { "no --space".to_owned() } else { dims.join(" x ") },
        configs[baseline].label(),
        space.shapes.len()
    );

    // Compile.
    let status = Status::stderr();
    let total = configs.len();
    let tick = |phase: &str, n: usize| status.show(&format!("{phase} {n}/{total}"), n == total);
    let base =
        BuildOptions { defines: args.defines.clone(), kernel: Some(kernel_name.clone()), ..BuildOptions::default() };
    let defines: Vec<_> = configs.iter().map(|c| c.values.clone()).collect();
    let (outcomes, compile_s, assemble_s) = compile_all(&name, &src, &base, &defines, jobs, assemble, &tick);
    status.clear();
    let built = outcomes.iter().filter(|o| o.is_ok()).count();
    println!(
        "compiled {total} configurations in {compile_s:.2} s on {jobs} threads: {built} built, {} skipped",
        total - built
    );
    match assemble_s {
        Some(s) => println!("assembled {built} with ptxas in {s:.2} s"),
        None => println!("ptxas not found: the driver compiles the PTX when it is loaded"),
    }
    for (c, o) in configs.iter().zip(&outcomes) {
        if let Err(skip) = o {
            println!("  skipped {}: {} {}", c.label(), skip.code, skip.message);
        }
    }
    if let Err(skip) = &outcomes[baseline] {
        let mut map = SourceMap::new();
        let label = configs[baseline].label();
        let d = command_line_error(
            &mut map,
            codes::BUILD_CANNOT_PROCEED,
            format!(
                "the baseline configuration {label} does not compile ({} {}): nothing to compare with",
                skip.code, skip.message
            ),
            &[(&name, "")],
        )
        .with_help(format!("`cutec build {name} --kernel {kernel_name}` with its values shows the whole diagnostic"));
        return reporter.fail(&map, &[d]);
    }
    if args.compile_only && args.cpu {
        let check = cutec::tune::cpu::CpuCheck {
            kernel: &kernel_name,
            scalars: &args.scalars,
            seed: args.seed,
            rtol: args.rtol,
            atol: args.atol,
        };
        let mut out = std::io::stdout().lock();
        return match cutec::tune::cpu::check_on_cpu(&check, &configs, &outcomes, baseline, &space.shapes, &mut out) {
            Ok(true) => ExitCode::SUCCESS,
            Ok(false) | Err(_) => ExitCode::from(1),
        };
    }
    if args.compile_only {
        return ExitCode::SUCCESS;
    }
    match measure_all(&args, &space, &configs, &outcomes, baseline, &kernel_name, &src, &status) {
        Ok(entries) => {
            let n = entries.len();
            tuning.merge(entries);
            if let Err(e) = tuning.write(&args.output) {
                let mut map = SourceMap::new();
                let message = format!("cannot write `{}`: {e}", args.output.display());
                let d = path_error(&mut map, codes::WRITE_FAILED, message, &args.output, "cannot be written");
                return reporter.fail(&map, &[d]);
            }
            println!(
                "wrote {n} entr{} into {} ({} in all)",
                if n == 1 { "y" } else { "ies" },
                args.output.display(),
                tuning.entries.len()
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            status.clear();
            let mut map = SourceMap::new();
            let d = e.to_diagnostic(&mut map);
            reporter.fail(&map, &[d])
        }
    }
}

/// `--flops` names dimensions of the kernel; `--reference` names outputs, for one shape.
fn check_extras(reporter: &Reporter, args: &TuneArgs, kernel: &cutec_sema::FunctionInfo) -> Option<ExitCode> {
    let dims: Vec<&str> = kernel.dyn_dims.iter().map(|d| d.name.as_str()).collect();
    if let Some(f) = &args.flops {
        for factor in &f.factors {
            if let Factor::Dim(d) = factor
                && !dims.contains(&d.as_str())
            {
                let option = format!("--flops {}", f.text);
                return Some(reporter.usage(
                    codes::TUNE_OPTIONS,
                    format!("`{d}` is not a dimension of `{}` (its dimensions: {})", kernel.name, dims.join(", ")),
                    &[(&option, "no such dimension")],
                ));
            }
        }
    }
    if let Some((n, p)) = args.references.first() {
        let option = format!("--reference {n}={}", p.display());
        if args.shapes.len() > 1 {
            return Some(reporter.usage(
                codes::CONFLICTING_OPTIONS,
                format!("--reference gives the output of one shape; {} shapes are tuned", args.shapes.len()),
                &[(&option, "one shape's output")],
            ));
        }
        for (n, p) in &args.references {
            if !kernel.params.iter().any(|q| q.name == *n) {
                let option = format!("--reference {n}={}", p.display());
                return Some(reporter.usage(
                    codes::TUNE_OPTIONS,
                    format!("kernel `{}` has no parameter `{n}`", kernel.name),
                    &[(&option, "no such output")],
                ));
            }
        }
    }
    None
}

/// Loads every built configuration on the GPU, then checks and times them shape by shape, printing a table for
/// each; returns the tuning file's new entries.
#[allow(clippy::too_many_arguments)]
fn measure_all(
    args: &TuneArgs,
    space: &Space,
    configs: &[Config],
    outcomes: &[Outcome],
    baseline: usize,
    kernel_name: &str,
    src: &str,
    status: &Status,
) -> Result<Vec<Entry>, cutec::run::RunError> {
    use cutec_runtime::{Context, Module};
    let ctx = Context::new(args.device)?;
    let device = ctx.device_name()?;
    let start = Instant::now();
    // The configurations that load, with their index in `configs`.
    let mut loaded: Vec<(usize, cutec_runtime::Kernel)> = Vec::new();
    for (k, o) in outcomes.iter().enumerate() {
        let Ok(b) = o else { continue };
        status.show(&format!("loading {}/{}", k + 1, outcomes.len()), false);
        let module = match &b.cubin {
            Some(cubin) => Module::load_cubin(&ctx, cubin, b.manifest.clone()),
            None => Module::load_ptx(&ctx, &b.ptx, b.manifest.clone()),
        };
        match module.and_then(|m| m.kernel(kernel_name)) {
            Ok(kernel) => loaded.push((k, kernel)),
            Err(e) if k == baseline => return Err(e.into()),
            Err(e) => {
                status.clear();
                println!("  skipped {}: cannot be loaded: {e}", configs[k].label());
            }
        }
    }
    status.clear();
    println!("loaded {} modules on {device} in {:.2} s", loaded.len(), start.elapsed().as_secs_f64());
    let candidates: Vec<Candidate<'_>> =
        loaded.iter().map(|(k, kernel)| Candidate { kernel, label: configs[*k].label() }).collect();
    let base = loaded.iter().position(|(k, _)| *k == baseline).unwrap_or(0);
    let opts = MeasureOptions {
        seed: args.seed,
        warmup: args.warmup,
        iters: args.iters,
        rounds: args.rounds,
        scalars: args.scalars.clone(),
        rtol: args.rtol,
        atol: args.atol,
        references: args.references.clone(),
    };
    let hash = source_hash(src);
    let mut entries = Vec::new();
    for (s, shape) in space.shapes.iter().enumerate() {
        let shape_text = spell_shape(shape);
        let started = Instant::now();
        let mut progress =
            |what: String| status.show(&format!("shape {}/{} {shape_text}: {what}", s + 1, space.shapes.len()), false);
        let results = measure_shape(&ctx, &candidates, base, shape, &opts, &mut progress)?;
        status.clear();
        let labels: Vec<String> = loaded.iter().map(|(k, _)| configs[*k].label()).collect();
        let rows: Vec<Row<'_>> = loaded
            .iter()
            .zip(&labels)
            .zip(&results)
            .map(|(((k, _), label), result)| Row { label, is_default: configs[*k].is_default, result })
            .collect();
        let flops = args.flops.as_ref().and_then(|f| f.at(shape));
        println!(
            "\nshape {shape_text} on {device} ({} rounds x {} launches, {:.1} s):",
            args.rounds,
            args.iters,
            started.elapsed().as_secs_f64()
        );
        print!("{}", table(&rows, flops));
        let (Some(b), Some(Measured::Timed { timing: base_t, .. })) = (best(&rows), results.get(base)) else {
            println!("  no configuration agreed with the reference and ran: no entry");
            continue;
        };
        let Measured::Timed { timing, .. } = &results[b] else { continue };
        let (k, _) = &loaded[b];
        println!("  best: {} ({:.3}x the default)", configs[*k].label(), base_t.median_us / timing.median_us);
        let mut consts: std::collections::BTreeMap<String, ConstJson> =
            args.defines.iter().map(|(n, v)| (n.clone(), ConstJson::from(*v))).collect();
        consts.extend(configs[*k].values.iter().map(|(n, v)| (n.clone(), ConstJson::from(*v))));
        entries.push(Entry {
            source_hash: hash.clone(),
            kernel: kernel_name.to_owned(),
            device: device.clone(),
            shape: shape.iter().cloned().collect(),
            consts,
            time_us: timing.median_us,
            default_time_us: base_t.median_us,
            source: Some(args.file.display().to_string()),
        });
    }
    Ok(entries)
}

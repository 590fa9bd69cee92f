//! `cutec build`: a checked program through lowering, the pass pipeline and codegen, keeping each stage's text.

use crate::codes;
use crate::command_line::command_line_error;
use crate::{Checked, check_source};
use cutec_codegen::{OptLevel, Options};
use cutec_diagnostics::{Diagnostic, FileId, SourceMap, Span};

/// What to compile and how.
#[derive(Clone, Debug, Default)]
pub struct BuildOptions {
    pub defines: Vec<(String, cutec_sema::DefineValue)>,
    pub opt_level: OptLevel,
    /// Compile only this kernel (default: every kernel of the file).
    pub kernel: Option<String>,
    /// Keep the IR as it is after this pass (`--dump-after PASS`).
    pub dump_after: Option<String>,
    /// Assemble the PTX with ptxas for `sm_90a` (`--emit cubin`).
    pub assemble: bool,
    /// The name of the module file the manifest points to (`softmax.ptx`).
    pub module_file: String,
    /// Print the optimized LLVM module into [`Artifacts::llvm`] (`--emit llvm`).
    pub llvm_ir: bool,
    /// The LLVM pass pipeline that replaces the level's (`--llvm-passes`).
    pub llvm_passes: Option<String>,
    /// Draw the dependency graph of each loop of the lowered IR into [`Artifacts::deps`] (`--emit deps`).
    pub dep_graphs: bool,
}

/// Every stage's output of one successful build.
pub struct Artifacts {
    /// The IR as lowered from the checked program (its text: [`Artifacts::ir`]).
    pub lowered: cutec_ir::Module,
    /// The IR after the pass pipeline, what codegen sees (its text: [`Artifacts::ir_scheduled`]).
    pub scheduled: cutec_ir::Module,
    /// The IR after the `--dump-after` pass.
    pub dump: Option<String>,
    /// The optimized LLVM module, when [`BuildOptions::llvm_ir`] asks for it.
    pub llvm: Option<String>,
    /// Graphviz DOT of the dependency graph of each loop of the lowered IR (what the pipeliner schedules), one
    /// `digraph` per loop, when [`BuildOptions::dep_graphs`] asks for it.
    pub deps: Option<String>,
    pub ptx: String,
    pub manifest: cutec_manifest::Manifest,
    /// ptxas's report and the cubin, when asked for.
    pub ptxas: Option<cutec_codegen::PtxasReport>,
    /// Warnings of lowering (e.g. a register tensor indexed at run time).
    pub warnings: Vec<Diagnostic>,
    /// Wall time of each stage, in order (`cutec build --timings`).
    pub timings: Vec<(&'static str, std::time::Duration)>,
    /// Wall time of each IR pass that changes the module, in order: the parts of the stage `IR passes`.
    pub pass_timings: Vec<(&'static str, std::time::Duration)>,
    /// Wall time of each checking pass, which run beside code generation (the stage [`CHECKS_STAGE`] is the
    /// wait for them after it).
    pub check_timings: Vec<(&'static str, std::time::Duration)>,
}

impl Artifacts {
    /// The text of the IR as lowered (`--emit ir`). Printed on demand: the text of an unrolled epilogue costs
    /// more than a millisecond, which a build that does not show it should not pay.
    pub fn ir(&self) -> String {
        cutec_ir::print(&self.lowered)
    }

    /// The text of the IR after the pass pipeline (`--emit ir-scheduled`), printed on demand like [`Artifacts::ir`].
    pub fn ir_scheduled(&self) -> String {
        cutec_ir::print(&self.scheduled)
    }
}

/// A failed build: the sources and the diagnostics saying why.
pub struct BuildFailure {
    pub map: SourceMap,
    pub diagnostics: Vec<Diagnostic>,
    /// The IR after the `--dump-after` pass, when the build failed after it (a check that refuses what a
    /// scheduling pass wrote is read against it).
    pub dump: Option<String>,
}

/// Checks, lowers, optimises and generates code for `source`.
/// The stage of [`Artifacts::timings`] that is the wait for the checking passes once code generation is done.
pub const CHECKS_STAGE: &str = "checks (after codegen)";

pub fn build_source(name: &str, source: &str, opts: &BuildOptions) -> Result<(Checked, Artifacts), BuildFailure> {
    let mut timings = Vec::new();
    let mut clock = std::time::Instant::now();
    let mut lap = |stage: &'static str, timings: &mut Vec<(&'static str, std::time::Duration)>| {
        let now = std::time::Instant::now();
        timings.push((stage, now - clock));
        clock = now;
    };
    let checked = check_source(name, source, &opts.defines);
    lap("parse + check", &mut timings);
    if checked.has_errors() {
        let diagnostics = checked.output.diagnostics.clone();
        return Err(BuildFailure { map: checked.map, diagnostics, dump: None });
    }
    let root = checked.root;
    let fail =
        |checked: Checked, diagnostics: Vec<Diagnostic>| BuildFailure { map: checked.map, diagnostics, dump: None };
    let mut checked = checked;
    if let Some(d) = opts.kernel.as_deref().and_then(|k| unknown_kernel(&mut checked, k)) {
        return Err(fail(checked, vec![d]));
    }
    if let Some(d) = opts.dump_after.as_deref().and_then(|p| unknown_pass(&mut checked.map, p)) {
        return Err(fail(checked, vec![d]));
    }
    let program = &checked.output.program;
    let lowered = match &opts.kernel {
        Some(k) => cutec_lower::lower(program, k),
        None => cutec_lower::lower_all(program),
    };
    let cutec_lower::Lowered { mut module, interfaces } = match lowered {
        Ok(lowered) => lowered,
        Err(d) => return Err(fail(checked, d)),
    };
    if module.kernels.is_empty() {
        let d = driver_error(root, "this file has no kernel to compile")
            .with_help("`cutec build` compiles `kernel` items; `cutec check` checks files of device functions");
        return Err(fail(checked, vec![d]));
    }
    let lowered = module.clone();
    let deps = opts.dep_graphs.then(|| dependency_graphs(&module));
    lap("lower", &mut timings);
    let mut dump = None;
    let mut hook = |name: &str, m: &cutec_ir::Module| {
        if opts.dump_after.as_deref() == Some(name) {
            dump = Some(cutec_ir::print(m));
        }
    };
    let mut pass_timings = Vec::new();
    let (transforms, checks) = cutec_ir::pipeline_parts();
    let pipeline = cutec_ir::PipelineOptions {
        verify_each: cfg!(debug_assertions),
        after_pass: Some(&mut hook),
        timings: Some(&mut pass_timings),
    };
    let pipeline_failed = |checked, e: cutec_ir::passes::PipelineError| match e {
        // A pass that cannot do what the program asks (E0324 and others, at the loop or kernel).
        cutec_ir::passes::PipelineError::Pass(e) if e.code() != cutec_ir::codes::INTERNAL => {
            fail(checked, vec![e.to_diagnostic()])
        }
        e => fail(checked, vec![internal(root, format!("the IR is invalid after a pass: {e}"))]),
    };
    if let Err(e) = cutec_ir::run_passes(&mut module, &transforms, pipeline) {
        return Err(BuildFailure { dump, ..pipeline_failed(checked, e) });
    }
    // A checking pass changes nothing: what it "leaves" is the scheduled module.
    if dump.is_none() && checks.iter().any(|p| opts.dump_after.as_deref() == Some(p.name())) {
        dump = Some(cutec_ir::print(&module));
    }
    lap("IR passes", &mut timings);
    let options = Options {
        opt_level: opts.opt_level,
        module_file: opts.module_file.clone(),
        keep_llvm_ir: opts.llvm_ir,
        llvm_passes: opts.llvm_passes.clone(),
        ..Options::default()
    };
    // The checking passes (collectives, operands, roles and mbarriers, the protocol's simulation) run on a copy of
    // the module on another thread while LLVM compiles the module: the two take similar time, and a check only
    // refuses, so its verdict is awaited before anything is used.
    let mut copy = module.clone();
    let mut check_timings = Vec::new();
    let (checked_ir, compiled, waited) = std::thread::scope(|s| {
        let checking = s.spawn(|| {
            let options = cutec_ir::PipelineOptions { timings: Some(&mut check_timings), ..Default::default() };
            cutec_ir::run_passes(&mut copy, &checks, options)
        });
        let compiled = cutec_codegen::compile(&module, &interfaces, &options);
        let codegen_done = std::time::Instant::now();
        let checked_ir = checking.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (checked_ir, compiled, codegen_done.elapsed())
    });
    let mut check_warnings = match checked_ir {
        Ok(info) => info.warnings,
        Err(e) => return Err(BuildFailure { dump, ..pipeline_failed(checked, e) }),
    };
    // After the pipeline: `unroll` turns the indices of unrolled loops into constants.
    let mut warnings = cutec_ir::warnings(&module);
    warnings.append(&mut check_warnings);
    let out = match compiled {
        Ok(o) => o,
        Err(cutec_codegen::CodegenError::Unsupported { what }) => {
            let d = Diagnostic::error(
                cutec_ir::codes::UNSUPPORTED,
                format!("{what} is not supported yet by code generation"),
                root,
                Span::new(0, 0),
            );
            return Err(fail(checked, vec![d]));
        }
        Err(e) => return Err(fail(checked, vec![internal(root, e.to_string())])),
    };
    // The codegen phases' own laps replace the one lap they add up to, with the wait for the checks after them.
    lap("codegen", &mut timings);
    timings.pop();
    timings.extend(out.timings.iter().copied());
    timings.push((CHECKS_STAGE, waited));
    let ptxas = if opts.assemble {
        match cutec_codegen::assemble_with_ptxas(&out.ptx) {
            Ok(r) => Some(r),
            Err(e) => {
                let d = driver_error(root, format!("ptxas failed: {e}"))
                    .with_help("install it with `bash scripts/install-deps.sh`, or set CUTEC_PTXAS to its path");
                return Err(fail(checked, vec![d]));
            }
        }
    } else {
        None
    };
    if opts.assemble {
        lap("ptxas", &mut timings);
    }
    // ptxas's coded advisories say that the machine code is not what the program states (a register budget
    // ignored, wgmma serialized): warnings at the kernel (when the module has one).
    if let Some(report) = &ptxas {
        let at = match module.kernels.as_slice() {
            [k] if k.loc != cutec_ir::Loc::NONE => (k.loc.file, k.loc.span),
            _ => (root, Span::new(0, 0)),
        };
        for line in &report.warnings {
            let advisory = line.split_once(':').map_or(line.as_str(), |(_, rest)| rest.trim());
            warnings.push(
                Diagnostic::warning(codes::PTXAS_ADVISORY, format!("ptxas: {advisory}"), at.0, at.1)
                    .with_primary_message("in the machine code of this kernel"),
            );
        }
    }
    let artifacts = Artifacts {
        lowered,
        scheduled: module,
        dump,
        llvm: out.llvm_ir,
        deps,
        ptx: out.ptx,
        manifest: out.manifest,
        ptxas,
        warnings,
        timings,
        pass_timings,
        check_timings,
    };
    Ok((checked, artifacts))
}

/// `--kernel NAME` naming no kernel of the checked file (E0405, a usage error), anchored on the option.
fn unknown_kernel(checked: &mut Checked, name: &str) -> Option<Diagnostic> {
    let program = &checked.output.program;
    if program.kernel(name).is_some() {
        return None;
    }
    let names: Vec<&str> =
        program.kernels().filter(|k| k.module == cutec_sema::ModuleId::ROOT).map(|k| k.name.as_str()).collect();
    let option = format!("--kernel {name}");
    let d = command_line_error(
        &mut checked.map,
        codes::UNKNOWN_KERNEL,
        format!("no kernel named `{name}`"),
        &[(&option, "no such kernel")],
    );
    let d = match cutec_diagnostics::suggest(name, names.iter().copied()) {
        Some(s) => d.with_help(format!("did you mean `{s}`?")),
        None => d,
    };
    Some(if names.is_empty() {
        d.with_note("this file has no kernel")
    } else {
        d.with_note(format!("the kernels of this file are: {}", names.join(", ")))
    })
}

/// `--dump-after PASS` naming no pass of the pipeline (E0403, a usage error), anchored on the option.
pub fn unknown_pass(map: &mut SourceMap, pass: &str) -> Option<Diagnostic> {
    if cutec_ir::find_pass(pass).is_some() {
        return None;
    }
    let names: Vec<&str> = cutec_ir::pipeline().iter().map(|p| p.name()).collect();
    // A prefix or part of a name is the likeliest slip (`fold` for `fold-constants`), then a typo.
    let close = names.iter().copied().find(|n| n.starts_with(pass) || n.contains(pass));
    let hint = close.or_else(|| cutec_diagnostics::suggest(pass, names.iter().copied()));
    let option = format!("--dump-after {pass}");
    let mut d = command_line_error(
        map,
        codes::BAD_ARGUMENT,
        format!("--dump-after: no pass named `{pass}`"),
        &[(&option, "no such pass")],
    );
    if let Some(h) = hint {
        d = d.with_help(format!("did you mean `{h}`?"));
    }
    Some(d.with_note(format!("the passes are: {}", names.join(", "))))
}

/// A driver-level error (E0401) anchored at the start of the file.
fn driver_error(file: FileId, message: impl Into<String>) -> Diagnostic {
    Diagnostic::error("E0401", message, file, Span::new(0, 0))
}

/// A bug in the compiler that reached the user as an error rather than a panic (E0402).
fn internal(file: FileId, message: String) -> Diagnostic {
    Diagnostic::error("E0402", format!("internal compiler error: {message}"), file, Span::new(0, 0))
        .with_note("this is a bug in cutec; please report it with the input that caused it")
}

/// One line per kernel: what the manifest says (parameters, dynamic dimensions, launch, shared memory).
pub fn manifest_summary(m: &cutec_manifest::Manifest) -> String {
    use cutec_manifest::{ConstValue, Param};
    let list = |items: &[cutec_manifest::Expr]| items.iter().map(|e| e.to_string()).collect::<Vec<_>>().join(", ");
    let mut out = String::new();
    for k in &m.kernels {
        let params: Vec<String> = k
            .params
            .iter()
            .map(|p| match p {
                Param::Tensor(t) => format!("{}: {}[{}]", t.name, t.dtype, t.layout),
                Param::Scalar(s) => format!("{}: {}", s.name, s.dtype),
            })
            .collect();
        out.push_str(&format!("kernel {}({})\n", k.name, params.join(", ")));
        if !k.dims.is_empty() {
            let dims: Vec<&str> = k.dims.iter().map(|d| d.name.as_str()).collect();
            out.push_str(&format!("  dynamic dims: {}\n", dims.join(", ")));
        }
        // A persistent kernel's grid counts tiles; the runtime launches one CTA per SM at most.
        let (grid, per_sm) = match k.launch.persistent {
            true => ("tiles", ", persistent (one CTA per SM)"),
            false => ("grid", ""),
        };
        let cluster = k.launch.cluster.as_ref().map_or_else(String::new, |c| format!(", cluster = ({})", list(c)));
        out.push_str(&format!(
            "  launch: {grid} = ({}), block = ({}){cluster}{per_sm}, static smem = {} B\n",
            list(&k.launch.grid),
            list(&k.launch.block),
            k.launch.static_smem_bytes
        ));
        if let Some(f) = &k.flops {
            out.push_str(&format!("  tensor-core flops per launch: {f}\n"));
        }
        if !k.const_params.is_empty() {
            let consts: Vec<String> = k
                .const_params
                .iter()
                .map(|(n, v)| match v {
                    ConstValue::Bool(b) => format!("{n} = {b}"),
                    ConstValue::Int(i) => format!("{n} = {i}"),
                    ConstValue::Str(s) => format!("{n} = {s:?}"),
                })
                .collect();
            out.push_str(&format!("  const params: {}\n", consts.join(", ")));
        }
    }
    out
}

/// The dependency graph of every loop of every kernel, outermost first, as Graphviz DOT: one `digraph`
/// named `KERNEL_loopN` per loop (`dot -Tsvg` draws each), headed by a comment with the loop's first line.
fn dependency_graphs(module: &cutec_ir::Module) -> String {
    fn loops<'a>(b: &'a cutec_ir::Block, out: &mut Vec<&'a cutec_ir::Stmt>) {
        for s in b.stmts() {
            if s.is_loop() {
                out.push(s);
            }
            for inner in s.blocks() {
                loops(inner, out);
            }
        }
    }
    let mut out = String::new();
    for k in &module.kernels {
        let mut found = Vec::new();
        loops(&k.body, &mut found);
        for (i, s) in found.into_iter().enumerate() {
            let Some(g) = cutec_ir::analysis::deps::DepGraph::of_loop(k, s) else { continue };
            let head = cutec_ir::stmt_line(k, s);
            let dot = g.to_dot().replacen("digraph deps {", &format!("digraph {}_loop{i} {{", k.name), 1);
            out.push_str(&format!("// {}: {head}\n{dot}", k.name));
        }
    }
    out
}

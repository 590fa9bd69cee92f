//! The NVPTX target machine, LLVM's optimization pipeline and PTX emission.

use crate::{CodegenError, Options};
use inkwell::OptimizationLevel;
use inkwell::module::Module;
use inkwell::passes::PassBuilderOptions;
use inkwell::targets::{CodeModel, FileType, InitializationConfig, RelocMode, Target, TargetMachine, TargetTriple};
use std::sync::Once;

/// The target triple of every module.
pub const TRIPLE: &str = "nvptx64-nvidia-cuda";

/// How hard LLVM optimizes: `-O0` runs no LLVM pass (variables stay in memory), `-O1` and `-O2` run the new pass
/// manager's `default<O1>` and `default<O2>`, `-O3` runs [`O3_PIPELINE`] (`default<O3>`'s effect on cutec's
/// kernels at less cost). The level also sets the target machine's code generation level.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum OptLevel {
    O0,
    O1,
    O2,
    #[default]
    O3,
}

impl OptLevel {
    fn llvm(self) -> OptimizationLevel {
        match self {
            OptLevel::O0 => OptimizationLevel::None,
            OptLevel::O1 => OptimizationLevel::Less,
            OptLevel::O2 => OptimizationLevel::Default,
            OptLevel::O3 => OptimizationLevel::Aggressive,
        }
    }
    /// From the number after `-O`.
    pub fn from_level(level: u8) -> Option<OptLevel> {
        Some(match level {
            0 => OptLevel::O0,
            1 => OptLevel::O1,
            2 => OptLevel::O2,
            3 => OptLevel::O3,
            _ => return None,
        })
    }
}

static INIT: Once = Once::new();

/// `-nvptx-short-ptr`: pointers to shared, constant and local memory are 32 bits wide, as nvcc makes them. Every
/// shared-memory address a kernel computes (ring slots, barriers, swizzled offsets) is then 32-bit arithmetic: in
/// a pipelined GEMM's mainloop, 64-bit shifts after the ring's barrier wait stalled the issue (docs/perf/fp8.md).
/// The option is global to LLVM, hence set once, before the first target machine.
fn short_shared_pointers() {
    let args = [c"cutec".as_ptr(), c"-nvptx-short-ptr".as_ptr()];
    // SAFETY: two NUL-terminated strings that outlive the call; LLVM copies what it keeps. Called once (INIT),
    // before any thread reads LLVM's options.
    unsafe {
        inkwell::llvm_sys::support::LLVMParseCommandLineOptions(args.len() as i32, args.as_ptr(), std::ptr::null());
    }
}

/// The target machine for `options` (CPU and PTX version).
pub(crate) fn machine(options: &Options) -> Result<TargetMachine, CodegenError> {
    INIT.call_once(|| {
        Target::initialize_nvptx(&InitializationConfig::default());
        short_shared_pointers();
    });
    let triple = TargetTriple::create(TRIPLE);
    let target = Target::from_triple(&triple).map_err(|e| CodegenError::llvm("the NVPTX target", e.to_string()))?;
    let features = format!("+ptx{}", options.ptx_version);
    target
        .create_target_machine(
            &triple,
            &options.cpu,
            &features,
            options.opt_level.llvm(),
            RelocMode::Default,
            CodeModel::Default,
        )
        .ok_or_else(|| CodegenError::llvm("the NVPTX target machine", format!("{} {features}", options.cpu)))
}

/// `-O3`'s pipeline, the default: LLVM's `default<O3>` without the passes that change nothing cutec emits.
///
/// cutec hands LLVM one kernel function with no calls (helpers are inlined, loops the program unrolls are unrolled,
/// constants folded and common subexpressions merged by the IR passes), so most of `default<O3>` (the inliner,
/// coroutines, the vectorizers, `jump-threading`, `dse`, four of its nine `instcombine`s)
/// finds nothing to do, yet costs its time: `instcombine` alone was half of the optimiser on `gemm_sm90`.
/// `scripts/llvm_pipeline.py` derived this list from LLVM 22's `default<O3>` by removing one pass at a time and
/// keeping the removal when the PTX of every example stayed byte for byte the same; the test
/// `o3_pipeline_gives_default_o3_ptx` holds every example to that, so an example that needs a removed pass (or
/// another LLVM) shows up there. The optimised LLVM module itself differs (the removed attribute and alignment
/// inference passes leave fewer annotations, which the back end does not need). Counted by `callgrind`, the
/// optimiser runs 34 % fewer instructions than under `default<O3>` on `gemm_sm90` (LLVM as a whole 19 %;
/// docs/perf/compile-time.md has the figures).
///
/// The file holds one pass per line, indented by nesting; [`o3_pipeline`] joins it into LLVM's syntax.
/// `instcombine` must keep `no-verify-fixpoint`: LLVM aborts the process when a verified run has work left.
pub const O3_PIPELINE: &str = include_str!("o3_pipeline.txt");

/// [`O3_PIPELINE`] in the syntax of `opt -passes=` (its whitespace removed).
pub fn o3_pipeline() -> String {
    O3_PIPELINE.split_whitespace().collect()
}

/// The LLVM pass pipeline of `options`: `--llvm-passes` where given, else the level's.
fn pipeline(options: &Options) -> Option<String> {
    if let Some(p) = &options.llvm_passes {
        return Some(p.clone());
    }
    match options.opt_level {
        OptLevel::O0 => None,
        OptLevel::O1 => Some("default<O1>".into()),
        OptLevel::O2 => Some("default<O2>".into()),
        OptLevel::O3 => Some(o3_pipeline()),
    }
}

/// Runs the pipeline of `options` (nothing at `-O0` without `--llvm-passes`).
pub(crate) fn optimize(module: &Module<'_>, machine: &TargetMachine, options: &Options) -> Result<(), CodegenError> {
    let Some(passes) = pipeline(options) else {
        return Ok(());
    };
    module
        .run_passes(&passes, machine, PassBuilderOptions::create())
        .map_err(|e| CodegenError::llvm("the optimizer", e.to_string()))
}

/// Whether LLVM parses `passes` as a pass pipeline (`opt -passes=` syntax): the message LLVM gives otherwise.
/// Runs it on an empty module, so a pipeline that parses but fails on a kernel still fails later. An
/// `instcombine` that verifies its fixpoint (the parser's default) is refused: LLVM aborts the process when such
/// a run has work left, which it has on some kernels.
pub fn check_llvm_passes(passes: &str) -> Result<(), String> {
    let mut rest = passes;
    while let Some(at) = rest.find("instcombine") {
        let whole_name = rest[..at].chars().next_back().is_none_or(|c| matches!(c, ',' | '('));
        let after = &rest[at + "instcombine".len()..];
        // An unclosed `<` is LLVM's syntax error to report, below.
        let params = match after.strip_prefix('<') {
            Some(p) => p.split_once('>').map(|(p, _)| p),
            None => Some(""),
        };
        if whole_name && params.is_some_and(|p| !p.split(';').any(|p| p == "no-verify-fixpoint")) {
            return Err("`instcombine` needs `<no-verify-fixpoint>` here (LLVM aborts when a run that verifies its \
                        fixpoint has work left), e.g. `instcombine<max-iterations=1;no-verify-fixpoint>`"
                .into());
        }
        rest = after;
    }
    let machine = machine(&Options::default()).map_err(|e| e.to_string())?;
    let context = inkwell::context::Context::create();
    let module = context.create_module("check");
    module.set_triple(&machine.get_triple());
    module.run_passes(passes, &machine, PassBuilderOptions::create()).map_err(|e| e.to_string())
}

/// The module as PTX assembly.
pub(crate) fn emit_ptx(module: &Module<'_>, machine: &TargetMachine) -> Result<String, CodegenError> {
    let buffer = machine
        .write_to_memory_buffer(module, FileType::Assembly)
        .map_err(|e| CodegenError::llvm("PTX emission", e.to_string()))?;
    Ok(String::from_utf8_lossy(buffer.as_slice()).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn o3_pipeline_is_a_pipeline_llvm_runs() {
        let text = o3_pipeline();
        assert!(!text.contains(char::is_whitespace));
        check_llvm_passes(&text).expect("O3_PIPELINE parses and runs");
        // Every instcombine says no-verify-fixpoint (a verified one aborts the process when it has work left).
        assert_eq!(
            text.matches("instcombine").count(),
            text.matches("instcombine<max-iterations=1;no-verify-fixpoint>").count()
        );
    }

    #[test]
    fn a_pipeline_llvm_cannot_parse_is_refused_with_its_message() {
        let e = check_llvm_passes("function(no-such-pass)").expect_err("refused");
        assert!(e.contains("no-such-pass"), "{e}");
        // Empty, empty items, unbalanced brackets: LLVM's own messages, no crash.
        for bad in ["", ",,", "function(sroa", "function(instcombine<no-verify-fixpoint", "sroa)"] {
            let e = check_llvm_passes(bad).expect_err(bad);
            assert!(!e.contains("needs `<no-verify-fixpoint>`"), "{bad}: {e}");
        }
    }

    #[test]
    fn an_instcombine_that_verifies_its_fixpoint_is_refused() {
        for bad in ["instcombine", "function(sroa,instcombine)", "function(instcombine<max-iterations=1>)"] {
            let e = check_llvm_passes(bad).expect_err(bad);
            assert!(e.contains("no-verify-fixpoint"), "{bad}: {e}");
        }
        for good in ["function(instcombine<no-verify-fixpoint>)", "aggressive-instcombine", "default<O3>"] {
            check_llvm_passes(good).unwrap_or_else(|e| panic!("{good}: {e}"));
        }
    }
}

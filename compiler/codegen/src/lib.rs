//! cutec-codegen: LLVM NVPTX code generation from the typed IR (inkwell, LLVM 22), PTX through LLVM's NVPTX back
//! end, and cubin through `ptxas`.
//!
//! # Entry points
//!
//! - [`compile`]: a validated [`cutec_ir::Module`] → optimized LLVM IR text, PTX text and the kernel manifest.
//! - [`assemble_with_ptxas`]: PTX → cubin and `ptxas -v`'s per-kernel report (registers, spills), so tests can
//!   assert that kernels do not spill.
//!
//! # Shape
//!
//! [`compile`] validates the module (the analysis it returns is what code generation trusts: every expression's
//! type), then one [`kernel::KernelCodegen`] per kernel owns the inkwell builder, the function and the maps from
//! IR handles to LLVM values, and walks the body with a `match` over node kinds. NVVM intrinsics are named in one
//! place (`intrinsics.rs`); inline PTX, when an instruction has no intrinsic, lives in [`inline_ptx`] only.
//!
//! # Invariants
//!
//! - **Code generation never panics** on a module the validator accepts; a module it rejects is an error.
//! - Target: triple `nvptx64-nvidia-cuda`, CPU `sm_90a`, features `+ptxNN`; kernels use the `ptx_kernel` calling
//!   convention (71), which is how LLVM 22 marks entries (no `nvvm.annotations`).
//! - The PTX parameter ABI is the manifest's: declared parameters in order (a tensor's base pointer, a scalar's
//!   value), then the dynamic dimensions as `i32`.
//! - LLVM is linked here and nowhere else.

pub mod inline_ptx;
mod intrinsics;
pub mod kernel;
mod manifest;
mod metadata;
mod ptxas;
mod target;

pub use ptxas::parse_report as ptxas_parse_report;
pub use ptxas::{KernelReport, PtxasError, PtxasReport, assemble, assemble_with_ptxas, find_ptxas};
pub use target::{O3_PIPELINE, OptLevel, TRIPLE, check_llvm_passes, o3_pipeline};

use cutec_ir::KernelError;

/// How to compile.
#[derive(Clone, Debug)]
pub struct Options {
    pub opt_level: OptLevel,
    /// The GPU architecture, `sm_90a` for Hopper with its architecture-specific instructions (wgmma, setmaxnreg).
    pub cpu: String,
    /// The PTX ISA version times ten (`88` is PTX 8.8); ptxas 13.0 accepts up to 9.0.
    pub ptx_version: u32,
    /// The name of the PTX/cubin file the manifest points to.
    pub module_file: String,
    /// Let LLVM and ptxas fuse a multiply and an add into one `fma` (LLVM's `contract` flag), as `nvcc` does by
    /// default (`-fmad=true`). Off, every float operation is rounded on its own (`mul.rn`, `add.rn`).
    pub fp_contract: bool,
    /// Print the optimized LLVM module into [`Output::llvm_ir`].
    pub keep_llvm_ir: bool,
    /// An LLVM pass pipeline (`opt -passes=` syntax) that replaces the level's (`--llvm-passes`): to compare
    /// pipelines, e.g. `default<O3>` against [`O3_PIPELINE`].
    pub llvm_passes: Option<String>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            opt_level: OptLevel::O3,
            cpu: "sm_90a".into(),
            ptx_version: 88,
            module_file: "module.ptx".into(),
            fp_contract: true,
            keep_llvm_ir: true,
            llvm_passes: None,
        }
    }
}

/// What [`compile`] produces.
#[derive(Clone, Debug)]
pub struct Output {
    /// The LLVM module after optimization (what the PTX is generated from), when [`Options::keep_llvm_ir`] asks
    /// for it (printing it costs a few milliseconds of every build).
    pub llvm_ir: Option<String>,
    pub ptx: String,
    /// The kernels that carry an interface (those lowered from source), with static shared memory filled in.
    pub manifest: cutec_manifest::Manifest,
    /// Wall time of each phase, in order: building the LLVM module, LLVM's optimizer, PTX emission.
    pub timings: Vec<(&'static str, std::time::Duration)>,
}

#[derive(Debug, thiserror::Error)]
pub enum CodegenError {
    /// The module failed validation (a compiler bug upstream).
    #[error(transparent)]
    Invalid(#[from] KernelError),
    /// The module uses an IR construct code generation does not cover yet (the Hopper operations, warpgroup
    /// regions, tensor-map parameters): reported as E0300, never a panic.
    #[error("{what} is not supported yet by code generation")]
    Unsupported { what: String },
    /// LLVM refused something: the target, a builder call, the verifier or the optimizer. A bug in this crate.
    #[error("LLVM error in {context}: {message}")]
    Llvm { context: String, message: String },
}

impl CodegenError {
    pub(crate) fn llvm(context: impl Into<String>, message: impl ToString) -> CodegenError {
        CodegenError::Llvm { context: context.into(), message: message.to_string() }
    }
}

/// Compiles a module to LLVM IR and PTX, and builds its manifest from `interfaces`: the lowering's manifest entry
/// of each kernel, in the module's order (none for a module built by hand: its manifest then lists no kernel).
pub fn compile(
    module: &cutec_ir::Module,
    interfaces: &[cutec_manifest::Kernel],
    options: &Options,
) -> Result<Output, CodegenError> {
    let mut timings = Vec::new();
    let mut clock = std::time::Instant::now();
    let mut lap = |phase: &'static str| {
        let now = std::time::Instant::now();
        timings.push((phase, now - clock));
        clock = now;
    };
    let info = cutec_ir::validate(module)?;
    let machine = target::machine(options)?;
    let context = inkwell::context::Context::create();
    let llvm = context.create_module("cutec");
    llvm.set_triple(&machine.get_triple());
    llvm.set_data_layout(&machine.get_target_data().get_data_layout());
    for (kernel, kinfo) in module.kernels.iter().zip(&info.kernels) {
        kernel::KernelCodegen::new(&context, &llvm, kernel, kinfo, options).emit()?;
    }
    llvm.verify().map_err(|e| CodegenError::llvm("the LLVM verifier", e.to_string()))?;
    lap("LLVM IR");
    target::optimize(&llvm, &machine, options)?;
    lap("LLVM optimiser");
    let llvm_ir = options.keep_llvm_ir.then(|| llvm.print_to_string().to_string());
    let ptx = target::emit_ptx(&llvm, &machine)?;
    lap("PTX emission");
    let manifest = manifest::build(module, interfaces, &info, options);
    Ok(Output { llvm_ir, ptx, manifest, timings })
}

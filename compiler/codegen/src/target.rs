//! The NVPTX target machine, LLVM's optimization pipeline and PTX emission.

use crate::{CodegenError, Options};
use inkwell::OptimizationLevel;
use inkwell::module::Module;
use inkwell::passes::PassBuilderOptions;
use inkwell::targets::{CodeModel, FileType, InitializationConfig, RelocMode, Target, TargetMachine, TargetTriple};
use std::sync::Once;

/// The target triple of every module.
pub const TRIPLE: &str = "nvptx64-nvidia-cuda";

/// How hard LLVM optimizes: `-O0` runs no LLVM pass (variables stay in memory), `-O1..-O3` run the new pass
/// manager's `default<On>` pipeline.
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

/// The target machine for `options` (CPU and PTX version).
pub(crate) fn machine(options: &Options) -> Result<TargetMachine, CodegenError> {
    INIT.call_once(|| Target::initialize_nvptx(&InitializationConfig::default()));
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

/// Runs LLVM's standard pipeline for the level.
pub(crate) fn optimize(module: &Module<'_>, machine: &TargetMachine, level: OptLevel) -> Result<(), CodegenError> {
    let passes = match level {
        OptLevel::O0 => return Ok(()),
        OptLevel::O1 => "default<O1>",
        OptLevel::O2 => "default<O2>",
        OptLevel::O3 => "default<O3>",
    };
    module
        .run_passes(passes, machine, PassBuilderOptions::create())
        .map_err(|e| CodegenError::llvm("the optimizer", e.to_string()))
}

/// The module as PTX assembly.
pub(crate) fn emit_ptx(module: &Module<'_>, machine: &TargetMachine) -> Result<String, CodegenError> {
    let buffer = machine
        .write_to_memory_buffer(module, FileType::Assembly)
        .map_err(|e| CodegenError::llvm("PTX emission", e.to_string()))?;
    Ok(String::from_utf8_lossy(buffer.as_slice()).into_owned())
}

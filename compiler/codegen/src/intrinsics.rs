//! The LLVM and NVVM intrinsics code generation calls, by name, each checked against LLVM 22's
//! `IntrinsicsNVVM.td` (for example `llvm.nvvm.barrier0` is gone in LLVM 22: a CTA barrier is
//! `llvm.nvvm.barrier.cta.sync.aligned.all`).

use crate::CodegenError;
use cutec_ir::{Dim, ShuffleMode, SpecialReg};
use inkwell::intrinsics::Intrinsic;
use inkwell::module::Module;
use inkwell::types::BasicTypeEnum;
use inkwell::values::FunctionValue;

/// `bar.sync 0`: all threads of the CTA, "aligned" (every thread executes the same barrier instruction).
pub(crate) const BARRIER_CTA: &str = "llvm.nvvm.barrier.cta.sync.aligned.all";
/// `ex2.approx.f32` (overloaded on the float type: `llvm.nvvm.ex2.approx.f32`).
pub(crate) const EX2_APPROX: &str = "llvm.nvvm.ex2.approx";
/// `rsqrt.approx.f32`.
pub(crate) const RSQRT_APPROX_F32: &str = "llvm.nvvm.rsqrt.approx.f";
/// `tanh`: NVPTX selects `tanh.approx.f32` for `llvm.tanh.f32` carrying the `afn` fast-math flag.
pub(crate) const TANH: &str = "llvm.tanh";
pub(crate) const SQRT: &str = "llvm.sqrt";
pub(crate) const FABS: &str = "llvm.fabs";
pub(crate) const ABS: &str = "llvm.abs";
/// IEEE maxNum/minNum: PTX `max.f32`/`min.f32` return the non-NaN operand, as these do.
pub(crate) const MAXNUM: &str = "llvm.maxnum";
pub(crate) const MINNUM: &str = "llvm.minnum";
pub(crate) const SMAX: &str = "llvm.smax";
pub(crate) const SMIN: &str = "llvm.smin";
pub(crate) const FMA: &str = "llvm.fma";

/// The intrinsic reading a special register: `llvm.nvvm.read.ptx.sreg.tid.x`...
pub(crate) fn special_reg(reg: SpecialReg) -> String {
    let dim = |d: Dim| d.name();
    match reg {
        SpecialReg::ThreadIdx(d) => format!("llvm.nvvm.read.ptx.sreg.tid.{}", dim(d)),
        SpecialReg::BlockIdx(d) => format!("llvm.nvvm.read.ptx.sreg.ctaid.{}", dim(d)),
        SpecialReg::BlockDim(d) => format!("llvm.nvvm.read.ptx.sreg.ntid.{}", dim(d)),
        SpecialReg::GridDim(d) => format!("llvm.nvvm.read.ptx.sreg.nctaid.{}", dim(d)),
        SpecialReg::LaneId => "llvm.nvvm.read.ptx.sreg.laneid".to_string(),
    }
}

/// `shfl.sync.<mode>.b32`: `llvm.nvvm.shfl.sync.bfly.f32(i32 membermask, float value, i32 lane, i32 clamp)`.
pub(crate) fn shuffle(mode: ShuffleMode, float: bool) -> String {
    format!("llvm.nvvm.shfl.sync.{}.{}", mode.name(), if float { "f32" } else { "i32" })
}

/// The `c` operand of `shfl.sync` for a full 32-lane warp (PTX ISA §9.7.9.6): the segment mask is 0 and the
/// clamp is 31 for `down`/`bfly`/`idx`, 0 for `up`.
pub(crate) fn shuffle_clamp(mode: ShuffleMode) -> u64 {
    match mode {
        ShuffleMode::Up => 0,
        ShuffleMode::Down | ShuffleMode::Bfly | ShuffleMode::Idx => 0x1f,
    }
}

/// The declaration of an intrinsic in `module`; `overloads` picks the overload of an overloaded intrinsic and is
/// empty otherwise.
pub(crate) fn declare<'ctx>(
    module: &Module<'ctx>,
    name: &str,
    overloads: &[BasicTypeEnum<'ctx>],
) -> Result<FunctionValue<'ctx>, CodegenError> {
    let intrinsic = Intrinsic::find(name).ok_or_else(|| CodegenError::llvm("intrinsics", format!("no {name}")))?;
    let overloads = if intrinsic.is_overloaded() { overloads } else { &[] };
    intrinsic
        .get_declaration(module, overloads)
        .ok_or_else(|| CodegenError::llvm("intrinsics", format!("cannot declare {name}")))
}

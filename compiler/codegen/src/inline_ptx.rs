//! Every inline PTX statement the compiler emits, one function per instruction family, each documented with
//! the PTX ISA section it follows. Code generation uses an LLVM intrinsic whenever one exists (LLVM can then
//! schedule and optimize around it); inline PTX is for instructions LLVM has no intrinsic for.
//!
//! Code generation v0 needs none: every instruction of the first kernels (loads and stores, `bar.sync`,
//! `shfl.sync`, `ex2.approx`, `rsqrt.approx`, `tanh.approx`, conversions) has an intrinsic or an LLVM
//! instruction. The first family will be `wgmma.mma_async` (PTX ISA §9.7.15.5.2), which no LLVM has an
//! intrinsic for: its register operands (the accumulator fragment, up to 128 `f32` per thread) and shared-memory
//! descriptors go through one constraint string built here. [`asm`] is the helper those functions share.

use inkwell::InlineAsmDialect;
use inkwell::context::Context;
use inkwell::types::FunctionType;
use inkwell::values::PointerValue;

/// An inline assembly callee: `template` is PTX with `$0, $1...` operands, `constraints` LLVM's constraint
/// string (`=f,f,r` ...). `side_effects` keeps LLVM from moving or deleting it (fences, async operations).
pub fn asm<'ctx>(
    context: &'ctx Context,
    ty: FunctionType<'ctx>,
    template: &str,
    constraints: &str,
    side_effects: bool,
) -> PointerValue<'ctx> {
    context.create_inline_asm(
        ty,
        template.to_string(),
        constraints.to_string(),
        side_effects,
        false,
        Some(InlineAsmDialect::ATT),
        false,
    )
}

/// `wgmma.fence.sync.aligned` (PTX ISA §9.7.15.5.1): orders register accesses of a warpgroup before the
/// `wgmma.mma_async` that reads them. (LLVM 22 has `llvm.nvvm.wgmma.fence.sync.aligned`; this is here as the
/// template for the families that have no intrinsic, and to keep the helper exercised by a test.)
pub fn wgmma_fence<'ctx>(context: &'ctx Context) -> (FunctionType<'ctx>, PointerValue<'ctx>) {
    let ty = context.void_type().fn_type(&[], false);
    (ty, asm(context, ty, "wgmma.fence.sync.aligned;", "~{memory}", true))
}

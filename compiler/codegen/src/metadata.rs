//! Metadata inkwell cannot build: self-referential loop IDs (`!llvm.loop`).
//!
//! The one place this crate calls llvm-sys directly (through inkwell's re-export), because a loop ID must list
//! itself as its first operand, which needs a temporary node replaced after creation.

use inkwell::context::Context;
use inkwell::llvm_sys::core::{
    LLVMConstInt, LLVMGetMDKindIDInContext, LLVMInt32TypeInContext, LLVMMDNodeInContext2, LLVMMDStringInContext2,
    LLVMMetadataAsValue, LLVMSetMetadata, LLVMValueAsMetadata,
};
use inkwell::llvm_sys::debuginfo::{LLVMMetadataReplaceAllUsesWith, LLVMTemporaryMDNode};
use inkwell::values::{AsValueRef, InstructionValue};

/// Attaches `!llvm.loop !{self, !{!"<hint>"}}` to a loop's back edge: `hint` is `llvm.loop.unroll.full`,
/// `llvm.loop.unroll.disable`...; with a `count`, `!{!"<hint>", i32 count}` (`llvm.loop.unroll.count`).
pub(crate) fn set_loop_hint(context: &Context, back_edge: InstructionValue<'_>, hint: &str, count: Option<u32>) {
    // SAFETY: every reference comes from `context` and lives as long as it; the temporary node is consumed by
    // `LLVMMetadataReplaceAllUsesWith`, which deletes it after redirecting its single use (the loop ID's first
    // operand) to the loop ID itself.
    unsafe {
        let ctx = context.raw();
        let name = LLVMMDStringInContext2(ctx, hint.as_ptr().cast(), hint.len());
        let mut hint_ops = vec![name];
        if let Some(n) = count {
            let i32t = LLVMInt32TypeInContext(ctx);
            hint_ops.push(LLVMValueAsMetadata(LLVMConstInt(i32t, n as u64, 0)));
        }
        let hint_node = LLVMMDNodeInContext2(ctx, hint_ops.as_mut_ptr(), hint_ops.len());
        let temp = LLVMTemporaryMDNode(ctx, std::ptr::null_mut(), 0);
        let mut ops = [temp, hint_node];
        let loop_id = LLVMMDNodeInContext2(ctx, ops.as_mut_ptr(), ops.len());
        LLVMMetadataReplaceAllUsesWith(temp, loop_id);
        let kind = LLVMGetMDKindIDInContext(ctx, c"llvm.loop".as_ptr(), "llvm.loop".len() as u32);
        LLVMSetMetadata(back_edge.as_value_ref(), kind, LLVMMetadataAsValue(ctx, loop_id));
    }
}

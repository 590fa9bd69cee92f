//! Operations ([`Op`]): memory accesses and warp collectives, each at its statement; the value, if any, is
//! recorded for the operation's result expression.

use super::{KernelCodegen, ll};
use crate::CodegenError;
use crate::intrinsics as nv;
use cutec_ir::{Expr, Handle, Op, Type};
use inkwell::values::{BasicValue, BasicValueEnum};

impl<'ctx> KernelCodegen<'_, 'ctx> {
    /// Performs an operation; gives its value if it has one.
    pub(super) fn op(&mut self, op: &Op) -> Result<Option<BasicValueEnum<'ctx>>, CodegenError> {
        let b = &self.builder;
        Ok(Some(match *op {
            Op::Load { ptr, ty: loaded, align } => {
                let v = ll(b.build_load(self.llvm_type(loaded), self.value(ptr)?.into_pointer_value(), ""))?;
                if let Some(inst) = v.as_instruction_value() {
                    inst.set_alignment(align).map_err(|e| CodegenError::llvm("load", e))?;
                }
                v
            }
            Op::Shuffle { mode, value, lane } => {
                let float = self.ty(value) == Type::F32;
                let i32t = self.context.i32_type();
                let args = [
                    i32t.const_int(0xffff_ffff, false).into(),
                    self.value(value)?,
                    self.value(lane)?,
                    i32t.const_int(nv::shuffle_clamp(mode), false).into(),
                ];
                self.call(&nv::shuffle(mode, float), &[], &args)?
            }
            // The Hopper operations are in the IR for the passes that will schedule them; their code generation
            // comes with them.
            Op::MbarrierInit { .. }
            | Op::MbarrierArriveExpectTx { .. }
            | Op::MbarrierArrive { .. }
            | Op::MbarrierWait { .. }
            | Op::TmaLoad { .. }
            | Op::FenceProxyAsync
            | Op::WgmmaFence
            | Op::Wgmma { .. }
            | Op::WgmmaCommit
            | Op::WgmmaWait { .. } => return Err(CodegenError::Unsupported { what: format!("`{}`", op.name()) }),
        }))
    }

    /// Records the value of an operation's result.
    pub(super) fn define(&mut self, h: Handle<Expr>, v: BasicValueEnum<'ctx>) {
        if let Some(slot) = self.values.get_mut(h.index()) {
            *slot = Some(v);
        }
    }
}

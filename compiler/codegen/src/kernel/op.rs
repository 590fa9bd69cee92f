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
            Op::ElectOne => {
                let all = self.context.i32_type().const_int(0xffff_ffff, false);
                let pair = self.call(nv::ELECT_SYNC, &[], &[all.into()])?.into_struct_value();
                ll(b.build_extract_value(pair, 1, "elected"))?
            }
            Op::MbarrierInit { bar, count } => {
                self.call_void(nv::MBARRIER_INIT, &[], &[self.value(bar)?, self.value(count)?])?;
                return Ok(None);
            }
            Op::MbarrierArrive { bar } => {
                let one = self.context.i32_type().const_int(1, false);
                self.call(nv::MBARRIER_ARRIVE, &[], &[self.value(bar)?, one.into()])?;
                return Ok(None);
            }
            Op::MbarrierArriveExpectTx { bar, bytes } => {
                self.call(nv::MBARRIER_ARRIVE_EXPECT_TX, &[], &[self.value(bar)?, self.value(bytes)?])?;
                return Ok(None);
            }
            Op::MbarrierWait { bar, parity } => {
                self.mbarrier_wait(self.value(bar)?, self.value(parity)?)?;
                return Ok(None);
            }
            Op::TmaLoad { dst, map, ref coords, bar } => {
                let cluster = self.context.ptr_type(inkwell::AddressSpace::from(7u16));
                let dst = ll(b.build_address_space_cast(self.value(dst)?.into_pointer_value(), cluster, "dst"))?;
                let mut args: Vec<BasicValueEnum<'ctx>> = vec![dst.into(), self.value(bar)?, self.value(map)?];
                for &c in coords {
                    args.push(self.value(c)?);
                }
                let (i1, i16, i32, i64) = (
                    self.context.bool_type(),
                    self.context.i16_type(),
                    self.context.i32_type(),
                    self.context.i64_type(),
                );
                // No multicast mask, no cache hint, CTA group 0.
                args.extend::<[BasicValueEnum<'ctx>; 5]>([
                    i16.const_zero().into(),
                    i64.const_zero().into(),
                    i1.const_zero().into(),
                    i1.const_zero().into(),
                    i32.const_zero().into(),
                ]);
                self.call_void(&nv::tma_load(coords.len()), &[], &args)?;
                return Ok(None);
            }
            Op::TmaStore { src, map, ref coords } => {
                let mut args: Vec<BasicValueEnum<'ctx>> = vec![self.value(src)?, self.value(map)?];
                for &c in coords {
                    args.push(self.value(c)?);
                }
                args.extend::<[BasicValueEnum<'ctx>; 2]>([
                    self.context.i64_type().const_zero().into(),
                    self.context.bool_type().const_zero().into(),
                ]);
                self.call_void(&nv::tma_store(coords.len()), &[], &args)?;
                return Ok(None);
            }
            Op::BulkCommit => {
                self.call_void(nv::BULK_COMMIT_GROUP, &[], &[])?;
                return Ok(None);
            }
            Op::BulkWait { pending, read } => {
                let name = if read { nv::BULK_WAIT_GROUP_READ } else { nv::BULK_WAIT_GROUP };
                let n = self.context.i32_type().const_int(pending as u64, false);
                self.call_void(name, &[], &[n.into()])?;
                return Ok(None);
            }
            Op::PrefetchTensorMap { map } => {
                let map = self.value(map)?;
                self.call_void(nv::PREFETCH_TENSORMAP, &[map.get_type()], &[map])?;
                return Ok(None);
            }
            Op::FenceMbarrierInit => {
                self.call_void(nv::FENCE_MBARRIER_INIT, &[], &[])?;
                return Ok(None);
            }
            Op::FenceProxyAsync => {
                self.call_void(nv::FENCE_PROXY_ASYNC_SHARED_CTA, &[], &[])?;
                return Ok(None);
            }
            // wgmma comes with the accumulator fragments.
            Op::WgmmaFence | Op::Wgmma { .. } | Op::WgmmaCommit | Op::WgmmaWait { .. } => {
                return Err(CodegenError::Unsupported { what: format!("`{}`", op.name()) });
            }
        }))
    }

    /// `mbarrier.try_wait.parity` until it succeeds: a loop of its own blocks.
    fn mbarrier_wait(&mut self, bar: BasicValueEnum<'ctx>, parity: BasicValueEnum<'ctx>) -> Result<(), CodegenError> {
        let f = self.function()?;
        let wait = self.context.append_basic_block(f, "mbarrier.wait");
        let done = self.context.append_basic_block(f, "mbarrier.done");
        ll(self.builder.build_unconditional_branch(wait))?;
        self.builder.position_at_end(wait);
        let ok = self.call(nv::MBARRIER_TRY_WAIT_PARITY, &[], &[bar, parity])?.into_int_value();
        ll(self.builder.build_conditional_branch(ok, done, wait))?;
        self.builder.position_at_end(done);
        Ok(())
    }

    /// Records the value of an operation's result.
    pub(super) fn define(&mut self, h: Handle<Expr>, v: BasicValueEnum<'ctx>) {
        if let Some(slot) = self.values.get_mut(h.index()) {
            *slot = Some(v);
        }
    }
}

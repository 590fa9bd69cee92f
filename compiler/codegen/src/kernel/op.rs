//! Operations ([`Op`]): memory accesses and warp collectives, each at its statement; the value, if any, is
//! recorded for the operation's result expression.

use super::{KernelCodegen, ll};
use crate::CodegenError;
use crate::intrinsics as nv;
use cutec_ir::{Expr, Handle, Op, Type};
use inkwell::values::{BasicValue, BasicValueEnum};

impl<'ctx> KernelCodegen<'_, 'ctx> {
    /// `setmaxnreg.inc` (`inc`) or `.dec` to `regs` registers per thread of the warpgroup.
    pub(super) fn setmaxnreg(&self, regs: u32, inc: bool) -> Result<(), CodegenError> {
        let n = self.context.i32_type().const_int(u64::from(regs), false);
        self.call_void(if inc { nv::SETMAXNREG_INC } else { nv::SETMAXNREG_DEC }, &[], &[n.into()])
    }

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
            Op::MbarrierArriveRemote { bar, cta } => {
                let remote = self.call(nv::MAPA_SHARED_CLUSTER, &[], &[self.value(bar)?, self.value(cta)?])?;
                let one = self.context.i32_type().const_int(1, false);
                self.call_void(nv::MBARRIER_ARRIVE_CLUSTER, &[], &[remote, one.into()])?;
                return Ok(None);
            }
            Op::ClusterBarrier => {
                self.call_void(nv::BARRIER_CLUSTER_ARRIVE, &[], &[])?;
                self.call_void(nv::BARRIER_CLUSTER_WAIT, &[], &[])?;
                return Ok(None);
            }
            Op::TmaLoad { dst, map, ref coords, bar, multicast } => {
                // The shared::cta address itself: the shared::cta window lies inside the shared::cluster window, at
                // this CTA's part of it, as CUTLASS's SM90_TMA_LOAD passes `cast_smem_ptr_to_uint(smem)` to the
                // `.shared::cluster` operand. An `addrspacecast` would go through a generic address (`cvta.shared`,
                // `cvta.to.shared::cluster`): four instructions per load.
                let cluster = self.context.ptr_type(inkwell::AddressSpace::from(7u16));
                let offset = ll(b.build_ptr_to_int(
                    self.value(dst)?.into_pointer_value(),
                    self.context.i32_type(),
                    "dst.offset",
                ))?;
                let dst = ll(b.build_int_to_ptr(offset, cluster, "dst"))?;
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
                // The multicast mask (16 bits of CTA ranks) if any, no cache hint, CTA group 0.
                let mask = match multicast {
                    Some(m) => ll(b.build_int_truncate(self.value(m)?.into_int_value(), i16, "mask"))?,
                    None => i16.const_zero(),
                };
                args.extend::<[BasicValueEnum<'ctx>; 5]>([
                    mask.into(),
                    i64.const_zero().into(),
                    i1.const_int(u64::from(multicast.is_some()), false).into(),
                    i1.const_zero().into(),
                    i32.const_zero().into(),
                ]);
                self.call_void(&nv::tma_load(coords.len()), &[], &args)?;
                return Ok(None);
            }
            // The scheduling passes give every one a barrier; only a module built by hand can bring one here.
            Op::TmaLoadUnscheduled { .. } => {
                let what = "a TMA load without a barrier (`tma.load.unscheduled`, which the scheduling passes \
                            replace)";
                return Err(CodegenError::Unsupported { what: what.to_string() });
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
            Op::Stmatrix { ptr, ref values } => {
                let ptr = self.value(ptr)?;
                let mut args = vec![ptr];
                for &v in values {
                    // Two 16-bit elements, as the 32-bit register the instruction takes.
                    let pair = ll(self.builder.build_bit_cast(self.value(v)?, self.context.i32_type(), ""))?;
                    args.push(pair);
                }
                self.call_void(&nv::stmatrix(values.len()), &[ptr.get_type()], &args)?;
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
            Op::NamedBarrier { id, threads, .. } => {
                self.call_void(nv::BARRIER_CTA_COUNT, &[], &[self.value(id)?, self.value(threads)?])?;
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
            Op::WgmmaFence => {
                self.call_void(nv::WGMMA_FENCE, &[], &[])?;
                return Ok(None);
            }
            Op::WgmmaCommit { .. } => {
                self.call_void(nv::WGMMA_COMMIT, &[], &[])?;
                return Ok(None);
            }
            Op::WgmmaWait { pending } => {
                let n = self.context.i64_type().const_int(u64::from(pending), false);
                self.call_void(nv::WGMMA_WAIT, &[], &[n.into()])?;
                // Once no group runs, the accumulators may be read: after the wait, not before. (While groups run,
                // reading an accumulator is an error the hardware punishes; the next wgmma, an asm statement with
                // side effects, stays after the wait anyway.)
                if pending == 0 {
                    for (acc, regs) in self.wgmma_accumulators() {
                        self.fence_operands(acc, regs)?;
                    }
                }
                return Ok(None);
            }
            Op::Setmaxnreg { regs, inc } => {
                self.setmaxnreg(regs, inc)?;
                return Ok(None);
            }
            Op::Wgmma { shape, acc, a_desc, b_desc, ref steps } => {
                self.wgmma_group(shape, acc, a_desc, b_desc, steps)?;
                return Ok(None);
            }
        }))
    }

    /// The k-steps of a wgmma group on one accumulator (see [`crate::inline_ptx::wgmma`]): the accumulator's
    /// `n / 2` values are loaded from its register array, passed through one asm statement tied to its results,
    /// and stored back; SROA turns the array into SSA values, so the accumulator stays in the same registers
    /// from one wgmma to the next (no copies between them).
    fn wgmma_group(
        &mut self,
        shape: cutec_ir::WgmmaShape,
        acc: Handle<Expr>,
        a_desc: Option<cutec_ir::GmmaDesc>,
        b_desc: cutec_ir::GmmaDesc,
        steps: &[cutec_ir::WgmmaStep],
    ) -> Result<(), CodegenError> {
        let regs = shape.n / 2;
        let (f32t, i32t, i64t) = (self.context.f32_type(), self.context.i32_type(), self.context.i64_type());
        let acc = self.value(acc)?.into_pointer_value();
        let mut args: Vec<inkwell::values::BasicMetadataValueEnum<'ctx>> = Vec::with_capacity(regs as usize + 3);
        let mut slots = Vec::with_capacity(regs as usize);
        for i in 0..regs {
            let at = i64t.const_int(u64::from(i), false);
            // SAFETY: the validator checked the accumulator holds `n / 2` values.
            let slot = ll(unsafe { self.builder.build_in_bounds_gep(f32t, acc, &[at], "acc") })?;
            args.push(ll(self.builder.build_load(f32t, slot, ""))?.into());
            slots.push(slot);
        }
        // The first step's descriptors, of which the later steps' are offsets.
        if let Some(first) = steps.first() {
            let a_base = match a_desc {
                Some(desc) => Some(self.descriptor_base(first.a, desc)?),
                None => None,
            };
            let b_base = self.descriptor_base(first.b, b_desc)?;
            for &cutec_ir::WgmmaStep { a, b, scale_d } in steps {
                match a_base {
                    Some(base) => args.push(self.descriptor_at(base, a)?.into()),
                    None => {
                        for r in self.a_registers(a, shape.input)? {
                            args.push(r.into());
                        }
                    }
                }
                args.push(self.descriptor_at(b_base, b)?.into());
                let scale_d = self.value(scale_d)?.into_int_value();
                args.push(ll(self.builder.build_int_z_extend(scale_d, i32t, "scale_d"))?.into());
            }
        }
        let input = shape.input_suffix();
        let a_mn = a_desc.map(|d| d.mn_major);
        let n_steps = steps.len() as u32;
        let (ty, callee) =
            crate::inline_ptx::wgmma(self.context, shape.n, shape.k, &input, a_mn, b_desc.mn_major, n_steps);
        let out = ll(self.builder.build_indirect_call(ty, callee, &args, "wgmma"))?;
        self.store_results(out, slots, "wgmma")
    }

    /// Stores each field of the struct an asm statement gave (its tied accumulators) back into its slot.
    fn store_results(
        &self,
        call: inkwell::values::CallSiteValue<'ctx>,
        slots: Vec<inkwell::values::PointerValue<'ctx>>,
        what: &str,
    ) -> Result<(), CodegenError> {
        let out = call.try_as_basic_value().basic().ok_or_else(|| CodegenError::llvm(what, "no result"))?;
        for (i, slot) in slots.into_iter().enumerate() {
            let v = ll(self.builder.build_extract_value(out.into_struct_value(), i as u32, ""))?;
            ll(self.builder.build_store(slot, v))?;
        }
        Ok(())
    }

    /// The 4 registers of a k-step of an A fragment in registers: the 8 16-bit values at `ptr`, two by two in
    /// `i32`s, the first of each pair in the low half (PTX ISA §9.7.15.5.1.1.1). The values are read one by one,
    /// as they were written, so SROA keeps the fragment in registers.
    fn a_registers(
        &mut self,
        ptr: Handle<Expr>,
        input: cutec_ir::Scalar,
    ) -> Result<Vec<inkwell::values::IntValue<'ctx>>, CodegenError> {
        let (i32t, i64t) = (self.context.i32_type(), self.context.i64_type());
        let half = if input == cutec_ir::Scalar::BF16 { self.context.bf16_type() } else { self.context.f16_type() };
        let pair = half.vec_type(2);
        let base = self.value(ptr)?.into_pointer_value();
        let mut regs = Vec::with_capacity(4);
        for r in 0..4u64 {
            let mut v = pair.get_undef();
            for j in 0..2u64 {
                let at = i64t.const_int(2 * r + j, false);
                // SAFETY: the validator checked `ptr` is in a register array; the lowering points it at a k-step
                // of 8 values of a fragment_a.
                let slot = ll(unsafe { self.builder.build_in_bounds_gep(half, base, &[at], "a") })?;
                let x = ll(self.builder.build_load(half, slot, ""))?;
                v = ll(self.builder.build_insert_element(v, x, i64t.const_int(j, false), ""))?;
            }
            regs.push(ll(self.builder.build_bit_cast(v, i32t, "a.reg"))?.into_int_value());
        }
        Ok(regs)
    }

    /// The register arrays `wgmma.mma_async` accumulates into, with their sizes.
    fn wgmma_accumulators(&self) -> Vec<(Handle<Expr>, u32)> {
        let mut accs: Vec<(Handle<Expr>, u32)> = Vec::new();
        self.kernel.body.visit(&mut |s| {
            if let cutec_ir::Stmt::Op { op: Op::Wgmma { acc, shape, .. }, .. } = s
                && !accs.iter().any(|(a, _)| a == acc)
            {
                accs.push((*acc, shape.n / 2));
            }
        });
        accs
    }

    /// Passes the `regs` values of the register array `acc` through [`crate::inline_ptx::fence_operands`].
    fn fence_operands(&mut self, acc: Handle<Expr>, regs: u32) -> Result<(), CodegenError> {
        let f32t = self.context.f32_type();
        let i64t = self.context.i64_type();
        let base = self.value(acc)?.into_pointer_value();
        let mut args: Vec<inkwell::values::BasicMetadataValueEnum<'ctx>> = Vec::with_capacity(regs as usize);
        let mut slots = Vec::with_capacity(regs as usize);
        for i in 0..regs {
            // SAFETY: the validator checked the accumulator holds `n / 2` values.
            let slot = ll(unsafe {
                self.builder.build_in_bounds_gep(f32t, base, &[i64t.const_int(u64::from(i), false)], "acc")
            })?;
            args.push(ll(self.builder.build_load(f32t, slot, ""))?.into());
            slots.push(slot);
        }
        let (ty, callee) = crate::inline_ptx::fence_operands(self.context, regs);
        let out = ll(self.builder.build_indirect_call(ty, callee, &args, "fenced"))?;
        self.store_results(out, slots, "fence")
    }

    /// The 64-bit matrix descriptor of a shared-memory operand at `ptr` (its fixed fields, and the start address:
    /// the shared-memory address, bits 4-17, in bits 0-13), and the address as an `i32`, for
    /// [`Self::descriptor_at`].
    fn descriptor_base(&mut self, ptr: Handle<Expr>, desc: cutec_ir::GmmaDesc) -> Result<DescBase<'ctx>, CodegenError> {
        let (i32t, i64t) = (self.context.i32_type(), self.context.i64_type());
        let addr = ll(self.builder.build_ptr_to_int(self.value(ptr)?.into_pointer_value(), i32t, "smem.addr"))?;
        let start = ll(self.builder.build_and(addr, i32t.const_int(0x3ffff, false), ""))?;
        let start = ll(self.builder.build_right_shift(start, i32t.const_int(4, false), false, ""))?;
        let start = ll(self.builder.build_int_z_extend(start, i64t, ""))?;
        let desc = ll(self.builder.build_or(start, i64t.const_int(desc.fixed_bits(), false), "desc"))?;
        Ok(DescBase { addr, desc })
    }

    /// The descriptor of an operand at `ptr` in the same shared-memory tensor as `base`'s: `base`'s plus the
    /// distance between them in 16-byte units. Both addresses lie in this CTA's shared memory, whose offsets are
    /// below 2^18 (228 KiB), and start on 16-byte boundaries (the lowering aligns every operand to its swizzle's
    /// period, E0310 otherwise), so the start address field (bits 4-17 of the address) takes the sum exactly,
    /// without a carry into the fields above it. The later steps of a group then cost one `or` with a constant
    /// where LLVM folds the distance (about 20 SASS instructions fewer per k-tile and consumer warp in
    /// gemm_sm90_manual's 128 x 128 mainloop), instead of the mask and shift of [`Self::descriptor_base`].
    fn descriptor_at(
        &mut self,
        base: DescBase<'ctx>,
        ptr: Handle<Expr>,
    ) -> Result<inkwell::values::IntValue<'ctx>, CodegenError> {
        let (i32t, i64t) = (self.context.i32_type(), self.context.i64_type());
        // The distance in 32 bits, where `(x + c) - x` folds to `c` whatever the add's flags (zero-extended to
        // 64 bits first, it would not).
        let addr = ll(self.builder.build_ptr_to_int(self.value(ptr)?.into_pointer_value(), i32t, "smem.addr"))?;
        let delta = ll(self.builder.build_int_sub(addr, base.addr, ""))?;
        let units = ll(self.builder.build_right_shift(delta, i32t.const_int(4, false), true, ""))?;
        let units = ll(self.builder.build_int_s_extend(units, i64t, ""))?;
        ll(self.builder.build_int_add(base.desc, units, "desc"))
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

/// A matrix descriptor and the shared-memory address it describes (as an `i32`).
#[derive(Clone, Copy)]
struct DescBase<'ctx> {
    addr: inkwell::values::IntValue<'ctx>,
    desc: inkwell::values::IntValue<'ctx>,
}

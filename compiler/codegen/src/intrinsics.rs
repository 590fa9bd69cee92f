//! The LLVM and NVVM intrinsics code generation calls, by name, each checked against LLVM 22's
//! `IntrinsicsNVVM.td` (for example `llvm.nvvm.barrier0` is gone in LLVM 22: a CTA barrier is
//! `llvm.nvvm.barrier.cta.sync.aligned.all`).

use crate::CodegenError;
use cutec_ir::{Dim, Scalar, ShuffleMode, SpecialReg};
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

/// `cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32 d, a, b` (PTX ISA §9.7.9.21, sm_89): two `f32` to two fp8 in an `i16`,
/// `a` in the upper byte and `b` in the lower one, rounded to nearest even and saturated to the largest finite
/// value (NaN stays NaN).
pub(crate) fn f32x2_to_fp8x2(scalar: Scalar) -> &'static str {
    if scalar == Scalar::E5M2 { "llvm.nvvm.ff.to.e5m2x2.rn" } else { "llvm.nvvm.ff.to.e4m3x2.rn" }
}
/// `cvt.rn.satfinite.{e4m3x2,e5m2x2}.f16x2 d, a`: two `f16` to two fp8 (lane 0 in the lower byte).
pub(crate) fn f16x2_to_fp8x2(scalar: Scalar) -> &'static str {
    if scalar == Scalar::E5M2 { "llvm.nvvm.f16x2.to.e5m2x2.rn" } else { "llvm.nvvm.f16x2.to.e4m3x2.rn" }
}
/// `cvt.rn.f16x2.{e4m3x2,e5m2x2} d, a`: two fp8 in an `i16` to two `f16` (exact; the lower byte to lane 0).
pub(crate) fn fp8x2_to_f16x2(scalar: Scalar) -> &'static str {
    if scalar == Scalar::E5M2 { "llvm.nvvm.e5m2x2.to.f16x2.rn" } else { "llvm.nvvm.e4m3x2.to.f16x2.rn" }
}

/// `mbarrier.init.shared.b64 [bar], count`.
pub(crate) const MBARRIER_INIT: &str = "llvm.nvvm.mbarrier.init.shared";
/// `fence.mbarrier_init.release.cluster`.
pub(crate) const FENCE_MBARRIER_INIT: &str = "llvm.nvvm.fence.mbarrier_init.release.cluster";
/// `mbarrier.arrive.shared.b64 state, [bar], count` (release, CTA scope): gives the barrier's state.
pub(crate) const MBARRIER_ARRIVE: &str = "llvm.nvvm.mbarrier.arrive.scope.cta.space.cta";
/// `mbarrier.arrive.expect_tx.shared.b64 state, [bar], bytes`.
pub(crate) const MBARRIER_ARRIVE_EXPECT_TX: &str = "llvm.nvvm.mbarrier.arrive.expect.tx.scope.cta.space.cta";
/// `mbarrier.try_wait.parity.shared.b64 p, [bar], parity` (acquire, CTA scope): true once the phase of that
/// parity has completed; it may give up early (after a time the hardware chooses), hence the loop around it.
pub(crate) const MBARRIER_TRY_WAIT_PARITY: &str = "llvm.nvvm.mbarrier.try.wait.parity.scope.cta.space.cta";
/// `elect.sync r|p, membermask`: `{i32 lane, i1 is_elected}`.
pub(crate) const ELECT_SYNC: &str = "llvm.nvvm.elect.sync";
pub(crate) const FENCE_PROXY_ASYNC_SHARED_CTA: &str = "llvm.nvvm.fence.proxy.async.shared_cta";
/// `prefetch.tensormap [map]` on a generic address (LLVM 22 also emits a `prefetch.param.tensormap` of the
/// parameter itself: harmless).
pub(crate) const PREFETCH_TENSORMAP: &str = "llvm.nvvm.prefetch.tensormap";
/// `bar.sync id, count` (`barrier.cta.sync.aligned` with a thread count).
pub(crate) const BARRIER_CTA_COUNT: &str = "llvm.nvvm.barrier.cta.sync.aligned.count";
pub(crate) const BARRIER_CLUSTER_ARRIVE: &str = "llvm.nvvm.barrier.cluster.arrive";
pub(crate) const BARRIER_CLUSTER_WAIT: &str = "llvm.nvvm.barrier.cluster.wait";
/// `mapa.shared::cluster`: the address of the same shared-memory location in another CTA of the cluster.
pub(crate) const MAPA_SHARED_CLUSTER: &str = "llvm.nvvm.mapa.shared.cluster";
/// `mbarrier.arrive.shared::cluster.b64 _, [addr], count`: release semantics at CTA scope, as CUTLASS's
/// `ClusterBarrier::arrive(cta_id)`; the `.release.cluster` form costs a cluster-scope fence per arrival, which made
/// the whole GEMM 40 % slower (measured in perf-notes).
pub(crate) const MBARRIER_ARRIVE_CLUSTER: &str = "llvm.nvvm.mbarrier.arrive.scope.cta.space.cluster";
pub(crate) const WGMMA_FENCE: &str = "llvm.nvvm.wgmma.fence.sync.aligned";
pub(crate) const WGMMA_COMMIT: &str = "llvm.nvvm.wgmma.commit_group.sync.aligned";
/// `wgmma.wait_group.sync.aligned N` (`i64` immediate).
pub(crate) const WGMMA_WAIT: &str = "llvm.nvvm.wgmma.wait_group.sync.aligned";
pub(crate) const SETMAXNREG_INC: &str = "llvm.nvvm.setmaxnreg.inc.sync.aligned.u32";
pub(crate) const SETMAXNREG_DEC: &str = "llvm.nvvm.setmaxnreg.dec.sync.aligned.u32";
pub(crate) const BULK_COMMIT_GROUP: &str = "llvm.nvvm.cp.async.bulk.commit.group";
pub(crate) const BULK_WAIT_GROUP: &str = "llvm.nvvm.cp.async.bulk.wait.group";
pub(crate) const BULK_WAIT_GROUP_READ: &str = "llvm.nvvm.cp.async.bulk.wait.group.read";

/// `cp.async.bulk.tensor.<n>d.shared::cluster.global.tile.mbarrier::complete_tx::bytes`:
/// `(ptr addrspace(7) dst, ptr addrspace(3) bar, ptr map, i32 c0..c(n-1), i16 cta_mask, i64 cache_hint,
/// i1 use_mask, i1 use_hint, i32 cta_group)`.
pub(crate) fn tma_load(rank: usize) -> String {
    format!("llvm.nvvm.cp.async.bulk.tensor.g2s.tile.{rank}d")
}

/// `cp.async.bulk.tensor.<n>d.global.shared::cta.tile.bulk_group`: `(ptr addrspace(3) src, ptr map,
/// i32 c0..c(n-1), i64 cache_hint, i1 use_hint)`.
/// `stmatrix.sync.aligned.m8n8.x{n}.shared.b16 [row], {r0, ..}`: overloaded on the pointer (`.p3` for shared
/// memory), each matrix's pair of 16-bit elements as one `i32`.
pub(crate) fn stmatrix(matrices: usize) -> String {
    format!("llvm.nvvm.stmatrix.sync.aligned.m8n8.x{matrices}.b16")
}

pub(crate) fn tma_store(rank: usize) -> String {
    format!("llvm.nvvm.cp.async.bulk.tensor.s2g.tile.{rank}d")
}

/// The intrinsic reading a special register: `llvm.nvvm.read.ptx.sreg.tid.x`...
pub(crate) fn special_reg(reg: SpecialReg) -> String {
    let dim = |d: Dim| d.name();
    match reg {
        SpecialReg::ThreadIdx(d) => format!("llvm.nvvm.read.ptx.sreg.tid.{}", dim(d)),
        SpecialReg::BlockIdx(d) => format!("llvm.nvvm.read.ptx.sreg.ctaid.{}", dim(d)),
        SpecialReg::BlockDim(d) => format!("llvm.nvvm.read.ptx.sreg.ntid.{}", dim(d)),
        SpecialReg::GridDim(d) => format!("llvm.nvvm.read.ptx.sreg.nctaid.{}", dim(d)),
        SpecialReg::LaneId => "llvm.nvvm.read.ptx.sreg.laneid".to_string(),
        SpecialReg::ClusterCtaRank => "llvm.nvvm.read.ptx.sreg.cluster.ctarank".to_string(),
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

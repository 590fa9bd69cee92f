//! Operations: what a kernel does that is more than computing a value. Each is evaluated by a
//! [`Stmt::Op`](crate::Stmt::Op) at its place in the body, and the ones that produce a value name it as an
//! [`Expr::OpResult`], so their results stay SSA handles while their position (and their [effects]) is explicit.
//!
//! Memory accesses and warp collectives came first (`load`, `shfl`); the Hopper operations are here with the
//! shape the next passes need, and reach codegen later (it reports them as not supported yet):
//!
//! - **TMA** (`tma.load %dst, %map[%c0, %c1], %bar`): a bulk tensor copy from global to shared memory,
//!   described by a tensor map passed as a kernel parameter in param space. It is *asynchronous*: it writes
//!   `dst` some time after it is issued and signals the completion (bytes) on the mbarrier `bar`.
//! - **mbarriers** (`mbarrier.init`, `mbarrier.arrive.expect_tx`, `mbarrier.arrive`, `mbarrier.wait %bar,
//!   %parity`): 8-byte objects in shared memory. A wait takes the *parity* of the phase it waits for as an
//!   operand (a ring of S stages waits on `(i / S) & 1` at iteration `i`), and completes the asynchronous writes
//!   signalled on that barrier: reads after the wait see the TMA's data.
//! - **wgmma groups**: `wgmma.fence`, then `wgmma.mma_async` (asynchronous; the accumulator is a register array,
//!   a `Local` allocation, read and written; B is a shared-memory descriptor, A one too or the warpgroup's
//!   registers, 4 x 32 bits per thread per k-step, read from a `Local` allocation), then `wgmma.commit_group`,
//!   then `wgmma.wait_group N` (at most N groups still pending: the accumulator and the shared-memory operands of
//!   the others may be touched again).
//! - `fence.proxy.async`: orders generic-proxy shared-memory writes before asynchronous-proxy reads.
//!
//! [effects]: crate::effects

use crate::arena::Handle;
use crate::expr::{Expr, ShuffleMode};
use crate::types::{Scalar, Type};

/// The shape and input types of a `wgmma.mma_async`: `m64nNkK` with `K` 16 for `f16`/`bf16` (A and B alike) and
/// 32 for fp8 (`e4m3`/`e5m2`, A and B in any mix).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct WgmmaShape {
    pub m: u32,
    pub n: u32,
    pub k: u32,
    /// The element type of A (the accumulator is `f32`).
    pub input: Scalar,
    /// The element type of B: `input` but for an fp8 MMA mixing `e4m3` and `e5m2`.
    pub input_b: Scalar,
}

impl WgmmaShape {
    /// The instruction's type suffix after `.f32`: `bf16.bf16`, `e4m3.e5m2`.
    pub fn input_suffix(&self) -> String {
        format!("{}.{}", self.input, self.input_b)
    }
}

/// The swizzle of a wgmma operand in shared memory (the descriptor's layout type): the layout algebra's, which
/// derives it.
pub use cutec_layout::gmma::GmmaSwizzle;

/// The text form's name of a wgmma swizzle (`none`, `sw32`, `sw64`, `sw128`).
pub fn gmma_swizzle_name(s: GmmaSwizzle) -> &'static str {
    match s {
        GmmaSwizzle::None => "none",
        GmmaSwizzle::B32 => "sw32",
        GmmaSwizzle::B64 => "sw64",
        GmmaSwizzle::B128 => "sw128",
    }
}

/// What a wgmma shared-memory matrix descriptor says besides the start address (which is the operand's pointer):
/// the leading and stride byte offsets, the swizzle, and whether the operand is MN-major (the instruction's
/// transpose immediate). The lowering derives them from the operand's layout.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct GmmaDesc {
    pub lbo: u32,
    pub sbo: u32,
    pub swizzle: GmmaSwizzle,
    pub mn_major: bool,
}

impl GmmaDesc {
    /// The descriptor's bits other than the start address (bits 0-13, `address >> 4`).
    pub fn fixed_bits(&self) -> u64 {
        let field = |bytes: u32| (u64::from(bytes) >> 4) & 0x3fff;
        (field(self.lbo) << 16) | (field(self.sbo) << 32) | (self.swizzle.layout_type() << 62)
    }
}

/// One k-step of an [`Op::Wgmma`]: where its A and B are, and whether it adds to the accumulator (`scale_d`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct WgmmaStep {
    pub a: Handle<Expr>,
    pub b: Handle<Expr>,
    pub scale_d: Handle<Expr>,
}

/// An operation with effects (see the module documentation).
#[derive(Clone, PartialEq, Debug)]
pub enum Op {
    /// A load of a scalar or vector of type `ty` from `ptr`, which is aligned to `align` bytes (a power of two
    /// at least the scalar's size). A vector load is one instruction (`ld.global.v4.f32`) when `align` covers it.
    Load { ptr: Handle<Expr>, ty: Type, align: u32 },
    /// `shfl.sync` over the full warp (every lane must execute it): the `value` (`f32` or `i32`) of the lane
    /// chosen by `mode` and `lane`.
    Shuffle { mode: ShuffleMode, value: Handle<Expr>, lane: Handle<Expr> },
    /// `mbarrier.init.shared.b64 [bar], count`: one thread initialises the barrier for `count` arrivals.
    MbarrierInit { bar: Handle<Expr>, count: Handle<Expr> },
    /// `mbarrier.arrive.expect_tx`: arrives once and expects `bytes` more bytes of asynchronous writes.
    MbarrierArriveExpectTx { bar: Handle<Expr>, bytes: Handle<Expr> },
    /// `mbarrier.arrive`: arrives once.
    MbarrierArrive { bar: Handle<Expr> },
    /// Waits until the phase of parity `parity` (an `i32`, 0 or 1) of `bar` has completed
    /// (`mbarrier.try_wait.parity` in a loop).
    MbarrierWait { bar: Handle<Expr>, parity: Handle<Expr> },
    /// `tma_load(view, layout)` before the scheduling passes: the same copy as [`Op::TmaLoad`] with no barrier
    /// yet. `pipeline-loops` gives the ones of a `pipelined` loop a ring of stages and barriers, and
    /// `complete-copies` the others one barrier each, waited on where the copy is (so the tile is complete before
    /// its first use). No pass after those and no back end sees one (code generation reports one as an internal
    /// error). With `multicast` (an `i32` mask of CTA ranks), every CTA of the mask loads the same tile, and this
    /// copy is this CTA's slice of it (`dst` and `coords` the slice's), which lands in each CTA of the mask: the
    /// tile's barrier then expects the mask's CTAs' slices.
    TmaLoadUnscheduled {
        dst: Handle<Expr>,
        map: Handle<Expr>,
        coords: Vec<Handle<Expr>>,
        multicast: Option<Handle<Expr>>,
    },
    /// `cp.async.bulk.tensor.Nd.shared::cluster.global.mbarrier::complete_tx::bytes`: copies the box at
    /// `coords` (innermost first, in elements) of the tensor described by `map` to `dst`, then signals `bar`.
    /// With `multicast` (an `i32` mask of CTA ranks in the cluster), the box lands at the same offset in every CTA
    /// of the mask, and each CTA's mbarrier at `bar`'s offset counts its bytes.
    TmaLoad {
        dst: Handle<Expr>,
        map: Handle<Expr>,
        coords: Vec<Handle<Expr>>,
        bar: Handle<Expr>,
        multicast: Option<Handle<Expr>>,
    },
    /// `mbarrier.arrive.shared::cluster`: arrives once on the mbarrier at `bar`'s offset in the shared memory of
    /// CTA `cta` (an `i32` rank) of the cluster (`mapa`).
    MbarrierArriveRemote { bar: Handle<Expr>, cta: Handle<Expr> },
    /// `barrier.cluster.arrive` then `barrier.cluster.wait`: every thread of every CTA of the cluster.
    ClusterBarrier,
    /// `cp.async.bulk.tensor.Nd.global.shared::cta.bulk_group`: copies `src` in shared memory to the box at
    /// `coords` (innermost first) of the tensor described by `map`. Asynchronous: `src` may be overwritten only
    /// after a [`Op::BulkWait`] that covers its group ([`Op::BulkCommit`]). Elements of the box outside the
    /// tensor are not written (the hardware clips them).
    TmaStore { src: Handle<Expr>, map: Handle<Expr>, coords: Vec<Handle<Expr>> },
    /// `stmatrix.sync.aligned.m8n8.x{1,2,4}.shared.b16`: the warp stores one, two or four 8 x 8 matrices of
    /// 16-bit elements into shared memory. Lane `l` holds, in `values[i]` (two 16-bit elements), row `l / 4`,
    /// columns `2 (l % 4)` and `+1` of matrix `i`, and `ptr` is the address of row `l % 8` of matrix `l / 8`
    /// (16 bytes, 16-byte aligned). Every lane of the warp executes it.
    Stmatrix { ptr: Handle<Expr>, values: Vec<Handle<Expr>> },
    /// `cp.async.bulk.commit_group`: the bulk stores not yet committed form one group.
    BulkCommit,
    /// `cp.async.bulk.wait_group[.read] N`: waits until at most `pending` bulk groups are in flight; with `read`,
    /// only until their shared-memory sources have been read (the buffers may be reused).
    BulkWait { pending: u32, read: bool },
    /// `prefetch.tensormap`: brings a tensor map into the cache ahead of its first use.
    PrefetchTensorMap { map: Handle<Expr> },
    /// `fence.mbarrier_init.release.cluster`: makes mbarrier initialisations visible to the asynchronous proxy
    /// (TMA) and to the other threads once they have synchronised with this one.
    FenceMbarrierInit,
    /// `elect.sync` over the full warp: `true` in exactly one lane (the lowest active), `false` in the others.
    ElectOne,
    /// `bar.sync id, threads`: a named barrier over `threads` threads (a multiple of 32). `barrier` is the
    /// compiler's declaration of it (its id taken from the kernel's pool, [`crate::schedule::Barrier`]), `None`
    /// for a `barrier_sync` of the program; `id` and `threads` are then the declaration's, as literals.
    NamedBarrier { id: Handle<Expr>, threads: Handle<Expr>, barrier: Option<Handle<crate::schedule::Barrier>> },
    /// `fence.proxy.async.shared::cta`.
    FenceProxyAsync,
    /// `wgmma.fence.sync.aligned`: before the first `wgmma.mma_async` of a group.
    WgmmaFence,
    /// The k-steps of one `gemm` on one accumulator, each a `wgmma.mma_async.sync.aligned`, in order: step `j`
    /// does `acc (+)= A_j * B_j` over the warpgroup, with B_j in shared memory at `steps[j].b`, read as
    /// `b_desc` says; its `scale_d` false means `acc = A_j * B_j`. `acc` points to the register array holding
    /// this thread's part of the accumulator (`n / 2` values of `f32`). A_j is in shared memory at `steps[j].a`
    /// like B when `a_desc` is a descriptor ("SS"); with `None` ("RS"), `steps[j].a` points to the step's part
    /// of the thread's A fragment in a register array: 8 values of `shape.input`, passed as 4 registers of 32
    /// bits (CuTe's `ALayout_64x16`, [`cutec_layout::wgmma_a_register_layout`]).
    ///
    /// The steps are one operation because they are one instruction sequence on the same registers: codegen
    /// issues them as one asm statement, so the accumulator is loaded and stored once (it does not look for
    /// such runs among adjacent statements). Invariant (the validator's): at least one step.
    Wgmma { shape: WgmmaShape, acc: Handle<Expr>, a_desc: Option<GmmaDesc>, b_desc: GmmaDesc, steps: Vec<WgmmaStep> },
    /// `setmaxnreg.inc` (`inc`) or `.dec.sync.aligned.u32 regs`: sets the calling warpgroup's registers per
    /// thread.
    Setmaxnreg { regs: u32, inc: bool },
    /// `wgmma.commit_group.sync.aligned`: the `wgmma.mma_async`s not yet committed form one group, the token
    /// `group` declares (`None` in IR built by hand without one).
    WgmmaCommit { group: Option<Handle<crate::schedule::WgmmaGroup>> },
    /// `wgmma.wait_group.sync.aligned N`: waits until at most `pending` groups are in flight.
    WgmmaWait { pending: u32 },
}

impl Op {
    /// The text form's mnemonic.
    pub fn name(&self) -> &'static str {
        match self {
            Op::Load { .. } => "load",
            Op::Shuffle { mode, .. } => match mode {
                ShuffleMode::Bfly => "shfl.bfly",
                ShuffleMode::Down => "shfl.down",
                ShuffleMode::Up => "shfl.up",
                ShuffleMode::Idx => "shfl.idx",
            },
            Op::MbarrierInit { .. } => "mbarrier.init",
            Op::MbarrierArriveExpectTx { .. } => "mbarrier.arrive.expect_tx",
            Op::MbarrierArrive { .. } => "mbarrier.arrive",
            Op::MbarrierArriveRemote { .. } => "mbarrier.arrive.cluster",
            Op::ClusterBarrier => "barrier.cluster",
            Op::MbarrierWait { .. } => "mbarrier.wait",
            Op::TmaLoad { .. } => "tma.load",
            Op::TmaLoadUnscheduled { .. } => "tma.load.unscheduled",
            Op::TmaStore { .. } => "tma.store",
            Op::Stmatrix { .. } => "stmatrix",
            Op::BulkCommit => "bulk.commit_group",
            Op::BulkWait { read: false, .. } => "bulk.wait_group",
            Op::BulkWait { read: true, .. } => "bulk.wait_group.read",
            Op::PrefetchTensorMap { .. } => "prefetch.tensormap",
            Op::FenceMbarrierInit => "fence.mbarrier_init",
            Op::ElectOne => "elect.sync",
            Op::NamedBarrier { .. } => "bar.sync",
            Op::FenceProxyAsync => "fence.proxy.async",
            Op::WgmmaFence => "wgmma.fence",
            Op::Wgmma { .. } => "wgmma.mma_async",
            Op::WgmmaCommit { .. } => "wgmma.commit_group",
            Op::WgmmaWait { .. } => "wgmma.wait_group",
            Op::Setmaxnreg { inc: true, .. } => "setmaxnreg.inc",
            Op::Setmaxnreg { inc: false, .. } => "setmaxnreg.dec",
        }
    }

    /// Whether the operation produces a value (then its statement names an [`Expr::OpResult`]).
    pub fn has_result(&self) -> bool {
        matches!(self, Op::Load { .. } | Op::Shuffle { .. } | Op::ElectOne)
    }

    /// The type of the value, given the operands' types (`None` if the operation has none, or an operand's
    /// type is unknown).
    pub fn result_type(&self, ty: impl Fn(Handle<Expr>) -> Option<Type>) -> Option<Type> {
        match *self {
            Op::Load { ty: t, .. } => Some(t),
            Op::Shuffle { value, .. } => ty(value),
            Op::ElectOne => Some(Type::I1),
            Op::TmaStore { .. }
            | Op::Stmatrix { .. }
            | Op::BulkCommit
            | Op::BulkWait { .. }
            | Op::PrefetchTensorMap { .. }
            | Op::FenceMbarrierInit
            | Op::NamedBarrier { .. }
            | Op::MbarrierInit { .. }
            | Op::MbarrierArriveExpectTx { .. }
            | Op::MbarrierArrive { .. }
            | Op::MbarrierArriveRemote { .. }
            | Op::ClusterBarrier
            | Op::MbarrierWait { .. }
            | Op::TmaLoad { .. }
            | Op::TmaLoadUnscheduled { .. }
            | Op::FenceProxyAsync
            | Op::WgmmaFence
            | Op::Wgmma { .. }
            | Op::WgmmaCommit { .. }
            | Op::Setmaxnreg { .. }
            | Op::WgmmaWait { .. } => None,
        }
    }

    /// Calls `f` on every operand, in order.
    pub fn for_each_operand(&self, mut f: impl FnMut(Handle<Expr>)) {
        match *self {
            Op::Load { ptr, .. } => f(ptr),
            Op::Shuffle { value, lane, .. } => {
                f(value);
                f(lane);
            }
            Op::MbarrierInit { bar, count: x }
            | Op::MbarrierArriveExpectTx { bar, bytes: x }
            | Op::MbarrierWait { bar, parity: x }
            | Op::NamedBarrier { id: bar, threads: x, .. } => {
                f(bar);
                f(x);
            }
            Op::MbarrierArrive { bar } => f(bar),
            Op::MbarrierArriveRemote { bar, cta } => {
                f(bar);
                f(cta);
            }
            Op::TmaLoad { dst, map, ref coords, bar, multicast } => {
                f(dst);
                f(map);
                coords.iter().copied().for_each(&mut f);
                f(bar);
                multicast.into_iter().for_each(&mut f);
            }
            Op::TmaLoadUnscheduled { dst: src, map, ref coords, multicast } => {
                f(src);
                f(map);
                coords.iter().copied().for_each(&mut f);
                multicast.into_iter().for_each(&mut f);
            }
            Op::TmaStore { src, map, ref coords } => {
                f(src);
                f(map);
                coords.iter().copied().for_each(&mut f);
            }
            Op::PrefetchTensorMap { map } => f(map),
            Op::Stmatrix { ptr, ref values } => {
                f(ptr);
                values.iter().copied().for_each(&mut f);
            }
            Op::Wgmma { acc, ref steps, .. } => {
                f(acc);
                for s in steps {
                    f(s.a);
                    f(s.b);
                    f(s.scale_d);
                }
            }
            Op::FenceProxyAsync
            | Op::WgmmaFence
            | Op::WgmmaCommit { .. }
            | Op::WgmmaWait { .. }
            | Op::Setmaxnreg { .. }
            | Op::BulkCommit
            | Op::BulkWait { .. }
            | Op::FenceMbarrierInit
            | Op::ClusterBarrier
            | Op::ElectOne => {}
        }
    }

    /// Replaces every operand `h` by `f(h)`.
    pub fn map_operands(&mut self, mut f: impl FnMut(Handle<Expr>) -> Handle<Expr>) {
        match self {
            Op::Load { ptr, .. } => *ptr = f(*ptr),
            Op::Shuffle { value, lane, .. } => {
                *value = f(*value);
                *lane = f(*lane);
            }
            Op::MbarrierInit { bar, count: x }
            | Op::MbarrierArriveExpectTx { bar, bytes: x }
            | Op::MbarrierWait { bar, parity: x }
            | Op::NamedBarrier { id: bar, threads: x, .. } => {
                *bar = f(*bar);
                *x = f(*x);
            }
            Op::MbarrierArrive { bar } => *bar = f(*bar),
            Op::MbarrierArriveRemote { bar, cta } => {
                *bar = f(*bar);
                *cta = f(*cta);
            }
            Op::TmaLoad { dst, map, coords, bar, multicast } => {
                *dst = f(*dst);
                *map = f(*map);
                coords.iter_mut().for_each(|c| *c = f(*c));
                *bar = f(*bar);
                if let Some(m) = multicast {
                    *m = f(*m);
                }
            }
            Op::TmaLoadUnscheduled { dst: src, map, coords, multicast } => {
                *src = f(*src);
                *map = f(*map);
                coords.iter_mut().for_each(|c| *c = f(*c));
                if let Some(m) = multicast {
                    *m = f(*m);
                }
            }
            Op::TmaStore { src, map, coords } => {
                *src = f(*src);
                *map = f(*map);
                coords.iter_mut().for_each(|c| *c = f(*c));
            }
            Op::PrefetchTensorMap { map } => *map = f(*map),
            Op::Stmatrix { ptr, values } => {
                *ptr = f(*ptr);
                values.iter_mut().for_each(|v| *v = f(*v));
            }
            Op::Wgmma { acc, steps, .. } => {
                *acc = f(*acc);
                for s in steps {
                    s.a = f(s.a);
                    s.b = f(s.b);
                    s.scale_d = f(s.scale_d);
                }
            }
            Op::FenceProxyAsync
            | Op::WgmmaFence
            | Op::WgmmaCommit { .. }
            | Op::WgmmaWait { .. }
            | Op::Setmaxnreg { .. }
            | Op::BulkCommit
            | Op::BulkWait { .. }
            | Op::FenceMbarrierInit
            | Op::ClusterBarrier
            | Op::ElectOne => {}
        }
    }
}

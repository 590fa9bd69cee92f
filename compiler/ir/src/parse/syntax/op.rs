//! Operations (`load`, `tma.load`, `wgmma.mma_async`, ...): the statements that [`Op`] holds, as
//! [`crate::print`] writes them.

use super::super::lexer::Tok;
use super::{PResult, Parser, scalar};
use crate::arena::Handle;
use crate::expr::{Expr, ShuffleMode};
use crate::op::{Op, WgmmaShape, WgmmaStep};

impl Parser {
    /// The operation named `m` with its operands, or `None` if `m` names no operation.
    pub(super) fn op(&mut self, m: &str) -> PResult<Option<Op>> {
        Ok(Some(match m {
            "load" => {
                let ty = self.ty()?;
                self.punct(',')?;
                let ptr = self.operand()?;
                self.keyword("align")?;
                Op::Load { ptr, ty, align: self.paren_int()? }
            }
            "shfl.bfly" | "shfl.down" | "shfl.up" | "shfl.idx" => {
                let mode = match m {
                    "shfl.bfly" => ShuffleMode::Bfly,
                    "shfl.down" => ShuffleMode::Down,
                    "shfl.up" => ShuffleMode::Up,
                    _ => ShuffleMode::Idx,
                };
                let v = self.operands(2)?;
                Op::Shuffle { mode, value: v[0], lane: v[1] }
            }
            "mbarrier.init" => {
                let v = self.operands(2)?;
                Op::MbarrierInit { bar: v[0], count: v[1] }
            }
            "mbarrier.arrive.expect_tx" => {
                let v = self.operands(2)?;
                Op::MbarrierArriveExpectTx { bar: v[0], bytes: v[1] }
            }
            "mbarrier.arrive" => Op::MbarrierArrive { bar: self.operand()? },
            "mbarrier.wait" => {
                let bar = self.operand()?;
                self.punct(',')?;
                self.keyword("parity")?;
                Op::MbarrierWait { bar, parity: self.operand()? }
            }
            "tma.load" => {
                let dst = self.operand()?;
                self.punct(',')?;
                let map = self.operand()?;
                let coords = self.coords()?;
                self.punct(',')?;
                let bar = self.operand()?;
                let multicast = if self.eat_word("multicast") { Some(self.operand()?) } else { None };
                Op::TmaLoad { dst, map, coords, bar, multicast }
            }
            "tma.load.unscheduled" => {
                let dst = self.operand()?;
                self.punct(',')?;
                let map = self.operand()?;
                let coords = self.coords()?;
                let multicast = if self.eat_word("multicast") { Some(self.operand()?) } else { None };
                Op::TmaLoadUnscheduled { dst, map, coords, multicast }
            }
            "mbarrier.arrive.cluster" => {
                let bar = self.operand()?;
                self.punct(',')?;
                self.keyword("cta")?;
                Op::MbarrierArriveRemote { bar, cta: self.operand()? }
            }
            "barrier.cluster" => Op::ClusterBarrier,
            "tma.store" => {
                let map = self.operand()?;
                let coords = self.coords()?;
                self.punct(',')?;
                Op::TmaStore { src: self.operand()?, map, coords }
            }
            "stmatrix.x1" | "stmatrix.x2" | "stmatrix.x4" => {
                let n = if m.ends_with('1') {
                    1
                } else if m.ends_with('2') {
                    2
                } else {
                    4
                };
                let ptr = self.operand()?;
                self.punct(',')?;
                Op::Stmatrix { ptr, values: self.operands(n)? }
            }
            "bulk.commit_group" => Op::BulkCommit,
            "bulk.wait_group" => Op::BulkWait { pending: self.integer()?, read: false },
            "bulk.wait_group.read" => Op::BulkWait { pending: self.integer()?, read: true },
            "prefetch.tensormap" => Op::PrefetchTensorMap { map: self.operand()? },
            "fence.mbarrier_init" => Op::FenceMbarrierInit,
            "elect.sync" => Op::ElectOne,
            "bar.sync" => {
                let v = self.operands(2)?;
                let barrier = if self.eat_word("of") { Some(self.barrier_ref()?) } else { None };
                Op::NamedBarrier { id: v[0], threads: v[1], barrier }
            }
            "fence.proxy.async" => Op::FenceProxyAsync,
            "wgmma.fence" => Op::WgmmaFence,
            "wgmma.commit_group" => {
                let group = match self.peek() {
                    Some(Tok::Entity(_)) => Some(self.group_ref()?),
                    _ => None,
                };
                Op::WgmmaCommit { group }
            }
            "wgmma.wait_group" => Op::WgmmaWait { pending: self.integer()? },
            "wgmma.mma_async" => {
                let shape_text = self.word()?;
                let Some(shape) = wgmma_shape(&shape_text) else {
                    return self.error(format!("`{shape_text}` is not a wgmma shape like `m64n128k16.bf16`"));
                };
                let acc = self.operand()?;
                self.punct(',')?;
                let a = self.operand()?;
                // A in registers (`regs`) or in shared memory (`desc(..)`).
                let a_desc = if self.eat_word("regs") { None } else { Some(self.gmma_desc()?) };
                self.punct(',')?;
                let b = self.operand()?;
                let b_desc = self.gmma_desc()?;
                self.punct(',')?;
                self.keyword("scale_d")?;
                let mut steps = vec![WgmmaStep { a, b, scale_d: self.operand()? }];
                // The group's other k-steps: `; %a, %b, scale_d %s`.
                while self.eat_punct(';') {
                    let a = self.operand()?;
                    self.punct(',')?;
                    let b = self.operand()?;
                    self.punct(',')?;
                    self.keyword("scale_d")?;
                    steps.push(WgmmaStep { a, b, scale_d: self.operand()? });
                }
                Op::Wgmma { shape, acc, a_desc, b_desc, steps }
            }
            "setmaxnreg.inc" => Op::Setmaxnreg { regs: self.integer()?, inc: true },
            "setmaxnreg.dec" => Op::Setmaxnreg { regs: self.integer()?, inc: false },
            _ => return Ok(None),
        }))
    }

    /// A tensor map's box coordinates: `[%c0, %c1, ...]`.
    fn coords(&mut self) -> PResult<Vec<Handle<Expr>>> {
        self.punct('[')?;
        let mut coords = vec![self.operand()?];
        while self.eat_punct(',') {
            coords.push(self.operand()?);
        }
        self.punct(']')?;
        Ok(coords)
    }

    /// A wgmma descriptor's fields: `desc(sw128, lbo 16, sbo 1024, k)` (`k` or `mn` major).
    fn gmma_desc(&mut self) -> PResult<crate::GmmaDesc> {
        self.keyword("desc")?;
        self.punct('(')?;
        let sw = self.word()?;
        let swizzle = match sw.as_str() {
            "none" => crate::GmmaSwizzle::None,
            "sw32" => crate::GmmaSwizzle::B32,
            "sw64" => crate::GmmaSwizzle::B64,
            "sw128" => crate::GmmaSwizzle::B128,
            _ => return self.error(format!("`{sw}` is not a wgmma swizzle (none, sw32, sw64, sw128)")),
        };
        self.punct(',')?;
        self.keyword("lbo")?;
        let lbo = self.integer()?;
        self.punct(',')?;
        self.keyword("sbo")?;
        let sbo = self.integer()?;
        self.punct(',')?;
        let major = self.word()?;
        let mn_major = match major.as_str() {
            "k" => false,
            "mn" => true,
            _ => return self.error(format!("`{major}` is not a major-ness (k, mn)")),
        };
        self.punct(')')?;
        Ok(crate::GmmaDesc { lbo, sbo, swizzle, mn_major })
    }
}

/// `m64n128k16.bf16`, or `m64n256k32.e4m3.e5m2` when B's type is not A's.
fn wgmma_shape(text: &str) -> Option<WgmmaShape> {
    let (dims, inputs) = text.split_once('.')?;
    let (input, input_b) = match inputs.split_once('.') {
        Some((a, b)) => (scalar(a)?, scalar(b)?),
        None => (scalar(inputs)?, scalar(inputs)?),
    };
    let rest = dims.strip_prefix('m')?;
    let (m, rest) = rest.split_once('n')?;
    let (n, k) = rest.split_once('k')?;
    Some(WgmmaShape { m: m.parse().ok()?, n: n.parse().ok()?, k: k.parse().ok()?, input, input_b })
}

//! The scheduling passes: they write the asynchronous parts of a Hopper kernel from the plain program, so that
//! what a person would write by hand (mbarriers, phases, stages, roles) is generated, printed
//! (`--emit ir-scheduled`) and then checked by the same passes as a hand-written schedule (`check-collectives`,
//! `check-operands`, `check-protocol`). What a pass cannot write is E0324, at the statement that asks for it.
//!
//! - `pipeline-loops` ([`ring`]): a `for` loop marked `pipelined(stages = S)` gets a ring of S shared-memory
//!   stages for the tiles its `tma_load`s fill, a `full` and an `empty` mbarrier per stage, and its copies
//!   issued S - 1 iterations ahead (by one thread, or in a `warp_specialized` kernel by a producer warpgroup
//!   looping over all of them); wgmma groups stay one deep in flight, each stage released after the group that
//!   read it.
//!   In a `warp_specialized` kernel, the copies beside the pipelined loop (a tile of a bias, loaded once per
//!   output tile) go to the producer as well, each tile in two stages used in turn ([`tiles`]).
//! - `complete-copies` ([`copies`]): every other `tma_load` without a barrier gets one, waited on right after
//!   the copy, so the tile is complete before its first use.
//! - `complete-wgmma` ([`waits`]): `gemm` is asynchronous; a read of its accumulator waits for it.
//! - `specialize-warps` ([`roles`]): a `warp_specialized` kernel runs its producer region on warpgroup 0 with few
//!   registers and everything else on the consumer warpgroups with the rest; a top-level loop around the producer
//!   region (a loop over tiles) runs in both roles, each with its part of the body.
//!
//! A tile wider than one TMA box (an MN-major tile of B wider than its swizzle's rows) comes as several copies,
//! one per box, each into its slice of the tile; the ring gives the tile one set of stages and expects all the
//! boxes' bytes, once [`slices`] has checked that they fill the tile exactly once.
//!
//! With `multicast` copies (clusters sharing a tile), the ring's barriers count every CTA of the cluster, stages
//! are released in every CTA, and cluster barriers publish the barriers and end the kernel.
//!
//! The three need, from the rest of the IR: the loop's statements and which values they define (to clone the
//! copies' coordinates for another iteration), the tiles' allocations (to give them stages), the boxes' bytes
//! ([`Kernel::tma_box_bytes`](crate::Kernel)), and the block's shape.

mod copies;
mod emit;
mod exits;
mod placement;
mod refusal;
mod ring;
mod roles;
mod slices;
mod tiles;
mod waits;

pub use copies::CompleteCopies;
pub use refusal::Refusal;
pub use ring::PipelineLoops;
pub use roles::SpecializeWarps;
pub use waits::CompleteWgmma;

use super::{PassError, PassErrorKind};
use crate::arena::{Handle, Loc};
use crate::expr::Expr;
use crate::module::{Alloc, Kernel};
use crate::types::{AddrSpace, Scalar};
use std::collections::HashMap;

/// E0324 from `pass` in `k` at `loc` (the kernel's place where `loc` is none).
fn refuse(pass: &'static str, k: &Kernel, loc: Loc, why: Refusal) -> PassError {
    PassError {
        pass,
        kernel: k.name.clone(),
        loc: if loc == Loc::NONE { k.loc } else { loc },
        kind: PassErrorKind::Schedule(Box::new(why)),
    }
}

/// E0324 for a compiler bug: `what` does not hold.
fn internal(pass: &'static str, k: &Kernel, loc: Loc, what: &'static str, label: &'static str) -> PassError {
    refuse(pass, k, loc, Refusal::Internal { what, label })
}

/// The threads of a one-dimensional block, which the passes need to pick the thread that issues copies and to
/// count warps; `None` for another block.
fn threads_1d(k: &Kernel) -> Option<u32> {
    match k.block_size {
        Some([x, 1, 1]) => Some(x),
        _ => None,
    }
}

/// The bytes one copy through the tensor map `map` lands (its box); E0324 from `pass` at `at` where the box is not
/// known (a compiler bug: lowering records every map's box).
fn box_bytes(pass: &'static str, k: &Kernel, map: Handle<Expr>, at: Loc) -> Result<u64, PassError> {
    let bytes = match k.exprs.get(map) {
        Some(Expr::Param(p)) => k.tma_box_bytes(*p),
        _ => None,
    };
    bytes.ok_or_else(|| internal(pass, k, at, "a copy whose box is not known", "here"))
}

/// Grows the tile `tile` to `stages` stages, each aligned as TMA and the tile's swizzle ask (128 bytes or more),
/// and gives one stage's length in elements; E0324 from `pass` at `at` for a copy into no allocation.
fn grow_to_stages(
    pass: &'static str,
    k: &mut Kernel,
    tile: Handle<Alloc>,
    stages: i64,
    at: Loc,
) -> Result<i64, PassError> {
    let Some(a) = k.allocs.get_mut(tile) else {
        return Err(internal(pass, k, at, "a copy into no allocation", "here"));
    };
    let elems = stage_elems(a);
    a.len = u32::try_from(elems * stages).unwrap_or(u32::MAX);
    Ok(elems)
}

/// The elements of one stage of the tile `a`: its length, rounded up so that every stage is aligned as TMA and
/// the tile's swizzle ask (128 bytes or more).
fn stage_elems(a: &Alloc) -> i64 {
    let size = i64::from(a.elem.size_bytes()).max(1);
    let align = i64::from(a.align.max(128));
    (i64::from(a.len) * size + align - 1) / align * align / size
}

/// The shared memory `pipeline-loops` adds to a kernel when it gives the pipelined loop `body` a ring of `stages`
/// stages: each tile its copies fill grown to the stages ([`grow_to_stages`]; the tile's one stage is already
/// the kernel's), and the `full` and `empty` mbarriers. The lowering asks it before it lowers a `store` that
/// stages the accumulator in shared memory (how many pieces fit beside the ring), so that the ring's size has
/// one definition, the pass's.
pub fn ring_bytes(k: &Kernel, body: &crate::stmt::Block, stages: u32) -> u64 {
    let mut tiles: Vec<Handle<Alloc>> = Vec::new();
    body.visit(&mut |s| {
        // A multicast copy fills part of its tile (this CTA's share): the tile is what the address is in.
        if let crate::stmt::Stmt::Op { op: crate::op::Op::TmaLoadUnscheduled { dst, .. }, .. } = s
            && let Some(a) = alloc_of(k, *dst)
            && !tiles.contains(&a)
        {
            tiles.push(a);
        }
    });
    let grown: u64 = tiles
        .iter()
        .filter_map(|t| k.allocs.get(*t))
        .map(|a| {
            let stage = u64::try_from(stage_elems(a)).unwrap_or(u64::MAX) * u64::from(a.elem.size_bytes());
            (stage.saturating_mul(u64::from(stages))).saturating_sub(a.size_bytes())
        })
        .sum();
    if tiles.is_empty() { 0 } else { grown + 2 * 8 * u64::from(stages) }
}

/// A new shared-memory array of `len` mbarriers (`i64`) named `name` (or a fresh variant), and its address.
fn mbarriers(k: &mut Kernel, name: &str, len: u32, loc: Loc) -> Handle<Expr> {
    let name = emit::fresh_name(|n| k.allocs.iter().any(|(_, a)| a.name == n), name);
    let a = k.allocs.append(Alloc { name, space: AddrSpace::Shared, elem: Scalar::I64, len, align: 8 }, loc);
    k.exprs.append(Expr::AllocPtr(a), loc)
}

/// Declares the mbarrier array at `bar` (made by [`mbarriers`]) as the compiler's, each barrier for `arrivals`
/// arrivals and `bytes` per phase; E0324 from `pass` (a compiler bug) if `bar` is no allocation's address.
fn declare_mbarriers(
    pass: &'static str,
    k: &mut Kernel,
    bar: Handle<Expr>,
    arrivals: u32,
    bytes: u64,
    loc: Loc,
) -> Result<Handle<crate::schedule::Barrier>, PassError> {
    match alloc_of(k, bar) {
        Some(alloc) => Ok(k.declare_mbarriers(alloc, arrivals, bytes, loc)),
        None => Err(internal(pass, k, loc, "mbarriers in no allocation", "here")),
    }
}

/// The allocation a pointer is into.
fn alloc_of(k: &Kernel, mut h: Handle<Expr>) -> Option<Handle<Alloc>> {
    for _ in 0..64 {
        match k.exprs.get(h)? {
            Expr::AllocPtr(a) => return Some(*a),
            Expr::Offset { base, .. } => h = *base,
            _ => return None,
        }
    }
    None
}

/// A new `i32` variable named `name` (or a fresh variant).
fn new_var(k: &mut Kernel, name: &str, loc: Loc) -> Handle<crate::module::Var> {
    let name = emit::fresh_name(|n| k.vars.iter().any(|(_, v)| v.name == n), name);
    k.vars.append(crate::module::Var { name, ty: crate::types::Type::I32 }, loc)
}

/// `block` with every operand in `memo` replaced, and every emitted expression that uses one emitted anew.
pub(super) fn substitute(
    k: &mut Kernel,
    block: crate::stmt::Block,
    memo: &mut HashMap<Handle<Expr>, Handle<Expr>>,
) -> crate::stmt::Block {
    let Ok(b) = crate::visit::Rewrite::block(&mut Copy { k, memo, fresh: false }, block);
    b
}

/// A copy of `block` in which every value is defined anew (recorded in `memo`), and every operand in `memo`
/// replaced by its copy: the same statements, for other threads (the producer's), under their own names.
pub(super) fn replicate(
    k: &mut Kernel,
    block: crate::stmt::Block,
    memo: &mut HashMap<Handle<Expr>, Handle<Expr>>,
) -> crate::stmt::Block {
    let Ok(b) = crate::visit::Rewrite::block(&mut Copy { k, memo, fresh: true }, block);
    b
}

/// The rewrite of [`substitute`] and [`replicate`]: `fresh` defines every value anew, otherwise only those that
/// use a replaced one.
struct Copy<'a> {
    k: &'a mut Kernel,
    memo: &'a mut HashMap<Handle<Expr>, Handle<Expr>>,
    fresh: bool,
}

impl Copy<'_> {
    /// `h` defined anew, its operands replaced (if `fresh` or one of them is).
    fn define(&mut self, h: Handle<Expr>) -> Handle<Expr> {
        let Some(mut e) = self.k.exprs.get(h).cloned() else { return h };
        let mut changed = self.fresh;
        e.map_operands(|o| match self.memo.get(&o) {
            Some(&n) => {
                changed = true;
                n
            }
            None => o,
        });
        if !changed {
            return h;
        }
        let copy = self.k.exprs.append(e, self.k.exprs.loc(h));
        self.memo.insert(h, copy);
        copy
    }
}

impl crate::visit::Rewrite for Copy<'_> {
    type Error = std::convert::Infallible;

    fn operand(&mut self, h: Handle<Expr>) -> Handle<Expr> {
        self.memo.get(&h).copied().unwrap_or(h)
    }

    fn result(&mut self, h: Handle<Expr>) -> Handle<Expr> {
        if self.fresh { self.define(h) } else { h }
    }

    fn emit(&mut self, h: Handle<Expr>, mut out: crate::visit::Out<'_>) -> Result<(), Self::Error> {
        out.push(crate::stmt::Stmt::Emit(self.define(h)));
        Ok(())
    }
}

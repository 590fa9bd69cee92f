//! The effects model: what evaluating an expression or a statement does besides computing a value, as a small
//! bitset ([`Effects`]): reads and writes per address space, variable reads and writes, and four ordering
//! properties (asynchronous, collective, barrier, wait) plus control transfer.
//!
//! One function per node kind computes them ([`expr`], [`op`], [`stmt`]; [`block`] for nested code), and every
//! pass asks them instead of matching node kinds: `cse` merges only expressions without effects, `dce` removes
//! only what [`Effects::removable`] allows, and the dependency graph ([`crate::analysis::deps`]) orders
//! statements by them. Memory is tracked per address space, without alias analysis: two accesses to the same
//! space may conflict. Under it, [`Footprint`] names what each access touches ([`Resource`]: an allocation, a
//! parameter's memory) and the asynchronous domain an operation starts or completes ([`Domain`]: an mbarrier,
//! wgmma groups, bulk groups): what the dependency graph orders statements by.
//!
//! What the ordering bits mean:
//! - `ASYNC`: the operation's memory effects complete *later*, at a `WAIT` (a TMA copy writes shared memory after
//!   it is issued; a `wgmma.mma_async` reads and writes its accumulator until a `wgmma.wait_group`).
//! - `WAIT`: completes earlier asynchronous effects (`mbarrier.wait`, `wgmma.wait_group`).
//! - `COLLECTIVE`: every thread of a warp, warpgroup or CTA executes it together: it may not be moved into
//!   divergent control flow, merged with another, or removed from some threads only (a shuffle nobody uses may
//!   go from all of them at once).
//! - `BARRIER`: orders memory accesses around it: none may move across it.
//! - `CONTROL`: transfers control (`break`, `continue`, `return`).

use crate::arena::Handle;
use crate::expr::Expr;
use crate::module::Kernel;
use crate::op::Op;
use crate::stmt::{Barrier, Block, Stmt};
use crate::types::{AddrSpace, Type};
use std::fmt;

/// A set of effects (see the module documentation).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Effects(u32);

const SPACES: [AddrSpace; 4] = [AddrSpace::Global, AddrSpace::Shared, AddrSpace::Local, AddrSpace::Param];

const fn space_bit(space: AddrSpace) -> u32 {
    match space {
        AddrSpace::Global => 0,
        // A peer's shared memory may be this CTA's own (its rank may be this CTA's): accesses through the
        // cluster window count as accesses to shared memory.
        AddrSpace::Shared | AddrSpace::SharedCluster => 1,
        AddrSpace::Local => 2,
        AddrSpace::Param => 3,
    }
}

impl Effects {
    pub const NONE: Effects = Effects(0);
    pub const READ_VAR: Effects = Effects(1 << 8);
    pub const WRITE_VAR: Effects = Effects(1 << 9);
    pub const ASYNC: Effects = Effects(1 << 10);
    pub const WAIT: Effects = Effects(1 << 11);
    pub const COLLECTIVE: Effects = Effects(1 << 12);
    pub const BARRIER: Effects = Effects(1 << 13);
    pub const CONTROL: Effects = Effects(1 << 14);

    /// Reads memory of `space`.
    pub const fn reads(space: AddrSpace) -> Effects {
        Effects(1 << space_bit(space))
    }
    /// Writes memory of `space`.
    pub const fn writes(space: AddrSpace) -> Effects {
        Effects(1 << (4 + space_bit(space)))
    }
    /// Reads memory of any space (an access through a pointer of unknown space).
    pub const fn reads_any() -> Effects {
        Effects(0xf)
    }
    pub const fn writes_any() -> Effects {
        Effects(0xf0)
    }

    pub const fn union(self, other: Effects) -> Effects {
        Effects(self.0 | other.0)
    }
    pub const fn contains(self, other: Effects) -> bool {
        self.0 & other.0 == other.0
    }
    pub const fn intersects(self, other: Effects) -> bool {
        self.0 & other.0 != 0
    }
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }
    /// Whether it reads memory of `space`.
    pub fn reads_space(self, space: AddrSpace) -> bool {
        self.0 & (1 << space_bit(space)) != 0
    }
    pub fn writes_space(self, space: AddrSpace) -> bool {
        self.0 & (1 << (4 + space_bit(space))) != 0
    }
    /// Whether it touches memory at all.
    pub fn touches_memory(self) -> bool {
        self.0 & 0xff != 0
    }

    /// Whether a statement with these effects may be deleted when nothing uses its value: it writes nothing,
    /// starts or completes no asynchronous work, orders nothing and jumps nowhere. Reads and collectives may go.
    pub fn removable(self) -> bool {
        !self.intersects(
            Effects::writes_any()
                .union(Effects::WRITE_VAR)
                .union(Effects::ASYNC)
                .union(Effects::WAIT)
                .union(Effects::BARRIER)
                .union(Effects::CONTROL),
        )
    }

    /// Whether two expressions with these effects and the same operands may be merged into one (`cse`): only
    /// when there are none.
    pub fn mergeable(self) -> bool {
        self.is_empty()
    }
}

impl std::ops::BitOr for Effects {
    type Output = Effects;
    fn bitor(self, rhs: Effects) -> Effects {
        self.union(rhs)
    }
}

impl std::ops::BitOrAssign for Effects {
    fn bitor_assign(&mut self, rhs: Effects) {
        *self = self.union(rhs);
    }
}

/// `read(global,shared) write(shared) async`; `pure` when empty.
impl fmt::Display for Effects {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        for (what, has) in
            [("read", Effects::reads_space as fn(Effects, AddrSpace) -> bool), ("write", Effects::writes_space)]
        {
            let spaces: Vec<&str> = SPACES.iter().filter(|&&s| has(*self, s)).map(|s| s.name()).collect();
            if !spaces.is_empty() {
                parts.push(format!("{what}({})", spaces.join(",")));
            }
        }
        for (bit, name) in [
            (Effects::READ_VAR, "read-var"),
            (Effects::WRITE_VAR, "write-var"),
            (Effects::ASYNC, "async"),
            (Effects::WAIT, "wait"),
            (Effects::COLLECTIVE, "collective"),
            (Effects::BARRIER, "barrier"),
            (Effects::CONTROL, "control"),
        ] {
            if self.contains(bit) {
                parts.push(name.to_string());
            }
        }
        if parts.is_empty() { f.write_str("pure") } else { f.write_str(&parts.join(" ")) }
    }
}

impl fmt::Debug for Effects {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// The address space a pointer expression points into, when it can be told from the expression itself
/// (parameters, allocations, offsets of them, operation results of pointer type, and `mapa`'s window into a peer's
/// shared memory, `shared_cluster`).
pub fn space_of(kernel: &Kernel, h: Handle<Expr>) -> Option<AddrSpace> {
    let mut h = h;
    // Offsets chain to earlier expressions, so this terminates; the bound guards against invalid IR.
    for _ in 0..=kernel.exprs.len() {
        match kernel.exprs.get(h)? {
            Expr::Param(i) => match kernel.params.get(*i as usize)?.ty {
                Type::Ptr(space) => return Some(space),
                Type::Scalar(_) | Type::Vector { .. } => return None,
            },
            Expr::AllocPtr(a) => return kernel.allocs.get(*a).map(|a| a.space),
            Expr::Offset { base, .. } if *base < h => h = *base,
            // An operand after its user: invalid IR, whose space is unknown.
            Expr::Offset { .. } => return None,
            Expr::OpResult(Type::Ptr(space)) => return Some(*space),
            Expr::OpResult(Type::Scalar(_) | Type::Vector { .. }) => return None,
            Expr::MapShared { .. } => return Some(AddrSpace::SharedCluster),
            // Not pointers, or pointers whose space the expression does not say (a variable's value, a choice
            // between two pointers): any space.
            Expr::Literal(_)
            | Expr::Special(_)
            | Expr::ReadVar(_)
            | Expr::Unary { .. }
            | Expr::Binary { .. }
            | Expr::Compare { .. }
            | Expr::Select { .. }
            | Expr::Convert { .. }
            | Expr::Math { .. }
            | Expr::Extract { .. }
            | Expr::Compose { .. } => return None,
        }
    }
    None
}

fn reads_at(kernel: &Kernel, ptr: Handle<Expr>) -> Effects {
    space_of(kernel, ptr).map_or(Effects::reads_any(), Effects::reads)
}

fn writes_at(kernel: &Kernel, ptr: Handle<Expr>) -> Effects {
    space_of(kernel, ptr).map_or(Effects::writes_any(), Effects::writes)
}

/// The effects of evaluating an expression: only a variable read has any.
pub fn expr(e: &Expr) -> Effects {
    match e {
        Expr::ReadVar(_) => Effects::READ_VAR,
        Expr::Literal(_)
        | Expr::Param(_)
        | Expr::AllocPtr(_)
        | Expr::Special(_)
        | Expr::OpResult(_)
        | Expr::Unary { .. }
        | Expr::Binary { .. }
        | Expr::Compare { .. }
        | Expr::Select { .. }
        | Expr::Convert { .. }
        | Expr::Math { .. }
        | Expr::Offset { .. }
        | Expr::Extract { .. }
        | Expr::Compose { .. }
        | Expr::MapShared { .. } => Effects::NONE,
    }
}

/// The effects of an operation.
pub fn op(kernel: &Kernel, op: &Op) -> Effects {
    let barrier_rw = |bar| reads_at(kernel, bar) | writes_at(kernel, bar);
    match *op {
        Op::Load { ptr, .. } => reads_at(kernel, ptr),
        Op::Shuffle { .. } => Effects::COLLECTIVE,
        Op::MbarrierInit { bar, .. } => writes_at(kernel, bar),
        Op::MbarrierArriveExpectTx { bar, .. } | Op::MbarrierArrive { bar } => barrier_rw(bar),
        // The wait reads the barrier's phase and completes the asynchronous writes signalled on it; memory
        // accesses after it must stay after it.
        Op::MbarrierWait { bar, .. } => barrier_rw(bar) | Effects::WAIT | Effects::BARRIER,
        // The peer's barrier: shared memory of another CTA, which this CTA's accesses never touch.
        Op::MbarrierArriveRemote { .. } => Effects::reads(AddrSpace::Shared) | Effects::writes(AddrSpace::Shared),
        Op::ClusterBarrier => Effects::BARRIER | Effects::COLLECTIVE,
        Op::TmaLoad { dst, map, bar, .. } => {
            reads_at(kernel, map)
                | Effects::reads(AddrSpace::Global)
                | writes_at(kernel, dst)
                | barrier_rw(bar)
                | Effects::ASYNC
        }
        // Its barrier is not chosen yet: the scheduling passes pair it with one.
        Op::TmaLoadUnscheduled { dst, map, .. } => {
            reads_at(kernel, map) | Effects::reads(AddrSpace::Global) | writes_at(kernel, dst) | Effects::ASYNC
        }
        // Reads `src` after it is issued, until a `bulk.wait_group.read` covers it.
        Op::TmaStore { src, map, .. } => {
            reads_at(kernel, map) | reads_at(kernel, src) | Effects::writes(AddrSpace::Global) | Effects::ASYNC
        }
        // A warp collective that writes shared memory.
        Op::Stmatrix { ptr, .. } => writes_at(kernel, ptr) | Effects::COLLECTIVE,
        Op::BulkCommit => Effects::ASYNC,
        Op::BulkWait { .. } => Effects::WAIT | Effects::BARRIER,
        Op::PrefetchTensorMap { map } => reads_at(kernel, map),
        // Orders the initialisations before everything after it, like a barrier.
        Op::FenceMbarrierInit => Effects::BARRIER,
        // Each lane's result depends on which lanes are active: it must not move across control flow.
        Op::ElectOne => Effects::COLLECTIVE,
        Op::FenceProxyAsync => Effects::BARRIER,
        Op::NamedBarrier { .. } => Effects::BARRIER | Effects::COLLECTIVE,
        Op::WgmmaFence => Effects::BARRIER | Effects::COLLECTIVE,
        Op::Wgmma { acc, a_desc, ref steps, .. } => {
            // A from registers ("RS") is read from its register array as the operation is issued.
            let mut a_regs = Effects::NONE;
            if a_desc.is_none() {
                steps.iter().for_each(|s| a_regs |= reads_at(kernel, s.a));
            }
            a_regs
                | Effects::reads(AddrSpace::Shared)
                | reads_at(kernel, acc)
                | writes_at(kernel, acc)
                | Effects::ASYNC
                | Effects::COLLECTIVE
        }
        Op::WgmmaCommit { .. } => Effects::ASYNC | Effects::COLLECTIVE,
        // Warpgroup-collective, and it changes what every later instruction may use.
        Op::Setmaxnreg { .. } => Effects::BARRIER | Effects::COLLECTIVE,
        Op::WgmmaWait { .. } => Effects::WAIT | Effects::BARRIER | Effects::COLLECTIVE,
    }
}

/// The effects of one statement itself, not of its nested blocks (see [`deep`]).
pub fn stmt(kernel: &Kernel, s: &Stmt) -> Effects {
    match s {
        Stmt::Emit(h) => kernel.exprs.get(*h).map_or(Effects::NONE, expr),
        Stmt::Op { op: o, .. } => op(kernel, o),
        Stmt::WriteVar { .. } => Effects::WRITE_VAR,
        Stmt::Store { ptr, .. } => writes_at(kernel, *ptr),
        Stmt::Barrier(Barrier::Cta) => Effects::BARRIER | Effects::COLLECTIVE,
        Stmt::Break | Stmt::Continue | Stmt::Return => Effects::CONTROL,
        // A loop writes its induction variable.
        Stmt::For { .. } => Effects::WRITE_VAR,
        Stmt::If { .. } | Stmt::While { .. } => Effects::NONE,
        // `setmaxnreg` is warpgroup-collective.
        Stmt::Roles(_) => Effects::COLLECTIVE,
    }
}

/// The effects of a statement and everything nested in it. A `break` or `continue` inside a loop does not
/// leave the loop statement, but counts anyway: it is conservative and rare enough.
pub fn deep(kernel: &Kernel, s: &Stmt) -> Effects {
    s.blocks().fold(stmt(kernel, s), |acc, b| acc | block(kernel, b))
}

/// The effects of every statement of a block, nested ones included.
pub fn block(kernel: &Kernel, b: &Block) -> Effects {
    b.stmts().iter().fold(Effects::NONE, |acc, s| acc | deep(kernel, s))
}

/// Whether the kernel has a `store` statement into `space` (operations that write memory, such as TMA stores, do
/// not count): what a back end must not lose, since LLVM deletes stores it can prove unreachable.
pub fn has_store_to(kernel: &Kernel, space: AddrSpace) -> bool {
    let mut found = false;
    kernel.body.visit(&mut |s| {
        if let Stmt::Store { ptr, .. } = *s {
            found |= space_of(kernel, ptr) == Some(space);
        }
    });
    found
}

/// What a memory access touches, as far as the pointer's expression tells (the finer model under [`Effects`],
/// which the dependency graph uses): one static allocation, the memory a pointer parameter reaches, an unknown
/// place of one address space, or anything.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Resource {
    Alloc(Handle<crate::module::Alloc>),
    Param(u32),
    Space(AddrSpace),
    Any,
}

impl Resource {
    /// The resource a pointer expression points into: its base allocation or parameter through offsets; a
    /// pointer from an operation or a `mapa` window (a peer's shared memory may be this CTA's own) is only known
    /// by its space.
    pub fn of(kernel: &Kernel, ptr: Handle<Expr>) -> Resource {
        let mut h = ptr;
        for _ in 0..=kernel.exprs.len() {
            match kernel.exprs.get(h) {
                Some(Expr::Param(i)) => return Resource::Param(*i),
                Some(Expr::AllocPtr(a)) => return Resource::Alloc(*a),
                Some(Expr::Offset { base, .. }) if *base < h => h = *base,
                Some(Expr::OpResult(Type::Ptr(space))) => return Resource::Space(Resource::normal(*space)),
                Some(Expr::MapShared { .. }) => return Resource::Space(AddrSpace::Shared),
                _ => return Resource::Any,
            }
        }
        Resource::Any
    }

    /// The allocation it is, if it is one.
    pub fn alloc(self) -> Option<Handle<crate::module::Alloc>> {
        match self {
            Resource::Alloc(a) => Some(a),
            Resource::Param(_) | Resource::Space(_) | Resource::Any => None,
        }
    }

    /// Shared memory through the cluster window counts as shared memory.
    fn normal(space: AddrSpace) -> AddrSpace {
        if space == AddrSpace::SharedCluster { AddrSpace::Shared } else { space }
    }

    /// The address space it lies in, when known.
    pub fn space(self, kernel: &Kernel) -> Option<AddrSpace> {
        match self {
            Resource::Alloc(a) => kernel.allocs.get(a).map(|a| Resource::normal(a.space)),
            Resource::Param(i) => match kernel.params.get(i as usize)?.ty {
                Type::Ptr(space) => Some(Resource::normal(space)),
                Type::Scalar(_) | Type::Vector { .. } => None,
            },
            Resource::Space(space) => Some(space),
            Resource::Any => None,
        }
    }

    /// Whether an access to `self` and one to `other` may touch the same bytes: distinct allocations never do,
    /// nor an allocation and a parameter's memory; two pointer parameters may (arguments may alias) unless one is
    /// `noalias`.
    pub fn may_alias(self, other: Resource, kernel: &Kernel) -> bool {
        let noalias = |i: u32| kernel.params.get(i as usize).is_some_and(|p| p.noalias);
        match (self, other) {
            (Resource::Any, _) | (_, Resource::Any) => true,
            (Resource::Space(s), r) | (r, Resource::Space(s)) => r.space(kernel).is_none_or(|t| t == s),
            (Resource::Alloc(a), Resource::Alloc(b)) => a == b,
            (Resource::Param(i), Resource::Param(j)) => i == j || !(noalias(i) || noalias(j)),
            (Resource::Alloc(_), Resource::Param(_)) | (Resource::Param(_), Resource::Alloc(_)) => false,
        }
    }

    /// `@stages`, `%out`, `shared`, `any`: as the text form names them.
    pub fn name(self, kernel: &Kernel) -> String {
        match self {
            Resource::Alloc(a) => kernel.allocs.get(a).map_or_else(|| "@?".into(), |a| format!("@{}", a.name)),
            Resource::Param(i) => kernel.params.get(i as usize).map_or_else(|| "%?".into(), |p| format!("%{}", p.name)),
            Resource::Space(s) => s.name().to_string(),
            Resource::Any => "any".into(),
        }
    }
}

/// What completes an asynchronous operation: the mbarrier it signals (a TMA load), the wgmma groups (a
/// `wgmma.mma_async` and its commit, completed by `wgmma.wait_group`), the bulk groups (TMA stores and their
/// commit, completed by `bulk.wait_group`), or not chosen yet (an unscheduled copy, which a pass pairs with a
/// barrier: any wait may complete it).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Domain {
    Mbarrier(Resource),
    WgmmaGroups,
    BulkGroups,
    Unscheduled,
}

impl Domain {
    /// Whether a wait of `waits` may complete an operation of `self`.
    pub fn completed_by(self, waits: Domain, kernel: &Kernel) -> bool {
        match (self, waits) {
            (Domain::Unscheduled, _) | (_, Domain::Unscheduled) => true,
            (Domain::Mbarrier(a), Domain::Mbarrier(b)) => a.may_alias(b, kernel),
            (a, b) => a == b,
        }
    }
}

/// One access of a statement: the resource it touches, whether it writes, and where it is known: its pointer and
/// the bytes it covers from there (what [`crate::analysis::deps`] needs to tell the stages of a ring apart).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Access {
    pub resource: Resource,
    pub write: bool,
    pub at: Option<(Handle<Expr>, u64)>,
}

/// The resources a statement reads and writes in program order, and the asynchronous domains it starts work in
/// and completes (see [`Resource`], [`Domain`]). An asynchronous operation's own accesses are listed with it;
/// the mbarrier a TMA load signals is its domain, not an access: the load and an `expect_tx` on that barrier do
/// not conflict.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Footprint {
    pub accesses: Vec<Access>,
    pub starts: Vec<Domain>,
    pub completes: Vec<Domain>,
}

impl Footprint {
    /// Adds `other`'s, each access and domain once.
    fn add(&mut self, other: Footprint) {
        fn merge<T: PartialEq>(into: &mut Vec<T>, from: Vec<T>) {
            for x in from {
                if !into.contains(&x) {
                    into.push(x);
                }
            }
        }
        merge(&mut self.accesses, other.accesses);
        merge(&mut self.starts, other.starts);
        merge(&mut self.completes, other.completes);
    }

    /// The resources it reads.
    pub fn reads(&self) -> impl Iterator<Item = &Access> {
        self.accesses.iter().filter(|a| !a.write)
    }
    /// The resources it writes.
    pub fn writes(&self) -> impl Iterator<Item = &Access> {
        self.accesses.iter().filter(|a| a.write)
    }

    /// Of one operation.
    pub fn of_op(kernel: &Kernel, op: &Op) -> Footprint {
        // An access through `ptr` of `bytes` bytes (unknown size: `None`), and one known only by its resource.
        let at = |ptr: Handle<Expr>, bytes: Option<u64>, write: bool| Access {
            resource: Resource::of(kernel, ptr),
            write,
            at: bytes.map(|b| (ptr, b)),
        };
        let whole = |resource: Resource, write: bool| Access { resource, write, at: None };
        let global = Resource::Space(AddrSpace::Global);
        let shared = Resource::Space(AddrSpace::Shared);
        let size = |ty: Type| Some(u64::from(ty.size_bytes()));
        let box_of = |map: Handle<Expr>| match kernel.exprs.get(map) {
            Some(Expr::Param(i)) => kernel.tma_box_bytes(*i),
            _ => None,
        };
        // An mbarrier is one 8-byte word.
        let bar_rw = |bar| vec![at(bar, Some(8), false), at(bar, Some(8), true)];
        let (accesses, starts, completes) = match *op {
            Op::Load { ptr, ty, .. } => (vec![at(ptr, size(ty), false)], vec![], vec![]),
            Op::MbarrierInit { bar, .. } => (vec![at(bar, Some(8), true)], vec![], vec![]),
            Op::MbarrierArriveExpectTx { bar, .. } | Op::MbarrierArrive { bar } => (bar_rw(bar), vec![], vec![]),
            Op::MbarrierWait { bar, .. } => (bar_rw(bar), vec![], vec![Domain::Mbarrier(Resource::of(kernel, bar))]),
            Op::MbarrierArriveRemote { .. } => (vec![whole(shared, false), whole(shared, true)], vec![], vec![]),
            Op::TmaLoad { dst, map, bar, .. } => (
                vec![at(map, None, false), whole(global, false), at(dst, box_of(map), true)],
                vec![Domain::Mbarrier(Resource::of(kernel, bar))],
                vec![],
            ),
            Op::TmaLoadUnscheduled { dst, map, .. } => (
                vec![at(map, None, false), whole(global, false), at(dst, box_of(map), true)],
                vec![Domain::Unscheduled],
                vec![],
            ),
            Op::TmaStore { src, map, .. } => (
                vec![at(map, None, false), at(src, box_of(map), false), whole(global, true)],
                vec![Domain::BulkGroups],
                vec![],
            ),
            Op::Stmatrix { ptr, .. } => (vec![at(ptr, None, true)], vec![], vec![]),
            Op::BulkCommit => (vec![], vec![Domain::BulkGroups], vec![]),
            Op::BulkWait { .. } => (vec![], vec![], vec![Domain::BulkGroups]),
            Op::PrefetchTensorMap { map } => (vec![at(map, None, false)], vec![], vec![]),
            Op::Wgmma { acc, a_desc, ref steps, .. } => {
                let mut accesses = vec![whole(shared, false), at(acc, None, false), at(acc, None, true)];
                if a_desc.is_none() {
                    accesses.extend(steps.iter().map(|s| at(s.a, None, false)));
                }
                (accesses, vec![Domain::WgmmaGroups], vec![])
            }
            Op::WgmmaCommit { .. } => (vec![], vec![Domain::WgmmaGroups], vec![]),
            Op::WgmmaWait { .. } => (vec![], vec![], vec![Domain::WgmmaGroups]),
            Op::Shuffle { .. }
            | Op::ClusterBarrier
            | Op::FenceMbarrierInit
            | Op::ElectOne
            | Op::FenceProxyAsync
            | Op::NamedBarrier { .. }
            | Op::WgmmaFence
            | Op::Setmaxnreg { .. } => (vec![], vec![], vec![]),
        };
        let mut f = Footprint::default();
        f.add(Footprint { accesses, starts, completes });
        f
    }

    /// Of one statement itself, not of its nested blocks.
    pub fn of_stmt(kernel: &Kernel, s: &Stmt) -> Footprint {
        match s {
            Stmt::Op { op: o, .. } => Footprint::of_op(kernel, o),
            // Its size would need the value's type: the stages of a ring are told apart by the loads and copies.
            Stmt::Store { ptr, .. } => {
                let access = Access { resource: Resource::of(kernel, *ptr), write: true, at: None };
                Footprint { accesses: vec![access], ..Footprint::default() }
            }
            _ => Footprint::default(),
        }
    }

    /// Of a statement and everything nested in it.
    pub fn deep(kernel: &Kernel, s: &Stmt) -> Footprint {
        let mut f = Footprint::of_stmt(kernel, s);
        for b in s.blocks() {
            b.visit(&mut |x| f.add(Footprint::of_stmt(kernel, x)));
        }
        f
    }
}

//! Uniformity: which values agree between the threads of a warp, a warpgroup or the whole CTA, which threads
//! reach each statement, and the proof that every collective instruction is executed by whole groups.
//!
//! # The fact
//!
//! A value's [`Fact`] is a **granule** `g`: the value is the same for every thread of each aligned block of `g`
//! consecutive threads (by linear thread index `x + bx (y + by z)`), or for every thread of the CTA
//! ([`Fact::UNIFORM`]). A warp is an aligned block of 32 threads and a warpgroup one of 128, so a granule that is a
//! multiple of 32 is warp-uniform and one that is a multiple of 128 is warpgroup-uniform ([`Fact::scope`]).
//! Two facts combine into the greatest common divisor of their granules: where both are constant, so is anything
//! computed from them. The sources:
//!
//! - literals, parameters, allocation addresses, `ctaid`, `ntid`, `nctaid`, `cluster_ctarank`: uniform;
//! - `tid.x` of a one-dimensional block is the linear index itself (granule 1) and its quotient by a positive
//!   constant `c` (`/ c`, `>> log2 c`) is constant on blocks of `c`; `and` with a mask whose low `k` bits are zero
//!   rounds it down to blocks of `2^k`; `tid.y` is constant on blocks of `bx`, `tid.z` on blocks of `bx by`;
//! - `laneid`, and the result of every operation (a load, a shuffle, `elect.sync`, a wait): granule 1. A load
//!   of the same address can give different values to different threads (another thread may store between
//!   them), so loads are never taken as uniform;
//! - a variable: the combination of every value written to it **and of the control under which each write
//!   happens** (a variable written under a lane-dependent condition differs between lanes afterwards), found as
//!   a fixed point over the kernel.
//!
//! # Reach
//!
//! The **control** of a statement is the combination of everything that decides which threads execute it: the
//! conditions of the enclosing `if`s and `while`s, the bounds of the enclosing `for`s, the role of an enclosing
//! warpgroup region (warpgroup-uniform by construction), a `return` earlier in program order (the threads that
//! took it are gone for the rest of the kernel), and a `break`, `continue` or `return` anywhere in an enclosing
//! loop's body (the threads that took it miss the rest of that iteration and the later ones). A statement whose
//! control has granule `g` is executed by whole aligned blocks of `g` threads, or not at all.
//!
//! One refinement keeps `if thread_idx.x == 0 {..} else if warp_idx >= 1 {..}` provable: where the threads of a
//! branch are an interval of thread indices (a comparison of `tid.x / q` with a constant, in a one-dimensional
//! block) that lies inside the interval of the enclosing branch (with nothing else narrowing the control between
//! them), every thread of it passed the enclosing condition, which then adds nothing: the branch's control is the
//! enclosing `if`'s, with its own condition. Warps 1 and up are never thread 0, so the `else if` runs whole warps.
//!
//! # The proof
//!
//! [`check`] accepts a collective instruction only where its control is at least its [`Scope`]: warpgroup
//! instructions (`wgmma.*`, `setmaxnreg`, a warpgroup region's register budget) need warpgroup-uniform control
//! in a block of whole warpgroups laid out along `x` (the lowering's fragments index by `tid.x`); warp
//! instructions (`stmatrix`, `elect.sync`, shuffles, named barriers) need warp-uniform control in a block of whole
//! warps; CTA barriers (`bar.sync 0`, `barrier.cluster`) need every thread of the CTA. Anything it cannot prove is
//! an error ([`Divergence`]) naming the instruction and the condition, bounds or jump that splits the group:
//! there is no "probably fine".

use crate::arena::{Handle, Loc};
use crate::expr::{BinaryOp, Dim, Expr, SpecialReg};
use crate::module::{Kernel, Var};
use crate::op::Op;
use crate::stmt::{Barrier, Block, Stmt};

/// How widely the threads of a CTA agree, from the narrowest.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug, Hash)]
pub enum Scope {
    Thread,
    Warp,
    Warpgroup,
    Cta,
}

impl Scope {
    /// The group, for messages.
    pub fn group(self) -> &'static str {
        match self {
            Scope::Thread => "thread",
            Scope::Warp => "warp",
            Scope::Warpgroup => "warpgroup",
            Scope::Cta => "CTA",
        }
    }

    /// The number of threads of the group (a CTA's is not fixed: 0).
    pub fn threads(self) -> u32 {
        match self {
            Scope::Thread => 1,
            Scope::Warp => 32,
            Scope::Warpgroup => 128,
            Scope::Cta => 0,
        }
    }
}

/// Why a value or a statement's control is narrower than the CTA: the node that made it so.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum Cause {
    /// The condition of an `if` or a `while`.
    Condition(Loc),
    /// The bounds of a `for`.
    LoopBounds(Loc),
    /// A `return` under such control earlier in the kernel.
    Return(Loc),
    /// A `break` or `continue` under such control in an enclosing loop's body.
    Exit(Loc),
    /// A value computed from the thread's index, or an operation's result (a load, a shuffle, `elect.sync`).
    Value(Loc),
    /// A variable written under such control.
    Write(Loc),
}

impl Cause {
    pub fn loc(self) -> Loc {
        match self {
            Cause::Condition(l)
            | Cause::LoopBounds(l)
            | Cause::Return(l)
            | Cause::Exit(l)
            | Cause::Value(l)
            | Cause::Write(l) => l,
        }
    }
}

/// What is known of a value (or of the threads executing a statement): constant on aligned blocks of `granule`
/// threads (`None`: the whole CTA), and the first cause of a granule below the CTA.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub struct Fact {
    pub granule: Option<u64>,
    /// `Some(g)` when the value is exactly `linear thread index / g`: its quotients are known too.
    exact: Option<u64>,
    pub cause: Option<Cause>,
}

impl Fact {
    pub const UNIFORM: Fact = Fact { granule: None, exact: None, cause: None };

    /// A value constant on blocks of `granule` threads only, because of `cause`.
    pub fn varying(granule: u64, cause: Cause) -> Fact {
        Fact { granule: Some(granule.max(1)), exact: None, cause: Some(cause) }
    }

    /// Constant wherever both are: the greatest common divisor of the granules, and the cause of the narrower.
    pub fn meet(self, other: Fact) -> Fact {
        let granule = match (self.granule, other.granule) {
            (None, g) | (g, None) => g,
            (Some(a), Some(b)) => Some(gcd(a, b)),
        };
        let cause = match (self.granule, other.granule) {
            (None, _) => other.cause,
            (_, None) => self.cause,
            (Some(a), Some(b)) => {
                if a <= b {
                    self.cause.or(other.cause)
                } else {
                    other.cause.or(self.cause)
                }
            }
        };
        Fact { granule, exact: None, cause }
    }

    /// The widest group that agrees on the value.
    pub fn scope(self) -> Scope {
        match self.granule {
            None => Scope::Cta,
            Some(g) if g % 128 == 0 => Scope::Warpgroup,
            Some(g) if g % 32 == 0 => Scope::Warp,
            Some(_) => Scope::Thread,
        }
    }
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// A collective instruction executed by a part of its group only, or in a block whose threads are not whole groups.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Divergence {
    /// The instruction, for messages (`wgmma.mma_async`, `bar.sync`).
    pub what: &'static str,
    pub loc: Loc,
    /// The group that must execute it together.
    pub needs: Scope,
    pub why: Why,
}

/// Why a collective instruction is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Why {
    /// The block size is not a constant.
    UnknownBlock,
    /// The block `[x, y, z]` is not whole groups (of 128 threads along `x`, for a warpgroup).
    Block([u32; 3]),
    /// The statement's control is narrower than the group: some threads of a group may not be there.
    Control(Cause),
}

/// The uniformity of a kernel's values and of its variables.
#[derive(Clone, Debug)]
pub struct Uniformity {
    exprs: Vec<Fact>,
    vars: Vec<Fact>,
}

impl Uniformity {
    /// The analysis of `kernel` (a valid kernel: operands precede their users).
    pub fn of(kernel: &Kernel) -> Uniformity {
        let mut vars = vec![Fact::UNIFORM; kernel.vars.len()];
        // Each round can only narrow a variable's fact (a finite lattice: the granules divide each other down to
        // 1), so this ends; the bound is for safety.
        for _ in 0..=4 * kernel.vars.len() + 1 {
            let exprs = expr_facts(kernel, &vars);
            let mut walk = Walk {
                kernel,
                exprs: &exprs,
                vars: vars.clone(),
                returned: Fact::UNIFORM,
                out: None,
                path: Vec::new(),
            };
            walk.block(&kernel.body, Fact::UNIFORM);
            if walk.vars == vars {
                return Uniformity { exprs, vars };
            }
            vars = walk.vars;
        }
        // Not reached in practice; everything varies is always sound.
        let all = Fact::varying(1, Cause::Value(kernel.loc));
        Uniformity { exprs: vec![all; kernel.exprs.len()], vars: vec![all; kernel.vars.len()] }
    }

    /// The fact of an expression.
    pub fn expr(&self, h: Handle<Expr>) -> Fact {
        self.exprs.get(h.index()).copied().unwrap_or(Fact::varying(1, Cause::Value(Loc::NONE)))
    }

    /// The fact of a variable (every value it may hold).
    pub fn var(&self, v: Handle<Var>) -> Fact {
        self.vars.get(v.index()).copied().unwrap_or(Fact::varying(1, Cause::Value(Loc::NONE)))
    }
}

/// Every collective instruction of `kernel` that is not proven to be executed by whole groups.
pub fn check(kernel: &Kernel) -> Vec<Divergence> {
    check_with(kernel, &Uniformity::of(kernel))
}

/// [`check`] with the kernel's uniformity `u` already computed.
pub fn check_with(kernel: &Kernel, u: &Uniformity) -> Vec<Divergence> {
    let mut walk = Walk {
        kernel,
        exprs: &u.exprs,
        vars: u.vars.clone(),
        returned: Fact::UNIFORM,
        out: Some(Vec::new()),
        path: Vec::new(),
    };
    walk.block(&kernel.body, Fact::UNIFORM);
    let mut out = walk.out.unwrap_or_default();
    // One error per instruction and cause: an unrolled loop repeats both.
    let mut seen = std::collections::HashSet::new();
    out.retain(|d| seen.insert((d.loc, d.what, d.why)));
    out
}

/// The facts of the expressions, in arena order (operands first), given the variables'.
fn expr_facts(kernel: &Kernel, vars: &[Fact]) -> Vec<Fact> {
    let block = kernel.block_size;
    let one_dimensional = matches!(block, Some([_, 1, 1]));
    let mut facts: Vec<Fact> = Vec::with_capacity(kernel.exprs.len());
    for (h, e) in kernel.exprs.iter() {
        let cause = Cause::Value(kernel.exprs.loc(h));
        let of = |x: Handle<Expr>| facts.get(x.index()).copied().unwrap_or(Fact::varying(1, cause));
        let literal = |x: Handle<Expr>| match kernel.exprs.get(x) {
            Some(Expr::Literal(l)) => l.as_int(),
            _ => None,
        };
        let fact = match e {
            // Named one by one: a new kind of expression must say how uniform it is.
            Expr::Literal(_) | Expr::Param(_) | Expr::AllocPtr(_) => Fact::UNIFORM,
            Expr::Special(r) => match r {
                SpecialReg::BlockIdx(_)
                | SpecialReg::BlockDim(_)
                | SpecialReg::GridDim(_)
                | SpecialReg::ClusterCtaRank => Fact::UNIFORM,
                SpecialReg::ThreadIdx(Dim::X) if one_dimensional => Fact { exact: Some(1), ..Fact::varying(1, cause) },
                SpecialReg::ThreadIdx(Dim::Y) => match block {
                    Some([x, _, _]) => Fact::varying(u64::from(x), cause),
                    None => Fact::varying(1, cause),
                },
                SpecialReg::ThreadIdx(Dim::Z) => match block {
                    Some([x, y, _]) => Fact::varying(u64::from(x) * u64::from(y), cause),
                    None => Fact::varying(1, cause),
                },
                SpecialReg::ThreadIdx(Dim::X) | SpecialReg::LaneId => Fact::varying(1, cause),
            },
            Expr::ReadVar(v) => vars.get(v.index()).copied().unwrap_or(Fact::varying(1, cause)),
            Expr::OpResult(_) => Fact::varying(1, cause),
            Expr::Binary { op, lhs, rhs } => {
                let (a, b) = (of(*lhs), of(*rhs));
                let quotient =
                    |g: u64, c: i64| Fact { exact: Some(g * c as u64), ..Fact::varying(g * c as u64, cause) };
                match (op, a.exact, literal(*rhs)) {
                    // `tid / c`: whole blocks of `g c` threads share the quotient (the index is not negative).
                    (BinaryOp::Div, Some(g), Some(c)) if c > 0 && g.checked_mul(c as u64).is_some() => quotient(g, c),
                    (BinaryOp::Shr, Some(g), Some(s)) if (0..32).contains(&s) && g.checked_mul(1 << s).is_some() => {
                        quotient(g, 1 << s)
                    }
                    // `tid & !(2^k - 1)`: rounded down to blocks of `2^k`.
                    (BinaryOp::And, Some(g), Some(m)) if m < 0 && m.trailing_zeros() < 32 => {
                        let k = m.trailing_zeros();
                        if m >> k == -1 { Fact::varying(g << k, cause) } else { a.meet(b) }
                    }
                    _ => a.meet(b),
                }
            }
            Expr::Unary { .. }
            | Expr::Compare { .. }
            | Expr::Select { .. }
            | Expr::Convert { .. }
            | Expr::Math { .. }
            | Expr::Offset { .. }
            | Expr::Extract { .. }
            | Expr::Compose { .. }
            | Expr::MapShared { .. } => {
                let mut f = Fact::UNIFORM;
                e.for_each_operand(|x| f = f.meet(of(x)));
                f
            }
        };
        facts.push(fact);
    }
    facts
}

/// One walk over the body: the control of each statement, the variables' facts, and (when `out` is set) the
/// collective instructions it cannot prove.
struct Walk<'k> {
    kernel: &'k Kernel,
    exprs: &'k [Fact],
    vars: Vec<Fact>,
    /// The threads still running after the `return`s seen so far in program order.
    returned: Fact,
    out: Option<Vec<Divergence>>,
    /// The branches of `if`s being walked, innermost last, where nothing but their condition narrowed the
    /// control since the one before (`None`: a loop, a role region, or a branch whose threads are not an
    /// interval of thread indices).
    path: Vec<Option<Branch>>,
}

/// A branch of an `if` whose threads are the interval `set` of linear thread indices among those that reach the
/// `if`, under `before`: the control of the `if` (less the conditions its own set made redundant).
#[derive(Clone, Copy, Debug)]
struct Branch {
    before: Fact,
    set: (u64, u64),
}

/// The thread indices `[lo, hi)` (`hi = u64::MAX`: unbounded) of a one-dimensional block where `value cmp k`
/// holds, for `value` exactly `tid.x / q`: those with `k q <= tid.x < (k + 1) q` for `==`, and so on.
fn quotient_set(op: crate::expr::CompareOp, q: u64, k: i64) -> Option<(u64, u64)> {
    use crate::expr::CompareOp as C;
    let at = |v: i128| -> u64 { (v.max(0) * i128::from(q)).min(i128::from(u64::MAX)) as u64 };
    let k = i128::from(k);
    Some(match op {
        C::Eq if k < 0 => (0, 0),
        C::Eq => (at(k), at(k + 1)),
        C::Lt => (0, at(k)),
        C::Le => (0, at(k + 1)),
        C::Gt => (at(k + 1), u64::MAX),
        C::Ge => (at(k), u64::MAX),
        C::Ne if k < 0 => (0, u64::MAX),
        C::Ne if k == 0 => (q, u64::MAX),
        C::Ne => return None,
    })
}

/// The thread indices outside `[lo, hi)`, where they are one interval.
fn complement((lo, hi): (u64, u64)) -> Option<(u64, u64)> {
    if lo == 0 {
        Some((hi, u64::MAX))
    } else if hi == u64::MAX {
        Some((0, lo))
    } else {
        None
    }
}

/// Whether every thread index of `a` is in `b` (an empty `a` is).
fn within(a: (u64, u64), b: (u64, u64)) -> bool {
    a.0 >= a.1 || (b.0 <= a.0 && a.1 <= b.1)
}

/// The control of a collective: what it needs, and what it is.
fn collective(op: &Op) -> Option<(&'static str, Scope)> {
    Some(match op {
        Op::WgmmaFence => ("wgmma.fence", Scope::Warpgroup),
        Op::Wgmma { .. } => ("wgmma.mma_async", Scope::Warpgroup),
        Op::WgmmaCommit { .. } => ("wgmma.commit_group", Scope::Warpgroup),
        Op::WgmmaWait { .. } => ("wgmma.wait_group", Scope::Warpgroup),
        Op::Setmaxnreg { .. } => ("setmaxnreg", Scope::Warpgroup),
        Op::Stmatrix { .. } => ("stmatrix", Scope::Warp),
        Op::ElectOne => ("elect.sync", Scope::Warp),
        Op::Shuffle { .. } => ("shfl.sync", Scope::Warp),
        Op::NamedBarrier { .. } => ("bar.sync (a named barrier)", Scope::Warp),
        Op::ClusterBarrier => ("barrier.cluster", Scope::Cta),
        Op::Load { .. }
        | Op::MbarrierInit { .. }
        | Op::MbarrierArriveExpectTx { .. }
        | Op::MbarrierArrive { .. }
        | Op::MbarrierWait { .. }
        | Op::TmaLoad { .. }
        | Op::TmaLoadUnscheduled { .. }
        | Op::MbarrierArriveRemote { .. }
        | Op::TmaStore { .. }
        | Op::BulkCommit
        | Op::BulkWait { .. }
        | Op::PrefetchTensorMap { .. }
        | Op::FenceMbarrierInit
        | Op::FenceProxyAsync => return None,
    })
}

impl Walk<'_> {
    fn expr(&self, h: Handle<Expr>) -> Fact {
        self.exprs.get(h.index()).copied().unwrap_or(Fact::varying(1, Cause::Value(Loc::NONE)))
    }

    fn write(&mut self, v: Handle<Var>, value: Fact, control: Fact, loc: Loc) {
        let mut f = value;
        if let Some(g) = control.granule {
            f = f.meet(Fact::varying(g, Cause::Write(loc)));
        }
        if let Some(slot) = self.vars.get_mut(v.index()) {
            *slot = slot.meet(f);
        }
    }

    /// Records `what` at `loc` unless `control` proves whole groups of `needs` there.
    fn require(&mut self, what: &'static str, needs: Scope, control: Fact, loc: Loc) {
        let Some(out) = self.out.as_mut() else { return };
        let block = self.kernel.block_size;
        let why = match (needs, block) {
            (Scope::Thread | Scope::Cta, _) => None,
            (_, None) => Some(Why::UnknownBlock),
            (Scope::Warpgroup, Some(b @ [x, y, z])) if y != 1 || z != 1 || x % 128 != 0 => Some(Why::Block(b)),
            (Scope::Warp, Some(b @ [x, y, z])) if (x * y * z) % 32 != 0 => Some(Why::Block(b)),
            _ => None,
        };
        let why = why.or_else(|| {
            (control.scope() < needs).then(|| Why::Control(control.cause.unwrap_or(Cause::Value(Loc::NONE))))
        });
        if let Some(why) = why {
            out.push(Divergence { what, loc, needs, why });
        }
    }

    /// Walks `block` under `control`; gives the combination of the controls of its exits (`break`, `continue`,
    /// `return`) for the enclosing loop.
    fn block(&mut self, block: &Block, control: Fact) -> Fact {
        let mut exits = Fact::UNIFORM;
        for (s, loc) in block.iter() {
            let here = control.meet(self.returned);
            match s {
                Stmt::Emit(_) | Stmt::Store { .. } => {}
                Stmt::Op { op, .. } => {
                    if let Some((what, needs)) = collective(op) {
                        self.require(what, needs, here, loc);
                    }
                }
                Stmt::WriteVar { var, value } => {
                    let value = self.expr(*value);
                    self.write(*var, value, here, loc);
                }
                Stmt::If { cond, accept, reject } => {
                    let c = self.narrowed(self.expr(*cond), Cause::Condition(self.loc_of(*cond, loc)));
                    let set = self.thread_set(*cond);
                    for (branch, set) in [(accept, set), (reject, set.and_then(complement))] {
                        let before = match set {
                            Some(set) => self.implied(set).unwrap_or(here),
                            None => here,
                        };
                        self.path.push(set.map(|set| Branch { before, set }));
                        exits = exits.meet(self.block(branch, before.meet(c)));
                        self.path.pop();
                    }
                }
                Stmt::For { var, start, end, body, .. } => {
                    let bounds = self.narrowed(self.expr(*start).meet(self.expr(*end)), Cause::LoopBounds(loc));
                    let inner = here.meet(bounds);
                    self.write(*var, self.expr(*start), inner, loc);
                    self.path.push(None);
                    self.each_iteration(|w, c| w.block(body, c), inner);
                    self.path.pop();
                }
                Stmt::While { header, cond, body } => {
                    self.path.push(None);
                    self.each_iteration(
                        |w, c| {
                            let mut exits = w.block(header, c);
                            let cond = w.narrowed(w.expr(*cond), Cause::Condition(w.loc_of(*cond, loc)));
                            exits = exits.meet(w.block(body, c.meet(cond)));
                            // Leaving through the condition is an exit like a `break`.
                            exits.meet(cond)
                        },
                        here,
                    );
                    self.path.pop();
                }
                Stmt::Break | Stmt::Continue => exits = exits.meet(self.narrowed(here, Cause::Exit(loc))),
                Stmt::Return => {
                    let gone = self.narrowed(here, Cause::Return(loc));
                    self.returned = self.returned.meet(gone);
                    exits = exits.meet(gone);
                }
                Stmt::Barrier(Barrier::Cta) => self.require("bar.sync 0", Scope::Cta, here, loc),
                Stmt::Roles(regions) => {
                    for r in regions {
                        if r.regs.is_some() {
                            self.require("setmaxnreg", Scope::Warpgroup, here, loc);
                        }
                        // The region is entered by whole warpgroups (its test is on `tid.x / 128`).
                        let role = Fact::varying(128, Cause::Condition(loc));
                        self.path.push(None);
                        exits = exits.meet(self.block(&r.body, here.meet(role)));
                        self.path.pop();
                    }
                }
            }
        }
        exits
    }

    /// The linear thread indices where `cond` holds, when they are one interval: a comparison of `tid.x / q`
    /// (exactly: `thread_idx.x`, `warp_idx`, `thread_idx.x / 128`) with a constant, in a one-dimensional block.
    fn thread_set(&self, cond: Handle<Expr>) -> Option<(u64, u64)> {
        use crate::expr::CompareOp as C;
        let Some(Expr::Compare { op, lhs, rhs }) = self.kernel.exprs.get(cond) else { return None };
        let literal = |x: Handle<Expr>| match self.kernel.exprs.get(x) {
            Some(Expr::Literal(l)) => l.as_int(),
            _ => None,
        };
        let exact = |x: Handle<Expr>| self.expr(x).exact;
        match (exact(*lhs), literal(*rhs), literal(*lhs), exact(*rhs)) {
            (Some(q), Some(k), _, _) => quotient_set(*op, q, k),
            // `k cmp value` is `value cmp' k`.
            (_, _, Some(k), Some(q)) => {
                let flipped = match op {
                    C::Lt => C::Gt,
                    C::Le => C::Ge,
                    C::Gt => C::Lt,
                    C::Ge => C::Le,
                    other => *other,
                };
                quotient_set(flipped, q, k)
            }
            _ => None,
        }
    }

    /// The control a branch whose threads are the interval `set` has without the conditions of the enclosing
    /// branches that it implies: where `set` lies inside the sets of the innermost branches (with nothing but
    /// their conditions between them), every thread of it passed their conditions, so the control is that of
    /// the outermost such `if` (and of the `return`s since). `else if warp_idx >= 1` under `if thread_idx.x ==
    /// 0` runs whole warps 1, 2, ...: threads 32 and up are never thread 0.
    fn implied(&self, set: (u64, u64)) -> Option<Fact> {
        let mut before = None;
        for b in self.path.iter().rev() {
            match b {
                Some(b) if within(set, b.set) => before = Some(b.before),
                _ => break,
            }
        }
        before.map(|f| f.meet(self.returned))
    }

    /// Where a message should point for the value `h`: its own source span, else the statement's.
    /// Where to show the value `h` a statement at `stmt` uses: the value's own place where it lies inside the
    /// statement, else the statement. (`cse` keeps the first of equal values, so a condition written twice is
    /// the first one's: a message about the second `if` must not point at the first.)
    fn loc_of(&self, h: Handle<Expr>, stmt: Loc) -> Loc {
        let at = self.kernel.exprs.loc(h);
        let inside = at.file == stmt.file && stmt.span.start <= at.span.start && at.span.end <= stmt.span.end;
        if at == Loc::NONE || (stmt != Loc::NONE && !inside) { stmt } else { at }
    }

    /// The control a condition, bounds or jump at `cause` gives: its fact, blamed on `cause` (the statement a
    /// message should show) when it is narrower than the CTA.
    fn narrowed(&self, f: Fact, cause: Cause) -> Fact {
        match f.granule {
            None => f,
            Some(g) => Fact { granule: Some(g), exact: None, cause: Some(cause) },
        }
    }

    /// A loop body walked by `body` under `control`: its exits (which remove threads from the later
    /// iterations) narrow the control of the whole body, so it is walked again under the narrowed control.
    fn each_iteration(&mut self, mut body: impl FnMut(&mut Self, Fact) -> Fact, control: Fact) {
        let out = self.out.take();
        let returned = self.returned;
        let exits = body(self, control);
        self.out = out;
        self.returned = returned;
        // The exits' facts of this second walk are those of the first, narrowed by themselves: nothing new. A
        // `return` inside the loop is gone for the rest of the kernel too (in `self.returned` again); a `break` or
        // `continue` is not: the loop's exit reunites the threads that entered it.
        body(self, control.meet(exits));
    }
}

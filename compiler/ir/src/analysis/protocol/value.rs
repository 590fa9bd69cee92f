//! The interpreter's values: integers, pointers as (allocation or parameter, byte offset), and "unknown"; the
//! values of one group of threads (one for all, or one per thread); which expressions matter to the protocol;
//! and the evaluation of an expression for a group.

use crate::arena::Handle;
use crate::expr::{BinaryOp, CompareOp, Dim, Expr, Literal, MathFn, SpecialReg, UnaryOp};
use crate::module::{Kernel, Var};
use crate::op::Op;
use crate::stmt::{Block, Stmt};
use crate::types::{Scalar, Type};
use crate::valid::KernelInfo;

use super::memo::{Memo, Threads};
use crate::hash::{FxMap, FxSet};

/// What a pointer points into.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub(super) enum Base {
    Alloc(u32),
    Param(u32),
}

/// One thread's value of an expression. Floats, loaded values and shuffled values are `Unknown`: the protocol
/// check stops (and accepts the kernel) when control or a barrier operand depends on one.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub(super) enum Val {
    Unknown,
    Int(i64),
    /// `rank` is the CTA a `mapa` names (`None`: the thread's own).
    Ptr {
        base: Base,
        off: i64,
        rank: Option<i64>,
    },
}

/// A group's value of an expression: the same in every thread, or one per thread.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Slot {
    One(Val),
    /// The values of the threads `first..first + vals.len()` of the CTA (linear ids; a group's threads are
    /// ascending, so this spans them, and holds unknowns for threads of other groups between them). The
    /// vector is shared by the groups a split makes: each reads its own threads' entries, and a split copies
    /// no per-thread vector.
    Each {
        first: u32,
        vals: std::rc::Rc<[Val]>,
    },
}

impl Slot {
    /// The value of thread `t` (a linear id in the CTA, one of the group's threads).
    pub fn get(&self, t: u32) -> Val {
        match self {
            Slot::One(v) => *v,
            Slot::Each { first, vals } => {
                t.checked_sub(*first).and_then(|i| vals.get(i as usize)).copied().unwrap_or(Val::Unknown)
            }
        }
    }
    /// The values of the threads `keep` (a part of the group), as one value when they agree.
    pub fn project(&self, keep: &[u32]) -> Slot {
        match self {
            Slot::One(v) => Slot::One(*v),
            Slot::Each { .. } => match keep.first() {
                None => Slot::One(Val::Unknown),
                Some(&t) => {
                    let v = self.get(t);
                    if keep.iter().all(|&u| self.get(u) == v) { Slot::One(v) } else { self.clone() }
                }
            },
        }
    }
}

/// The slot of the values `v` of the threads `threads` (ascending linear ids, one value each): one value when
/// every thread has the same (so that most of a group's values stay scalars).
pub(super) fn collapse(threads: &[u32], v: Vec<Val>) -> Slot {
    let (Some(&first), Some(&last)) = (threads.first(), threads.last()) else { return Slot::One(Val::Unknown) };
    match v.first() {
        Some(&x) if v.iter().all(|y| *y == x) => Slot::One(x),
        Some(_) if (last - first) as usize + 1 == v.len() => Slot::Each { first, vals: v.into() },
        Some(_) => {
            // Threads with gaps between them (a group of some lanes of each warp): spread out by thread id.
            let mut vals = vec![Val::Unknown; (last - first) as usize + 1];
            for (&t, x) in threads.iter().zip(v) {
                if let Some(slot) = vals.get_mut((t - first) as usize) {
                    *slot = x;
                }
            }
            Slot::Each { first, vals: vals.into() }
        }
        None => Slot::One(Val::Unknown),
    }
}

/// The launch the interpreter runs: the block, the cluster, the parameters' values, and the grid: `clusters`
/// clusters along x, of which the one simulated is number `index`.
pub(super) struct Shape {
    pub block: [u32; 3],
    pub cluster: [u32; 3],
    pub params: Vec<Val>,
    pub clusters: u32,
    pub index: u32,
}

impl Shape {
    pub fn threads(&self) -> u32 {
        self.block.iter().product()
    }
    pub fn ctas(&self) -> u32 {
        self.cluster.iter().product()
    }
    /// The coordinate of thread `t` (linear in the block) along `d`.
    pub fn tid(&self, t: u32, d: Dim) -> i64 {
        let [x, y, _] = self.block.map(|n| n.max(1));
        i64::from(match d {
            Dim::X => t % x,
            Dim::Y => t / x % y,
            Dim::Z => t / (x * y),
        })
    }
    /// The CTA of rank `r` along `d` of the cluster (`%cluster_ctarank` is x-major), which is its `ctaid` too.
    fn cta_coord(&self, r: usize, d: Dim) -> i64 {
        let [x, y, _] = self.cluster.map(|n| n.max(1) as usize);
        (match d {
            Dim::X => r % x,
            Dim::Y => r / x % y,
            Dim::Z => r / (x * y),
        }) as i64
    }
}

/// The expressions and variables the protocol depends on: conditions, loop bounds, the operands of mbarrier,
/// TMA-load and named-barrier operations, and what they are computed from (through variables too). The others
/// (addresses of data, the data itself) are never evaluated.
pub(super) struct Relevant {
    pub exprs: Vec<bool>,
    pub vars: Vec<bool>,
    /// The branches and loops (by address) whose blocks touch neither the protocol nor control: only data
    /// (emitted values, loads, stores, inert operations). The machine steps over them without evaluating their
    /// conditions or bounds (a predicated epilogue of 128 stores would otherwise split the threads 128 times).
    inert: FxSet<usize>,
    /// Where a group's [`Env`] holds each relevant expression and variable (shared by every group).
    slots: std::rc::Rc<Slots>,
    /// The statements the machine steps over, as a table: each block's row (by the block's address) in
    /// `resume`, whose entry `row + i` is the first statement at or after `i` that the machine executes (the
    /// block's length when none). Stepping over a run of data statements is then one lookup, not a scan of them
    /// for every group at every visit (a GEMM's consumer steps over its accumulator's hundreds of stores in each
    /// tile).
    rows: FxMap<usize, u32>,
    resume: Vec<u32>,
}

/// The position of each relevant expression and variable in an [`Env`]'s vectors (`NONE` for the others).
#[derive(Debug)]
pub(super) struct Slots {
    exprs: Vec<u32>,
    vars: Vec<u32>,
    /// The operands of each relevant expression (by its position): their positions (`NONE` for operands the
    /// protocol does not read) and how many there are, found once rather than at every evaluation.
    operands: Vec<([u32; 3], usize)>,
}

const NONE: u32 = u32::MAX;

/// Numbers the `true`s of `marked` in order.
fn number(marked: &[bool]) -> Vec<u32> {
    let mut next = 0u32;
    marked
        .iter()
        .map(|&m| {
            if !m {
                return NONE;
            }
            next += 1;
            next - 1
        })
        .collect()
}

/// Whether `s` only computes and moves data (see [`Relevant::inert`]): a write of a variable the protocol does
/// not read (`relevant_vars` false: a predicated load's temporary) is data too. Control statements that are, go to
/// `out`.
fn inert_stmt(s: &Stmt, relevant_vars: &[bool], out: &mut FxSet<usize>) -> bool {
    let inert = match s {
        Stmt::Emit(_) | Stmt::Store { .. } => true,
        Stmt::Op { op, .. } => inert_op(op),
        Stmt::If { .. } | Stmt::For { .. } | Stmt::While { .. } => {
            let mut all = true;
            for b in s.blocks() {
                for x in b.stmts() {
                    all &= inert_stmt(x, relevant_vars, out);
                }
            }
            all
        }
        Stmt::WriteVar { var, .. } => !relevant_vars.get(var.index()).copied().unwrap_or(true),
        // A role's region is never stepped over (it sets registers and places threads), but the branches of
        // data in it are.
        Stmt::Roles(regions) => {
            for x in regions.iter().flat_map(|r| r.body.stmts()) {
                inert_stmt(x, relevant_vars, out);
            }
            false
        }
        Stmt::Break | Stmt::Continue | Stmt::Return | Stmt::Barrier(_) => false,
    };
    if inert && matches!(s, Stmt::If { .. } | Stmt::For { .. } | Stmt::While { .. }) {
        out.insert(s as *const Stmt as usize);
    }
    inert
}

/// Operations the protocol never looks at (the machine steps over them).
pub(super) fn inert_op(op: &Op) -> bool {
    matches!(
        op,
        Op::Load { .. }
            | Op::TmaStore { .. }
            | Op::BulkCommit
            | Op::BulkWait { .. }
            | Op::PrefetchTensorMap { .. }
            | Op::FenceMbarrierInit
            | Op::FenceProxyAsync
    )
}

impl Relevant {
    /// The relevant expressions and variables, and the inert branches and loops: a fixed point, since a branch
    /// that writes a variable is inert exactly when the protocol does not read the variable, and what the
    /// protocol reads is found from the statements that are not inert. It starts from no relevant variable (every
    /// such branch inert) and marks more until nothing changes: the relevant variables only grow, the inert
    /// statements only shrink.
    pub fn of(kernel: &Kernel) -> Relevant {
        let mut vars = vec![false; kernel.vars.len()];
        loop {
            let mut r = Relevant::with_vars(kernel, &vars);
            if r.vars == vars {
                r.tabulate(&kernel.body);
                return r;
            }
            vars = r.vars.iter().zip(&vars).map(|(a, b)| *a || *b).collect();
        }
    }

    /// What the protocol reads, given the variables already known to be read (see [`Relevant::of`]).
    fn with_vars(kernel: &Kernel, relevant_vars: &[bool]) -> Relevant {
        let mut inert = FxSet::default();
        for s in kernel.body.stmts() {
            inert_stmt(s, relevant_vars, &mut inert);
        }
        let slots = std::rc::Rc::new(Slots { exprs: Vec::new(), vars: Vec::new(), operands: Vec::new() });
        let mut r = Relevant {
            exprs: vec![false; kernel.exprs.len()],
            vars: vec![false; kernel.vars.len()],
            inert,
            slots,
            rows: FxMap::default(),
            resume: Vec::new(),
        };
        let mark = |h: Handle<Expr>, r: &mut Relevant| {
            if let Some(x) = r.exprs.get_mut(h.index()) {
                *x = true;
            }
        };
        let inert = r.inert.clone();
        let skipped = |s: &Stmt| inert.contains(&(s as *const Stmt as usize));
        kernel.body.visit(&mut |s| match s {
            _ if skipped(s) => {}
            Stmt::If { cond, .. } | Stmt::While { cond, .. } => mark(*cond, &mut r),
            Stmt::For { start, end, .. } => {
                mark(*start, &mut r);
                mark(*end, &mut r);
            }
            Stmt::Op { op, .. } if protocol_op(op) => op.for_each_operand(|h| mark(h, &mut r)),
            _ => {}
        });
        // Operands are earlier expressions: one backward sweep closes over them; variables close the loop.
        loop {
            for (h, e) in kernel.exprs.iter().collect::<Vec<_>>().into_iter().rev() {
                if r.exprs.get(h.index()).copied().unwrap_or(false) {
                    e.for_each_operand(|o| mark(o, &mut r));
                    if let Expr::ReadVar(v) = e
                        && let Some(x) = r.vars.get_mut(v.index())
                    {
                        *x = true;
                    }
                }
            }
            let mut changed = false;
            kernel.body.visit(&mut |s| {
                if let Stmt::WriteVar { var, value } = s
                    && r.vars.get(var.index()).copied().unwrap_or(false)
                    && !r.exprs.get(value.index()).copied().unwrap_or(true)
                {
                    mark(*value, &mut r);
                    changed = true;
                }
            });
            if !changed {
                let exprs = number(&r.exprs);
                let operands = kernel
                    .exprs
                    .iter()
                    .filter(|(h, _)| r.expr(*h))
                    .map(|(_, e)| {
                        let (mut at, mut n) = ([NONE; 3], 0);
                        e.for_each_operand(|o| {
                            if let Some(x) = at.get_mut(n) {
                                *x = exprs.get(o.index()).copied().unwrap_or(NONE);
                            }
                            n += 1;
                        });
                        (at, n)
                    })
                    .collect();
                r.slots = std::rc::Rc::new(Slots { exprs, vars: number(&r.vars), operands });
                return r;
            }
        }
    }
    pub fn expr(&self, h: Handle<Expr>) -> bool {
        self.exprs.get(h.index()).copied().unwrap_or(false)
    }
    pub fn var(&self, v: Handle<Var>) -> bool {
        self.vars.get(v.index()).copied().unwrap_or(false)
    }
    /// Whether `s` is a branch or loop of data only (see the field).
    pub fn inert(&self, s: &Stmt) -> bool {
        self.inert.contains(&(s as *const Stmt as usize))
    }
    /// Whether the machine steps over `s` without executing it: it touches neither control nor the protocol
    /// (data addresses, stores, loads, branches and loops of data).
    pub fn steps_over(&self, s: &Stmt) -> bool {
        match s {
            Stmt::Emit(h) => !self.expr(*h),
            Stmt::WriteVar { var, .. } => !self.var(*var),
            Stmt::Store { .. } => true,
            Stmt::Op { op, .. } => inert_op(op),
            Stmt::If { .. } | Stmt::For { .. } | Stmt::While { .. } => self.inert(s),
            _ => false,
        }
    }
    /// Fills the table of statements stepped over (see `rows`) for `block` and the blocks in it.
    fn tabulate(&mut self, block: &Block) {
        let row = self.resume.len() as u32;
        self.rows.insert(block as *const Block as usize, row);
        let stmts = block.stmts();
        self.resume.resize(self.resume.len() + stmts.len() + 1, 0);
        let mut next = stmts.len() as u32;
        for (i, s) in stmts.iter().enumerate().rev() {
            if !self.steps_over(s) {
                next = i as u32;
            }
            if let Some(x) = self.resume.get_mut(row as usize + i) {
                *x = next;
            }
        }
        if let Some(x) = self.resume.get_mut(row as usize + stmts.len()) {
            *x = stmts.len() as u32;
        }
        for s in stmts {
            for b in s.blocks() {
                self.tabulate(b);
            }
        }
    }
    /// The row of `block` in the table of statements stepped over, if it has one.
    pub fn row(&self, block: &Block) -> Option<u32> {
        self.rows.get(&(block as *const Block as usize)).copied()
    }
    /// The first statement of the block whose row is `row` at or after `next` that the machine executes.
    pub fn resume(&self, row: u32, next: usize) -> Option<usize> {
        self.resume.get(row as usize + next).map(|&i| i as usize)
    }
}

/// The operations whose operands the protocol reads (the TMA load's destination and coordinates are data).
fn protocol_op(op: &Op) -> bool {
    matches!(
        op,
        Op::MbarrierInit { .. }
            | Op::MbarrierArriveExpectTx { .. }
            | Op::MbarrierArrive { .. }
            | Op::MbarrierArriveRemote { .. }
            | Op::MbarrierWait { .. }
            | Op::TmaLoad { .. }
            | Op::NamedBarrier { .. }
    )
}

/// Whether the kernel synchronises through anything the check models beyond `bar.sync 0`.
pub(super) fn has_protocol(block: &Block) -> bool {
    let mut found = false;
    block.visit(&mut |s| {
        if let Stmt::Op { op, .. } = s {
            found |= protocol_op(op) || matches!(op, Op::ClusterBarrier);
        }
    });
    found
}

/// The value of a global expression (literal, parameter, allocation) under `shape`.
pub(super) fn global(e: &Expr, shape: &Shape) -> Option<Val> {
    Some(match *e {
        Expr::Literal(Literal::Bool(b)) => Val::Int(i64::from(b)),
        Expr::Literal(Literal::Int { value, ty }) => Val::Int(wrap(Type::Scalar(ty), value)),
        Expr::Literal(Literal::Float { .. }) => Val::Unknown,
        Expr::Param(i) => shape.params.get(i as usize).copied().unwrap_or(Val::Unknown),
        Expr::AllocPtr(a) => Val::Ptr { base: Base::Alloc(a.index() as u32), off: 0, rank: None },
        _ => return None,
    })
}

/// The value of a special register for thread `t` of CTA `cta`.
pub(super) fn special(s: SpecialReg, shape: &Shape, cta: usize, t: u32) -> Val {
    let dim = |d: Dim| d.index();
    Val::Int(match s {
        SpecialReg::ThreadIdx(d) => shape.tid(t, d),
        SpecialReg::LaneId => i64::from(t % 32),
        SpecialReg::BlockIdx(Dim::X) => {
            shape.cta_coord(cta, Dim::X) + i64::from(shape.index) * i64::from(shape.cluster[0])
        }
        SpecialReg::BlockIdx(d) => shape.cta_coord(cta, d),
        SpecialReg::GridDim(Dim::X) => i64::from(shape.cluster[0]) * i64::from(shape.clusters),
        SpecialReg::GridDim(d) => i64::from(shape.cluster.get(dim(d)).copied().unwrap_or(1)),
        SpecialReg::BlockDim(d) => i64::from(shape.block.get(dim(d)).copied().unwrap_or(1)),
        SpecialReg::ClusterCtaRank => cta as i64,
    })
}

/// Whether the special register differs between the threads of a CTA.
pub(super) fn per_thread(s: SpecialReg) -> bool {
    matches!(s, SpecialReg::ThreadIdx(_) | SpecialReg::LaneId)
}

/// An integer of type `ty` as the machine holds it (wrapped to its width, `i1` as 0 or 1).
pub(super) fn wrap(ty: Type, x: i64) -> i64 {
    match ty {
        Type::Scalar(Scalar::I1) => x & 1,
        Type::Scalar(Scalar::I32) => i64::from(x as i32),
        _ => x,
    }
}

fn bits(ty: Type) -> i64 {
    match ty {
        Type::Scalar(Scalar::I1) => 1,
        Type::Scalar(Scalar::I32) => 32,
        _ => 64,
    }
}

/// The value of `e` (of type `ty`) from its operands' values `a` (in `for_each_operand`'s order), for
/// expressions other than globals, special registers, variable reads and operation results.
pub(super) fn apply(e: &Expr, ty: Type, a: &[Val]) -> Val {
    use Val::{Int, Ptr, Unknown};
    let arg = |i: usize| a.get(i).copied().unwrap_or(Unknown);
    match (e, arg(0), arg(1)) {
        (Expr::Unary { op: UnaryOp::Neg, .. }, Int(x), _) => Int(wrap(ty, x.wrapping_neg())),
        (Expr::Unary { op: UnaryOp::Not, .. }, Int(x), _) => Int(wrap(ty, !x)),
        (Expr::Binary { op, .. }, Int(x), Int(y)) => binary(*op, ty, x, y),
        (Expr::Compare { op, .. }, Int(x), Int(y)) => Int(i64::from(compare(*op, x, y))),
        (Expr::Compare { op, .. }, Ptr { base: b, off: x, rank: r }, Ptr { base: c, off: y, rank: s })
            if b == c && r == s =>
        {
            Int(i64::from(compare(*op, x, y)))
        }
        (Expr::Select { .. }, Int(c), _) => arg(if c != 0 { 1 } else { 2 }),
        (Expr::Convert { to, .. }, Int(x), _) if !to.is_float() => Int(wrap(Type::Scalar(*to), x)),
        (Expr::Math { fun: MathFn::Min, .. }, Int(x), Int(y)) => Int(x.min(y)),
        (Expr::Math { fun: MathFn::Max, .. }, Int(x), Int(y)) => Int(x.max(y)),
        (Expr::Math { fun: MathFn::Abs, .. }, Int(x), _) => Int(wrap(ty, x.wrapping_abs())),
        (Expr::Offset { elem, .. }, Ptr { base, off, rank }, Int(i)) => {
            match i.checked_mul(i64::from(elem.size_bytes())).and_then(|d| off.checked_add(d)) {
                Some(off) => Ptr { base, off, rank },
                None => Unknown,
            }
        }
        (Expr::MapShared { .. }, Ptr { base, off, .. }, Int(r)) => Ptr { base, off, rank: Some(r) },
        _ => Unknown,
    }
}

/// `x op y` at the width of `ty`: signed division and remainder, PTX's shifts; a division by zero or a shift
/// past the width (whose results the lowering defines, but no protocol should depend on) is unknown.
fn binary(op: BinaryOp, ty: Type, x: i64, y: i64) -> Val {
    let w = |v: i64| Val::Int(wrap(ty, v));
    let n = bits(ty);
    match op {
        BinaryOp::Add => w(x.wrapping_add(y)),
        BinaryOp::Sub => w(x.wrapping_sub(y)),
        BinaryOp::Mul => w(x.wrapping_mul(y)),
        BinaryOp::Div if y != 0 => w(x.wrapping_div(y)),
        BinaryOp::Rem if y != 0 => w(x.wrapping_rem(y)),
        BinaryOp::And => w(x & y),
        BinaryOp::Or => w(x | y),
        BinaryOp::Xor => w(x ^ y),
        BinaryOp::Shl if (0..n).contains(&y) => w(x.wrapping_shl(y as u32)),
        // `x` is held sign-extended, so an arithmetic shift of the i64 is the shift at the type's width.
        BinaryOp::Shr if (0..n).contains(&y) => w(x >> y),
        BinaryOp::Div | BinaryOp::Rem | BinaryOp::Shl | BinaryOp::Shr => Val::Unknown,
    }
}

fn compare(op: CompareOp, x: i64, y: i64) -> bool {
    match op {
        CompareOp::Eq => x == y,
        CompareOp::Ne => x != y,
        CompareOp::Lt => x < y,
        CompareOp::Le => x <= y,
        CompareOp::Gt => x > y,
        CompareOp::Ge => x >= y,
    }
}

/// A group's values: one slot per relevant expression and per relevant variable, the others never read (only
/// the relevant ones are evaluated or written, and their operands are relevant too). Kept sparse because groups
/// are copied at every split, and a GEMM's arena holds tens of thousands of expressions of which the protocol
/// reads a few hundred.
#[derive(Clone, Debug)]
pub(super) struct Env {
    slots: std::rc::Rc<Slots>,
    vals: Vec<Slot>,
    vars: Vec<Slot>,
}

const UNKNOWN: &Slot = &Slot::One(Val::Unknown);

impl Env {
    /// Globals evaluated once; everything else unknown until emitted.
    pub fn new(kernel: &Kernel, shape: &Shape, relevant: &Relevant) -> Env {
        let vals = kernel
            .exprs
            .iter()
            .filter(|(h, _)| relevant.expr(*h))
            .map(|(_, e)| Slot::One(global(e, shape).unwrap_or(Val::Unknown)))
            .collect();
        let vars = vec![Slot::One(Val::Unknown); relevant.vars.iter().filter(|&&v| v).count()];
        Env { slots: relevant.slots.clone(), vals, vars }
    }
    fn at(index: &[u32], i: usize) -> Option<usize> {
        index.get(i).copied().filter(|&s| s != NONE).map(|s| s as usize)
    }
    /// The values of the operands of `h` (a relevant expression), and how many there are.
    pub fn operands(&self, h: Handle<Expr>) -> Option<([&Slot; 3], usize)> {
        let (at, n) = Self::at(&self.slots.exprs, h.index()).and_then(|i| self.slots.operands.get(i))?;
        let val = |i: u32| if i == NONE { UNKNOWN } else { self.vals.get(i as usize).unwrap_or(UNKNOWN) };
        Some((at.map(val), *n))
    }
    /// The value of `h`; an expression the protocol does not depend on reads as unknown (none is read).
    pub fn val(&self, h: Handle<Expr>) -> &Slot {
        debug_assert!(h.index() >= self.slots.exprs.len() || Self::at(&self.slots.exprs, h.index()).is_some());
        Self::at(&self.slots.exprs, h.index()).and_then(|i| self.vals.get(i)).unwrap_or(UNKNOWN)
    }
    pub fn var(&self, v: Handle<Var>) -> &Slot {
        Self::at(&self.slots.vars, v.index()).and_then(|i| self.vars.get(i)).unwrap_or(UNKNOWN)
    }
    /// Sets `h` (dropped when the protocol does not depend on it: nothing reads it).
    pub fn set(&mut self, h: Handle<Expr>, s: Slot) {
        if let Some(x) = Self::at(&self.slots.exprs, h.index()).and_then(|i| self.vals.get_mut(i)) {
            *x = s;
        }
    }
    pub fn set_var(&mut self, v: Handle<Var>, s: Slot) {
        if let Some(x) = Self::at(&self.slots.vars, v.index()).and_then(|i| self.vars.get_mut(i)) {
            *x = s;
        }
    }
    /// The environment of the threads `keep` (ascending linear ids, a part of the group).
    pub fn project(&self, keep: &Threads, memo: &mut Memo) -> Env {
        Env {
            slots: self.slots.clone(),
            vals: self.vals.iter().map(|s| memo.project(s, keep)).collect(),
            vars: self.vars.iter().map(|s| memo.project(s, keep)).collect(),
        }
    }
}

/// Evaluates the non-global expression `h` for the threads `threads` (linear ids) of CTA `cta`; returns the
/// slot and how many per-thread evaluations it took (the work budget counts them). What is evaluated per
/// thread is kept in the group's `memo`, and reused while its operands are the same.
#[allow(clippy::too_many_arguments)]
pub(super) fn eval(
    kernel: &Kernel,
    info: &KernelInfo,
    shape: &Shape,
    env: &Env,
    memo: &mut Memo,
    h: Handle<Expr>,
    cta: usize,
    threads: &Threads,
) -> (Slot, usize) {
    let Some(e) = kernel.exprs.get(h) else { return (Slot::One(Val::Unknown), 1) };
    match *e {
        Expr::Special(s) if per_thread(s) && threads.len() > 1 => {
            if let Some(hit) = memo.eval(h, threads, &[]) {
                return (hit, threads.len());
            }
            let slot = collapse(threads, threads.iter().map(|&t| special(s, shape, cta, t)).collect());
            memo.keep_eval(h, threads, &[], &slot);
            (slot, threads.len())
        }
        Expr::Special(s) => (Slot::One(special(s, shape, cta, threads.first().copied().unwrap_or(0))), 1),
        Expr::ReadVar(v) => (env.var(v).clone(), 1),
        Expr::OpResult(_) => (env.val(h).clone(), 1),
        Expr::Literal(_) | Expr::Param(_) | Expr::AllocPtr(_) => {
            (Slot::One(global(e, shape).unwrap_or(Val::Unknown)), 1)
        }
        _ => {
            let ty = info.ty(h);
            if let Some((ops, n)) = env.operands(h)
                && let Some(ops) = ops.get(..n)
            {
                // The common case, operands the same in every thread of the group, without allocating (this
                // runs for every emitted expression of every group of every launch the check tries).
                if ops.iter().all(|s| matches!(s, Slot::One(_))) {
                    let mut buf = [Val::Unknown; 3];
                    for (b, s) in buf.iter_mut().zip(ops) {
                        *b = s.get(0);
                    }
                    return (Slot::One(apply(e, ty, &buf[..n])), 1);
                }
                return per_thread_apply(e, ty, h, ops, memo, threads);
            }
            // An expression with more operands than `apply` reads (a vector's parts): as above, by its operands.
            let (mut buf, mut n, mut uniform) = ([Val::Unknown; 3], 0usize, true);
            e.for_each_operand(|o| {
                match (env.val(o), buf.get_mut(n)) {
                    (Slot::One(v), Some(x)) => *x = *v,
                    _ => uniform = false,
                }
                n += 1;
            });
            if uniform {
                return (Slot::One(apply(e, ty, &buf[..n])), 1);
            }
            let mut ops: Vec<&Slot> = Vec::with_capacity(n);
            e.for_each_operand(|o| ops.push(env.val(o)));
            if ops.iter().all(|s| matches!(s, Slot::One(_))) {
                let a: Vec<Val> = ops.iter().map(|s| s.get(0)).collect();
                return (Slot::One(apply(e, ty, &a)), 1);
            }
            per_thread_apply(e, ty, h, &ops, memo, threads)
        }
    }
}

/// `e` (the expression `h`, of type `ty`) in each of the threads `threads` from its operands `ops`, some of
/// which differ between them; once per operands and threads (the memo).
fn per_thread_apply(
    e: &Expr,
    ty: Type,
    h: Handle<Expr>,
    ops: &[&Slot],
    memo: &mut Memo,
    threads: &Threads,
) -> (Slot, usize) {
    if let Some(hit) = memo.eval(h, threads, ops) {
        return (hit, threads.len());
    }
    // Per thread, the operands in a buffer on the stack (`apply` reads at most three).
    let mut a = [Val::Unknown; 3];
    let out = match ops {
        [x] => threads.iter().map(|&t| apply(e, ty, &[x.get(t)])).collect(),
        [x, y] => threads.iter().map(|&t| apply(e, ty, &[x.get(t), y.get(t)])).collect(),
        _ => threads
            .iter()
            .map(|&t| {
                for (x, s) in a.iter_mut().zip(ops) {
                    *x = s.get(t);
                }
                apply(e, ty, &a[..ops.len().min(3)])
            })
            .collect(),
    };
    let slot = collapse(threads, out);
    memo.keep_eval(h, threads, ops, &slot);
    (slot, threads.len())
}

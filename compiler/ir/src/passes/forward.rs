//! `forward-vars`: replaces a variable read by the value last written to the variable when that write is known
//! at the read (straight-line code, or an enclosing block), then drops writes to variables nobody reads.
//!
//! This is the part of mem2reg the IR needs to stay readable and analyzable after inlining and unrolling (a
//! `let mut` accumulator becomes a chain of values); LLVM's mem2reg still handles what remains (values merged
//! at the end of an `if`, loop-carried values).
//!
//! Rules: entering a block keeps what is known (the writes dominate it); a `for` body forgets the variables
//! the loop writes (their values are loop-carried), and after an `if` or a `for` every variable written inside
//! is unknown. A read is replaced only by an earlier expression, so operands stay before their users.

use super::{Analyses, Pass, PassError};
use crate::arena::Handle;
use crate::expr::Expr;
use crate::hash::{FxMap, FxSet};
use crate::module::{Kernel, Module, Var};
use crate::stmt::{Block, RoleRegion, Stmt};
use crate::visit::{ForLoop, Out, Rewrite};
use std::convert::Infallible;

pub struct ForwardVars;

impl Pass for ForwardVars {
    fn name(&self) -> &'static str {
        "forward-vars"
    }
    fn description(&self) -> &'static str {
        "replace variable reads by the value last written where it is known; drop writes nobody reads"
    }
    fn run(&self, module: &mut Module, _: &mut Analyses) -> Result<(), PassError> {
        for k in &mut module.kernels {
            let body = std::mem::take(&mut k.body);
            let mut f = Forward { alias: vec![None; k.exprs.len()], known: FxMap::default(), k: &mut *k };
            let Ok(body) = f.block(body);
            let read = read_vars(k, &body);
            let Ok(body) = DropDeadWrites { read: &read }.block(body);
            k.body = body;
        }
        Ok(())
    }
}

struct Forward<'k> {
    k: &'k mut Kernel,
    alias: Vec<Option<Handle<Expr>>>,
    /// Variable → its current value, for the variables whose last write is known here.
    known: FxMap<Handle<Var>, Handle<Expr>>,
}

impl Forward<'_> {
    /// Rewrites `block` with what is known now, and forgets what it learned.
    fn nested(&mut self, block: Block) -> Block {
        let known = self.known.clone();
        let Ok(out) = self.block(block);
        self.known = known;
        out
    }
}

/// What `known` tracks changes only through the statements that write variables (`$v = ..` and `for`) and
/// those with blocks; the others only have their operands resolved.
impl Rewrite for Forward<'_> {
    type Error = Infallible;

    fn operand(&mut self, h: Handle<Expr>) -> Handle<Expr> {
        self.alias.get(h.index()).copied().flatten().unwrap_or(h)
    }

    fn emit(&mut self, h: Handle<Expr>, mut out: Out<'_>) -> Result<(), Infallible> {
        if let Some(e) = self.k.exprs.get_mut(h) {
            e.map_operands(|op| self.alias.get(op.index()).copied().flatten().unwrap_or(op));
            if let Expr::ReadVar(v) = *e
                && let Some(&value) = self.known.get(&v)
                && value < h
            {
                self.alias[h.index()] = Some(value);
                return Ok(());
            }
        }
        out.push(Stmt::Emit(h));
        Ok(())
    }

    fn write_var(&mut self, var: Handle<Var>, value: Handle<Expr>, mut out: Out<'_>) -> Result<(), Infallible> {
        let value = self.operand(value);
        self.known.insert(var, value);
        out.push(Stmt::WriteVar { var, value });
        Ok(())
    }

    fn if_(&mut self, cond: Handle<Expr>, accept: Block, reject: Block, mut out: Out<'_>) -> Result<(), Infallible> {
        let written = written_in(&accept).union(&written_in(&reject)).copied().collect::<FxSet<_>>();
        let accept = self.nested(accept);
        let reject = self.nested(reject);
        self.known.retain(|v, _| !written.contains(v));
        out.push(Stmt::If { cond: self.operand(cond), accept, reject });
        Ok(())
    }

    // Loops: what the body writes is loop-carried, unknown inside and after.
    fn for_(&mut self, f: ForLoop, mut out: Out<'_>) -> Result<(), Infallible> {
        let mut written = written_in(&f.body);
        written.insert(f.var);
        self.known.retain(|v, _| !written.contains(v));
        let (start, end) = (self.operand(f.start), self.operand(f.end));
        let body = self.nested(f.body);
        out.push(ForLoop { start, end, body, ..f }.into());
        Ok(())
    }

    fn while_(&mut self, header: Block, cond: Handle<Expr>, body: Block, mut out: Out<'_>) -> Result<(), Infallible> {
        let written = written_in(&header).union(&written_in(&body)).copied().collect::<FxSet<_>>();
        self.known.retain(|v, _| !written.contains(v));
        // The header runs before the body in every iteration: what it learns holds in the body.
        let known = self.known.clone();
        let Ok(header) = self.block(header);
        let cond = self.operand(cond);
        let Ok(body) = self.block(body);
        self.known = known;
        out.push(Stmt::While { header, cond, body });
        Ok(())
    }

    fn roles(&mut self, regions: Vec<RoleRegion>, mut out: Out<'_>) -> Result<(), Infallible> {
        // Each region starts from what is known before the chain; after it, what any region writes is unknown.
        let mut written = FxSet::default();
        let mut rewritten = Vec::with_capacity(regions.len());
        for RoleRegion { role, regs, body, at } in regions {
            written.extend(written_in(&body));
            rewritten.push(RoleRegion { role, regs, body: self.nested(body), at });
        }
        self.known.retain(|v, _| !written.contains(v));
        out.push(Stmt::Roles(rewritten));
        Ok(())
    }
}

/// The variables a block writes (nested blocks included; a loop writes its induction variable).
fn written_in(block: &Block) -> FxSet<Handle<Var>> {
    let mut out = FxSet::default();
    block.visit(&mut |s| out.extend(s.writes_var()));
    out
}

/// The variables some emitted expression reads (loop variables count as read: the loop uses them).
fn read_vars(k: &Kernel, block: &Block) -> FxSet<Handle<Var>> {
    let mut out = FxSet::default();
    block.visit(&mut |s| {
        out.extend(s.reads_var(&k.exprs));
        if let Stmt::For { var, .. } = s {
            out.insert(*var);
        }
    });
    out
}

/// Drops the writes to variables nobody reads.
struct DropDeadWrites<'a> {
    read: &'a FxSet<Handle<Var>>,
}

impl Rewrite for DropDeadWrites<'_> {
    type Error = Infallible;

    fn write_var(&mut self, var: Handle<Var>, value: Handle<Expr>, mut out: Out<'_>) -> Result<(), Infallible> {
        if self.read.contains(&var) {
            out.push(Stmt::WriteVar { var, value });
        }
        Ok(())
    }
}

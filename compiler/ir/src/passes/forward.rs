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
use crate::effects;
use crate::expr::Expr;
use crate::module::{Kernel, Module, Var};
use crate::stmt::{Block, Stmt};
use std::collections::{HashMap, HashSet};

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
            let mut f = Forward { alias: vec![None; k.exprs.len()] };
            let body = std::mem::take(&mut k.body);
            let body = f.block(k, body, &mut HashMap::new());
            let read = read_vars(k, &body);
            k.body = drop_dead_writes(body, &read);
        }
        Ok(())
    }
}

struct Forward {
    alias: Vec<Option<Handle<Expr>>>,
}

impl Forward {
    fn resolve(&self, h: Handle<Expr>) -> Handle<Expr> {
        self.alias.get(h.index()).copied().flatten().unwrap_or(h)
    }

    /// `known`: variable → its current value, for the variables whose last write is known here.
    fn block(&mut self, k: &mut Kernel, block: Block, known: &mut HashMap<Handle<Var>, Handle<Expr>>) -> Block {
        let (stmts, locs) = block.into_parts();
        let mut out = Block::new();
        for (stmt, loc) in stmts.into_iter().zip(locs) {
            if let Stmt::Emit(h) = stmt {
                if let Some(e) = k.exprs.get_mut(h) {
                    e.map_operands(|op| self.alias.get(op.index()).copied().flatten().unwrap_or(op));
                    if let Expr::ReadVar(v) = *e
                        && let Some(&value) = known.get(&v)
                        && value < h
                    {
                        self.alias[h.index()] = Some(value);
                        continue;
                    }
                }
                out.push(stmt, loc);
                continue;
            }
            let stmt = match stmt {
                Stmt::Emit(h) => Stmt::Emit(h),
                Stmt::WriteVar { var, value } => {
                    let value = self.resolve(value);
                    known.insert(var, value);
                    Stmt::WriteVar { var, value }
                }
                Stmt::If { cond, accept, reject } => {
                    let written = written_in(&accept).union(&written_in(&reject)).copied().collect::<HashSet<_>>();
                    let accept = self.block(k, accept, &mut known.clone());
                    let reject = self.block(k, reject, &mut known.clone());
                    known.retain(|v, _| !written.contains(v));
                    Stmt::If { cond: self.resolve(cond), accept, reject }
                }
                // Loops: what the body writes is loop-carried, unknown inside and after.
                Stmt::For { var, start, end, step, unroll, stages, body } => {
                    let mut written = written_in(&body);
                    written.insert(var);
                    known.retain(|v, _| !written.contains(v));
                    let (start, end) = (self.resolve(start), self.resolve(end));
                    let body = self.block(k, body, &mut known.clone());
                    Stmt::For { var, start, end, step, unroll, stages, body }
                }
                Stmt::While { header, cond, body } => {
                    let written = written_in(&header).union(&written_in(&body)).copied().collect::<HashSet<_>>();
                    known.retain(|v, _| !written.contains(v));
                    // The header runs before the body in every iteration: what it learns holds in the body.
                    let mut inner = known.clone();
                    let header = self.block(k, header, &mut inner);
                    let cond = self.resolve(cond);
                    let body = self.block(k, body, &mut inner);
                    Stmt::While { header, cond, body }
                }
                Stmt::Warpgroup { role, regs, body } => {
                    let written = written_in(&body);
                    let body = self.block(k, body, &mut known.clone());
                    known.retain(|v, _| !written.contains(v));
                    Stmt::Warpgroup { role, regs, body }
                }
                mut stmt @ (Stmt::Op { .. }
                | Stmt::Store { .. }
                | Stmt::Break
                | Stmt::Continue
                | Stmt::Return
                | Stmt::Barrier(_)) => {
                    // What `known` tracks changes only through the statements above.
                    debug_assert!(!effects::stmt(k, &stmt).contains(crate::Effects::WRITE_VAR));
                    stmt.map_operands(|op| self.resolve(op));
                    stmt
                }
            };
            out.push(stmt, loc);
        }
        out
    }
}

/// The variables a block writes (nested blocks included; a loop writes its induction variable).
fn written_in(block: &Block) -> HashSet<Handle<Var>> {
    let mut out = HashSet::new();
    block.visit(&mut |s| out.extend(s.writes_var()));
    out
}

/// The variables some emitted expression reads (loop variables count as read: the loop uses them).
fn read_vars(k: &Kernel, block: &Block) -> HashSet<Handle<Var>> {
    let mut out = HashSet::new();
    block.visit(&mut |s| {
        out.extend(s.reads_var(&k.exprs));
        if let Stmt::For { var, .. } = s {
            out.insert(*var);
        }
    });
    out
}

fn drop_dead_writes(block: Block, read: &HashSet<Handle<Var>>) -> Block {
    let (stmts, locs) = block.into_parts();
    let mut out = Block::new();
    for (mut stmt, loc) in stmts.into_iter().zip(locs) {
        if let Stmt::WriteVar { var, .. } = stmt
            && !read.contains(&var)
        {
            continue;
        }
        for b in stmt.blocks_mut() {
            *b = drop_dead_writes(std::mem::take(b), read);
        }
        out.push(stmt, loc);
    }
    out
}

//! Warpgroup roles: `role producer(registers = 40) { .. }` and `role consumer(warpgroups = 2, registers = 232)
//! as wg { .. }` at the top level of a kernel body take consecutive warpgroups of the block (warpgroup `w` is
//! threads `128 w..128 w + 127`), in source order, and lower to the regions of a [`cutec_ir::Stmt::Roles`] chain (roles written one after the other share one); `wg` is
//! `thread_idx.x / 128 - first`, the warpgroup's rank in its role (uniform in a warpgroup, so `gemm` may depend
//! on it). Before any role is lowered, [`Lower::plan_roles`] places them all and checks that they can run: every
//! role has threads and every warpgroup a role (E0313), and the register budgets fit the SM (E0314), since a
//! `setmaxnreg.inc` past the register file waits forever.

use super::value::{Binding, Value};
use super::{LResult, Lower, Reported};
use crate::error::{BlockShape, LowerError, RoleError, RoleShare};
use cutec_diagnostics::Span;
use cutec_grammar::ast::{self, NodeId, StmtKind};
use cutec_ir::{Role, SM_REGISTERS, entry_registers};
use cutec_sema::Scalar;

/// Where a role runs: warpgroups `first..first + count`, with `regs` registers per thread if it says so.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RoleSlot {
    first: u32,
    pub(crate) count: u32,
    regs: Option<u32>,
}

/// One top-level `role` of the kernel body, with its arguments evaluated.
struct Planned<'a> {
    id: NodeId,
    name: &'a str,
    /// `role name`, where the diagnostics point.
    head: Span,
    count: u32,
    regs: Option<u32>,
}

impl Lower<'_> {
    /// Places the roles at the top level of the kernel body `body` on consecutive warpgroups and checks them
    /// (E0313, E0314); their places go to `self.roles`. Reports and fails if any check fails.
    pub(super) fn plan_roles(&mut self, f: &ast::Function) -> LResult<()> {
        let mut planned = Vec::new();
        let mut failed = false;
        for s in &f.body.stmts {
            let StmtKind::Role { id, name, args, .. } = &s.kind else { continue };
            match self.role_args(args, name) {
                Ok((count, regs)) => {
                    planned.push(Planned { id: *id, name: &name.name, head: head(s, name), count, regs })
                }
                Err(Reported) => failed = true,
            }
        }
        if planned.is_empty() || failed {
            return if failed { Err(Reported) } else { Ok(()) };
        }
        let block_arg = f.launch.as_ref().and_then(|l| l.args.iter().find(|a| a.name.name == "block"));
        let block_span = block_arg.map_or(f.sig_span, |a| a.span);
        let first = &planned[0];
        let threads = match self.b.kernel().block_size {
            Some([x, 1, 1]) if x % 128 == 0 => x,
            size => {
                let size = match size {
                    None => BlockShape::Unknown,
                    Some([x, 1, 1]) => BlockShape::NotWarpgroups(x),
                    Some(xyz) => BlockShape::NotOneDimensional(xyz),
                };
                let error = RoleError::Block { role: first.name.to_owned(), block: block_span, size };
                return self.fail(first.head, LowerError::Role(error));
            }
        };
        let warpgroups = threads / 128;
        let mut next = 0u32;
        for p in &planned {
            let end = next.saturating_add(p.count);
            if end > warpgroups {
                let error = RoleError::NoThreads {
                    role: p.name.to_owned(),
                    start: next,
                    end,
                    warpgroups,
                    threads,
                    block: block_span,
                };
                return self.fail(p.head, LowerError::Role(error));
            }
            next = end;
        }
        if next < warpgroups {
            let Some(last) = planned.last() else { return Err(Reported) };
            let error = RoleError::WarpgroupsWithoutRole { start: next, warpgroups, threads, block: block_span };
            return self.fail(last.head, LowerError::Role(error));
        }
        self.check_register_budget(&planned, threads)?;
        let mut first = 0;
        for p in &planned {
            self.roles.insert(p.id, RoleSlot { first, count: p.count, regs: p.regs });
            first += p.count;
        }
        Ok(())
    }

    /// `warpgroups = N` (1 by default) and `registers = R` of a role, checked alone (E0313, E0314).
    fn role_args(&mut self, args: &[ast::NamedArg], name: &ast::Ident) -> LResult<(u32, Option<u32>)> {
        let module = self.frame()?.module;
        let (mut count, mut regs) = (1, None);
        for a in args {
            let Some(v) = self.program.value_of(module, a.value.id) else {
                let what = format!("`{}` of a role must be known at compile time", a.name.name);
                return self.fail(a.value.span, LowerError::NotConstant { problem: what });
            };
            match a.name.name.as_str() {
                "warpgroups" => match u32::try_from(v) {
                    Ok(n) if (1..=8).contains(&n) => count = n,
                    _ => {
                        let error = RoleError::Warpgroups { role: name.name.clone(), value: v };
                        return self.fail(a.span, LowerError::Role(error));
                    }
                },
                "registers" => match u32::try_from(v) {
                    Ok(r) if cutec_target::setmaxnreg_takes(r) => regs = Some(r),
                    _ => {
                        let error = RoleError::Registers { role: name.name.clone(), value: v };
                        return self.fail(a.span, LowerError::Role(error));
                    }
                },
                // The checker reported any other name.
                _ => return Err(Reported),
            }
        }
        Ok((count, regs))
    }

    /// E0314 when the roles' registers (a role without `registers` keeps the budget at entry) are more than
    /// the SM's register file.
    fn check_register_budget(&mut self, planned: &[Planned<'_>], threads: u32) -> LResult<()> {
        let entry = entry_registers(threads);
        let share = |p: &Planned<'_>| u64::from(p.regs.unwrap_or(entry)) * 128 * u64::from(p.count);
        let total: u64 = planned.iter().map(share).sum();
        if total <= u64::from(SM_REGISTERS) {
            return Ok(());
        }
        // The role that asks for the most registers per thread is the one to blame.
        let Some(worst) = planned.iter().max_by_key(|p| p.regs.unwrap_or(entry)) else { return Err(Reported) };
        let role_share = |p: &Planned<'_>| RoleShare {
            head: p.head,
            regs: p.regs.unwrap_or(entry),
            explicit: p.regs.is_some(),
            warpgroups: p.count,
        };
        let error = RoleError::RegisterBudget {
            total,
            worst: role_share(worst),
            others: planned.iter().filter(|p| p.id != worst.id).map(role_share).collect(),
            entry,
            threads,
            sm: SM_REGISTERS,
        };
        self.fail(worst.head, LowerError::Role(error))
    }

    /// A `role` statement: at the top level of the kernel body, the region of its warpgroups with its rank bound;
    /// anywhere else, E0313.
    pub(super) fn role(&mut self, s: &ast::Stmt) -> LResult<()> {
        let StmtKind::Role { id, name, rank, body, .. } = &s.kind else { return Err(Reported) };
        let head = head(s, name);
        if self.frames.len() != 1 || self.block_depth != 1 {
            let error = RoleError::NotTopLevel { role: name.name.clone(), in_function: self.frames.len() != 1 };
            return self.fail(head, LowerError::Role(error));
        }
        // Not planned: `plan_roles` reported why.
        let Some(slot) = self.roles.get(id).copied() else { return Err(Reported) };
        self.at(head);
        self.b.open_block();
        let known = self.facts.len();
        if rank.is_some() {
            let tid = self.b.thread_idx_x();
            let size = self.b.i32(128);
            let wg = self.b.div(tid, size);
            let first = self.b.i32(slot.first as i32);
            let r = self.b.sub(wg, first);
            // The region's test: 0 <= rank < count, which bounds what the rank indexes.
            let (zero, count) = (self.b.i32(0), self.b.i32(slot.count as i32));
            self.facts.push((zero, r, false));
            self.facts.push((r, count, true));
            self.frame_mut()?.bindings.insert(*id, Binding::Value(Box::new(Value::Scalar(r, Scalar::Int))));
        }
        let outer = self.current_role.replace(slot);
        let result = self.block(body);
        self.current_role = outer;
        self.facts.truncate(known);
        let body = self.b.close_block();
        self.at(head);
        let role = Role { kind: cutec_ir::RoleKind::Source(name.name.clone()), first: slot.first, count: slot.count };
        let at = cutec_ir::Loc::new(self.file(), head);
        self.b.push_role_region(cutec_ir::RoleRegion { role, regs: slot.regs, body, at });
        result
    }
}

/// `role name`: where a diagnostic about a role points.
fn head(s: &ast::Stmt, name: &ast::Ident) -> Span {
    Span { start: s.span.start, end: name.span.end.max(s.span.start) }
}

//! Warpgroup roles: `role producer(registers = 40) { .. }` and `role consumer(warpgroups = 2, registers = 232)
//! as wg { .. }` at the top level of a kernel body take consecutive warpgroups of the block (warpgroup `w` is
//! threads `128 w..128 w + 127`), in source order, and lower to [`crate::Stmt::Warpgroup`] regions; `wg` is
//! `thread_idx.x / 128 - first`, the warpgroup's rank in its role (uniform in a warpgroup, so `gemm` may depend
//! on it). Before any role is lowered, [`Lower::plan_roles`] places them all and checks that they can run: every
//! role has threads and every warpgroup a role (E0313), and the register budgets fit the SM (E0314), since a
//! `setmaxnreg.inc` past the register file waits forever.

use super::value::{Binding, Value};
use super::{LResult, Lower, Reported};
use crate::{Role, SM_REGISTERS, codes, entry_registers};
use cutec_diagnostics::{Diagnostic, Span};
use cutec_grammar::ast::{self, NodeId, StmtKind};
use cutec_sema::Scalar;

/// Where a role runs: warpgroups `first..first + count`, with `regs` registers per thread if it says so.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RoleSlot {
    first: u32,
    count: u32,
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
                let (message, label, help) = match size {
                    None => (
                        "roles need a block size known at compile time".to_string(),
                        "the block size is not a constant".to_string(),
                        "write the block size with constants and const generics: `block = (384)`".to_string(),
                    ),
                    Some([x, 1, 1]) => (
                        format!("a block of {x} threads is not a whole number of warpgroups"),
                        format!("{x} threads: {} warpgroups and {} threads", x / 128, x % 128),
                        format!(
                            "roles split the block into warpgroups of 128 threads: make it {}",
                            (x / 128 + 1) * 128
                        ),
                    ),
                    Some([x, y, z]) => (
                        "roles need a one-dimensional block".to_string(),
                        format!("a block of ({x}, {y}, {z}) threads"),
                        format!("roles split `thread_idx.x` into warpgroups: write `block = ({})`", x * y * z),
                    ),
                };
                let file = self.file();
                let d = Diagnostic::error(codes::ROLES_DO_NOT_FIT, message, file, first.head)
                    .with_primary_message(format!("the role `{}` splits the block into warpgroups", first.name))
                    .with_label(file, block_span, label)
                    .with_help(help);
                self.diagnostics.push(d);
                return Err(Reported);
            }
        };
        let warpgroups = threads / 128;
        let mut next = 0u32;
        for p in &planned {
            let end = next.saturating_add(p.count);
            if end > warpgroups {
                let message = format!(
                    "the role `{}` has no threads: it needs warpgroup{} {}, and the block has only {warpgroups}",
                    p.name,
                    if p.count == 1 { "" } else { "s" },
                    range_text(next, end),
                );
                let file = self.file();
                let d = Diagnostic::error(codes::ROLES_DO_NOT_FIT, message, file, p.head)
                    .with_primary_message(format!(
                        "warpgroup{} {}",
                        if p.count == 1 { "" } else { "s" },
                        range_text(next, end)
                    ))
                    .with_label(
                        file,
                        block_span,
                        format!("{threads} threads: warpgroups {}", range_text(0, warpgroups)),
                    )
                    .with_help(format!(
                        "make the block {} threads, or give the roles fewer warpgroups",
                        u64::from(end) * 128
                    ));
                self.diagnostics.push(d);
                return Err(Reported);
            }
            next = end;
        }
        if next < warpgroups {
            let Some(last) = planned.last() else { return Err(Reported) };
            let n = warpgroups - next;
            let verb = if n == 1 { "has" } else { "have" };
            let message =
                format!("warpgroup{} {} of the block {verb} no role", plural(n), range_text(next, warpgroups));
            let file = self.file();
            let d = Diagnostic::error(codes::ROLES_DO_NOT_FIT, message, file, last.head)
                .with_primary_message(format!("the last role ends at warpgroup {}", next - 1))
                .with_label(file, block_span, format!("{threads} threads: warpgroups {}", range_text(0, warpgroups)))
                .with_help(format!(
                    "add a role for them, or make the block {} threads: a warpgroup without a role runs none of \
                     them, and its registers are lost to the others",
                    next * 128
                ));
            self.diagnostics.push(d);
            return Err(Reported);
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
                return self.error(codes::NOT_CONSTANT, a.value.span, what);
            };
            match a.name.name.as_str() {
                "warpgroups" => match u32::try_from(v) {
                    Ok(n) if (1..=8).contains(&n) => count = n,
                    _ => {
                        let file = self.file();
                        let d = Diagnostic::error(
                            codes::ROLES_DO_NOT_FIT,
                            if v < 1 {
                                format!("the role `{}` has no threads: {v} warpgroups", name.name)
                            } else {
                                format!("the role `{}` asks for {v} warpgroups, more than a block has", name.name)
                            },
                            file,
                            a.span,
                        )
                        .with_primary_message(format!("{v} warpgroups"))
                        .with_help(
                            "a role takes 1 to 8 warpgroups (a block has at most 1024 threads); the default is 1",
                        );
                        self.diagnostics.push(d);
                        return Err(Reported);
                    }
                },
                "registers" => match u32::try_from(v) {
                    Ok(r) if (24..=256).contains(&r) && r % 8 == 0 => regs = Some(r),
                    _ => {
                        let file = self.file();
                        let d = Diagnostic::error(
                            codes::REGISTER_BUDGET,
                            format!("the role `{}` asks for {v} registers per thread", name.name),
                            file,
                            a.span,
                        )
                        .with_primary_message("not a multiple of 8 in 24..=256")
                        .with_help("`setmaxnreg` sets a multiple of 8 registers from 24 to 256 per thread");
                        self.diagnostics.push(d);
                        return Err(Reported);
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
        let file = self.file();
        let mut d = Diagnostic::error(
            codes::REGISTER_BUDGET,
            format!("the roles ask for {total} registers, more than the SM's {SM_REGISTERS}"),
            file,
            worst.head,
        )
        .with_primary_message(format!(
            "{} registers x 128 threads x {} warpgroup{} = {}",
            worst.regs.unwrap_or(entry),
            worst.count,
            plural(worst.count),
            share(worst)
        ));
        for p in planned.iter().filter(|p| p.id != worst.id) {
            let how = if p.regs.is_some() { "" } else { " (the budget at entry)" };
            let text = format!(
                "{} registers{how} x 128 threads x {} warpgroup{} = {}",
                p.regs.unwrap_or(entry),
                p.count,
                plural(p.count),
                share(p)
            );
            d = d.with_label(file, p.head, text);
        }
        let d = d
            .with_note(
                "`setmaxnreg.inc` waits until the registers it asks for are free: past the register file it waits \
                 forever",
            )
            .with_help(format!(
                "lower the roles' `registers` so that their sum times 128 times their warpgroups is at most \
                 {SM_REGISTERS}; a role without `registers` keeps {entry}, the budget of a {threads}-thread block at entry"
            ));
        self.diagnostics.push(d);
        Err(Reported)
    }

    /// A `role` statement: at the top level of the kernel body, the region of its warpgroups with its rank bound;
    /// anywhere else, E0313.
    pub(super) fn role(&mut self, s: &ast::Stmt) -> LResult<()> {
        let StmtKind::Role { id, name, rank, body, .. } = &s.kind else { return Err(Reported) };
        let head = head(s, name);
        if self.frames.len() != 1 || self.block_depth != 1 {
            let place = if self.frames.len() == 1 { "inside a block of the kernel" } else { "in a device function" };
            let file = self.file();
            let d = Diagnostic::error(
                codes::ROLES_DO_NOT_FIT,
                format!("the role `{}` is not at the top level of a kernel body", name.name),
                file,
                head,
            )
            .with_primary_message(format!("a role {place}"))
            .with_help(
                "roles split the kernel's threads once, in order: write them directly in the kernel's body, not in \
                 an `if`, a loop, a block or a function",
            );
            self.diagnostics.push(d);
            return Err(Reported);
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
        let result = self.block(body);
        self.facts.truncate(known);
        let body = self.b.close_block();
        self.at(head);
        let role = Role { name: name.name.clone(), first: slot.first, count: slot.count };
        self.b.push(crate::Stmt::Warpgroup { role, regs: slot.regs, body });
        result
    }
}

/// `role name`: where a diagnostic about a role points.
fn head(s: &ast::Stmt, name: &ast::Ident) -> Span {
    Span { start: s.span.start, end: name.span.end.max(s.span.start) }
}

/// `1` or `1..=2`: warpgroups `start..end`.
fn range_text(start: u32, end: u32) -> String {
    if end == start + 1 { format!("{start}") } else { format!("{start}..={}", end.saturating_sub(1)) }
}

fn plural(n: u32) -> &'static str {
    if n == 1 { "" } else { "s" }
}

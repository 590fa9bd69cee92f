//! Numbering: from the parser's references to arena handles.
//!
//! Printed numbers are kept where they can be: each global expression goes to the smallest free number below
//! its first user (earliest first user first, which finds a placement whenever one exists: the printed module's
//! own arena is one). When there is none, everything is renumbered in program order, globals just before their
//! first use.

use super::ParseError;
use super::syntax::{Parsed, Ref};
use crate::arena::{Arena, Handle, Loc};
use crate::expr::{Expr, SpecialReg};
use crate::module::Kernel;
use crate::stmt::Block;
use crate::visit::Rewrite;
use std::collections::{BTreeSet, HashMap};
use std::convert::Infallible;

/// The kernel of a parsed text.
pub fn build(parsed: Parsed) -> Result<Kernel, ParseError> {
    let Parsed { mut kernel, body, refs, defs } = parsed;
    for r in &refs {
        if let Ref::Num(n) = r
            && !defs.contains_key(n)
        {
            return Err(ParseError::new(0, 0, format!("%{n} is used but never defined")));
        }
    }
    let slots = keep_numbers(&refs, &defs).unwrap_or_else(|| program_order(&body, &refs, &defs));
    let size = slots.iter().copied().max().map_or(0, |m| m + 1);
    // Free numbers hold a dead expression (never emitted, never printed; `compact` drops it).
    let mut arena = Arena::new();
    let handles: Vec<Handle<Expr>> =
        (0..size).map(|_| arena.append(Expr::Special(SpecialReg::LaneId), Loc::NONE)).collect();
    // Every operand is a reference, so the fallback is never taken.
    let fallback = handles.first().copied().unwrap_or_else(|| arena.next_handle());
    let map = |h: Handle<Expr>| slots.get(h.index()).and_then(|&s| handles.get(s)).copied().unwrap_or(fallback);
    for (i, r) in refs.iter().enumerate() {
        let mut e = match r {
            Ref::Num(n) => defs.get(n).map(|d| d.0.clone()).unwrap_or(Expr::Special(SpecialReg::LaneId)),
            Ref::Global(e) => e.clone(),
        };
        e.map_operands(map);
        arena[handles[slots[i]]] = e;
    }
    kernel.exprs = arena;
    let Ok(body) = Remap(map).block(body);
    kernel.body = body;
    Ok(kernel)
}

/// The expressions a reference's definition uses (references), for a number.
fn operands(r: &Ref, defs: &HashMap<u32, (Expr, u32, u32)>) -> Vec<usize> {
    let mut out = Vec::new();
    if let Ref::Num(n) = r
        && let Some((e, _, _)) = defs.get(n)
    {
        e.for_each_operand(|h| out.push(h.index()));
    }
    out
}

/// Slots keeping every printed number; `None` if a global has no free number below its first user.
fn keep_numbers(refs: &[Ref], defs: &HashMap<u32, (Expr, u32, u32)>) -> Option<Vec<usize>> {
    let mut slots = vec![usize::MAX; refs.len()];
    let mut taken = BTreeSet::new();
    for (i, r) in refs.iter().enumerate() {
        if let Ref::Num(n) = r {
            slots[i] = *n as usize;
            taken.insert(*n as usize);
        }
    }
    // The first (smallest-numbered) user of each global: its deadline.
    let mut deadline = vec![usize::MAX; refs.len()];
    for r in refs {
        let Ref::Num(n) = r else { continue };
        for op in operands(r, defs) {
            if matches!(refs.get(op), Some(Ref::Global(_))) {
                deadline[op] = deadline[op].min(*n as usize);
            }
        }
    }
    let mut globals: Vec<usize> = (0..refs.len()).filter(|&i| matches!(refs[i], Ref::Global(_))).collect();
    globals.sort_by_key(|&i| (deadline[i], i));
    let mut next_free = 0usize;
    for g in globals {
        while taken.contains(&next_free) {
            next_free += 1;
        }
        if next_free >= deadline[g] {
            return None;
        }
        slots[g] = next_free;
        taken.insert(next_free);
    }
    Some(slots)
}

/// Slots in program order: globals just before their first use, definitions where they are.
fn program_order(body: &Block, refs: &[Ref], defs: &HashMap<u32, (Expr, u32, u32)>) -> Vec<usize> {
    let mut o = Order { refs, defs, slots: vec![usize::MAX; refs.len()], next: 0 };
    // The walk sees operands before definitions and a `while`'s header before its condition: program order. It
    // rebuilds a copy of the body, which is dropped; only the slots are kept.
    let Ok(_) = o.block(body.clone());
    // References nothing reaches (none in parsed text) still get a slot.
    for i in 0..refs.len() {
        o.place(i);
    }
    o.slots
}

struct Order<'a> {
    refs: &'a [Ref],
    defs: &'a HashMap<u32, (Expr, u32, u32)>,
    slots: Vec<usize>,
    next: usize,
}

impl Order<'_> {
    fn place(&mut self, i: usize) {
        if self.slots.get(i).is_some_and(|&s| s == usize::MAX) {
            for op in operands(&self.refs[i], self.defs) {
                if matches!(self.refs.get(op), Some(Ref::Global(_))) {
                    self.place(op);
                }
            }
            self.slots[i] = self.next;
            self.next += 1;
        }
    }
}

impl Rewrite for Order<'_> {
    type Error = Infallible;

    fn operand(&mut self, h: Handle<Expr>) -> Handle<Expr> {
        self.place(h.index());
        h
    }
    fn result(&mut self, h: Handle<Expr>) -> Handle<Expr> {
        self.place(h.index());
        h
    }
}

/// The body with each reference replaced by its handle.
struct Remap<F>(F);

impl<F: Fn(Handle<Expr>) -> Handle<Expr>> Rewrite for Remap<F> {
    type Error = Infallible;

    fn operand(&mut self, h: Handle<Expr>) -> Handle<Expr> {
        (self.0)(h)
    }
    fn result(&mut self, h: Handle<Expr>) -> Handle<Expr> {
        (self.0)(h)
    }
}

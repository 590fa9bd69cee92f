//! Groups of threads split where their threads disagree: on a condition, a loop bound, a barrier operand or a
//! role's warpgroups. Each part continues as its own group, with the values of its threads.

use super::Stop;
use super::machine::{Group, Machine, unknown};
use super::value::{Slot, Val};
use crate::arena::Handle;
use crate::expr::Expr;

impl<'k> Machine<'_, 'k> {
    /// The values of `hs` if the group agrees on them; otherwise splits it by them and returns `None`.
    pub(super) fn uniform(&mut self, gi: usize, hs: &[Handle<Expr>]) -> Result<Option<Vec<Val>>, Stop> {
        let Some(g) = self.groups.get(gi) else { return Ok(None) };
        let slots: Vec<&Slot> = hs.iter().map(|&h| g.env.val(h)).collect();
        if slots.iter().all(|s| matches!(s, Slot::One(_))) {
            let v: Vec<Val> = slots.iter().map(|s| s.get(0)).collect();
            if v.contains(&Val::Unknown) {
                return Err(unknown());
            }
            return Ok(Some(v));
        }
        let keys: Vec<Vec<Val>> = g.threads.iter().map(|&t| slots.iter().map(|s| s.get(t)).collect()).collect();
        self.split(gi, &keys);
        Ok(None)
    }

    /// The value of `key` over the group's threads if they agree; otherwise splits the group by it.
    pub(super) fn split_by(&mut self, gi: usize, key: impl Fn(u32) -> Val) -> Option<Val> {
        let g = self.groups.get(gi)?;
        let keys: Vec<Vec<Val>> = g.threads.iter().map(|&t| vec![key(t)]).collect();
        match keys.first() {
            Some(k) if keys.iter().all(|x| x == k) => k.first().copied(),
            _ => {
                self.split(gi, &keys);
                None
            }
        }
    }

    /// Splits group `gi` into one group per distinct key (in the order of first appearance).
    pub(super) fn split(&mut self, gi: usize, keys: &[Vec<Val>]) {
        let mut parts: Vec<(&Vec<Val>, Vec<usize>)> = Vec::new();
        for (i, k) in keys.iter().enumerate() {
            match parts.iter_mut().find(|(pk, _)| *pk == k) {
                Some((_, v)) => v.push(i),
                None => parts.push((k, vec![i])),
            }
        }
        let Some(g) = self.groups.get(gi) else { return };
        let mut made: Vec<Group<'k>> = parts
            .iter()
            .map(|(_, keep)| {
                let threads: Vec<u32> = keep.iter().filter_map(|&i| g.threads.get(i).copied()).collect();
                (g.env.project(&threads), threads)
            })
            .map(|(env, threads)| Group {
                cta: g.cta,
                threads,
                env,
                stack: g.stack.clone(),
                wait: None,
                coll: g.coll,
                done: false,
                seen: g.seen.clone(),
                blocked_at: g.blocked_at,
            })
            .collect();
        // A split is charged as copying a slot per expression and per variable for each part (the budget's unit
        // from before environments held only the relevant ones: the work a kernel may take is unchanged).
        self.work += (parts.len() * (self.kernel.exprs.len() + self.kernel.vars.len()) / 16) as u64;
        if made.is_empty() {
            return;
        }
        let first = made.remove(0);
        let cta = first.cta;
        if let Some(slot) = self.groups.get_mut(gi) {
            *slot = first;
        }
        for m in made {
            let idx = self.groups.len();
            for &t in &m.threads {
                if let Some(o) = self.owner.get_mut(cta).and_then(|o| o.get_mut(t as usize)) {
                    *o = idx;
                }
            }
            self.groups.push(m);
        }
    }
}

//! Groups of threads split where their threads disagree: on a condition, a loop bound, a barrier operand or a
//! role's warpgroups. Each part continues as its own group, with the values of its threads.

use super::Stop;
use super::machine::{Group, Machine, unknown, warps};
use super::memo::{By, Memo, Threads};
use super::value::{Slot, Val};
use crate::arena::Handle;
use crate::expr::Expr;

impl<'k> Machine<'_, 'k> {
    /// The values of `hs` if the group agrees on them; otherwise splits it by them and returns `None`.
    pub(super) fn uniform<const N: usize>(
        &mut self,
        gi: usize,
        hs: [Handle<Expr>; N],
    ) -> Result<Option<[Val; N]>, Stop> {
        let Some(g) = self.groups.get(gi) else { return Ok(None) };
        let slots = hs.map(|h| g.env.val(h));
        if slots.iter().all(|s| matches!(s, Slot::One(_))) {
            let v = slots.map(|s| s.get(0));
            if v.contains(&Val::Unknown) {
                return Err(unknown());
            }
            return Ok(Some(v));
        }
        // The same threads split by the same values before (in this run or another): the same parts.
        if let Some(parts) = self.memo.split(&g.threads, &hs, &slots) {
            self.split(gi, parts);
            return Ok(None);
        }
        // The key of each thread: its N values, one after the other.
        let mut keys: Vec<Val> = Vec::with_capacity(g.threads.len() * N);
        for &t in g.threads.iter() {
            keys.extend(slots.iter().map(|s| s.get(t)));
        }
        let parts = partition(self.memo, &g.threads, &keys, N);
        self.memo.keep_split(&g.threads, &hs, &slots, &parts);
        self.split(gi, parts);
        Ok(None)
    }

    /// The value of `key` over the group's threads if they agree; otherwise splits the group by it. `key`
    /// depends on the thread alone, the same in every run: `tag` names it.
    pub(super) fn split_by(&mut self, gi: usize, tag: usize, key: impl Fn(u32) -> Val) -> Option<Val> {
        let g = self.groups.get(gi)?;
        let by = match self.memo.by_key(&g.threads, tag) {
            Some(by) => by,
            None => {
                let keys: Vec<Val> = g.threads.iter().map(|&t| key(t)).collect();
                let by = match keys.first() {
                    Some(k) if keys.iter().all(|x| x == k) => By::One(*k),
                    _ => By::Parts(partition(self.memo, &g.threads, &keys, 1)),
                };
                self.memo.keep_by_key(&g.threads, tag, &by);
                by
            }
        };
        match by {
            By::One(v) => Some(v),
            By::Parts(parts) => {
                self.split(gi, parts);
                None
            }
        }
    }

    /// Splits group `gi` into the groups of the threads `parts` (a partition of its threads).
    fn split(&mut self, gi: usize, parts: Vec<Threads>) {
        let Some(g) = self.groups.get(gi) else { return };
        let n = parts.len();
        let mut made: Vec<Group<'k>> = parts
            .into_iter()
            .map(|threads| Group {
                cta: g.cta,
                warps: warps(&threads),
                env: g.env.project(&threads, self.memo),
                threads,
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
        self.work += (n * (self.kernel.exprs.len() + self.kernel.vars.len()) / 16) as u64;
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
            for &t in m.threads.iter() {
                if let Some(o) = self.owner.get_mut(cta).and_then(|o| o.get_mut(t as usize)) {
                    *o = idx;
                }
            }
            self.groups.push(m);
        }
    }
}

/// The threads `threads` by key, one part per distinct key (in the order of first appearance), interned in
/// `memo`: thread `i` has the key `keys[i * width..(i + 1) * width]`.
fn partition(memo: &mut Memo, threads: &[u32], keys: &[Val], width: usize) -> Vec<Threads> {
    // The part of each thread (neighbouring threads mostly share their key: it is compared first).
    let mut parts: Vec<(&[Val], usize)> = Vec::new();
    let mut part_of: Vec<usize> = Vec::with_capacity(threads.len());
    let mut last: Option<(&[Val], usize)> = None;
    for k in keys.chunks(width.max(1)) {
        let p = match last {
            Some((lk, p)) if lk == k => p,
            _ => match parts.iter().position(|(pk, _)| *pk == k) {
                Some(p) => p,
                None => {
                    parts.push((k, 0));
                    parts.len() - 1
                }
            },
        };
        if let Some((_, n)) = parts.get_mut(p) {
            *n += 1;
        }
        part_of.push(p);
        last = Some((k, p));
    }
    let mut out = Vec::with_capacity(parts.len());
    for (p, &(_, n)) in parts.iter().enumerate() {
        let mut keep = Vec::with_capacity(n);
        keep.extend(threads.iter().zip(&part_of).filter(|&(_, &q)| q == p).map(|(&t, _)| t));
        out.push(memo.intern(keep));
    }
    out
}

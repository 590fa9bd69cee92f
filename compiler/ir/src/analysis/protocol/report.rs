//! What a run reports: the end-of-kernel checks, the deadlock's diagnosis, and the trace's words (the
//! threads, their CTA and role, a barrier's state).

use super::machine::{BarKey, Frame, Machine, Mbar, Pending};
use super::{Kind, ProtocolError, Stop};
use crate::arena::Loc;

impl<'k> Machine<'_, 'k> {
    /// Every thread has exited: what no wait saw.
    pub(super) fn finish(&mut self) -> Result<(), Stop> {
        let mut early = std::mem::take(&mut self.early);
        early.retain(|(key, ..)| self.mbars.get(key).is_some_and(|b| b.tma));
        if let Some((key, at, who)) = early.into_iter().next() {
            let message = format!(
                "this wait returned at once: its parity names the phase before the first of {}, which TMA loads \
                 signal, so it waited for no data",
                self.bar_name(key)
            );
            let trace = vec![format!("the wait: {who}"), self.barrier_state(key)];
            return Err(Stop::Error(Box::new(ProtocolError { kind: Kind::Parity, at, message, trace })));
        }
        let mut left: Vec<(&BarKey, &Mbar)> = self.mbars.iter().filter(|(_, b)| b.tx != 0).collect();
        left.sort_by_key(|(k, _)| **k);
        if let Some(&(&key, b)) = left.first() {
            let message = format!(
                "phase {} of {} expects {} bytes (`expect_tx`), but {} landed before the kernel ended",
                b.phase,
                self.bar_name(key),
                b.expected,
                b.landed
            );
            let (at, trace) = (b.last_tx, vec![self.barrier_state(key)]);
            return Err(Stop::Error(Box::new(ProtocolError { kind: Kind::Bytes, at, message, trace })));
        }
        Ok(())
    }

    /// Every unfinished thread is blocked and no load is in flight: the wait blocked longest, and why.
    pub(super) fn deadlock(&self) -> Stop {
        let blocked = self
            .groups
            .iter()
            .enumerate()
            .filter(|(_, g)| !g.done)
            .filter_map(|(i, g)| match g.wait {
                Some(Pending::Mbar { key, n, parity, at }) => Some((g.blocked_at, i, key, n, parity, at)),
                _ => None,
            })
            .min_by_key(|x| (x.0, x.1));
        let Some((_, gi, key, n, parity, at)) = blocked else {
            return Stop::Skip("threads wait on each other at barriers other than mbarriers");
        };
        let name = self.bar_name(key);
        let Some(b) = self.mbars.get(&key) else {
            let why = format!("this wait never returns: {name} is never initialised");
            return self.error(Kind::Deadlock, at, gi, why, key);
        };
        let (kind, why) = if n < 0 {
            (
                Kind::Parity,
                format!(
                    "this wait for parity {parity} names the phase before the first of {name}, which only a fresh \
                     barrier passes: {} phases have completed, and the barrier is in phase {}, of parity {}, so it \
                     never returns",
                    b.phase,
                    b.phase,
                    b.phase & 1
                ),
            )
        } else if b.phase > n {
            (
                Kind::Parity,
                format!(
                    "this wait for parity {parity} never returns: it means phase {n} of {name}, which completed, but \
                     the barrier is already in phase {}, of the same parity",
                    b.phase
                ),
            )
        } else if b.pending > 0 {
            (
                Kind::Deadlock,
                format!(
                    "this wait never returns: phase {} of {name} has {} of its {} arrivals, and no thread that \
                     could arrive is still running",
                    b.phase,
                    b.init - b.pending,
                    b.init
                ),
            )
        } else {
            (
                Kind::Bytes,
                format!(
                    "this wait never returns: phase {} of {name} expects {} bytes (`expect_tx`), but the loads \
                     issued for it deliver {}",
                    b.phase, b.expected, b.landed
                ),
            )
        };
        let mut e = self.error(kind, at, gi, why, key);
        if let Stop::Error(err) = &mut e {
            let others: Vec<String> = self
                .groups
                .iter()
                .enumerate()
                .filter(|(i, g)| *i != gi && !g.done)
                .take(3)
                .map(|(i, g)| {
                    let what = match g.wait {
                        Some(Pending::Mbar { key, n, .. }) => format!("waits for phase {n} of {}", self.bar_name(key)),
                        Some(Pending::Named { id, .. }) => format!("waits at named barrier {id}"),
                        Some(Pending::Cta { .. }) => "waits at the CTA barrier".to_string(),
                        Some(Pending::Cluster { .. }) => "waits at the cluster barrier".to_string(),
                        Some(Pending::Collective { .. }) => "waits for its warp at a collective".to_string(),
                        None => "is blocked".to_string(),
                    };
                    format!("meanwhile {} {what}", self.who(i))
                })
                .collect();
            err.trace.extend(others);
        }
        e
    }

    pub(super) fn error(&self, kind: Kind, at: Loc, gi: usize, message: String, key: BarKey) -> Stop {
        let trace = vec![format!("the thread: {}", self.who(gi)), self.barrier_state(key)];
        Stop::Error(Box::new(ProtocolError { kind, at, message, trace }))
    }

    /// `@full[1]`, and the CTA when the cluster has several.
    pub(super) fn bar_name(&self, (cta, alloc, off): BarKey) -> String {
        let name = self.kernel.allocs.iter().nth(alloc as usize).map_or("?", |(_, a)| a.name.as_str());
        let cta = if self.exited.len() > 1 { format!(" of CTA {cta}") } else { String::new() };
        format!("@{name}[{}]{cta}", off / 8)
    }

    pub(super) fn barrier_state(&self, key: BarKey) -> String {
        let name = self.bar_name(key);
        match self.mbars.get(&key) {
            None => format!("{name} is not initialised"),
            Some(b) => format!(
                "{name}: {} phases completed; phase {} (parity {}) has {} of {} arrivals and {} of {} expected bytes",
                b.phase,
                b.phase,
                b.phase & 1,
                b.init - b.pending,
                b.init,
                b.landed,
                b.expected
            ),
        }
    }

    /// The threads of a group, their CTA and their role, for a trace.
    pub(super) fn who(&self, gi: usize) -> String {
        self.say(&self.who_at(gi))
    }

    /// The threads of a group as they are now, to be said later if at all (a load keeps who issued it, and
    /// formatting that for every load cost more than the load).
    pub(super) fn who_at(&self, gi: usize) -> Who<'k> {
        let Some(g) = self.groups.get(gi) else { return Who::default() };
        let role = g.stack.iter().rev().find_map(|f| match f {
            Frame::Role(r) => Some(*r),
            _ => None,
        });
        let (first, last) = (g.threads.first().copied(), g.threads.last().copied());
        Who { group: true, first, last, n: g.threads.len(), role, cta: g.cta }
    }

    pub(super) fn say(&self, w: &Who<'_>) -> String {
        if !w.group {
            return String::new();
        }
        let threads = match (w.first, w.last, w.n) {
            (Some(a), _, 1) => format!("thread {a}"),
            (Some(a), Some(b), n) if (b - a) as usize + 1 == n => format!("threads {a}..={b}"),
            (Some(a), Some(b), n) => format!("{n} threads of {a}..={b}"),
            _ => "no thread".to_string(),
        };
        let role = w.role.map(|r| format!(" (role `{r}`)")).unwrap_or_default();
        if self.exited.len() > 1 { format!("{threads}{role} of CTA {}", w.cta) } else { format!("{threads}{role}") }
    }
}

/// A group's threads (the first, the last, how many), its role and its CTA, at some step.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Who<'k> {
    /// Whether there was such a group (there always is).
    group: bool,
    first: Option<u32>,
    last: Option<u32>,
    n: usize,
    role: Option<&'k str>,
    cta: usize,
}

//! The operations of the protocol: mbarriers (init, arrivals, waits), TMA loads and their bytes landing, named and
//! cluster barriers, and the warp's collectives.

use super::machine::{BarKey, Flow, Machine, Mbar, Pending, unknown};
use super::report::Who;
use super::value::{Base, Val};
use super::{Kind, ProtocolError, Stop};
use crate::arena::{Handle, Loc};
use crate::expr::Expr;
use crate::op::Op;

/// A TMA load in flight: its bytes land on the barrier `bar` of each CTA of `targets`.
#[derive(Clone, Debug)]
pub(super) struct Flight<'k> {
    pub targets: Vec<usize>,
    pub bar: (u32, i64),
    pub bytes: i64,
    /// Each target barrier's phase when the load was issued.
    pub phases: Vec<i64>,
    pub at: Loc,
    /// The threads that issued it (said only in an error).
    pub who: Who<'k>,
}

impl<'k> Machine<'_, 'k> {
    pub(super) fn op(&mut self, gi: usize, op: &'k Op, result: Option<Handle<Expr>>, at: Loc) -> Result<Flow, Stop> {
        let (cta, n) = match self.groups.get(gi) {
            Some(g) => (g.cta, g.threads.len() as i64),
            None => return Ok(Flow::Next),
        };
        match *op {
            Op::MbarrierInit { bar, count } => {
                let Some([bar, count]) = self.uniform(gi, [bar, count])? else { return Ok(Flow::Again) };
                let key = self.key(cta, bar)?;
                let Val::Int(count) = count else { return Err(unknown()) };
                let m = Mbar {
                    init: count,
                    pending: count,
                    tx: 0,
                    phase: 0,
                    expected: 0,
                    landed: 0,
                    tma: false,
                    last_tx: Loc::NONE,
                };
                self.mbars.insert(key, m);
                Ok(self.advance(gi, []))
            }
            Op::MbarrierArriveExpectTx { bar, bytes } => {
                let Some([bar, bytes]) = self.uniform(gi, [bar, bytes])? else { return Ok(Flow::Again) };
                let key = self.key(cta, bar)?;
                let Val::Int(bytes) = bytes else { return Err(unknown()) };
                for _ in 0..n {
                    self.arrive(gi, key, bytes, at)?;
                }
                Ok(self.advance(gi, []))
            }
            Op::MbarrierArrive { bar } => {
                let Some([bar]) = self.uniform(gi, [bar])? else { return Ok(Flow::Again) };
                let key = self.key(cta, bar)?;
                for _ in 0..n {
                    self.arrive(gi, key, 0, at)?;
                }
                Ok(self.advance(gi, []))
            }
            Op::MbarrierArriveRemote { bar, cta: rank } => {
                let Some([bar, rank]) = self.uniform(gi, [bar, rank])? else { return Ok(Flow::Again) };
                let Val::Int(r) = rank else { return Err(unknown()) };
                let target = usize::try_from(r).ok().filter(|&r| r < self.exited.len()).ok_or_else(unknown)?;
                let key = self.key(target, bar)?;
                if self.exited.get(target).copied().unwrap_or(false) {
                    let why = format!("CTA {target} has exited: this arrival on {} lands nowhere", self.bar_name(key));
                    return Err(self.error(Kind::Exit, at, gi, why, key));
                }
                for _ in 0..n {
                    self.arrive(gi, key, 0, at)?;
                }
                Ok(self.advance(gi, []))
            }
            Op::MbarrierWait { bar, parity } => {
                let Some([bar, parity]) = self.uniform(gi, [bar, parity])? else { return Ok(Flow::Again) };
                let key = self.key(cta, bar)?;
                let Val::Int(p) = parity else { return Err(unknown()) };
                let p = p & 1;
                let seen = self.groups.get(gi).and_then(|g| g.seen.get(&key).copied()).unwrap_or(-1);
                // The next phase of parity p from the last one this group saw complete.
                let n = if seen.rem_euclid(2) == p { seen } else { seen + 1 };
                self.block(gi, Pending::Mbar { key, n, parity: p, at })
            }
            Op::TmaLoadUnscheduled { .. } => Err(Stop::Skip("a TMA load without its barrier (not scheduled)")),
            Op::TmaLoad { map, bar, multicast, .. } => {
                let (map, bar, mask) = match multicast {
                    None => {
                        let Some([map, bar]) = self.uniform(gi, [map, bar])? else { return Ok(Flow::Again) };
                        (map, bar, None)
                    }
                    Some(m) => {
                        let Some([map, bar, m]) = self.uniform(gi, [map, bar, m])? else { return Ok(Flow::Again) };
                        (map, bar, Some(m))
                    }
                };
                let bytes = match map {
                    Val::Ptr { base: Base::Param(i), .. } => self.kernel.tma_box_bytes(i),
                    _ => None,
                };
                let Some(bytes) = bytes.and_then(|b| i64::try_from(b).ok()) else {
                    return Err(Stop::Skip("a TMA load's box size is not known"));
                };
                let (_, alloc, off) = self.key(cta, bar)?;
                let targets: Vec<usize> = match mask {
                    None => vec![cta],
                    Some(Val::Int(mask)) => (0..self.exited.len()).filter(|r| mask >> r & 1 == 1).collect(),
                    Some(_) => return Err(unknown()),
                };
                for _ in 0..n {
                    self.issue(gi, &targets, (alloc, off), bytes, at)?;
                }
                Ok(self.advance(gi, []))
            }
            Op::NamedBarrier { id, threads, .. } => {
                let Some([id, count]) = self.uniform(gi, [id, threads])? else { return Ok(Flow::Again) };
                let (Val::Int(id), Val::Int(count)) = (id, count) else {
                    return Err(unknown());
                };
                let b = self.named.entry((cta, id)).or_insert((0, 0));
                b.0 += n;
                let round = b.1;
                if b.0 >= count {
                    *b = (b.0 - count, b.1 + 1);
                }
                self.block(gi, Pending::Named { id, round })
            }
            Op::ClusterBarrier => {
                self.cluster_bar.0 += n as u32;
                let round = self.cluster_bar.1;
                self.block(gi, Pending::Cluster { round })
            }
            Op::ElectOne => {
                let c = self.groups.get(gi).map_or(0, |g| g.coll);
                // The group itself stands at this collective (`converged` counts a group there by its wait).
                if let Some(g) = self.groups.get_mut(gi) {
                    g.wait = Some(Pending::Collective { c });
                }
                let converged = self.converged(gi, c);
                if let Some(g) = self.groups.get_mut(gi) {
                    g.wait = None;
                }
                if !converged {
                    return self.block(gi, Pending::Collective { c });
                }
                // True in the lowest live lane of each warp.
                let elected = self.groups.get(gi).map(|g| {
                    let owner = self.owner.get(g.cta);
                    let lowest = |t: u32| {
                        (t / 32 * 32..t).all(|u| {
                            owner
                                .and_then(|o| o.get(u as usize))
                                .and_then(|&o| self.groups.get(o))
                                .is_none_or(|o| o.done)
                        })
                    };
                    let v = g.threads.iter().map(|&t| Val::Int(i64::from(lowest(t)))).collect();
                    super::value::collapse(&g.threads, v)
                });
                if let (Some(g), Some(r), Some(s)) = (self.groups.get_mut(gi), result, elected) {
                    g.env.set(r, s);
                    g.coll += 1;
                }
                Ok(self.advance(gi, []))
            }
            Op::Shuffle { .. }
            | Op::Stmatrix { .. }
            | Op::WgmmaFence
            | Op::Wgmma { .. }
            | Op::WgmmaCommit { .. }
            | Op::WgmmaWait { .. }
            | Op::Setmaxnreg { .. } => {
                let c = self.groups.get(gi).map_or(0, |g| g.coll);
                self.block(gi, Pending::Collective { c })
            }
            Op::Load { .. }
            | Op::TmaStore { .. }
            | Op::BulkCommit
            | Op::BulkWait { .. }
            | Op::PrefetchTensorMap { .. }
            | Op::FenceMbarrierInit
            | Op::FenceProxyAsync => Ok(self.advance(gi, [])),
        }
    }

    /// The barrier a pointer names in CTA `cta`.
    fn key(&self, cta: usize, v: Val) -> Result<BarKey, Stop> {
        match v {
            Val::Ptr { base: Base::Alloc(a), off, rank: None } => Ok((cta, a, off)),
            _ => Err(Stop::Skip("an mbarrier's address is not known")),
        }
    }

    /// One arrival (with `bytes` expected) on `key`.
    fn arrive(&mut self, gi: usize, key: BarKey, bytes: i64, at: Loc) -> Result<(), Stop> {
        // The barrier's name is formatted only for an error: this runs for every arrival of every launch.
        let Some(b) = self.mbars.get_mut(&key) else {
            let why = format!("{} is not initialised when this thread arrives on it", self.bar_name(key));
            return Err(self.error(Kind::Misuse, at, gi, why, key));
        };
        if b.pending == 0 {
            let (phase, init) = (b.phase, b.init);
            let why = format!(
                "phase {phase} of {} has all its {init} arrivals and waits only for bytes: this is one arrival too \
                 many",
                self.bar_name(key)
            );
            return Err(self.error(Kind::Misuse, at, gi, why, key));
        }
        b.pending -= 1;
        if bytes != 0 {
            b.tx += bytes;
            b.expected += bytes;
            b.last_tx = at;
        }
        complete(b);
        Ok(())
    }

    /// A TMA load by one thread: lands now, or later (the schedule decides).
    fn issue(&mut self, gi: usize, targets: &[usize], bar: (u32, i64), bytes: i64, at: Loc) -> Result<(), Stop> {
        let mut phases = Vec::with_capacity(targets.len());
        for &t in targets {
            let key = (t, bar.0, bar.1);
            if self.exited.get(t).copied().unwrap_or(false) {
                let why = format!("CTA {t} has exited: this load's bytes for {} land in no CTA", self.bar_name(key));
                return Err(self.error(Kind::Exit, at, gi, why, key));
            }
            match self.mbars.get_mut(&key) {
                Some(b) => {
                    b.tma = true;
                    phases.push(b.phase);
                }
                None => {
                    let why = format!("{} is not initialised when this load signals it", self.bar_name(key));
                    return Err(self.error(Kind::Misuse, at, gi, why, key));
                }
            }
        }
        let f = Flight { targets: targets.to_vec(), bar, bytes, phases, at, who: self.who_at(gi) };
        if self.schedule.late {
            self.flights.push_back(f);
            Ok(())
        } else {
            self.land(f)
        }
    }

    /// The bytes of a load land on its barriers.
    pub(super) fn land(&mut self, f: Flight<'k>) -> Result<(), Stop> {
        for (&t, &issued) in f.targets.iter().zip(&f.phases) {
            let key = (t, f.bar.0, f.bar.1);
            let Some(b) = self.mbars.get(&key) else { continue };
            let over = b.pending == 0 && (b.tx <= 0 || f.bytes > b.tx);
            if b.phase != issued || over {
                let name = self.bar_name(key);
                let Some(b) = self.mbars.get(&key) else { continue };
                let why = if b.phase != issued {
                    format!(
                        "this load was issued in phase {issued} of {name}, but that phase completed before its {} \
                         bytes landed: the phase expected {} bytes and got them from other loads",
                        f.bytes, b.expected
                    )
                } else {
                    format!(
                        "phase {} of {name} expects {} bytes (`expect_tx`), but the loads issued in it deliver \
                         more: {} have landed, and this one brings {}",
                        b.phase, b.expected, b.landed, f.bytes
                    )
                };
                return Err(Stop::Error(Box::new(ProtocolError {
                    kind: Kind::Bytes,
                    at: f.at,
                    message: why,
                    trace: vec![format!("the load: {}", self.say(&f.who))],
                })));
            }
            let Some(b) = self.mbars.get_mut(&key) else { continue };
            b.tx -= f.bytes;
            b.landed += f.bytes;
            complete(b);
        }
        Ok(())
    }
}

/// Completes the barrier's phase when every arrival is in and every expected byte has landed.
fn complete(b: &mut Mbar) {
    if b.pending == 0 && b.tx == 0 {
        b.phase += 1;
        b.pending = b.init;
        b.expected = 0;
        b.landed = 0;
    }
}

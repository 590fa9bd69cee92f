//! The per-thread operations with effects beyond one memory access: mbarriers (PTX "mbarrier": phase, pending
//! arrivals, transaction bytes) and the TMA copies, which complete as they are issued.

use crate::error::{Access, InterpError};
use crate::machine::{Mbarrier, World};
use crate::thread::Thread;
use crate::value::{Mem, Ptr};
use cutec_ir::{Loc, Op};

/// The transaction count's bound: PTX keeps it in `-(2^20 - 1)..=2^20 - 1`.
const TX_LIMIT: i64 = (1 << 20) - 1;

/// The CTA and byte offset of the mbarrier at `p`, its 8 bytes checked to be in shared memory.
pub(crate) fn mbarrier_at(
    world: &mut World<'_>,
    thread: &mut Thread<'_>,
    p: Ptr,
    loc: Loc,
) -> Result<(usize, i64), InterpError> {
    if !matches!(p.mem, Mem::Shared { .. }) {
        let message = format!("an mbarrier operation on {}", crate::memory::memory_name(world, p.mem));
        return Err(InterpError::Mbarrier { loc, thread: thread.thread_ref(world), message });
    }
    crate::memory::bytes_mut(world, thread, p, 8, Access::Write, loc)?;
    if p.off % 8 != 0 {
        let message = format!("an mbarrier at byte {}, not 8-byte aligned", p.off);
        return Err(InterpError::Mbarrier { loc, thread: thread.thread_ref(world), message });
    }
    Ok((thread.shared_cta(world, p.mem, loc)?, p.off))
}

/// The mbarrier at (`cta`, `offset`), which must have been initialised.
pub(crate) fn mbarrier_state<'w>(
    world: &'w mut World<'_>,
    thread: &Thread<'_>,
    cta: usize,
    offset: i64,
    loc: Loc,
) -> Result<&'w mut Mbarrier, InterpError> {
    let who = thread.thread_ref(world);
    world.ctas.get_mut(cta).and_then(|c| c.mbarriers.get_mut(&offset)).ok_or_else(|| InterpError::Mbarrier {
        loc,
        thread: who,
        message: format!("an operation on the mbarrier at byte {offset} of shared memory before its mbarrier.init"),
    })
}

/// Arrivals (`arrivals`) and transaction bytes (`tx`: + expected, - landed) on an mbarrier; completes its
/// phase when both are done, and then says which phase completed.
pub(crate) fn update(m: &mut Mbarrier, arrivals: i64, tx: i64) -> Result<Option<u64>, String> {
    m.tx += tx;
    if !(-TX_LIMIT..=TX_LIMIT).contains(&m.tx) {
        return Err(format!("the mbarrier's transaction count {} leaves PTX's range ±(2^20 - 1)", m.tx));
    }
    if arrivals > m.pending {
        return Err(format!(
            "{arrivals} arrival(s) on an mbarrier whose phase {} has {} pending: more arrivals than its count",
            m.phase, m.pending
        ));
    }
    m.pending -= arrivals;
    if m.pending == 0 && m.tx == 0 {
        m.phase += 1;
        m.pending = m.expected;
        return Ok(Some(m.phase - 1));
    }
    Ok(None)
}

/// Bytes of an asynchronous copy landed on the mbarrier at (`cta`, `offset`) (issued by `who`, at `loc`).
pub(crate) fn complete_tx(
    world: &mut World<'_>,
    cta: usize,
    offset: i64,
    bytes: i64,
    who: crate::ThreadRef,
    loc: Loc,
) -> Result<(), InterpError> {
    let Some(m) = world.ctas.get_mut(cta).and_then(|c| c.mbarriers.get_mut(&offset)) else {
        let message = format!("a TMA copy completes on the mbarrier at byte {offset}, which is not initialised");
        return Err(InterpError::Mbarrier { loc, thread: who, message });
    };
    let completed = update(m, 0, -bytes).map_err(|message| InterpError::Mbarrier { loc, thread: who, message })?;
    if let (Some(phase), Some(r)) = (completed, world.races.as_mut()) {
        r.complete(cta, offset, phase);
    }
    Ok(())
}

/// Updates the mbarrier at (`cta`, `offset`) for `thread` (see [`update`]), keeping the race checker's phase
/// clocks: an arrival releases the thread's clocks into the phase.
pub(crate) fn update_at(
    world: &mut World<'_>,
    thread: &mut Thread<'_>,
    cta: usize,
    offset: i64,
    arrivals: i64,
    tx: i64,
    loc: Loc,
) -> Result<(), InterpError> {
    if arrivals > 0
        && let Some(r) = world.races.as_mut()
    {
        r.arrive(cta, offset, &thread.vc, &thread.fenced);
        crate::race::tick(&mut thread.vc, thread.slot);
    }
    let who = thread.thread_ref(world);
    let m = mbarrier_state(world, thread, cta, offset, loc)?;
    let completed = update(m, arrivals, tx).map_err(|message| InterpError::Mbarrier { loc, thread: who, message })?;
    if let (Some(phase), Some(r)) = (completed, world.races.as_mut()) {
        r.complete(cta, offset, phase);
    }
    Ok(())
}

pub(crate) fn exec(world: &mut World<'_>, thread: &mut Thread<'_>, op: &Op, loc: Loc) -> Result<(), InterpError> {
    let protocol = |world: &World<'_>, thread: &Thread<'_>, message: String| InterpError::Mbarrier {
        loc,
        thread: thread.thread_ref(world),
        message,
    };
    match *op {
        Op::MbarrierInit { bar, count } => {
            let p = thread.ptr(world, bar, loc)?;
            let count = thread.int(world, count, loc)?;
            let (cta, offset) = mbarrier_at(world, thread, p, loc)?;
            if !(1..=TX_LIMIT).contains(&count) {
                return Err(protocol(world, thread, format!("mbarrier.init with count {count}; PTX takes 1..2^20-1")));
            }
            let m = Mbarrier { phase: 0, pending: count, expected: count, tx: 0 };
            world.ctas[cta].mbarriers.insert(offset, m);
        }
        Op::MbarrierArrive { bar } | Op::MbarrierArriveExpectTx { bar, .. } | Op::MbarrierArriveRemote { bar, .. } => {
            let mut p = thread.ptr(world, bar, loc)?;
            if let Op::MbarrierArriveRemote { cta, .. } = *op {
                let rank = thread.int(world, cta, loc)?;
                let rank = u32::try_from(rank).map_err(|_| protocol(world, thread, format!("CTA rank {rank}")))?;
                if let Mem::Shared { alloc, .. } = p.mem {
                    p.mem = Mem::Shared { cta: Some(rank), alloc };
                }
            }
            let tx = match *op {
                Op::MbarrierArriveExpectTx { bytes, .. } => thread.int(world, bytes, loc)?,
                _ => 0,
            };
            let (cta, offset) = mbarrier_at(world, thread, p, loc)?;
            update_at(world, thread, cta, offset, 1, tx, loc)?;
        }
        Op::TmaLoad { dst, map, ref coords, bar, multicast } => {
            let dst = thread.ptr(world, dst, loc)?;
            let map = thread.ptr(world, map, loc)?;
            let bar = thread.ptr(world, bar, loc)?;
            let coords = coords.iter().map(|&c| thread.int(world, c, loc)).collect::<Result<Vec<_>, _>>()?;
            let mask = match multicast {
                Some(m) => thread.int(world, m, loc)? as u32,
                None => 1 << thread.cta,
            };
            crate::tma::load(world, thread, map, &coords, dst, bar, mask, loc)?;
        }
        Op::TmaStore { src, map, ref coords } => {
            let src = thread.ptr(world, src, loc)?;
            let map = thread.ptr(world, map, loc)?;
            let coords = coords.iter().map(|&c| thread.int(world, c, loc)).collect::<Result<Vec<_>, _>>()?;
            crate::tma::store(world, thread, map, &coords, src, loc)?;
        }
        _ => {
            return Err(InterpError::Internal { loc, message: format!("{} is not a per-thread operation", op.name()) });
        }
    }
    Ok(())
}

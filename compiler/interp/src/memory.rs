//! Loads and stores: a pointer resolved to the bytes of its buffer, bounds-checked, and values to and from
//! their little-endian bytes.

use crate::Arg;
use crate::error::{Access, InterpError};
use crate::machine::World;
use crate::thread::Thread;
use crate::value::{Mem, Ptr, Val};
use cutec_ir::{Loc, Type};

/// The name of a memory, for errors.
pub(crate) fn memory_name(world: &World<'_>, mem: Mem) -> String {
    let param =
        |i: u32| world.kernel.params.get(i as usize).map_or_else(|| format!("parameter {i}"), |p| p.name.clone());
    match mem {
        Mem::Global(i) => format!("the global memory of `{}`", param(i)),
        Mem::Shared { cta, alloc } => {
            let name = world.kernel.allocs.iter().nth(alloc as usize).map_or_else(String::new, |(_, a)| a.name.clone());
            match cta {
                None => format!("the shared allocation `{name}`"),
                Some(r) => format!("the shared allocation `{name}` of CTA rank {r} of the cluster"),
            }
        }
        Mem::Local(a) => {
            let name = world.kernel.allocs.iter().nth(a as usize).map_or_else(String::new, |(_, a)| a.name.clone());
            format!("the register array `{name}`")
        }
        Mem::Param(i) => format!("the tensor map `{}`", param(i)),
    }
}

/// The `len` bytes at `p` (of `thread`'s registers, its CTA's or cluster's shared memory, or global memory).
pub(crate) fn bytes_mut<'a>(
    world: &'a mut World<'_>,
    thread: &'a mut Thread<'_>,
    p: Ptr,
    len: u64,
    access: Access,
    loc: Loc,
) -> Result<&'a mut [u8], InterpError> {
    let cta = match p.mem {
        Mem::Shared { .. } => Some(thread.shared_cta(world, p.mem, loc)?),
        _ => None,
    };
    let oob = |world: &World<'_>, size: usize| InterpError::OutOfBounds {
        loc,
        access,
        memory: memory_name(world, p.mem),
        offset: p.off,
        bytes: len,
        size: size as u64,
        thread: thread.thread_ref(world),
    };
    let size = match p.mem {
        Mem::Global(i) => match world.args.get(i as usize) {
            Some(Arg::Buffer(b)) => b.len(),
            _ => 0,
        },
        // The allocation's end: an access must stay inside it (its start is checked below).
        Mem::Shared { alloc, .. } => shared_bounds(world, alloc).1 as usize,
        Mem::Local(a) => thread.locals.get(a as usize).map_or(0, Vec::len),
        Mem::Param(_) => 0,
    };
    let start = match p.mem {
        Mem::Shared { alloc, .. } => shared_bounds(world, alloc).0 as usize,
        _ => 0,
    };
    let range = usize::try_from(p.off)
        .ok()
        .and_then(|s| Some(s..s.checked_add(usize::try_from(len).ok()?)?))
        .filter(|r| r.start >= start && r.end <= size);
    let Some(range) = range else {
        let mut e = oob(world, size - start.min(size));
        // Offsets in a shared allocation are reported from its start.
        if let InterpError::OutOfBounds { offset, .. } = &mut e {
            *offset -= start as i64;
        }
        return Err(e);
    };
    Ok(match p.mem {
        Mem::Global(i) => match world.args.get_mut(i as usize) {
            Some(Arg::Buffer(b)) => &mut b[range],
            _ => return Err(InterpError::Internal { loc, message: "no buffer".into() }),
        },
        Mem::Shared { .. } => match cta.and_then(|c| world.ctas.get_mut(c)) {
            Some(c) => &mut c.shared[range],
            None => return Err(InterpError::Internal { loc, message: "no CTA".into() }),
        },
        Mem::Local(a) => match thread.locals.get_mut(a as usize) {
            Some(l) => &mut l[range],
            None => return Err(InterpError::Internal { loc, message: "no register array".into() }),
        },
        Mem::Param(_) => return Err(InterpError::Internal { loc, message: "an access to a tensor map".into() }),
    })
}

/// The byte range of shared allocation `alloc` in a CTA's shared memory.
fn shared_bounds(world: &World<'_>, alloc: u32) -> (u64, u64) {
    world.alloc_bounds.get(alloc as usize).copied().unwrap_or((0, 0))
}

/// A value of type `ty` from its little-endian bytes.
pub(crate) fn decode(ty: Type, bytes: &[u8]) -> Val {
    let size = ty.scalar().map_or(8, |s| s.size_bytes()) as usize;
    let lanes: Vec<u64> = bytes
        .chunks_exact(size)
        .map(|c| c.iter().rev().fold(0u64, |acc, &b| (acc << 8) | u64::from(b)))
        .map(|b| if ty.scalar() == Some(cutec_ir::Scalar::I1) { b & 1 } else { b })
        .collect();
    Val::from_lanes(lanes)
}

/// The little-endian bytes of a value of type `ty`.
pub(crate) fn encode(ty: Type, v: &Val, out: &mut [u8]) {
    let size = ty.scalar().map_or(8, |s| s.size_bytes()) as usize;
    for (lane, chunk) in v.lanes().iter().zip(out.chunks_exact_mut(size)) {
        chunk.copy_from_slice(&lane.to_le_bytes()[..size]);
    }
}

/// An access to a register array that an in-flight wgmma group uses is an error (PTX: undefined).
fn check_registers(world: &World<'_>, thread: &Thread<'_>, p: Ptr, len: u64, loc: Loc) -> Result<(), InterpError> {
    if let Mem::Local(alloc) = p.mem
        && let Some(wgmma) = thread.register_in_flight(alloc, p.off, p.off + len as i64)
    {
        return Err(InterpError::Race {
            kind: crate::RaceKind::InFlightRegister,
            first: wgmma,
            second: loc,
            cta: thread.cta as u32,
            offset: p.off,
            thread: thread.thread_ref(world),
        });
    }
    Ok(())
}

pub(crate) fn load(
    world: &mut World<'_>,
    thread: &mut Thread<'_>,
    p: Ptr,
    ty: Type,
    loc: Loc,
) -> Result<Val, InterpError> {
    if matches!(ty, Type::Ptr(_)) {
        return Err(InterpError::Unsupported { loc, what: "a load of a pointer".into() });
    }
    check_registers(world, thread, p, u64::from(ty.size_bytes()), loc)?;
    check_generic(world, thread, p, u64::from(ty.size_bytes()), false, loc)?;
    let bytes = bytes_mut(world, thread, p, u64::from(ty.size_bytes()), Access::Read, loc)?;
    Ok(decode(ty, bytes))
}

pub(crate) fn store(
    world: &mut World<'_>,
    thread: &mut Thread<'_>,
    p: Ptr,
    ty: Type,
    v: &Val,
    loc: Loc,
) -> Result<(), InterpError> {
    if matches!(v, Val::Ptr(_)) {
        return Err(InterpError::Unsupported { loc, what: "a store of a pointer".into() });
    }
    check_registers(world, thread, p, u64::from(ty.size_bytes()), loc)?;
    let bytes = bytes_mut(world, thread, p, u64::from(ty.size_bytes()), Access::Write, loc)?;
    encode(ty, v, bytes);
    check_generic(world, thread, p, u64::from(ty.size_bytes()), true, loc)
}

/// The race check of an access to global memory (after its bounds check), between clusters.
pub(crate) fn check_global(
    world: &mut World<'_>,
    thread: &Thread<'_>,
    param: u32,
    offset: i64,
    len: u64,
    write: bool,
    loc: Loc,
) -> Result<(), InterpError> {
    let size = match world.args.get(param as usize) {
        Some(Arg::Buffer(b)) => b.len(),
        _ => return Ok(()),
    };
    let cluster = world.cluster_index;
    let conflict = world.global_races.as_mut().and_then(|g| g.access(param, size, offset, len, write, cluster, loc));
    match conflict {
        None => Ok(()),
        Some((first, offset)) => Err(InterpError::GlobalRace {
            first,
            second: loc,
            memory: memory_name(world, Mem::Global(param)),
            offset,
            thread: thread.thread_ref(world),
        }),
    }
}

/// The race check of a generic access to shared memory (after its bounds check: only bytes in bounds).
pub(crate) fn check_generic(
    world: &mut World<'_>,
    thread: &mut Thread<'_>,
    p: Ptr,
    len: u64,
    write: bool,
    loc: Loc,
) -> Result<(), InterpError> {
    if let Mem::Global(param) = p.mem {
        return check_global(world, thread, param, p.off, len, write, loc);
    }
    if !matches!(p.mem, Mem::Shared { .. }) || world.races.is_none() {
        return Ok(());
    }
    let cta = thread.shared_cta(world, p.mem, loc)?;
    let who = thread.thread_ref(world);
    if let Some(r) = world.races.as_mut() {
        let who = crate::race::Who { slot: thread.slot, vc: &thread.vc, fenced: &thread.fenced, thread: who };
        r.generic(cta, p.off, len, write, &who, loc)?;
    }
    Ok(())
}

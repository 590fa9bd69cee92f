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
        Mem::Shared { cta: None } => "shared memory".to_string(),
        Mem::Shared { cta: Some(r) } => format!("the shared memory of CTA rank {r} of the cluster"),
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
        Mem::Shared { .. } => cta.and_then(|c| world.ctas.get(c)).map_or(0, |c| c.shared.len()),
        Mem::Local(a) => thread.locals.get(a as usize).map_or(0, Vec::len),
        Mem::Param(_) => 0,
    };
    let range = usize::try_from(p.off)
        .ok()
        .and_then(|s| Some(s..s.checked_add(usize::try_from(len).ok()?)?))
        .filter(|r| r.end <= size);
    let Some(range) = range else { return Err(oob(world, size)) };
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
    let bytes = bytes_mut(world, thread, p, u64::from(ty.size_bytes()), Access::Write, loc)?;
    encode(ty, v, bytes);
    Ok(())
}

//! TMA copies (`cp.async.bulk.tensor`) through a tensor map: the box at the coordinates, elements outside the
//! tensor read as zero (or NaN) and not written, the box laid out densely in shared memory (innermost
//! dimension first) and swizzled on its shared-memory addresses (`Swizzle<b,4,3>`, bits [4,4+b) ^= bits
//! [7,7+b), as `cutec_layout::gmma` models it for wgmma).

use crate::error::{Access, InterpError};
use crate::machine::World;
use crate::thread::Thread;
use crate::value::{Mem, Ptr};
use crate::{Arg, TensorMap, TmaSwizzle};
use cutec_ir::Loc;
use cutec_layout::gmma::GmmaSwizzle;

fn map_of(world: &World<'_>, map: Ptr, loc: Loc) -> Result<TensorMap, InterpError> {
    match map.mem {
        Mem::Param(i) if map.off == 0 => world
            .maps
            .get(i as usize)
            .cloned()
            .flatten()
            .ok_or_else(|| InterpError::TensorMap { loc, message: format!("parameter {i} is no tensor map") }),
        other => {
            Err(InterpError::TensorMap { loc, message: format!("a TMA copy through {other:?}, not a tensor map") })
        }
    }
}

fn swizzle(s: TmaSwizzle) -> GmmaSwizzle {
    match s {
        TmaSwizzle::None => GmmaSwizzle::None,
        TmaSwizzle::B32 => GmmaSwizzle::B32,
        TmaSwizzle::B64 => GmmaSwizzle::B64,
        TmaSwizzle::B128 => GmmaSwizzle::B128,
    }
}

/// Each element of the box: its byte offset in the dense box and in the global tensor (`None` outside it).
fn box_elements(m: &TensorMap, coords: &[i64], loc: Loc) -> Result<Vec<(u64, Option<u64>)>, InterpError> {
    let rank = m.dims.len();
    if coords.len() != rank || m.box_dims.len() != rank || m.strides.len() + 1 != rank {
        let message = format!("a rank-{rank} tensor map used with {} coordinates", coords.len());
        return Err(InterpError::TensorMap { loc, message });
    }
    let estride = |d: usize| i64::from(m.element_strides.get(d).copied().unwrap_or(1).max(1));
    let counts: Vec<i64> = (0..rank).map(|d| (i64::from(m.box_dims[d]) + estride(d) - 1) / estride(d)).collect();
    let total: i64 = counts.iter().product();
    let eb = u64::from(m.elem_bytes);
    let mut out = Vec::with_capacity(total.max(0) as usize);
    let mut idx = vec![0i64; rank];
    for linear in 0..total.max(0) as u64 {
        let mut inside = true;
        let mut global = 0u64;
        for d in 0..rank {
            let c = coords[d] + idx[d] * estride(d);
            if c < 0 || c as u64 >= m.dims[d] {
                inside = false;
                break;
            }
            global += c as u64 * if d == 0 { eb } else { m.strides[d - 1] };
        }
        out.push((linear * eb, inside.then_some(global)));
        for d in 0..rank {
            idx[d] += 1;
            if idx[d] < counts[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    Ok(out)
}

/// `tma.load`: the box lands in the shared memory of every CTA of `mask` at `dst`'s offset, and each one's
/// mbarrier at `bar`'s offset counts the box's bytes.
#[allow(clippy::too_many_arguments)]
pub(crate) fn load(
    world: &mut World<'_>,
    thread: &mut Thread<'_>,
    map: Ptr,
    coords: &[i64],
    dst: Ptr,
    bar: Ptr,
    mask: u32,
    loc: Loc,
) -> Result<(), InterpError> {
    let m = map_of(world, map, loc)?;
    let elements = box_elements(&m, coords, loc)?;
    let eb = m.elem_bytes as usize;
    let fill: Vec<u8> = if m.oob_nan { nan_bytes(eb) } else { vec![0; eb] };
    let mut data = vec![0u8; elements.len() * eb];
    {
        let Some(Arg::Buffer(src)) = world.args.get(m.tensor as usize) else {
            return Err(InterpError::TensorMap { loc, message: "the tensor map's tensor has no buffer".into() });
        };
        for (i, (_, global)) in elements.iter().enumerate() {
            let out = &mut data[i * eb..(i + 1) * eb];
            match global {
                Some(g) => match src.get(*g as usize..*g as usize + eb) {
                    Some(b) => out.copy_from_slice(b),
                    None => {
                        let message = format!("the tensor map reaches byte {g}, past the tensor's {} bytes", src.len());
                        return Err(InterpError::TensorMap { loc, message });
                    }
                },
                None => out.copy_from_slice(&fill),
            }
        }
    }
    // The box's reads of the tensor, for the race check between clusters.
    for g in elements.iter().filter_map(|(_, g)| *g) {
        crate::memory::check_global(world, thread, m.tensor, g as i64, eb as u64, false, loc)?;
    }
    let sw = swizzle(m.swizzle);
    let addrs: Vec<i64> = elements.iter().map(|(offset, _)| sw.apply(dst.off + *offset as i64)).collect();
    let ranges: Vec<(i64, i64)> = addrs.iter().map(|&a| (a, a + eb as i64)).collect();
    let Mem::Shared { alloc, .. } = dst.mem else {
        return Err(InterpError::TensorMap { loc, message: "a TMA load into memory other than shared".into() });
    };
    let issuer = thread.thread_ref(world);
    let mut landings = Vec::new();
    for rank in 0..world.ctas.len() as u32 {
        if mask & (1 << rank) == 0 {
            continue;
        }
        // Checked at the issue: the box inside its allocation, the mbarrier initialised.
        let mem = Mem::Shared { cta: Some(rank), alloc };
        for &addr in &addrs {
            crate::memory::bytes_mut(world, thread, Ptr { mem, off: addr }, eb as u64, Access::Write, loc)?;
        }
        let bar_mem = match bar.mem {
            Mem::Shared { alloc, .. } => Mem::Shared { cta: Some(rank), alloc },
            other => other,
        };
        let (cta, bar_offset) = crate::ops::mbarrier_at(world, thread, Ptr { mem: bar_mem, off: bar.off }, loc)?;
        crate::ops::mbarrier_state(world, thread, cta, bar_offset, loc)?;
        let epoch = match world.races.as_mut() {
            Some(r) => {
                let who =
                    crate::race::Who { slot: thread.slot, vc: &thread.vc, fenced: &thread.fenced, thread: issuer };
                Some(r.tma_write(rank as usize, bar.off, &ranges, &who, loc)?)
            }
            None => None,
        };
        landings.push(Landing { cta, bar: bar_offset, epoch });
    }
    let copy = PendingLoad { loc, issuer, addrs, eb, data, landings };
    match world.schedule {
        crate::Schedule::Earliest => land(world, copy),
        crate::Schedule::Latest | crate::Schedule::Seeded(_) => {
            world.pending.push_back(copy);
            Ok(())
        }
    }
}

/// Where a TMA load lands: a CTA of its multicast mask, and the mbarrier there that counts its bytes.
pub(crate) struct Landing {
    cta: usize,
    bar: i64,
    /// The copy's epoch for the race checker.
    epoch: Option<(u32, u32)>,
}

/// A TMA load issued and not yet landed: its data read at the issue, its bytes still to write.
pub(crate) struct PendingLoad {
    loc: Loc,
    issuer: crate::ThreadRef,
    /// The box's shared-memory address of each element (swizzled), and its bytes.
    addrs: Vec<i64>,
    eb: usize,
    data: Vec<u8>,
    landings: Vec<Landing>,
}

/// Lands a TMA load: its box written in every CTA of its mask, and each one's mbarrier told the bytes.
pub(crate) fn land(world: &mut World<'_>, copy: PendingLoad) -> Result<(), InterpError> {
    let eb = copy.eb;
    for l in &copy.landings {
        if let Some(c) = world.ctas.get_mut(l.cta) {
            for (i, &addr) in copy.addrs.iter().enumerate() {
                // In bounds: checked when the copy was issued.
                if let Some(out) = c.shared.get_mut(addr as usize..addr as usize + eb) {
                    out.copy_from_slice(&copy.data[i * eb..(i + 1) * eb]);
                }
            }
        }
        if let (Some(r), Some(epoch)) = (world.races.as_mut(), l.epoch) {
            r.tma_landed(l.cta, l.bar, epoch);
        }
        crate::ops::complete_tx(world, l.cta, l.bar, copy.data.len() as i64, copy.issuer, copy.loc)?;
    }
    Ok(())
}

/// `tma.store`: the box from `src` (swizzled as the map says) to the tensor, elements outside it skipped.
pub(crate) fn store(
    world: &mut World<'_>,
    thread: &mut Thread<'_>,
    map: Ptr,
    coords: &[i64],
    src: Ptr,
    loc: Loc,
) -> Result<(), InterpError> {
    let m = map_of(world, map, loc)?;
    let elements = box_elements(&m, coords, loc)?;
    let eb = m.elem_bytes as usize;
    let sw = swizzle(m.swizzle);
    let cta = thread.shared_cta(world, src.mem, loc)?;
    let ranges: Vec<(i64, i64)> = elements
        .iter()
        .map(|(offset, _)| {
            let a = sw.apply(src.off + *offset as i64);
            (a, a + eb as i64)
        })
        .collect();
    let who = thread.thread_ref(world);
    if let Some(r) = world.races.as_mut() {
        let who = crate::race::Who { slot: thread.slot, vc: &thread.vc, fenced: &thread.fenced, thread: who };
        r.async_read(cta, &ranges, &who, loc)?;
        let id = r.start_inflight(crate::race::InFlight { cta, ranges, loc });
        thread.bulk_open.push(id);
    }
    let mut data = Vec::with_capacity(elements.len() * eb);
    for (offset, _) in &elements {
        let addr = sw.apply(src.off + *offset as i64);
        let bytes =
            crate::memory::bytes_mut(world, thread, Ptr { mem: src.mem, off: addr }, eb as u64, Access::Read, loc)?;
        data.extend_from_slice(bytes);
    }
    for g in elements.iter().filter_map(|(_, g)| *g) {
        crate::memory::check_global(world, thread, m.tensor, g as i64, eb as u64, true, loc)?;
    }
    let Some(Arg::Buffer(dst)) = world.args.get_mut(m.tensor as usize) else {
        return Err(InterpError::TensorMap { loc, message: "the tensor map's tensor has no buffer".into() });
    };
    let len = dst.len();
    for (i, (_, global)) in elements.iter().enumerate() {
        if let Some(g) = global {
            let Some(out) = dst.get_mut(*g as usize..*g as usize + eb) else {
                let message = format!("the tensor map reaches byte {g}, past the tensor's {len} bytes");
                return Err(InterpError::TensorMap { loc, message });
            };
            out.copy_from_slice(&data[i * eb..(i + 1) * eb]);
        }
    }
    Ok(())
}

/// A quiet NaN of an `n`-byte float (f16, f32, f64), little-endian.
fn nan_bytes(n: usize) -> Vec<u8> {
    match n {
        2 => 0x7e00u16.to_le_bytes().to_vec(),
        4 => 0x7fc0_0000u32.to_le_bytes().to_vec(),
        _ => f64::NAN.to_le_bytes()[..n.min(8)].to_vec(),
    }
}

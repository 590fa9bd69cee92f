//! `wgmma.mma_async` over a warpgroup: each k-step's `A (64 x K) * B^T (N x K)` added to the accumulator
//! fragments of the 128 threads. Shared-memory operands are read through the descriptor the code generator
//! encodes (`GmmaDesc::fixed_bits` with the operand's address), decoded and walked by `cutec_layout::gmma`;
//! the accumulator and a register A are placed by the same module's register layouts.

use crate::error::{Access, InterpError};
use crate::machine::World;
use crate::memory::bytes_mut;
use crate::numeric;
use crate::thread::{State, Thread};
use crate::value::{Mem, Ptr};
use cutec_ir::{GmmaDesc, Loc, Op, Scalar};
use cutec_layout::gmma::{
    Major, SmemDescriptor, descriptor_address, wgmma_a_register_layout, wgmma_accumulator_layout,
};

fn layout_error(loc: Loc, e: impl std::fmt::Display) -> InterpError {
    InterpError::Internal { loc, message: format!("wgmma register layout: {e}") }
}

/// The indices `m + 64 n` of `(thread, register)`, `thread + 128 register`, of the accumulator of width `n`.
fn accumulator_layout(world: &mut World<'_>, n: u32, loc: Loc) -> Result<Vec<i64>, InterpError> {
    if let Some(l) = world.acc_layouts.get(&n) {
        return Ok(l.clone());
    }
    let l = wgmma_accumulator_layout(i64::from(n)).and_then(|l| l.indices().map_err(Into::into));
    let l = l.map_err(|e| layout_error(loc, e))?;
    world.acc_layouts.insert(n, l.clone());
    Ok(l)
}

/// The operand a warpgroup passes, which must be the same in every thread (`.sync.aligned`).
fn uniform_ptr(
    world: &World<'_>,
    group: &[Thread<'_>],
    h: cutec_ir::Handle<cutec_ir::Expr>,
    loc: Loc,
) -> Result<Ptr, InterpError> {
    let first = group[0].ptr(world, h, loc)?;
    for t in &group[1..] {
        if t.state != State::Done && t.ptr(world, h, loc)? != first {
            let message = "a wgmma operand that differs across the warpgroup".to_string();
            return Err(InterpError::Collective { loc, thread: t.thread_ref(world), message });
        }
    }
    Ok(first)
}

/// Element `(mn, k)` of a shared-memory operand at `p` read through descriptor `desc`, as an `f64`.
#[allow(clippy::too_many_arguments)]
fn smem_element(
    world: &mut World<'_>,
    thread: &mut Thread<'_>,
    desc: &SmemDescriptor,
    major: Major,
    elem: Scalar,
    mem: Mem,
    mn: i64,
    k: i64,
    loc: Loc,
    reads: &mut Vec<(i64, i64)>,
) -> Result<f64, InterpError> {
    let eb = i64::from(elem.size_bytes());
    let addr = descriptor_address(desc, major, eb, mn, k);
    reads.push((addr, addr + eb));
    let bytes = bytes_mut(world, thread, Ptr { mem, off: addr }, eb as u64, Access::Read, loc)?;
    let bits = bytes.iter().rev().fold(0u64, |acc, &b| (acc << 8) | u64::from(b));
    Ok(numeric::to_f64(elem, bits))
}

/// The descriptor the code generator encodes for an operand at `p` (the address field from `p`'s shared
/// address, the other fields from `desc`), decoded as the hardware reads it.
fn descriptor(desc: &GmmaDesc, p: Ptr) -> SmemDescriptor {
    let address = ((p.off as u64) & 0x3FFFF) >> 4;
    SmemDescriptor::decode(desc.fixed_bits() | address)
}

fn major(mn_major: bool) -> Major {
    if mn_major { Major::MN } else { Major::K }
}

pub(crate) fn execute<'k>(
    world: &mut World<'k>,
    group: &mut [Thread<'k>],
    op: &'k Op,
    loc: Loc,
) -> Result<(), InterpError> {
    let Op::Wgmma { shape, acc, a_desc, b_desc, ref steps } = *op else {
        return Err(InterpError::Internal { loc, message: "not a wgmma".into() });
    };
    if group.len() != 128 || group.iter().any(|t| t.state == State::Done) {
        let message = "wgmma.mma_async with threads of the warpgroup exited".to_string();
        return Err(InterpError::Collective { loc, thread: group[0].thread_ref(world), message });
    }
    let (m, n, k) = (64usize, shape.n as usize, shape.k as usize);
    let acc_layout = accumulator_layout(world, shape.n, loc)?;
    let a_layout = match a_desc {
        None => {
            if shape.input.size_bytes() != 2 {
                return Err(InterpError::Unsupported { loc, what: "wgmma with an 8-bit A in registers".into() });
            }
            let l = wgmma_a_register_layout(16).and_then(|l| l.indices().map_err(Into::into));
            Some(l.map_err(|e| layout_error(loc, e))?)
        }
        Some(_) => None,
    };
    let acc_ptr = uniform_ptr(world, group, acc, loc)?;
    // The accumulator, gathered from the 128 threads into a 64 x N tile (column-major: m + 64 n).
    let mut tile = vec![0f32; m * n];
    let regs = n / 2;
    for (t, thread) in group.iter_mut().enumerate() {
        for v in 0..regs {
            let p = Ptr { mem: acc_ptr.mem, off: acc_ptr.off + 4 * v as i64 };
            let b = bytes_mut(world, thread, p, 4, Access::Read, loc)?;
            let idx = acc_layout.get(t + 128 * v).copied().unwrap_or(0) as usize;
            if let Some(slot) = tile.get_mut(idx) {
                *slot = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            }
        }
    }
    // The shared-memory bytes the group reads, in flight until a wait retires it (`race.rs`).
    let mut reads: Vec<(i64, i64)> = Vec::new();
    let mut smem_cta = None;
    for step in steps {
        let scale_d = group[0].bits(world, step.scale_d, loc)? & 1 == 1;
        let b_ptr = uniform_ptr(world, group, step.b, loc)?;
        let bd = descriptor(&b_desc, b_ptr);
        smem_cta = Some(group[0].shared_cta(world, b_ptr.mem, loc)?);
        let mut b = vec![0f64; n * k];
        for nn in 0..n {
            for kk in 0..k {
                b[nn * k + kk] = smem_element(
                    world,
                    &mut group[0],
                    &bd,
                    major(b_desc.mn_major),
                    shape.input_b,
                    b_ptr.mem,
                    nn as i64,
                    kk as i64,
                    loc,
                    &mut reads,
                )?;
            }
        }
        let mut a = vec![0f64; m * k];
        match (a_desc, &a_layout) {
            (Some(ad), _) => {
                let a_ptr = uniform_ptr(world, group, step.a, loc)?;
                let d = descriptor(&ad, a_ptr);
                for mm in 0..m {
                    for kk in 0..k {
                        a[mm * k + kk] = smem_element(
                            world,
                            &mut group[0],
                            &d,
                            major(ad.mn_major),
                            shape.input,
                            a_ptr.mem,
                            mm as i64,
                            kk as i64,
                            loc,
                            &mut reads,
                        )?;
                    }
                }
            }
            (None, Some(layout)) => {
                // Each thread's 8 values of the k16 step, from its register array.
                let eb = shape.input.size_bytes() as usize;
                for (t, thread) in group.iter_mut().enumerate() {
                    let p = thread.ptr(world, step.a, loc)?;
                    let bytes = bytes_mut(world, thread, p, (8 * eb) as u64, Access::Read, loc)?.to_vec();
                    for v in 0..8 {
                        let bits =
                            bytes[v * eb..(v + 1) * eb].iter().rev().fold(0u64, |acc, &x| (acc << 8) | u64::from(x));
                        let idx = layout.get(t + 128 * v).copied().unwrap_or(0) as usize;
                        let (mm, kk) = (idx % 64, idx / 64);
                        if mm < m && kk < k {
                            a[mm * k + kk] = numeric::to_f64(shape.input, bits);
                        }
                    }
                }
            }
            (None, None) => return Err(InterpError::Internal { loc, message: "wgmma A layout".into() }),
        }
        // Each dot product exact in f64 (products of 8- and 16-bit floats are exact), added with one rounding.
        for nn in 0..n {
            for mm in 0..m {
                let dot: f64 = (0..k).map(|kk| a[mm * k + kk] * b[nn * k + kk]).sum();
                let slot = &mut tile[mm + 64 * nn];
                let base = if scale_d { f64::from(*slot) } else { 0.0 };
                *slot = (base + dot) as f32;
            }
        }
    }
    // The registers the group uses until it is retired: each thread's accumulator and, for RS, its A.
    for thread in group.iter_mut() {
        if let Mem::Local(alloc) = acc_ptr.mem {
            let end = acc_ptr.off + 4 * regs as i64;
            thread.regs_open.push(crate::thread::RegisterUse { alloc, start: acc_ptr.off, end, loc });
        }
        if a_desc.is_none() {
            for step in steps {
                if let Ok(p) = thread.ptr(world, step.a, loc)
                    && let Mem::Local(alloc) = p.mem
                {
                    let end = p.off + 8 * i64::from(shape.input.size_bytes());
                    thread.regs_open.push(crate::thread::RegisterUse { alloc, start: p.off, end, loc });
                }
            }
        }
    }
    if let Some(cta) = smem_cta {
        let who = group[0].thread_ref(world);
        if let Some(r) = world.races.as_mut() {
            let issuer = &group[0];
            let who = crate::race::Who { slot: issuer.slot, vc: &issuer.vc, fenced: &issuer.fenced, thread: who };
            r.async_read(cta, &reads, &who, loc)?;
            let id = r.start_inflight(crate::race::InFlight { cta, ranges: reads, loc });
            for t in group.iter_mut() {
                t.wgmma_open.push(id);
            }
        }
    }
    for (t, thread) in group.iter_mut().enumerate() {
        for v in 0..regs {
            let idx = acc_layout.get(t + 128 * v).copied().unwrap_or(0) as usize;
            let value = tile.get(idx).copied().unwrap_or(0.0);
            let p = Ptr { mem: acc_ptr.mem, off: acc_ptr.off + 4 * v as i64 };
            bytes_mut(world, thread, p, 4, Access::Write, loc)?.copy_from_slice(&value.to_le_bytes());
        }
    }
    Ok(())
}

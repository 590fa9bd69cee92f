//! Warp and warpgroup collectives: executed once every lane of the warp (warpgroup for wgmma) that has not
//! exited waits at the same operation, over all their values at once, with the hardware's lane semantics.

use crate::error::{Access, InterpError};
use crate::machine::World;
use crate::memory::{bytes_mut, encode};
use crate::thread::{Blocked, State, Thread};
use crate::value::Val;
use cutec_ir::{Handle, Loc, Op, ShuffleMode};

/// Executes every collective whose lanes have all arrived; whether any did.
pub(crate) fn release_collectives<'k>(
    world: &mut World<'k>,
    threads: &mut [Thread<'k>],
    per_cta: usize,
) -> Result<bool, InterpError> {
    let mut progressed = false;
    for cta_threads in threads.chunks_mut(per_cta) {
        for wg in (0..cta_threads.len()).step_by(128) {
            let wg_end = (wg + 128).min(cta_threads.len());
            // wgmma runs over the warpgroup, the other collectives over the warp.
            if let Some((op @ Op::Wgmma { .. }, loc)) = ready(&cta_threads[wg..wg_end]) {
                progressed |= run_group(world, &mut cta_threads[wg..wg_end], op, loc)?;
                continue;
            }
            for w in (wg..wg_end).step_by(32) {
                let w_end = (w + 32).min(wg_end);
                if let Some((op, loc)) = ready(&cta_threads[w..w_end])
                    && !matches!(op, Op::Wgmma { .. })
                {
                    progressed |= run_group(world, &mut cta_threads[w..w_end], op, loc)?;
                }
            }
        }
    }
    Ok(progressed)
}

/// The operation every live lane of `group` waits at, if they all wait at the same one.
fn ready<'k>(group: &[Thread<'k>]) -> Option<(&'k Op, Loc)> {
    let mut found: Option<(&'k Op, Loc)> = None;
    for t in group {
        match &t.state {
            State::Done => {}
            State::Blocked(b) => match b.what {
                Blocked::Collective { op, .. } => match found {
                    None => found = Some((op, b.loc)),
                    Some((f, _)) if std::ptr::eq(f, op) => {}
                    Some(_) => return None,
                },
                _ => return None,
            },
            State::Ready => return None,
        }
    }
    found
}

fn run_group<'k>(world: &mut World<'k>, group: &mut [Thread<'k>], op: &'k Op, loc: Loc) -> Result<bool, InterpError> {
    execute(world, group, op, loc)?;
    for t in group.iter_mut().filter(|t| t.state != State::Done) {
        t.state = State::Ready;
    }
    Ok(true)
}

fn result_of(t: &Thread<'_>) -> Option<Handle<cutec_ir::Expr>> {
    match &t.state {
        State::Blocked(b) => match b.what {
            Blocked::Collective { result, .. } => result,
            _ => None,
        },
        _ => None,
    }
}

fn execute<'k>(world: &mut World<'k>, group: &mut [Thread<'k>], op: &'k Op, loc: Loc) -> Result<(), InterpError> {
    let live: Vec<usize> = (0..group.len()).filter(|&i| group[i].state != State::Done).collect();
    match *op {
        Op::Shuffle { mode, value, lane } => {
            let mut inputs = vec![None; 32];
            let mut wants = vec![0i64; 32];
            for &i in &live {
                let l = group[i].lane() as usize;
                inputs[l] = Some(group[i].value(world, value, loc)?);
                wants[l] = group[i].int(world, lane, loc)?;
            }
            for &i in &live {
                let l = group[i].lane() as i64;
                let b = wants[l as usize];
                // PTX `shfl.sync`: an out-of-range source gives the lane its own value.
                let j = match mode {
                    ShuffleMode::Up => l - b,
                    ShuffleMode::Down => l + b,
                    ShuffleMode::Bfly => l ^ b,
                    ShuffleMode::Idx => b & 31,
                };
                let src = if (0..32).contains(&j) { j as usize } else { l as usize };
                let Some(v) = inputs[src].clone() else {
                    let message = format!("shfl.sync reads lane {src}, which has exited");
                    return Err(InterpError::Collective { loc, thread: group[i].thread_ref(world), message });
                };
                if let Some(r) = result_of(&group[i]) {
                    group[i].vals[r.index()] = v;
                }
            }
        }
        Op::ElectOne => {
            // The lowest live lane, as the IR documents `elect.sync` (PTX leaves the choice unspecified).
            for (n, &i) in live.iter().enumerate() {
                if let Some(r) = result_of(&group[i]) {
                    group[i].vals[r.index()] = Val::bool(n == 0);
                }
            }
        }
        Op::Stmatrix { ptr, ref values } => stmatrix(world, group, &live, ptr, values, loc)?,
        Op::Wgmma { .. } => crate::wgmma::execute(world, group, op, loc)?,
        _ => return Err(InterpError::Internal { loc, message: format!("{} is not a collective", op.name()) }),
    }
    Ok(())
}

/// `stmatrix.m8n8.x{1,2,4}.b16`: lane `8 i + r` gives the address of row `r` of matrix `i`; lane `l` holds, in
/// `values[i]`, row `l / 4`, columns `2 (l % 4)` and `+1` of matrix `i`.
fn stmatrix<'k>(
    world: &mut World<'k>,
    group: &mut [Thread<'k>],
    live: &[usize],
    ptr: Handle<cutec_ir::Expr>,
    values: &[Handle<cutec_ir::Expr>],
    loc: Loc,
) -> Result<(), InterpError> {
    if live.len() != 32 {
        let message = format!("stmatrix with {} live lanes; every lane of the warp executes it", live.len());
        return Err(InterpError::Collective { loc, thread: group[live[0]].thread_ref(world), message });
    }
    let mut rows = vec![None; 32];
    for &i in live {
        rows[group[i].lane() as usize] = Some(group[i].ptr(world, ptr, loc)?);
    }
    for &i in live {
        let l = group[i].lane() as usize;
        for (m, &v) in values.iter().enumerate() {
            let ty = world.info.ty(v);
            let val = group[i].value(world, v, loc)?;
            let mut bytes = [0u8; 4];
            if ty.size_bytes() != 4 {
                return Err(InterpError::Internal { loc, message: format!("a stmatrix value of type {ty}") });
            }
            encode(ty, &val, &mut bytes);
            let Some(row) = rows.get(8 * m + l / 4).copied().flatten() else {
                return Err(InterpError::Internal { loc, message: "stmatrix row".into() });
            };
            let mut p = row;
            p.off += (2 * (l % 4) * 2) as i64;
            let out = bytes_mut(world, &mut group[i], p, 4, Access::Write, loc)?;
            out.copy_from_slice(&bytes);
            crate::memory::check_generic(world, &mut group[i], p, 4, true, loc)?;
        }
    }
    Ok(())
}

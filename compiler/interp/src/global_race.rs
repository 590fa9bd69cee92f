//! Races on global memory between blocks that nothing can order: blocks of different clusters share no
//! barrier (the IR has no atomics), so a byte one of them writes and another reads or writes is a race,
//! whatever order the hardware runs them in. Each byte of a tensor argument keeps its last write and last read
//! as (cluster, statement); blocks of one cluster may order their accesses through the cluster barrier and are
//! not compared. Tensors over [`MAX_CHECKED_BYTES`] are not checked (the shadow takes 16 bytes per byte).

use cutec_ir::Loc;
use std::collections::HashMap;

/// The largest tensor argument whose bytes are checked.
pub const MAX_CHECKED_BYTES: usize = 64 << 20;

#[derive(Clone, Copy, Default)]
struct Last {
    /// The cluster (its index in the run, plus one; 0 for none) and the interned statement.
    write: (u32, u32),
    read: (u32, u32),
}

#[derive(Default)]
pub(crate) struct GlobalRaces {
    shadows: HashMap<u32, Vec<Last>>,
    locs: Vec<Loc>,
    loc_ids: HashMap<Loc, u32>,
}

impl GlobalRaces {
    fn intern(&mut self, loc: Loc) -> u32 {
        let next = self.locs.len() as u32;
        *self.loc_ids.entry(loc).or_insert_with(|| {
            self.locs.push(loc);
            next
        })
    }

    /// An access of `len` bytes at `offset` of parameter `param`'s buffer (`size` bytes) by a block of cluster
    /// `cluster`: the earlier access it races with and the byte, if it races.
    #[allow(clippy::too_many_arguments)]
    pub fn access(
        &mut self,
        param: u32,
        size: usize,
        offset: i64,
        len: u64,
        write: bool,
        cluster: u32,
        loc: Loc,
    ) -> Option<(Loc, i64)> {
        if size > MAX_CHECKED_BYTES {
            return None;
        }
        let id = self.intern(loc);
        let me = cluster + 1;
        let shadow = self.shadows.entry(param).or_insert_with(|| vec![Last::default(); size]);
        let start = offset.max(0) as usize;
        let end = (start + len as usize).min(shadow.len());
        let mut conflict = None;
        for (i, last) in shadow[start.min(end)..end].iter_mut().enumerate() {
            let earlier = if last.write.0 != 0 && last.write.0 != me {
                Some(last.write.1)
            } else if write && last.read.0 != 0 && last.read.0 != me {
                Some(last.read.1)
            } else {
                None
            };
            if let Some(e) = earlier {
                conflict = Some((e, start + i));
                break;
            }
            if write {
                last.write = (me, id);
            } else {
                last.read = (me, id);
            }
        }
        conflict.map(|(earlier, byte)| (self.locs.get(earlier as usize).copied().unwrap_or(Loc::NONE), byte as i64))
    }
}

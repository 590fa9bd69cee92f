//! mbarriers that cannot complete (E0315). The lowering records, for each shared `u64` tensor used as mbarriers
//! (identified by its allocation), the first `mbarrier_init`, the first `mbarrier_wait`, and whether anything
//! arrives on it (`mbarrier_arrive`, `mbarrier_arrive_expect_tx`, the bytes of a `tma_load(.., bar = it)`). The
//! indices into the tensor are run-time values, so the check is per tensor, not per element: a tensor whose
//! barriers nobody waits on, or on which some thread waits while nothing ever arrives, is an error.

use super::Lower;
use crate::error::{Located, LowerError};
use cutec_diagnostics::{FileId, Span};
use cutec_ir::{Expr, Handle};

/// What is done with an mbarrier operand.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum BarrierUse {
    Init,
    Arrive,
    Wait,
}

/// One mbarrier tensor's uses in the kernel.
#[derive(Clone, Debug)]
struct Uses {
    /// The tensor's base pointer (an allocation's address).
    base: Handle<Expr>,
    init: Option<(FileId, Span)>,
    wait: Option<(FileId, Span)>,
    arrives: bool,
}

/// The mbarrier tensors of a kernel, in order of first use.
#[derive(Clone, Debug, Default)]
pub(crate) struct MbarrierUses(Vec<Uses>);

impl Lower<'_> {
    /// Records that the call at `span` uses an element of the mbarrier tensor whose base is `base`.
    pub(super) fn note_mbarrier(&mut self, base: Handle<Expr>, used: BarrierUse, span: Span) {
        let at = Some((self.file(), span));
        let list = &mut self.mbarriers.0;
        let i = match list.iter().position(|u| u.base == base) {
            Some(i) => i,
            None => {
                list.push(Uses { base, init: None, wait: None, arrives: false });
                list.len() - 1
            }
        };
        let u = &mut list[i];
        match used {
            BarrierUse::Init => u.init = u.init.or(at),
            BarrierUse::Wait => u.wait = u.wait.or(at),
            BarrierUse::Arrive => u.arrives = true,
        }
    }

    /// E0315 for each mbarrier tensor that is initialised but never waited on, or waited on but never arrived on.
    /// Only for a kernel whose body lowered without error (otherwise some uses were not seen).
    pub(super) fn check_mbarriers(&mut self) {
        if !self.errors.is_empty() {
            return;
        }
        let list = std::mem::take(&mut self.mbarriers.0);
        for u in &list {
            let name = self.alloc_name(u.base);
            let error = match (u.init, u.wait, u.arrives) {
                (Some((file, span)), None, _) => {
                    Located { file, span, error: LowerError::MbarrierNeverWaited { name } }
                }
                (_, Some((file, span)), false) => {
                    Located { file, span, error: LowerError::MbarrierNeverArrives { name } }
                }
                _ => continue,
            };
            self.errors.push(error);
        }
    }

    /// The name of the shared allocation `base` points at (its `let`), for messages.
    fn alloc_name(&self, base: Handle<Expr>) -> String {
        let k = self.b.kernel();
        match k.exprs.get(base) {
            Some(Expr::AllocPtr(a)) => k.allocs.get(*a).map_or_else(|| "the mbarriers".into(), |a| a.name.clone()),
            _ => "the mbarriers".into(),
        }
    }
}

//! `check-protocol`: runs each kernel's mbarrier protocol ([`crate::analysis::protocol`]) for small trip
//! counts, every thread of every CTA of a cluster, and refuses the first wait that never returns, wrong parity,
//! byte count that does not match `expect_tx`, or CTA that exits while its cluster may still write into it
//! (E0340..E0344), with the trace that shows it. A kernel whose protocol it cannot follow (control that depends
//! on a loaded value, threads it cannot model, its budget) does not build (E0345), unless the kernel is marked
//! `unchecked_protocol`: then it builds with E0345 as a warning. It changes nothing.

use super::{Analyses, Pass, PassError, PassErrorKind, Preserved};
use crate::analysis::protocol::{self, Kind, Outcome, ProtocolError};
use crate::arena::Loc;
use crate::codes;
use crate::module::Module;
use cutec_diagnostics::Diagnostic;

pub struct CheckProtocol;

impl Pass for CheckProtocol {
    fn name(&self) -> &'static str {
        "check-protocol"
    }
    fn description(&self) -> &'static str {
        "run the mbarrier protocol for small trip counts and refuse waits that never return, wrong parities, \
         byte counts and early exits (changes nothing)"
    }
    fn run(&self, module: &mut Module, analyses: &mut Analyses) -> Result<(), PassError> {
        let module = &*module;
        let info = super::module_info(self, module, analyses)?;
        let mut unchecked = Vec::new();
        for (kernel, kinfo) in module.kernels.iter().zip(&info.kernels) {
            match protocol::analyse(kernel, kinfo) {
                Outcome::Failed(e) => {
                    return Err(PassError::at(self.name(), kernel, e.at, PassErrorKind::Protocol(e)));
                }
                // A protocol the check cannot follow does not build, unless the program says it accepts that.
                Outcome::Skipped(why) if !kernel.unchecked_protocol => {
                    let kind = PassErrorKind::Unchecked { why: why.to_string() };
                    return Err(PassError::at(self.name(), kernel, kernel.loc, kind));
                }
                Outcome::Skipped(why) => unchecked.push(unchecked_warning(&kernel.name, kernel.loc, why)),
                Outcome::Passed { .. } | Outcome::NotApplicable => {}
            }
        }
        for w in unchecked {
            analyses.warn(w);
        }
        Ok(())
    }
    fn preserves(&self) -> Preserved {
        Preserved::ALL
    }
}

/// E0345 as an error: the kernel uses mbarriers, but the check could not follow it (`why`).
pub fn unchecked_error(kernel: &str, at: Loc, why: &str) -> Diagnostic {
    Diagnostic::error(
        codes::PROTOCOL_UNCHECKED,
        format!("the compiler cannot check the mbarrier protocol of kernel `{kernel}`"),
        at.file,
        at.span,
    )
    .with_primary_message(format!("the check stopped: {why}"))
    .with_note("a wrong init count, parity or byte count would only show as a hang, or as wrong results")
    .with_help(
        "compute loop bounds, conditions and barrier indices from dimensions, constants and thread indices; or \
         mark the kernel `unchecked_protocol` to build it without the proof",
    )
}

/// E0345 as a warning, for a kernel marked `unchecked_protocol`: accepted without a proof.
fn unchecked_warning(kernel: &str, at: Loc, why: &str) -> Diagnostic {
    Diagnostic::warning(
        codes::PROTOCOL_UNCHECKED,
        format!("the mbarrier protocol of kernel `{kernel}` is not checked"),
        at.file,
        at.span,
    )
    .with_primary_message(format!("the check stopped: {why}"))
    .with_note(
        "the kernel is marked `unchecked_protocol`: it is compiled, but a wrong init count, parity or byte \
                count would only show as a hang",
    )
}

/// The code of a protocol error.
pub fn code(e: &ProtocolError) -> &'static str {
    match e.kind {
        Kind::Deadlock => codes::PROTOCOL_DEADLOCK,
        Kind::Parity => codes::PROTOCOL_PARITY,
        Kind::Bytes => codes::PROTOCOL_BYTES,
        Kind::Exit => codes::PROTOCOL_EXIT,
        Kind::Misuse => codes::PROTOCOL_MISUSE,
    }
}

/// The one-line summary of a protocol error, for its message.
pub fn headline(kind: Kind) -> &'static str {
    match kind {
        Kind::Deadlock => "this mbarrier wait never returns",
        Kind::Parity => "this mbarrier wait's parity names the wrong phase",
        Kind::Bytes => "the bytes of an mbarrier phase do not match its `expect_tx`",
        Kind::Exit => "a CTA exits while its cluster may still write into it",
        Kind::Misuse => "an mbarrier is used outside its protocol",
    }
}

pub fn to_diagnostic(e: &ProtocolError) -> Diagnostic {
    let mut d =
        Diagnostic::error(code(e), headline(e.kind), e.at.file, e.at.span).with_primary_message(e.message.clone());
    for line in &e.trace {
        d = d.with_note(line.clone());
    }
    let help = match e.kind {
        Kind::Deadlock => "count the threads that arrive on the barrier per phase: the init count must equal them",
        Kind::Parity => {
            "in a ring of S stages, iteration i waits on stage i % S with parity (i / S) & 1 (the producer's wait on a free stage with the opposite parity)"
        }
        Kind::Bytes => {
            "expect exactly the bytes of the boxes that land in this CTA per phase, those multicast by the cluster's other CTAs included"
        }
        Kind::Exit => {
            "wait for every load into the CTA before it exits, and end with `cluster_sync()` when CTAs write into each other"
        }
        Kind::Misuse => {
            "initialise the barrier, then `sync_threads()` (or `cluster_sync()`), before anyone arrives on it"
        }
    };
    d.with_help(help)
}

//! The pass pipeline: small named passes over a [`Module`], listed in one place ([`pipeline`]).
//!
//! Every pass takes a valid module and leaves a valid module, or fails with a [`PassError`] (a diagnostic with a
//! code and the location of what it cannot do). Passes receive the [`Analyses`] of the module (the validator's
//! [`ModuleInfo`], the dependency graphs of loops, each kernel's uniformity and ranges), computed on demand and
//! kept until a pass that does not declare them [`Preserved`] runs: the checks at the end of the pipeline share
//! one computation of each. [`run_pipeline`] validates before the first pass and after the last (and after every pass with
//! [`PipelineOptions::verify_each`]), calls a hook after each pass (`--dump-after PASS`), and returns the final
//! validator analysis that back ends consume.

mod analyses;
mod collectives;
pub mod compact;
mod cse;
mod dce;
mod fold;
mod forward;
mod fragment_bounds;
pub mod hazards;
pub mod operands;
pub mod protocol;
pub mod schedule;
pub mod sync;
mod unroll;

/// The statement budget of a kernel (see the `unroll` pass), which the lowering also charges before it expands.
pub use unroll::MAX_STMTS;

pub use analyses::{Analyses, Computed, LoopRef, Preserved};

use crate::analysis::uniformity::{Cause, Divergence, Scope, Why};
use crate::arena::Loc;
use crate::codes;
use crate::module::Module;
use crate::valid::{KernelError, ModuleInfo};
use cutec_diagnostics::Diagnostic;

/// A transformation of the IR.
pub trait Pass: Sync {
    /// The name `--dump-after` and `--print-passes` use: lowercase words joined by `-`.
    fn name(&self) -> &'static str;
    /// One line: what the pass does.
    fn description(&self) -> &'static str;
    /// Transforms `module`; `analyses` describe it as it is on entry.
    fn run(&self, module: &mut Module, analyses: &mut Analyses) -> Result<(), PassError>;
    /// The analyses the pass keeps true ([`Preserved::ALL`] for a pass that changes nothing); the others are
    /// computed again when the next pass asks.
    fn preserves(&self) -> Preserved {
        Preserved::NONE
    }
}

/// Why a pass cannot transform a module.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum PassErrorKind {
    /// The program asks for a transformation no pass implements yet (`pipelined`, `warp_specialized`).
    #[error("{what} is not implemented yet")]
    NotImplemented { what: String, note: String },
    /// Unrolling the loop would make `copies * body` statements, more than the budget (`unroll::MAX_STMTS`).
    #[error("unrolling this loop makes {} statements, more than the limit of {}", copies.saturating_mul(*body), unroll::MAX_STMTS)]
    UnrollTooLarge { copies: u64, body: u64 },
    /// The kernel has `stmts` statements after unrolling, more than the budget (`unroll::MAX_STMTS`).
    #[error("the kernel has {stmts} statements after unrolling, more than the limit of {}", unroll::MAX_STMTS)]
    KernelTooLarge { stmts: u64 },
    /// A collective instruction that some threads of its group may not execute (the `check-collectives` pass).
    #[error("`{}` needs whole {}s", .0.what, .0.needs.group())]
    Divergent(Box<Divergence>),
    /// An access outside a register array.
    #[error("an access to elements {}..={} of the register tensor `{}` of {} elements", .0.first, .0.last, .0.array, .0.len)]
    FragmentIndex(Box<FragmentAccess>),
    /// An operand of a Hopper instruction outside the range the hardware defines (the `check-operands` pass).
    #[error("{}", .0.message())]
    Operand(Box<operands::OperandError>),
    /// Roles that leave warpgroups out, or an mbarrier never waited on or arrived on (the `check-sync` pass).
    #[error("{}", .0.message())]
    Sync(Box<sync::SyncError>),
    /// A protocol error: a wait that never returns, a wrong parity, bytes, an early exit (`check-protocol`).
    #[error("{}", protocol::headline(.0.kind))]
    Protocol(Box<crate::analysis::protocol::ProtocolError>),
    /// A schedule the scheduling passes cannot write for this program (`pipelined`, `warp_specialized`, a
    /// `tma_load` without its barrier): `problem` says what stands in the way, `help` what to do.
    #[error("{}", .0.problem())]
    Schedule(Box<ScheduleError>),
    /// `check-protocol` cannot follow the kernel (`why`), which is not marked `unchecked_protocol` (E0345).
    #[error("the mbarrier protocol cannot be checked: {why}")]
    Unchecked { why: String },
    /// A hazard of the schedule's entities: a ring's stage refilled while a group reads it, a generic write into
    /// a ring's tile (`check-schedule`, E0346, E0347).
    #[error("{}", .0.message())]
    Hazard(Box<hazards::HazardError>),
    /// An analysis the pass needs failed: the module is invalid (a compiler bug).
    #[error(transparent)]
    Invalid(Box<KernelError>),
}

/// What stands in the way of a schedule (E0324), as data ([`schedule::Refusal`]).
pub use schedule::Refusal as ScheduleError;

/// An access to elements `first..=last` of the register array `array` of `len` elements.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FragmentAccess {
    pub array: String,
    pub first: i128,
    pub last: i128,
    pub len: i128,
    /// Whether the index is known (a constant); otherwise `first..=last` is the range the analysis found.
    pub known: bool,
}

/// A [`PassErrorKind`] in a kernel, at a location, from a pass.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("pass `{pass}` on kernel `{kernel}`: {kind}")]
pub struct PassError {
    pub pass: &'static str,
    pub kernel: String,
    pub loc: Loc,
    pub kind: PassErrorKind,
}

impl PassError {
    /// `pass`'s error of `kind` in `kernel`, at `loc`.
    pub fn at(pass: &'static str, kernel: &crate::Kernel, loc: Loc, kind: PassErrorKind) -> PassError {
        PassError { pass, kernel: kernel.name.clone(), loc, kind }
    }

    /// The diagnostic code: `E0306` for what is not implemented yet, `E0399` for invalid IR.
    pub fn code(&self) -> &'static str {
        match self.kind {
            PassErrorKind::NotImplemented { .. } => codes::NOT_IMPLEMENTED,
            PassErrorKind::UnrollTooLarge { .. } => codes::UNROLL_TOO_LARGE,
            PassErrorKind::KernelTooLarge { .. } => codes::KERNEL_TOO_LARGE,
            PassErrorKind::Divergent(_) => codes::WARPGROUP_DIVERGENT,
            PassErrorKind::FragmentIndex(_) => codes::FRAGMENT_INDEX,
            PassErrorKind::Operand(ref e) => e.code(),
            PassErrorKind::Sync(ref e) => e.code(),
            PassErrorKind::Protocol(ref e) => protocol::code(e),
            PassErrorKind::Schedule(_) => codes::SCHEDULE,
            PassErrorKind::Hazard(ref e) => e.code(),
            PassErrorKind::Unchecked { .. } => codes::PROTOCOL_UNCHECKED,
            PassErrorKind::Invalid(_) => codes::INTERNAL,
        }
    }

    pub fn to_diagnostic(&self) -> Diagnostic {
        match &self.kind {
            PassErrorKind::NotImplemented { what, note } => {
                Diagnostic::error(self.code(), format!("{what} is not implemented yet"), self.loc.file, self.loc.span)
                    .with_primary_message(format!("the `{}` pass does not implement this yet", self.pass))
                    .with_note(note.clone())
            }
            PassErrorKind::UnrollTooLarge { copies, body } => {
                Diagnostic::error(self.code(), self.kind.to_string(), self.loc.file, self.loc.span)
                    .with_primary_message(format!("{copies} copies of a body of {body} statements"))
                    .with_help("unroll fewer iterations (`unroll(4)`), or drop `unroll`")
            }
            PassErrorKind::KernelTooLarge { .. } => {
                Diagnostic::error(self.code(), self.kind.to_string(), self.loc.file, self.loc.span)
                    .with_primary_message(format!("kernel `{}`", self.kernel))
                    .with_note("statements of inlined device functions and of unrolled loops count")
                    .with_help("put repeated work in a loop, or split the kernel")
            }
            PassErrorKind::Divergent(d) => divergence_diagnostic(d),
            PassErrorKind::FragmentIndex(access) => {
                let FragmentAccess { array, first, last, len, known } = &**access;
                let (which, is) = if first == last {
                    (format!("element {first}"), "is")
                } else {
                    (format!("elements {first}..={last}"), "are")
                };
                let err = |message: String| Diagnostic::error(self.code(), message, self.loc.file, self.loc.span);
                if *known {
                    err(format!("{which} of the register tensor `{array}` {is} outside its {len} elements"))
                        .with_primary_message(format!("`{array}` has elements 0..{len}"))
                        .with_note("the index is known once the loops around it are unrolled")
                } else {
                    err(format!("an index into the register tensor `{array}` may be outside its {len} elements"))
                        .with_primary_message(format!("this may reach {which}; `{array}` has elements 0..{len}"))
                        .with_note(
                            "the index is known only at run time, and the compiler could not prove it inside the \
                             tensor from the loop bounds, thread indices and constants it is computed from",
                        )
                        .with_help("index with a loop variable over `0..size(t)`, or bound the index with `min`")
                }
            }
            PassErrorKind::Operand(e) => e.to_diagnostic(),
            PassErrorKind::Sync(e) => e.to_diagnostic(),
            PassErrorKind::Protocol(e) => protocol::to_diagnostic(e),
            PassErrorKind::Schedule(e) => Diagnostic::error(self.code(), e.problem(), self.loc.file, self.loc.span)
                .with_primary_message(e.label())
                .with_note(format!("from the `{}` pass", self.pass))
                .with_help(e.help()),
            PassErrorKind::Hazard(e) => e.to_diagnostic(),
            PassErrorKind::Unchecked { why } => protocol::unchecked_error(&self.kernel, self.loc, why),
            PassErrorKind::Invalid(e) => e.to_diagnostic(),
        }
    }
}

/// E0312: a collective some threads of its group may not execute, and why.
fn divergence_diagnostic(d: &Divergence) -> Diagnostic {
    let (what, group, n) = (d.what, d.needs.group(), d.needs.threads());
    let err = |message: String| Diagnostic::error(codes::WARPGROUP_DIVERGENT, message, d.loc.file, d.loc.span);
    let all = match d.needs {
        Scope::Cta => "every thread of the CTA".to_string(),
        _ => format!("all {n} threads of the {group}"),
    };
    match d.why {
        Why::UnknownBlock => err(format!("`{what}` needs {all}, but the block size is not known at compile time"))
            .with_help("write the block size with constants and const generics: `block = (128)`"),
        Why::Block([x, y, z]) => {
            let along = if d.needs == Scope::Warpgroup { " along `x`" } else { "" };
            err(format!("`{what}` needs whole {group}s{along}, but the block is ({x}, {y}, {z}) threads")).with_help(
                match d.needs {
                    Scope::Warpgroup => "make the block one-dimensional and a multiple of 128 threads: `block = (128)`",
                    _ => "make the block a multiple of 32 threads",
                },
            )
        }
        Why::Control(cause) => {
            let label = match cause {
                Cause::Condition(_) => format!("this condition may differ between the threads of a {group}"),
                Cause::LoopBounds(_) => format!("these bounds may differ between the threads of a {group}"),
                Cause::Return(_) => format!("some threads of the {group} may have left the kernel here"),
                Cause::Exit(_) => format!("some threads of the {group} may skip the rest of the loop's body here"),
                Cause::Value(_) => format!("this value may differ between the threads of a {group}"),
                Cause::Write(_) => format!("this variable is written by some threads of a {group} only"),
            };
            let at = cause.loc();
            err(format!("`{what}` needs {all}, but some of them may not be here"))
                .with_label(at.file, at.span, label)
                .with_help(match d.needs {
                    Scope::Warpgroup => {
                        "make what leaves threads out depend on `thread_idx.x / 128` (the warpgroup), not on a thread \
                         or a lane"
                    }
                    Scope::Warp => {
                        "make what leaves threads out depend on `thread_idx.x / 32` (the warp), not on a thread or a \
                         lane"
                    }
                    Scope::Cta | Scope::Thread => {
                        "execute it in every thread of the CTA, outside conditions on threads"
                    }
                })
        }
    }
}

/// Why the pipeline stopped.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum PipelineError {
    /// The module is invalid before the first pass or after one (a compiler bug).
    #[error(transparent)]
    Invalid(#[from] KernelError),
    #[error(transparent)]
    Pass(#[from] PassError),
}

impl PipelineError {
    pub fn to_diagnostic(&self) -> Diagnostic {
        match self {
            PipelineError::Invalid(e) => e.to_diagnostic(),
            PipelineError::Pass(e) => e.to_diagnostic(),
        }
    }
}

/// The validator's analysis of `module`, for a checking pass that reads expression types: a module the
/// validator refuses is the pass's [`PassErrorKind::Invalid`] (a compiler bug, E0399).
pub(crate) fn module_info<'a>(
    pass: &dyn Pass,
    module: &Module,
    analyses: &'a mut Analyses,
) -> Result<&'a ModuleInfo, PassError> {
    analyses.info(module).map_err(|e| PassError {
        pass: pass.name(),
        kernel: e.kernel.clone(),
        loc: e.loc,
        kind: PassErrorKind::Invalid(Box::new(e)),
    })
}

/// The ranges of kernel `k`'s integers, from `analyses` (kept for the next pass that asks), for a checking pass:
/// a module the validator refuses is the pass's [`PassErrorKind::Invalid`] (a compiler bug, E0399).
pub(crate) fn kernel_ranges<'a>(
    pass: &dyn Pass,
    module: &'a Module,
    analyses: &'a mut Analyses,
    k: usize,
) -> Result<Option<crate::analysis::range::Ranges<'a>>, PassError> {
    analyses.ranges(module, k).map_err(|e| PassError {
        pass: pass.name(),
        kernel: e.kernel.clone(),
        loc: e.loc,
        kind: PassErrorKind::Invalid(Box::new(e)),
    })
}

/// The passes, in the order they run.
pub fn pipeline() -> Vec<&'static dyn Pass> {
    vec![
        &unroll::Unroll,
        &forward::ForwardVars,
        &fold::FoldConstants,
        &cse::CommonSubexpressions,
        &dce::DeadCode,
        &schedule::PipelineLoops,
        &schedule::CompleteWgmma,
        &schedule::CompleteCopies,
        &schedule::SpecializeWarps,
        &fold::FoldConstants,
        &dce::DeadCode,
        &compact::Compact,
        &collectives::CheckCollectives,
        &operands::CheckOperands,
        &sync::CheckSync,
        &hazards::CheckSchedule,
        &protocol::CheckProtocol,
        &fragment_bounds::CheckFragmentBounds,
    ]
}

/// The pipeline in two parts: the passes up to the last one that changes the module, and the checking passes
/// after it, which change nothing. The driver runs the checks on a copy of the module beside code generation
/// (they only refuse: their verdict is waited for before any output is written).
pub fn pipeline_parts() -> (Vec<&'static dyn Pass>, Vec<&'static dyn Pass>) {
    let mut passes = pipeline();
    let checks_from = passes.iter().rposition(|p| p.preserves() != Preserved::ALL).map_or(0, |i| i + 1);
    let checks = passes.split_off(checks_from);
    (passes, checks)
}

/// Finds a pass of the pipeline by name.
pub fn find_pass(name: &str) -> Option<&'static dyn Pass> {
    pipeline().into_iter().find(|p| p.name() == name)
}

/// `--print-passes`: one line per pass, `name: description`.
pub fn describe_pipeline() -> String {
    pipeline().iter().map(|p| format!("{}: {}\n", p.name(), p.description())).collect()
}

/// What `--dump-after` hooks into: called with a pass's name and the module it left.
pub type AfterPass<'a> = &'a mut dyn FnMut(&str, &Module);

#[derive(Default)]
pub struct PipelineOptions<'a> {
    /// Validate after every pass, not only at both ends (catches a broken pass where it breaks).
    pub verify_each: bool,
    /// Called after each pass with its name and the module (`--dump-after`).
    pub after_pass: Option<AfterPass<'a>>,
    /// Receives the wall time of each pass in the order they run, the validation before the first as
    /// `validate` (`--timings`). A pass's time includes the analyses it asks for.
    pub timings: Option<&'a mut Vec<(&'static str, std::time::Duration)>>,
}

/// Runs the pipeline over `module`; gives the validator's analysis of the result.
pub fn run_pipeline(module: &mut Module, options: PipelineOptions<'_>) -> Result<ModuleInfo, PipelineError> {
    run_passes(module, &pipeline(), options)
}

/// Runs `passes` (a part of the pipeline, in order: see [`pipeline_parts`]) over `module`; gives the validator's
/// analysis of the result, with the warnings of the checks among them.
pub fn run_passes(
    module: &mut Module,
    passes: &[&'static dyn Pass],
    mut options: PipelineOptions<'_>,
) -> Result<ModuleInfo, PipelineError> {
    let mut analyses = Analyses::default();
    let mut clock = std::time::Instant::now();
    let mut lap = |name: &'static str, timings: &mut Option<&mut Vec<_>>| {
        let now = std::time::Instant::now();
        if let Some(t) = timings.as_deref_mut() {
            t.push((name, now - clock));
        }
        clock = now;
    };
    analyses.info(module)?;
    lap("validate", &mut options.timings);
    for &pass in passes {
        run_pass(pass, module, &mut analyses)?;
        if options.verify_each {
            analyses.info(module)?;
        }
        lap(pass.name(), &mut options.timings);
        if let Some(hook) = options.after_pass.as_mut() {
            hook(pass.name(), module);
        }
    }
    // The last passes only check (they keep the analyses): the validator's analysis they computed is the result's,
    // with the warnings of the checks.
    let mut info = analyses.info(module)?.clone();
    info.warnings = analyses.take_warnings();
    Ok(info)
}

/// Runs one pass on a valid module (the tests' entry: `.ir` in, one pass, text out); validates what it leaves.
pub fn run_pass(pass: &dyn Pass, module: &mut Module, analyses: &mut Analyses) -> Result<(), PipelineError> {
    pass.run(module, analyses)?;
    analyses.invalidate(pass.preserves());
    Ok(())
}

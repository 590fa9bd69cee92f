//! [`InterpError`]s as diagnostics: the one place they are worded for the user.

use crate::codes;
use crate::error::InterpError;
use cutec_diagnostics::Diagnostic;
use cutec_ir::Loc;

fn at(code: &'static str, message: String, loc: Loc, label: &str) -> Diagnostic {
    if loc == Loc::NONE {
        Diagnostic::unlocated(code, message)
    } else {
        Diagnostic::error(code, message, loc.file, loc.span).with_primary_message(label.to_string())
    }
}

/// The diagnostic of `e`, located at the statements it is about (in the files of the build's source map).
pub fn to_diagnostic(e: &InterpError) -> Diagnostic {
    let message = e.to_string();
    match e {
        InterpError::OutOfBounds { loc, .. } => at(codes::OUT_OF_BOUNDS, message, *loc, "this access"),
        InterpError::Deadlock { waits } => {
            let first = waits.first();
            let mut d = match first {
                Some(w) => at(codes::DEADLOCK, message, w.loc, &format!("{} wait for {}", w.threads, w.what)),
                None => Diagnostic::unlocated(codes::DEADLOCK, message),
            };
            for w in waits.iter().skip(1) {
                if w.loc == Loc::NONE {
                    d = d.with_note(format!("{} wait for {}", w.threads, w.what));
                } else {
                    d = d.with_label(w.loc.file, w.loc.span, format!("{} wait for {}", w.threads, w.what));
                }
            }
            d
        }
        InterpError::Race { first, second, .. } | InterpError::GlobalRace { first, second, .. } => {
            let d = at(codes::RACE, message, *second, "this access");
            if *first == Loc::NONE { d } else { d.with_label(first.file, first.span, "races with this one") }
        }
        InterpError::DivisionByZero { loc, .. } => at(codes::DIVISION_BY_ZERO, message, *loc, "divides by zero"),
        InterpError::Mbarrier { loc, .. } => at(codes::MBARRIER, message, *loc, "this mbarrier operation"),
        InterpError::Collective { loc, .. } => at(codes::COLLECTIVE, message, *loc, "here"),
        InterpError::TensorMap { loc, .. } => at(codes::TENSOR_MAP, message, *loc, "this copy"),
        InterpError::Unsupported { loc, .. } => at(codes::UNSUPPORTED, message, *loc, "here"),
        InterpError::Internal { loc, .. } => at(codes::CANNOT_RUN, message, *loc, "here"),
        InterpError::StepLimit { .. } | InterpError::Arguments { .. } | InterpError::Invalid { .. } => {
            Diagnostic::unlocated(codes::CANNOT_RUN, message)
        }
    }
}

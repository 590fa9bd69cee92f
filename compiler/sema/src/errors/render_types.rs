//! Types, calls, operators and returns (E0109..E0116).

use super::{SemaError, plural};
use cutec_diagnostics::{Diagnostic, FileId};

/// The diagnostic of an error of this family; `None` for the other families' errors.
pub(super) fn render(f: FileId, e: &SemaError) -> Option<Diagnostic> {
    use SemaError as E;
    let err = |code, msg: String, span| Diagnostic::error(code, msg, f, span);
    Some(match e {
        E::Mismatch { span, expected, found, because, help } => {
            let mut d = err("E0109", "mismatched types".into(), *span)
                .with_primary_message(format!("expected `{expected}`, found `{found}`"));
            if let Some((loc, msg)) = because {
                d = d.with_label(loc.file, loc.span, msg.clone());
            }
            match help {
                Some(h) => d.with_help(h.clone()),
                None => d,
            }
        }
        E::Arity { what, callee, span, expected, found, extra, missing_at, def, signature } => {
            let args = |n: &str| if n == "1" { "argument" } else { "arguments" };
            let mut d = err(
                "E0110",
                format!(
                    "this {what} takes {expected} {} but {} {} supplied",
                    args(expected),
                    plural(*found, "argument"),
                    if *found == 1 { "was" } else { "were" }
                ),
                *span,
            )
            .with_primary_message(format!("`{callee}` expects {expected} {}", args(expected)));
            for s in extra {
                d = d.with_label(f, *s, "unexpected argument");
            }
            if let Some(s) = missing_at {
                d = d.with_label(f, *s, "an argument is missing here");
            }
            if let Some(loc) = def {
                d = d.with_label(loc.file, loc.span, format!("`{callee}` defined here"));
            }
            match signature {
                Some(s) => d.with_note(format!("`{callee}` is `{s}`")),
                None => d,
            }
        }
        E::WrongArgKind { span, expected, found, param, signature } => {
            err("E0111", format!("expected {expected}, found {found}"), *span)
                .with_primary_message(format!("`{param}` must be {expected}"))
                .with_note(format!("the signature is `{signature}`"))
        }
        E::NamedArgWithout { span, name, needs, signature } => {
            err("E0111", format!("`{name}` is given without `{needs}`"), *span)
                .with_primary_message(format!("only `{needs}` reads `{name}`"))
                .with_note(format!("the signature is `{signature}`"))
        }
        E::BadOperand { op, span, found, expected, help } => {
            let d = err("E0112", format!("`{op}` cannot be applied to {found}"), *span)
                .with_primary_message(format!("expected {expected}, found {found}"));
            match help {
                Some(h) => d.with_help(h.clone()),
                None => d,
            }
        }
        E::OperandsDontMix { op, lhs, rhs } => {
            err("E0112", format!("`{op}` cannot combine `{}` and `{}`", lhs.1, rhs.1), rhs.0)
                .with_primary_message(format!("`{}` does not mix with `{}` without a conversion", rhs.1, lhs.1))
                .with_label(f, lhs.0, format!("this is `{}`", lhs.1))
                .with_help(format!("convert one side with `as`, e.g. `(...) as {}`", lhs.1))
        }
        E::NonBoolCondition { span, found, what } => {
            let d = err("E0113", format!("the condition of {what} must be a `bool`"), *span)
                .with_primary_message(format!("expected `bool`, found `{found}`"));
            if found == "int" || found.starts_with('i') || found.starts_with('u') {
                d.with_help("compare explicitly: `x != 0`")
            } else {
                d
            }
        }
        E::InvalidCast { span, from, to, help } => {
            let d = err("E0114", format!("cannot cast {from} to `{to}`"), *span)
                .with_primary_message("`as` converts between numeric types only");
            match help {
                Some(h) => d.with_help(h.clone()),
                None => d,
            }
        }
        E::ReturnMismatch { span, expected, found, ret_span } => err("E0115", "mismatched return type".into(), *span)
            .with_primary_message(format!("expected `{expected}`, found `{found}`"))
            .with_label(f, *ret_span, format!("the function returns `{expected}`"))
            .with_help(format!("convert it: `return (...) as {expected};`")),
        E::ReturnInKernel { span } => err("E0115", "a kernel cannot return a value".into(), *span)
            .with_primary_message("kernels return nothing")
            .with_help("write the result to an output tensor; use `return;` to leave early"),
        E::MissingReturnValue { span, expected, ret_span } => {
            err("E0115", "`return` without a value in a function that returns a value".into(), *span)
                .with_primary_message(format!("expected a value of type `{expected}`"))
                .with_label(f, *ret_span, format!("the function returns `{expected}`"))
        }
        E::ReturnValueInUnitFn { span, name, sig } => {
            err("E0115", format!("`{name}` returns nothing but this `return` has a value"), *span)
                .with_primary_message("unexpected value")
                .with_label(f, *sig, "no `-> T` in the signature")
                .with_help("declare the return type: `fn name(...) -> f32`")
        }
        E::MissingReturn { name, span, ret_span, expected } => {
            err("E0116", format!("`{name}` may reach its end without returning a value"), *span)
                .with_primary_message(format!("expected a `return` of type `{expected}` before here"))
                .with_label(f, *ret_span, "return type declared here")
                .with_help("end the function with `return value;` on every path")
        }
        _ => return None,
    })
}

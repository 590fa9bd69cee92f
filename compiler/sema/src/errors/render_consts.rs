//! Layout types, constants and generic arguments (E0122..E0126).

use super::{SemaError, did_you_mean};
use cutec_diagnostics::{Diagnostic, FileId};

/// The diagnostic of an error of this family; `None` for the other families' errors.
pub(super) fn render(f: FileId, e: &SemaError) -> Option<Diagnostic> {
    use SemaError as E;
    let err = |code, msg: String, span| Diagnostic::error(code, msg, f, span);
    Some(match e {
        E::IncongruentLayout { span, shape_span, shape_profile, stride_profile, suggestion } => {
            let d = err(
                "E0122",
                format!("layout shape `{shape_profile}` and stride `{stride_profile}` are not congruent"),
                *span,
            )
            .with_primary_message(format!("stride has profile `{stride_profile}`"))
            .with_label(f, *shape_span, format!("shape has profile `{shape_profile}`"))
            .with_note("a stride needs one entry for every entry of the shape, nested the same way");
            match suggestion {
                Some(s) => d.with_help(format!("for compact column-major strides write `{s}`, or omit the stride")),
                None => d,
            }
        }
        E::LayoutEntry { span, found, part } => {
            err("E0123", format!("a layout {part} must be made of integers"), *span)
                .with_primary_message(format!("expected an integer, found {found}"))
        }
        E::NonPositiveExtent { span, value } => err("E0123", "a layout shape entry must be positive".into(), *span)
            .with_primary_message(format!("this extent is {value}")),
        E::NotConstant { span, context, whole } => {
            let mut d = err("E0124", format!("{context} must be a compile-time constant"), *span)
                .with_primary_message("not known at compile time");
            if whole != span {
                d = d.with_label(f, *whole, "in this constant expression");
            }
            d.with_help("use integers, const generics and `const` items")
        }
        E::ConstEval { span, problem } => {
            err("E0124", format!("this constant cannot be computed: {problem}"), *span).with_primary_message(*problem)
        }
        E::ConstCycle { name, span } => err("E0124", format!("the value of `{name}` depends on itself"), *span)
            .with_primary_message("cyclic constant"),
        E::GenericCount { name, span, expected, found, signature } => {
            let d = err(
                "E0125",
                format!(
                    "`{name}` takes {expected} generic {} but {found} {} supplied",
                    if expected == "1" { "argument" } else { "arguments" },
                    if *found == 1 { "was" } else { "were" }
                ),
                *span,
            )
            .with_primary_message(format!("expected {expected}"));
            match signature {
                Some(s) => d.with_note(format!("`{name}` is `{s}`")),
                None => d,
            }
        }
        E::UnexpectedGenerics { name, span } => err("E0125", format!("`{name}` takes no generic arguments"), *span)
            .with_primary_message("unexpected generic arguments"),
        E::BadGenericArg { span, expected, found, suggestion } => did_you_mean(
            err("E0126", format!("expected {expected}, found {found}"), *span)
                .with_primary_message(format!("expected {expected}")),
            suggestion,
        ),
        _ => return None,
    })
}

//! Indexing, fields, methods, values and `-D` definitions (E0126..E0136).

use super::{SemaError, did_you_mean, plural};
use cutec_diagnostics::{Diagnostic, FileId};

/// The diagnostic of an error of this family; `None` for the other families' errors.
pub(super) fn render(f: FileId, e: &SemaError) -> Option<Diagnostic> {
    use SemaError as E;
    let err = |code, msg: String, span| Diagnostic::error(code, msg, f, span);
    Some(match e {
        E::IndexRank { span, found, rank, base, ty } => err(
            "E0127",
            format!("this tensor has rank {rank} but {} were given", plural(*found, "index"))
                .replace("indexs", "indices"),
            *span,
        )
        .with_primary_message(format!("expected 1 or {rank} indices"))
        .with_label(f, *base, format!("this is `{ty}`"))
        .with_note("one index reads the tensor in colexicographic order; otherwise give one per mode"),
        E::IndexNonTensor { span, found } => {
            err("E0128", format!("cannot index into {found}"), *span).with_primary_message("not a tensor")
        }
        E::IndexNotInt { span, found } => err("E0128", "tensor indices must be integers or `_`".into(), *span)
            .with_primary_message(format!("expected an integer, found {found}")),
        E::UnknownField { name, span, ty, suggestion, available } => did_you_mean(
            err("E0129", format!("no field `{name}` on `{ty}`"), *span)
                .with_primary_message("unknown field")
                .with_note(format!("available: {available}")),
            suggestion,
        ),
        E::UnknownMethod { name, span, ty, suggestion, available } => did_you_mean(
            err("E0129", format!("no method `{name}` on {ty}"), *span)
                .with_primary_message("method not found")
                .with_note(format!("available: {available}")),
            suggestion,
        ),
        E::Recursion { span, cycle } => {
            let msg = if cycle.len() <= 2 {
                format!("function `{}` calls itself", cycle[0])
            } else {
                format!("recursive call cycle: {}", cycle.join(" -> "))
            };
            err("E0130", msg, *span)
                .with_primary_message("recursive call")
                .with_note("GPU code has no call stack for recursion; device functions are inlined")
                .with_help("rewrite the recursion as a loop")
        }
        E::NotAValue { span, what, help } => {
            let d = err("E0131", format!("expected a value, found {what}"), *span).with_primary_message("not a value");
            match help {
                Some(h) => d.with_help(h.clone()),
                None => d,
            }
        }
        E::NotCallable { span, what, def, help } => {
            let mut d = err("E0132", format!("{what} cannot be called"), *span).with_primary_message("not a function");
            if let Some(l) = def {
                d = d.with_label(l.file, l.span, "defined here");
            }
            match help {
                Some(h) => d.with_help(h.clone()),
                None => d,
            }
        }
        E::UnknownDefine { name, span, suggestion, known } => {
            let d = err("E0133", format!("`-D {name}` sets no const parameter of any kernel"), *span)
                .with_primary_message("unknown const parameter");
            let d = did_you_mean(d, suggestion);
            if known.is_empty() {
                d.with_note("no kernel of this program has const parameters")
            } else {
                d.with_note(format!("the kernels' const parameters are: {}", known.join(", ")))
            }
        }
        E::BadDefineValue { name, span, value, def, ty, range } => {
            let (message, expected) = match range {
                Some((lo, hi)) => {
                    (format!("`-D {name}={value}` is out of range for `{ty}`"), format!("`{ty}` holds {lo} to {hi}"))
                }
                None if ty == "bool" => {
                    (format!("`-D {name}={value}` is not a `bool`"), "expected `true` or `false`".to_owned())
                }
                None => (format!("`-D {name}={value}` is not an integer"), format!("expected an integer (`{ty}`)")),
            };
            err("E0133", message, *span).with_primary_message(expected).with_label(
                def.file,
                def.span,
                format!("`{name}` is declared `{ty}` here"),
            )
        }
        _ => return None,
    })
}

//! Launch clauses and attributes (E0117..E0121).

use super::{SemaError, did_you_mean};
use cutec_diagnostics::{Diagnostic, FileId};

/// The diagnostic of an error of this family; `None` for the other families' errors.
pub(super) fn render(f: FileId, e: &SemaError) -> Option<Diagnostic> {
    use SemaError as E;
    let err = |code, msg: String, span| Diagnostic::error(code, msg, f, span);
    Some(match e {
        E::LaunchOnFn { span, name } => err("E0117", format!("device function `{name}` has a launch clause"), *span)
            .with_primary_message("only kernels are launched")
            .with_help("remove the clause, or declare it with `kernel` instead of `fn`"),
        E::MissingLaunch { span, name } => err("E0117", format!("kernel `{name}` has no launch clause"), *span)
            .with_primary_message("missing `launch(...)`")
            .with_help("add one after the parameters: `launch(grid = (ceil_div(N, 256)), block = (256))`"),
        E::UnknownLaunchKey { name, span, suggestion } => did_you_mean(
            err("E0118", format!("unknown launch setting `{name}`"), *span)
                .with_primary_message("not a launch setting")
                .with_note("the launch settings are `grid`, `block`, `cluster` and `smem`"),
            suggestion,
        ),
        E::DuplicateLaunchKey { name, span, first } => {
            err("E0118", format!("launch setting `{name}` is given more than once"), *span)
                .with_primary_message("given again here")
                .with_label(f, *first, "first given here")
        }
        E::MissingLaunchKey { key, span } => err("E0118", format!("the launch clause has no `{key}`"), *span)
            .with_primary_message(format!("missing `{key} = ...`"))
            .with_help("a launch clause needs `grid` and `block`"),
        E::LaunchValueType { key, span, found } => {
            let expected = if key == "smem" { "an integer" } else { "an integer or a tuple of 1 to 3 integers" };
            err("E0119", format!("invalid `{key}` in the launch clause"), *span)
                .with_primary_message(format!("expected {expected}, found {found}"))
        }
        E::LaunchNotEvaluable { key, span, constant } => {
            let (what, help) = if *constant {
                ("a compile-time constant", "use integers, const generics and constants")
            } else {
                (
                    "computable before the launch",
                    "use integers, const generics, constants, dynamic dimensions and integer parameters",
                )
            };
            err("E0119", format!("`{key}` must be {what}"), *span)
                .with_primary_message("this is not known before the kernel starts")
                .with_help(help)
        }
        E::LaunchNotPositive { key, axis, span, value } => {
            let (name, want) =
                if axis.is_empty() { (key.clone(), "at least 0") } else { (format!("{key}.{axis}"), "at least 1") };
            err("E0144", format!("`{name}` is {value}; it must be {want}"), *span)
                .with_primary_message(format!("this is {value}"))
                .with_note("a launch with an empty grid or block does nothing, and the driver refuses it")
        }
        E::LaunchTooLarge { key, span, value, limit, what } => {
            err("E0119", format!("`{key}` asks for {value} {what}, more than the limit of {limit}"), *span)
                .with_primary_message(format!("{value} {what}"))
        }
        E::GridNotClusters { axis, grid, cluster, span } => err(
            "E0170",
            format!(
                "`grid.{axis}` is {grid} CTA{}, not a whole number of clusters of {cluster}",
                if *grid == 1 { "" } else { "s" }
            ),
            *span,
        )
        .with_primary_message(format!("{grid} is not a multiple of {cluster}"))
        .with_note("the CUDA driver launches whole clusters only, and refuses any other grid")
        .with_help(format!("round the grid up to a multiple of {cluster}: `ceil_div(n, {cluster}) * {cluster}`")),
        E::UnknownAttribute { name, span, target, suggestion, applies_to } => {
            let d = err("E0120", format!("unknown attribute `{name}` on {}", target.describe()), *span)
                .with_primary_message("not an attribute here");
            match applies_to {
                Some(t) => d.with_note(format!("`{name}` applies to {}", t.describe())),
                None => did_you_mean(d, suggestion),
            }
        }
        E::BadAttributeArgs { name, span, problem, usage, help } => {
            let d = err("E0121", format!("invalid arguments of `{name}`: {problem}"), *span)
                .with_primary_message(problem.clone())
                .with_note(format!("usage: `{usage}`"));
            match help {
                Some(h) => d.with_help(h.clone()),
                None => d,
            }
        }
        E::DuplicateAttribute { name, span, first } => {
            err("E0121", format!("attribute `{name}` is given more than once"), *span)
                .with_primary_message("repeated here")
                .with_label(f, *first, "first given here")
        }
        _ => return None,
    })
}

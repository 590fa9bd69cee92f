//! Names, scopes and bindings (E0100..E0108, E0162).

use super::{BindingKind, SemaError, did_you_mean};
use cutec_diagnostics::{Diagnostic, FileId};

/// The diagnostic of an error of this family; `None` for the other families' errors.
pub(super) fn render(f: FileId, e: &SemaError) -> Option<Diagnostic> {
    use SemaError as E;
    let err = |code, msg: String, span| Diagnostic::error(code, msg, f, span);
    Some(match e {
        E::UnknownName { name, span, suggestion } => did_you_mean(
            err("E0100", format!("cannot find `{name}` in this scope"), *span)
                .with_primary_message("not found in this scope"),
            suggestion,
        ),
        E::UnknownType { name, span, suggestion } => {
            let d = err("E0101", format!("unknown type `{name}`"), *span).with_primary_message("not a type");
            did_you_mean(d, suggestion)
                .with_note("types are the scalars (`int`, `f32`, `bf16`, ...), `Tensor<T, layout, space>` and tuples")
        }
        E::UnknownModule { name, span, suggestion, available } => {
            let d = err("E0102", format!("unknown module `stdlib::{name}`"), *span)
                .with_primary_message("no such stdlib module");
            let list: Vec<String> = available.iter().map(|m| format!("`{m}`")).collect();
            did_you_mean(d, suggestion).with_note(format!("the standard library has: {}", list.join(", ")))
        }
        E::NotStdlibPath { name, span } => err("E0102", format!("unknown module `{name}`"), *span)
            .with_primary_message("not a module")
            .with_help("only standard library modules can be used: `use stdlib::reduce;`"),
        E::NoSubmodules { span, module } => err("E0102", format!("`stdlib::{module}` has no submodules"), *span)
            .with_primary_message("expected a name defined in the module")
            .with_help(format!("import names with `use stdlib::{module}::{{a, b}};`")),
        E::UnknownImport { name, module, span, suggestion } => did_you_mean(
            err("E0103", format!("`{name}` is not defined in `{module}`"), *span)
                .with_primary_message(format!("no `{name}` in `{module}`")),
            suggestion,
        ),
        E::Duplicate { what, name, span, first } => {
            err("E0104", format!("the {what} `{name}` is defined more than once"), *span)
                .with_primary_message(format!("`{name}` redefined here"))
                .with_label(first.file, first.span, format!("first definition of `{name}`"))
        }
        E::ImportedTwice { name, span, first } => err("E0162", format!("`{name}` is imported twice"), *span)
            .with_primary_message(format!("`{name}` imported again here"))
            .with_label(first.file, first.span, format!("`{name}` first imported here"))
            .with_help("remove one of the two"),
        E::UseBeforeLet { name, span, def } => err("E0105", format!("cannot use `{name}` before its `let`"), *span)
            .with_primary_message("used here, before its definition is complete")
            .with_label(f, *def, format!("`{name}` is defined here"))
            .with_help(format!("move the `let {name}` above this use")),
        E::OutOfScope { name, span, def } => err("E0105", format!("`{name}` is not in scope here"), *span)
            .with_primary_message("not in scope")
            .with_label(f, *def, "defined here, in a block that has ended")
            .with_help(format!("declare `{name}` before the block (`let mut {name} = ...;`) and assign it inside")),
        E::AssignImmutable { name, span, def, kind } => {
            let d = err("E0106", format!("cannot assign twice to immutable `{name}`"), *span)
                .with_primary_message("cannot assign twice to an immutable binding");
            match kind {
                BindingKind::Let => d
                    .with_label(f, *def, format!("first assignment to `{name}`"))
                    .with_help(format!("make the binding mutable: `let mut {name}`")),
                BindingKind::LoopVar => d
                    .with_label(f, *def, "the loop variable, set by the loop")
                    .with_help("copy it into a `let mut` variable to change it"),
                BindingKind::Param => {
                    d.with_label(f, *def, "a parameter").with_help(format!("copy it first: `let mut {name} = {name};`"))
                }
            }
            .with_note("elements of tensors can always be assigned: `t[i] = v;`")
        }
        E::InvalidPlace { span, what, help } => {
            let d = err("E0107", format!("cannot assign to {what}"), *span)
                .with_primary_message("not a variable or a tensor element");
            match help {
                Some(h) => d.with_help(h.clone()),
                None => d,
            }
        }
        E::OutsideLoop { keyword, span } => err("E0108", format!("`{keyword}` outside of a loop"), *span)
            .with_primary_message(format!("cannot `{keyword}` outside of a loop")),
        _ => return None,
    })
}

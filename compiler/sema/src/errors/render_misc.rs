//! Tensor types, atoms, nesting, named arguments, literals and static assertions (E0133..E0143).

use super::{SemaError, did_you_mean};
use cutec_diagnostics::{Diagnostic, FileId};

/// The diagnostic of an error of this family; `None` for the other families' errors.
pub(super) fn render(f: FileId, e: &SemaError) -> Option<Diagnostic> {
    use SemaError as E;
    let err = |code, msg: String, span| Diagnostic::error(code, msg, f, span);
    Some(match e {
        E::BadTensorType { span, problem, help } => {
            let d =
                err("E0134", format!("invalid tensor type: {problem}"), *span).with_primary_message(problem.clone());
            match help {
                Some(h) => d.with_help(h.clone()),
                None => d,
            }
        }
        E::UnboundDynDim { name, span } => {
            err("E0135", format!("dynamic dimension `{name}` cannot be read from any parameter"), *span)
                .with_primary_message(format!("`{name}` is only used inside an expression"))
                .with_help(format!("use `{name}` as a whole shape or stride entry, e.g. `({name}, 64):(64, 1)`"))
        }
        E::NonStaticParamLayout { span } => {
            err("E0135", "a parameter layout can only use integers, const generics and dimension names".into(), *span)
                .with_primary_message("only known inside the kernel")
        }
        E::BadAtom { span, problem, help } => {
            let d =
                err("E0136", format!("invalid hardware atom: {problem}"), *span).with_primary_message(problem.clone());
            match help {
                Some(h) => d.with_help(h.clone()),
                None => d,
            }
        }
        E::TooDeep { span } => err("E0137", "expression nested too deeply".into(), *span)
            .with_primary_message("nesting limit reached here")
            .with_help("split the expression with `let`"),
        E::ConstChainTooDeep { name, span } => {
            err("E0150", format!("the constant `{name}` is reached through too long a chain of constants"), *span)
                .with_primary_message("the chain is cut here")
                .with_help("define the constants from a common base rather than each from the previous one")
        }
        E::MisplacedWildcard { span } => err("E0138", "`_` is not a value".into(), *span)
            .with_primary_message("`_` is only allowed as an index, in a tiler or in a coordinate"),
        E::UnknownNamedArg { name, span, callee, suggestion, accepted } => {
            let d = err("E0139", format!("`{callee}` has no argument named `{name}`"), *span)
                .with_primary_message("unknown named argument");
            let d = did_you_mean(d, suggestion);
            if accepted.is_empty() {
                d.with_note(format!("`{callee}` takes positional arguments only"))
            } else {
                d.with_note(format!("named arguments of `{callee}`: {accepted}"))
            }
        }
        E::PositionalAfterNamed { span, named } => {
            err("E0139", "positional argument after a named argument".into(), *span)
                .with_primary_message("positional argument")
                .with_label(f, *named, "named argument")
                .with_help("put named arguments last")
        }
        E::BadConstGenericType { span, found } => {
            err("E0140", format!("a const generic must be `int` or `bool`, not `{found}`"), *span)
                .with_primary_message("unsupported const generic type")
        }
        E::LiteralOutOfRange { span, literal, ty, range } => {
            let what = if literal == "this literal" { literal.clone() } else { format!("`{literal}`") };
            err("E0142", format!("literal out of range for `{ty}`"), *span)
                .with_primary_message(format!("{what} does not fit in `{ty}`"))
                .with_note(range.clone())
                .with_help("use a wider type, or a value the type can hold")
        }
        E::DivisionByZero { op, span } => err("E0143", format!("integer `{op}` by zero"), *span)
            .with_primary_message("this divisor is 0 when compiling")
            .with_note("an integer division or remainder by zero has no value"),
        E::StaticAssertFailed { span, message, sides, generics } => {
            let msg = match message {
                Some(m) if !m.is_empty() => format!("static assertion failed: {m}"),
                _ => "static assertion failed".to_owned(),
            };
            let d = err("E0141", msg, *span).with_primary_message("this is `false`");
            let values: Vec<String> = generics
                .iter()
                .map(|(n, v, define)| if *define { format!("{n} = {v} (from -D)") } else { format!("{n} = {v}") })
                .collect();
            let sides: Vec<String> = sides.iter().map(|(s, v)| format!("`{s}` is {v}")).collect();
            let note = match (values.is_empty(), sides.is_empty()) {
                (true, true) => return Some(d),
                (false, true) => format!("with {}", values.join(", ")),
                (true, false) => sides.join(", "),
                (false, false) => format!("with {}: {}", values.join(", "), sides.join(", ")),
            };
            d.with_note(note)
        }
        _ => return None,
    })
}

//! `cutec layout`: evaluate layout expressions, print them as CuTe's `print_layout` does, draw them as SVG.

use cutec::codes;
use cutec::command_line::path_error;
use cutec_diagnostics::{Diagnostic, SourceMap, Span};
use cutec_layout::{EvalError, Value, eval, eval_lines, print_layout, svg_layout, svg_tv};
use std::path::Path;

pub struct LayoutArgs<'a> {
    pub expr: Option<&'a str>,
    pub eval_file: Option<&'a Path>,
    pub table: bool,
    pub svg: Option<&'a Path>,
    /// The (M, N) tile of a thread-value layout: draw `T#/V#` cells instead of indices.
    pub tv: Option<(i64, i64)>,
}

/// Why `cutec layout` failed: one diagnostic, with the sources it points into.
pub struct Failure {
    pub map: SourceMap,
    pub diagnostic: Diagnostic,
}

fn fail(map: SourceMap, diagnostic: Diagnostic) -> Result<(), Box<Failure>> {
    Err(Box::new(Failure { map, diagnostic }))
}

/// Runs `cutec layout`.
pub fn run(args: &LayoutArgs) -> Result<(), Box<Failure>> {
    let mut map = SourceMap::new();
    if let Some(path) = args.eval_file {
        // A file of expressions is read like a source file, at most its limit.
        return match cutec::files::read_text_capped(path, cutec::files::MAX_SOURCE_BYTES) {
            Ok(text) => {
                print!("{}", eval_lines(&text));
                Ok(())
            }
            Err(e) => {
                let message = format!("cannot read `{}`: {e}", path.display());
                let d = path_error(&mut map, codes::READ_FAILED, message, path, "cannot be read");
                fail(map, d)
            }
        };
    }
    let Some(expr) = args.expr else {
        let message = "give a layout expression, e.g. cutec layout --eval '(4,8):(8,1)', or --eval-file FILE";
        return fail(map, Diagnostic::unlocated(codes::BAD_ARGUMENT, message));
    };
    // The expression is the input: diagnostics point into it.
    let file = map.add("<expression>", expr);
    let whole = Span::new(0, expr.len());
    let value = match eval(expr) {
        Ok(v) => v,
        Err(EvalError::Parse(e)) => {
            let at = e.offset.min(expr.len());
            let end = expr[at..].chars().next().map_or(at, |c| at + c.len_utf8());
            let d = Diagnostic::error(
                codes::LAYOUT_SYNTAX,
                format!("malformed layout expression: {}", e.message),
                file,
                Span::new(at, end),
            )
            .with_primary_message(e.message.clone());
            return fail(map, d);
        }
        Err(EvalError::Layout(e)) => return fail(map, cutec_sema::algebra_diagnostic(&e, file, whole)),
    };
    if !args.table && args.svg.is_none() {
        println!("{value}");
        return Ok(());
    }
    let not_drawable = |map: SourceMap, message: String| {
        let d = Diagnostic::error(codes::NOT_DRAWABLE, message, file, whole)
            .with_primary_message(format!("this is `{value}`"));
        fail(map, d)
    };
    if args.table {
        let text = match &value {
            Value::Layout(l) => print_layout(l),
            Value::Composed(c) => print_layout(c),
            other => return not_drawable(map, format!("`{other}` is not a layout; --table draws layouts")),
        };
        match text {
            Ok(text) => print!("{text}"),
            Err(e) => return fail(map.clone(), cutec_sema::algebra_diagnostic(&e, file, whole)),
        }
    }
    if let Some(path) = args.svg {
        let svg = match (&value, args.tv) {
            (Value::Layout(l), Some((m, n))) => svg_tv(l, m, n),
            (Value::Layout(l), None) => svg_layout(l),
            (Value::Composed(c), None) => svg_layout(c),
            (other, Some(_)) => {
                return not_drawable(map, format!("`{other}` cannot be drawn as a thread-value layout"));
            }
            (other, None) => return not_drawable(map, format!("`{other}` is not a layout; --svg draws layouts")),
        };
        let svg = match svg {
            Ok(svg) => svg,
            Err(e) => return fail(map.clone(), cutec_sema::algebra_diagnostic(&e, file, whole)),
        };
        if let Err(e) = std::fs::write(path, svg) {
            let message = format!("cannot write `{}`: {e}", path.display());
            let d = path_error(&mut map, codes::WRITE_FAILED, message, path, "cannot be written");
            return fail(map, d);
        }
    }
    Ok(())
}

/// Parses `M,N` (or `MxN`) of `--tv`.
pub fn parse_tile(s: &str) -> Result<(i64, i64), String> {
    let (m, n) = s.split_once([',', 'x']).ok_or_else(|| format!("expected M,N, found `{s}`"))?;
    let m = m.trim().parse::<i64>().map_err(|_| format!("`{m}` is not an integer"))?;
    let n = n.trim().parse::<i64>().map_err(|_| format!("`{n}` is not an integer"))?;
    Ok((m, n))
}

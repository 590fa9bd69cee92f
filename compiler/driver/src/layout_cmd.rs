//! `cutec layout`: evaluate layout expressions, print them as CuTe's `print_layout` does, draw them as SVG.

use cutec_layout::{Value, eval, eval_lines, print_layout, svg_layout, svg_tv};
use std::path::Path;
use std::process::ExitCode;

pub struct LayoutArgs<'a> {
    pub expr: Option<&'a str>,
    pub eval_file: Option<&'a Path>,
    pub table: bool,
    pub svg: Option<&'a Path>,
    /// The (M, N) tile of a thread-value layout: draw `T#/V#` cells instead of indices.
    pub tv: Option<(i64, i64)>,
}

pub fn run(args: &LayoutArgs) -> ExitCode {
    if let Some(path) = args.eval_file {
        return match std::fs::read_to_string(path) {
            Ok(text) => {
                print!("{}", eval_lines(&text));
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("error: cannot read `{}`: {e}", path.display());
                ExitCode::from(1)
            }
        };
    }
    let Some(expr) = args.expr else {
        eprintln!("error: give a layout expression, e.g. cutec layout --eval '(4,8):(8,1)', or --eval-file FILE");
        return ExitCode::from(2);
    };
    let value = match eval(expr) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(1);
        }
    };
    if !args.table && args.svg.is_none() {
        println!("{value}");
        return ExitCode::SUCCESS;
    }
    let result = (|| -> Result<(), String> {
        if args.table {
            let text = match &value {
                Value::Layout(l) => print_layout(l),
                Value::Composed(c) => print_layout(c),
                other => return Err(format!("`{other}` is not a layout; --table draws layouts")),
            }
            .map_err(|e| e.to_string())?;
            print!("{text}");
        }
        if let Some(path) = args.svg {
            let svg = match (&value, args.tv) {
                (Value::Layout(l), Some((m, n))) => svg_tv(l, m, n),
                (Value::Layout(l), None) => svg_layout(l),
                (Value::Composed(c), None) => svg_layout(c),
                (other, _) => return Err(format!("`{other}` cannot be drawn as a thread-value layout")),
            }
            .map_err(|e| e.to_string())?;
            std::fs::write(path, svg).map_err(|e| format!("cannot write `{}`: {e}", path.display()))?;
        }
        Ok(())
    })();
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}

/// Parses `M,N` (or `MxN`) of `--tv`.
pub fn parse_tile(s: &str) -> Result<(i64, i64), String> {
    let (m, n) = s.split_once([',', 'x']).ok_or_else(|| format!("expected M,N, found `{s}`"))?;
    let m = m.trim().parse::<i64>().map_err(|_| format!("`{m}` is not an integer"))?;
    let n = n.trim().parse::<i64>().map_err(|_| format!("`{n}` is not an integer"))?;
    Ok((m, n))
}

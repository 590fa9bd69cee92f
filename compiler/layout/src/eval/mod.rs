//! A small evaluator of layout expressions, for `cutec layout --eval`, the book's worked examples and the
//! type checker's constant folding: `composition((6,2):(8,2), (4,3):(3,1))` evaluates to `((2,2),3):((24,2),8)`.
//!
//! An expression is a layout literal, an integer, a tuple, `_`, `Swizzle<B,M,S>`, a swizzled layout
//! `Sw<B,M,S> o L`, or a call `op(args...)` / `op<i>(args)` of an operation of [`ops::OPS`]. Evaluation never
//! panics: every failure is an [`EvalError`].

pub mod ops;
mod parser;
pub mod value;

use std::fmt;

use crate::error::LayoutError;
use crate::parse::ParseError;

pub use ops::{LayoutOp, OPS, OpInfo, apply, apply_named, is_layout_op, op_info};
pub use value::Value;

/// Why an expression has no value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EvalError {
    Parse(ParseError),
    Layout(LayoutError),
}

impl fmt::Display for EvalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EvalError::Parse(e) => write!(f, "{e}"),
            EvalError::Layout(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for EvalError {}

impl From<ParseError> for EvalError {
    fn from(e: ParseError) -> EvalError {
        EvalError::Parse(e)
    }
}

impl From<LayoutError> for EvalError {
    fn from(e: LayoutError) -> EvalError {
        EvalError::Layout(e)
    }
}

/// Evaluate one expression.
pub fn eval(expr: &str) -> Result<Value, EvalError> {
    parser::Parser::new(expr)?.parse_all()
}

/// Evaluate each line of `text`: one answer per line, `error: <message>` for a failing one; blank lines and
/// `#` comments answer an empty line. (A `print_layout` answer is a picture of several lines.)
pub fn eval_lines(text: &str) -> String {
    let mut out = String::with_capacity(text.len() * 2);
    for line in text.lines() {
        let line = line.trim();
        if !line.is_empty() && !line.starts_with('#') {
            match eval(line) {
                Ok(v) => out.push_str(&v.to_string()),
                Err(e) => {
                    out.push_str("error: ");
                    out.push_str(&e.to_string());
                }
            }
        }
        out.push('\n');
    }
    out
}

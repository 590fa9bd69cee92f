//! The parser of the IR text form: the inverse of [`print`](crate::print), so passes are tested as `.ir` text in,
//! one pass, text out, and hand-written IR (TMA rings, wgmma groups) can be fed to any pass.
//!
//! **Round trip.** For a valid module `m`, `print(parse(print(m))) == print(m)`: expression numbers are kept
//! (`%12` is expression 12 again), and the global expressions (literals, parameters, allocation addresses),
//! which the text writes inline, are placed in the free numbers below their first user. Text numbered densely
//! by hand (`%0`, `%1 = add %0, 4`: no free number below `%1` for the `4`) is renumbered in program order, the
//! numbering `compact` gives. Locations are not in the text: parsed nodes have [`Loc::NONE`](crate::Loc::NONE).
//!
//! The parser checks the syntax and that names are declared; the validator checks the rest.

mod lexer;
mod number;
mod syntax;

use crate::module::Module;
use std::fmt;

/// A syntax error at a line and column of the text (1-based).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub struct ParseError {
    pub line: u32,
    pub col: u32,
    pub message: String,
}

impl ParseError {
    pub(crate) fn new(line: u32, col: u32, message: impl Into<String>) -> ParseError {
        ParseError { line, col, message: message.into() }
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.col, self.message)
    }
}

/// Parses the text form of a module.
pub fn parse(text: &str) -> Result<Module, ParseError> {
    let tokens = lexer::lex(text)?;
    let mut p = syntax::Parser::new(tokens);
    let mut kernels = Vec::new();
    while !p.at_end() {
        let parsed = p.kernel()?;
        kernels.push(number::build(parsed)?);
    }
    Ok(Module { kernels })
}

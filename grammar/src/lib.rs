//! cutec-grammar: the tokens, grammar and AST of the `.cute` language. Syntax only: no names are resolved and
//! no types are known here.
//!
//! Pipeline: [`token`] (a `logos` lexer) → the token adapter (lexer errors, doc comments, the generics rule,
//! delimiter matching) → the `lalrpop` grammar with error recovery → [`ast::Module`].
//!
//! Invariants:
//! - **Parsing never fails and never panics**: [`parse`] returns a tree and a list of [`SyntaxError`]s; broken
//!   parts of the tree are `Error` nodes. One run reports every error it can recover from.
//! - **Spans are byte offsets** into the parsed text, on character boundaries.
//! - **Every expression and binding has a [`ast::NodeId`]**, unique in its module and smaller than
//!   [`ast::Module::node_count`], assigned in source order of the binding names and in completion order of the
//!   expressions (operands before the expression that contains them).
//! - **Size is bounded**: a file longer than [`MAX_SOURCE_BYTES`] is one error (E0008) and no tokens, so that
//!   no input makes the compiler run for minutes or exhaust memory.
//! - **Depth is bounded**: brackets nested deeper than [`MAX_NESTING`] are dropped and reported, and an
//!   expression deeper than [`MAX_NESTING`] becomes `Error`, so recursive passes over the tree (the printer,
//!   later stages, `Drop`) cannot overflow the stack.
//! - `<` after a name opens generic arguments by C#'s rule, decided in the token adapter (see
//!   `lexer::mark_generics`); the grammar sees distinct `GenericOpen`/`GenericClose` tokens.

pub mod ast;
mod error;
mod lexer;
mod parser;
mod printer;
pub mod token;

pub use error::{CODES, SyntaxError, SyntaxErrorKind};
pub use printer::print_ast;

use std::fmt::Write;

/// The longest source file the lexer reads, in bytes: a bound on the time and memory any input costs (a file
/// this long already takes the whole compiler seconds), far above any hand-written kernel.
pub const MAX_SOURCE_BYTES: usize = 2 << 20;

/// The deepest nesting of brackets, blocks or expressions the parser accepts.
pub const MAX_NESTING: usize = 256;

/// Lexes `src` into the token stream the parser reads: `(start, token, end)` byte offsets, without whitespace
/// and plain comments, with doc comments, generic brackets and `>>` decided.
pub fn lex(src: &str) -> (Vec<(usize, token::Token<'_>, usize)>, Vec<SyntaxError>) {
    let lexed = lexer::lex(src);
    (lexed.tokens, lexed.errors)
}

/// Parses one file. Never panics.
pub fn parse(src: &str) -> (ast::Module, Vec<SyntaxError>) {
    parser::parse(src)
}

/// The token stream of [`lex`] as text, one token per line, `start..end Kind "source text"`, with lexer errors
/// inline where they occur: `start..end error[E0004]: integer literal is too large`.
pub fn print_tokens(src: &str) -> String {
    let (tokens, errors) = lex(src);
    let mut lines: Vec<(u32, u8, String)> = Vec::with_capacity(tokens.len() + errors.len());
    for (start, token, end) in &tokens {
        let text = src.get(*start..*end).unwrap_or("");
        lines.push((*start as u32, 1, format!("{start}..{end} {} {text:?}", token.kind_name())));
    }
    for e in &errors {
        lines.push((e.span.start, 0, format!("{}..{} error[{}]: {}", e.span.start, e.span.end, e.code(), e.message())));
    }
    lines.sort_by_key(|(start, order, _)| (*start, *order));
    let mut out = String::new();
    for (_, _, line) in lines {
        let _ = writeln!(out, "{line}");
    }
    out
}

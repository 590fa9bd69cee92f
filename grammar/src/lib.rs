//! cutec-grammar: the tokens, grammar and AST of the `.cute` language. Syntax only.
pub mod ast;

//! The cutec driver: runs the stages of the compiler over files and renders what they report.
//!
//! The command-line interface (`main.rs`) is a thin layer over these functions; the cross-crate tests in
//! `tests/` call them directly.
//!
//! Invariants:
//! - **No function here panics on any input text.** Every problem in the input is a [`Diagnostic`].
//! - Diagnostics are rendered in exactly one place ([`cutec_diagnostics::render_text`] / `render_json`).

pub mod build;
pub mod codes;
pub mod command_line;
pub mod files;
pub mod paths;
pub mod run;
pub mod tune;

pub use codes::DRIVER_CODES;

use cutec_diagnostics::{CodeInfo, Diagnostic, FileId, SourceMap};
pub use cutec_sema::DefineValue;
use std::num::IntErrorKind;

/// Every error-code table of the compiler, in code order: what `cutec explain` searches.
pub fn code_tables() -> Vec<&'static [CodeInfo]> {
    vec![
        cutec_grammar::CODES,
        cutec_sema::CODES,
        cutec_ir::CODES,
        cutec_lower::codes::CODES,
        DRIVER_CODES,
        cutec_interp::codes::CODES,
    ]
}

/// The result of checking one file: its sources (the file and the standard library modules it uses) and
/// every diagnostic, sorted by file and position.
pub struct Checked {
    pub map: SourceMap,
    pub root: FileId,
    pub output: cutec_sema::CheckOutput,
}

impl Checked {
    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.output.diagnostics
    }
    pub fn has_errors(&self) -> bool {
        self.output.diagnostics.iter().any(Diagnostic::is_error)
    }
}

/// Parses, resolves and type-checks `source` (named `name` in diagnostics), with const generic overrides.
pub fn check_source(name: &str, source: &str, defines: &[(String, DefineValue)]) -> Checked {
    let mut map = SourceMap::new();
    let root = map.add(name, source);
    let output = cutec_sema::check(&mut map, root, defines);
    Checked { map, root, output }
}

/// Lexes and parses only: the syntax diagnostics of `source`.
pub fn parse_source(name: &str, source: &str) -> (SourceMap, cutec_grammar::ast::Module, Vec<Diagnostic>) {
    let mut map = SourceMap::new();
    let file = map.add(name, source);
    let (module, errors) = cutec_grammar::parse(source);
    let diags = errors.iter().map(|e| e.to_diagnostic(file)).collect();
    (map, module, diags)
}

/// `--emit tokens`.
pub fn emit_tokens(source: &str) -> String {
    cutec_grammar::print_tokens(source)
}

/// `--emit ast`.
pub fn emit_ast(source: &str) -> String {
    let (module, _) = cutec_grammar::parse(source);
    cutec_grammar::print_ast(&module)
}

/// Parses `NAME=VALUE` of `-D`: an integer, or `true`/`false`. The kind of literal is kept: the checker compares
/// it with the const generic's type, so `-D STAGES=true` on an `int` is an error rather than 1.
pub fn parse_const_define(s: &str) -> Result<(String, DefineValue), String> {
    match s.split_once('=').map(|(n, v)| (n, v.trim())) {
        Some((name, value @ ("true" | "false"))) => {
            let (name, _) = parse_define(&format!("{name}=0"))?;
            Ok((name, DefineValue::Bool(value == "true")))
        }
        _ => parse_define(s).map(|(name, v)| (name, DefineValue::Int(v))),
    }
}

/// Parses `NAME=VALUE` of `--dim` (and, through [`parse_const_define`], of `-D`).
pub fn parse_define(s: &str) -> Result<(String, i64), String> {
    let (name, value) = s.split_once('=').ok_or_else(|| format!("expected NAME=VALUE, found `{s}`"))?;
    let name = name.trim();
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(format!("`{name}` is not a parameter name"));
    }
    let value = value.trim();
    let parsed = if let Some(hex) = value.strip_prefix("0x") {
        // `from_str_radix` takes a sign: `0x-5` would be -5.
        if hex.starts_with(['+', '-']) {
            return Err(format!("`{value}` is not an integer"));
        }
        i64::from_str_radix(&hex.replace('_', ""), 16)
    } else {
        value.replace('_', "").parse::<i64>()
    };
    parsed.map(|v| (name.to_string(), v)).map_err(|e| match e.kind() {
        IntErrorKind::PosOverflow | IntErrorKind::NegOverflow => {
            format!("`{value}` is out of range: values are 64-bit signed integers, {} to {}", i64::MIN, i64::MAX)
        }
        _ => format!("`{value}` is not an integer"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defines_parse() {
        assert_eq!(parse_define("N=4096"), Ok(("N".into(), 4096)));
        assert_eq!(parse_define("BM = 0x80"), Ok(("BM".into(), 128)));
        assert!(parse_define("N").is_err());
        assert!(parse_define("=3").is_err());
        assert!(parse_define("N=x").is_err());
        assert_eq!(
            parse_define("N=99999999999999999999"),
            Err("`99999999999999999999` is out of range: values are 64-bit signed integers, \
                 -9223372036854775808 to 9223372036854775807"
                .into())
        );
        assert_eq!(parse_define("N=-9223372036854775808"), Ok(("N".into(), i64::MIN)));
        assert_eq!(parse_define("N=0x-5"), Err("`0x-5` is not an integer".into()));
        assert_eq!(parse_define("N=0x+5"), Err("`0x+5` is not an integer".into()));
        assert_eq!(parse_const_define("TMA_STORE=false"), Ok(("TMA_STORE".into(), DefineValue::Bool(false))));
        assert_eq!(parse_const_define("TMA_STORE = true"), Ok(("TMA_STORE".into(), DefineValue::Bool(true))));
        assert_eq!(parse_const_define("N=8"), Ok(("N".into(), DefineValue::Int(8))));
        assert!(parse_define("N=true").is_err(), "a dimension is an integer");
    }

    #[test]
    fn codes_are_unique_and_explained() {
        let mut seen = std::collections::BTreeSet::new();
        for table in code_tables() {
            for c in table {
                assert!(seen.insert(c.code), "code {} listed twice", c.code);
                assert!(c.code.len() == 5 && c.code.starts_with('E'), "bad code {}", c.code);
                assert!(!c.title.is_empty() && c.explanation.len() > 40, "{} needs a real explanation", c.code);
            }
        }
    }
}

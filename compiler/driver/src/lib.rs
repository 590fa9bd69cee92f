//! The cutec driver: runs the stages of the compiler over files and renders what they report.
//!
//! The command-line interface (`main.rs`) is a thin layer over these functions; the cross-crate tests in
//! `tests/` call them directly.
//!
//! Invariants:
//! - **No function here panics on any input text.** Every problem in the input is a [`Diagnostic`].
//! - Diagnostics are rendered in exactly one place ([`cutec_diagnostics::render_text`] / `render_json`).

pub mod build;
pub mod run;

use cutec_diagnostics::{CodeInfo, Diagnostic, FileId, SourceMap};

/// Every error-code table of the compiler, in code order: what `cutec explain` searches.
pub fn code_tables() -> Vec<&'static [CodeInfo]> {
    vec![cutec_grammar::CODES, cutec_sema::CODES, cutec_ir::CODES, DRIVER_CODES]
}

/// Codes the driver itself reports (E0400..E0499).
pub const DRIVER_CODES: &[CodeInfo] = &[
    CodeInfo {
        code: "E0400",
        title: "a file could not be read",
        explanation: "The compiler could not read an input file: it does not exist, it is not readable, or it is \
not valid UTF-8. Check the path given on the command line.\n\n    cutec check examples/copy.cute\n",
    },
    CodeInfo {
        code: "E0401",
        title: "the build cannot proceed",
        explanation: "`cutec build` found nothing it can compile or a tool it needs is missing: the file has no \
`kernel` item, `--dump-after` names a pass that does not exist (`cutec build --print-passes` lists them), or \
`--emit cubin` was asked for and `ptxas` could not be found or failed.\n\n    cutec build --print-passes\n",
    },
    CodeInfo {
        code: "E0402",
        title: "internal compiler error",
        explanation: "A stage after checking (lowering, a pass of the pipeline, or LLVM) rejected what the stage \
before it produced. This is a bug in cutec, not in your program: please report it with the input file. Where \
possible cutec reports such bugs as this error rather than crashing.\n",
    },
];

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
pub fn check_source(name: &str, source: &str, defines: &[(String, i64)]) -> Checked {
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

/// Parses `NAME=VALUE` of `-D` and `--dim`.
pub fn parse_define(s: &str) -> Result<(String, i64), String> {
    let (name, value) = s.split_once('=').ok_or_else(|| format!("expected NAME=VALUE, found `{s}`"))?;
    let name = name.trim();
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(format!("`{name}` is not a parameter name"));
    }
    let value = value.trim();
    let parsed = if let Some(hex) = value.strip_prefix("0x") {
        i64::from_str_radix(hex, 16)
    } else {
        value.replace('_', "").parse::<i64>()
    };
    parsed.map(|v| (name.to_string(), v)).map_err(|_| format!("`{value}` is not an integer"))
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

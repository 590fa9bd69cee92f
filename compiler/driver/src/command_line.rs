//! Diagnostics about what was typed on the command line rather than in a file: an option, its value, a path.
//!
//! They are anchored on a `<command line>` pseudo-file that spells out the parts the diagnostic is about
//! (`--tv 2,4`), the way the checker reports `-D` problems, so they render with a caret under the offending part
//! and serialize to JSON with the same fields as every other diagnostic. Errors about no text at all (a GPU
//! fault) are [`Diagnostic::unlocated`] instead.

use cutec_diagnostics::{Diagnostic, SourceMap, Span};
use std::path::Path;

/// An error about the command-line `parts`, each `(text, label)`: the primary label is on the first part, a
/// secondary label on each other one. The parts are spelled out, separated by spaces, in a new `<command line>`
/// file of `map`.
pub fn command_line_error(
    map: &mut SourceMap,
    code: &'static str,
    message: impl Into<String>,
    parts: &[(&str, &str)],
) -> Diagnostic {
    let mut text = String::new();
    let mut spans = Vec::with_capacity(parts.len());
    for (part, _) in parts {
        if !text.is_empty() {
            text.push(' ');
        }
        spans.push(Span::new(text.len(), text.len() + part.len()));
        text.push_str(part);
    }
    let file = map.add("<command line>", text);
    let Some((first, rest)) = spans.split_first() else { return Diagnostic::unlocated(code, message) };
    let mut d = Diagnostic::error(code, message, file, *first).with_primary_message(parts[0].1);
    for (span, (_, label)) in rest.iter().zip(&parts[1..]) {
        d = d.with_label(file, *span, *label);
    }
    d
}

/// An error about the file at `path`, anchored on the path as written (shown lossily if it is not UTF-8).
pub fn path_error(
    map: &mut SourceMap,
    code: &'static str,
    message: impl Into<String>,
    path: &Path,
    label: &str,
) -> Diagnostic {
    command_line_error(map, code, message, &[(&path.display().to_string(), label)])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_are_spelled_out_and_labelled() {
        let mut map = SourceMap::new();
        let d = command_line_error(&mut map, "E0404", "m", &[("--tv 2,4", "needs --svg"), ("--table", "")]);
        let primary = d.primary().expect("a primary label");
        assert_eq!(map.name(primary.file), "<command line>");
        assert_eq!(&map.source(primary.file)[primary.span.range()], "--tv 2,4");
        assert_eq!(primary.message, "needs --svg");
        let second = &d.labels[1];
        assert!(!second.primary);
        assert_eq!(&map.source(second.file)[second.span.range()], "--table");
        assert!(command_line_error(&mut map, "E0404", "m", &[]).labels.is_empty());
    }
}

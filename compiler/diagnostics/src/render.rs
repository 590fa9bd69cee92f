//! The one renderer: text through `codespan-reporting`, or one JSON object per diagnostic.
//!
//! Output is bounded whatever the input: one call renders at most [`MAX_RENDERED`] diagnostics and then one line
//! that counts the rest, and each diagnostic shows an excerpt of its lines (`excerpt.rs`), so a run with 100,000
//! errors on a line of 100,000 characters writes a few kilobytes.

use crate::excerpt::excerpt;
use crate::{Diagnostic, Severity, SourceMap};
use codespan_reporting::diagnostic as cs;
use codespan_reporting::term::{self, termcolor};
use std::io::{self, IsTerminal, Write};

/// The most diagnostics one call of a renderer shows. Past the first hundred, errors are mostly consequences of
/// the first ones, and a user fixes the first ones first.
pub const MAX_RENDERED: usize = 100;

/// `--error-format`.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum ErrorFormat {
    #[default]
    Human,
    Json,
}

/// Whether text output is coloured.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum ColorMode {
    /// Colour only when writing to a terminal.
    #[default]
    Auto,
    Always,
    Never,
}

/// The longest message (or label, note, help) shown, in bytes: messages quote the user's text (`cannot find
/// `name``), and a name may be a megabyte long.
const MAX_MESSAGE: usize = 500;

/// `text`, cut to [`MAX_MESSAGE`] bytes (on a character boundary) with `…` marking the cut.
fn bounded(text: &str) -> String {
    if text.len() <= MAX_MESSAGE {
        return text.to_owned();
    }
    let mut end = MAX_MESSAGE;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

/// What a renderer leaves out: the diagnostics past [`MAX_RENDERED`], counted by severity.
fn omitted(diags: &[Diagnostic]) -> Option<(String, usize)> {
    let rest = diags.get(MAX_RENDERED..).filter(|r| !r.is_empty())?;
    let count = |s: Severity| rest.iter().filter(|d| d.severity == s).count();
    let plural = |n: usize, what: &str| format!("{n} more {what}{}", if n == 1 { "" } else { "s" });
    let parts: Vec<String> = [(Severity::Error, "error"), (Severity::Warning, "warning"), (Severity::Note, "note")]
        .into_iter()
        .map(|(s, what)| (count(s), what))
        .filter(|(n, _)| *n > 0)
        .map(|(n, what)| plural(n, what))
        .collect();
    Some((format!("{} not shown (only the first {MAX_RENDERED} are)", parts.join(" and ")), rest.len()))
}

fn to_codespan<'a>(map: &'a SourceMap, d: &Diagnostic) -> (crate::excerpt::Excerpt<'a>, cs::Diagnostic<usize>) {
    let (files, placed) = excerpt(map, d);
    let severity = match d.severity {
        Severity::Error => cs::Severity::Error,
        Severity::Warning => cs::Severity::Warning,
        Severity::Note => cs::Severity::Note,
    };
    let labels = d
        .labels
        .iter()
        .zip(placed)
        .map(|(l, (file, range))| {
            let style = if l.primary { cs::LabelStyle::Primary } else { cs::LabelStyle::Secondary };
            cs::Label::new(style, file, range).with_message(bounded(&l.message))
        })
        .collect();
    let mut notes: Vec<String> = d.notes.iter().map(|n| bounded(n)).collect();
    notes.extend(d.help.iter().map(|h| bounded(&format!("help: {h}"))));
    let diagnostic = cs::Diagnostic::new(severity)
        .with_code(d.code)
        .with_message(bounded(&d.message))
        .with_labels(labels)
        .with_notes(notes);
    (files, diagnostic)
}

/// Renders diagnostics as text, with colour decided by `color` (Auto: only on a terminal).
pub fn render_text(map: &SourceMap, diags: &[Diagnostic], color: ColorMode, out: &mut dyn Write) -> io::Result<()> {
    let config = term::Config::default();
    let choice = match color {
        ColorMode::Always => termcolor::ColorChoice::Always,
        ColorMode::Never => termcolor::ColorChoice::Never,
        ColorMode::Auto if io::stderr().is_terminal() => termcolor::ColorChoice::Auto,
        ColorMode::Auto => termcolor::ColorChoice::Never,
    };
    let mut buf =
        if choice == termcolor::ColorChoice::Never { termcolor::Buffer::no_color() } else { termcolor::Buffer::ansi() };
    for d in diags.iter().take(MAX_RENDERED) {
        let (files, diagnostic) = to_codespan(map, d);
        term::emit_to_write_style(&mut buf, &config, &files, &diagnostic).map_err(io::Error::other)?;
    }
    if let Some((summary, _)) = omitted(diags) {
        writeln!(buf, "note: {summary}")?;
    }
    out.write_all(buf.as_slice())
}

/// Renders diagnostics to a `String` without colour: what snapshots pin.
pub fn render_plain(map: &SourceMap, diags: &[Diagnostic]) -> String {
    let mut out = Vec::new();
    // Writing into a Vec cannot fail; a files error would mean a FileId from another map.
    if let Err(e) = render_text(map, diags, ColorMode::Never, &mut out) {
        return format!("<could not render diagnostics: {e}>");
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// One JSON object per diagnostic, one per line; past [`MAX_RENDERED`], one last object with `"severity":"note"`,
/// no code and no labels, whose `"omitted"` counts the diagnostics left out.
pub fn render_json(map: &SourceMap, diags: &[Diagnostic], out: &mut dyn Write) -> io::Result<()> {
    let mut out = io::BufWriter::new(out);
    for d in diags.iter().take(MAX_RENDERED) {
        let labels: Vec<_> = d
            .labels
            .iter()
            .map(|l| {
                let r = map.clamp(l.file, l.span.range());
                let (line, column) = map.line_col(l.file, r.start);
                let (end_line, end_column) = map.line_col(l.file, r.end);
                serde_json::json!({
                    "file": map.name(l.file),
                    "start": r.start, "end": r.end,
                    "line": line, "column": column, "end_line": end_line, "end_column": end_column,
                    "message": bounded(&l.message), "primary": l.primary,
                })
            })
            .collect();
        let severity = match d.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "note",
        };
        let obj = serde_json::json!({
            "severity": severity, "code": d.code, "message": bounded(&d.message), "labels": labels,
            "notes": d.notes.iter().map(|n| bounded(n)).collect::<Vec<_>>(),
            "help": d.help.iter().map(|h| bounded(h)).collect::<Vec<_>>(),
        });
        writeln!(out, "{obj}")?;
    }
    if let Some((summary, count)) = omitted(diags) {
        let obj = serde_json::json!({
            "severity": "note", "code": null, "message": summary,
            "labels": [], "notes": [], "help": [], "omitted": count,
        });
        writeln!(out, "{obj}")?;
    }
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Span;

    fn many(n: usize) -> (SourceMap, Vec<Diagnostic>) {
        let mut map = SourceMap::new();
        let f = map.add("m.cute", "}".repeat(n));
        let mut diags: Vec<Diagnostic> =
            (0..n).map(|i| Diagnostic::error("E0001", "stray", f, Span::new(i, i + 1))).collect();
        diags.push(Diagnostic::warning("E0002", "odd", f, Span::new(0, 1)));
        (map, diags)
    }

    #[test]
    fn text_shows_the_first_diagnostics_then_counts_the_rest() {
        let (map, diags) = many(250);
        let out = render_plain(&map, &diags);
        assert_eq!(out.matches("error[E0001]").count(), MAX_RENDERED);
        assert!(
            out.ends_with("note: 150 more errors and 1 more warning not shown (only the first 100 are)\n"),
            "{out}"
        );
        let (map, diags) = many(MAX_RENDERED - 1);
        assert!(!render_plain(&map, &diags).contains("not shown"));
    }

    #[test]
    fn json_shows_the_first_diagnostics_then_counts_the_rest() {
        let (map, diags) = many(100_000);
        let mut out = Vec::new();
        render_json(&map, &diags, &mut out).expect("writes");
        let lines: Vec<serde_json::Value> =
            String::from_utf8_lossy(&out).lines().map(|l| serde_json::from_str(l).expect("JSON")).collect();
        assert_eq!(lines.len(), MAX_RENDERED + 1);
        let last = &lines[MAX_RENDERED];
        assert_eq!((last["severity"].as_str(), last["omitted"].as_u64()), (Some("note"), Some(99_901)));
        assert!(last["code"].is_null() && last["labels"].as_array().is_some_and(|l| l.is_empty()));
    }

    #[test]
    fn long_messages_are_cut() {
        let mut map = SourceMap::new();
        let name = "ü".repeat(1_000_000);
        let f = map.add("n.cute", name.clone());
        let d = Diagnostic::error("E0001", format!("cannot find `{name}`"), f, Span::new(0, 2))
            .with_primary_message(&name)
            .with_note(&name)
            .with_help(&name);
        let text = render_plain(&map, std::slice::from_ref(&d));
        assert!(text.len() < 4 * MAX_MESSAGE + 1_000 && text.contains("cannot find `üü"), "{text}");
        let mut json = Vec::new();
        render_json(&map, &[d], &mut json).expect("writes");
        assert!(json.len() < 4 * MAX_MESSAGE + 1_000, "{}", String::from_utf8_lossy(&json));
    }
}

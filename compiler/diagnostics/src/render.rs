//! The one renderer: text through `codespan-reporting`, or one JSON object per diagnostic.

use crate::{Diagnostic, Severity, SourceMap};
use codespan_reporting::diagnostic as cs;
use codespan_reporting::term::{self, termcolor};
use std::io::{self, IsTerminal, Write};

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

fn to_codespan(map: &SourceMap, d: &Diagnostic) -> cs::Diagnostic<crate::FileId> {
    let severity = match d.severity {
        Severity::Error => cs::Severity::Error,
        Severity::Warning => cs::Severity::Warning,
        Severity::Note => cs::Severity::Note,
    };
    let labels = d
        .labels
        .iter()
        .map(|l| {
            let range = map.clamp(l.file, l.span.range());
            let style = if l.primary { cs::LabelStyle::Primary } else { cs::LabelStyle::Secondary };
            cs::Label::new(style, l.file, range).with_message(l.message.clone())
        })
        .collect();
    let mut notes = d.notes.clone();
    notes.extend(d.help.iter().map(|h| format!("help: {h}")));
    cs::Diagnostic::new(severity)
        .with_code(d.code)
        .with_message(d.message.clone())
        .with_labels(labels)
        .with_notes(notes)
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
    for d in diags {
        term::emit_to_write_style(&mut buf, &config, map, &to_codespan(map, d)).map_err(io::Error::other)?;
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

/// One JSON object per diagnostic, one per line.
pub fn render_json(map: &SourceMap, diags: &[Diagnostic], out: &mut dyn Write) -> io::Result<()> {
    for d in diags {
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
                    "message": l.message, "primary": l.primary,
                })
            })
            .collect();
        let severity = match d.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "note",
        };
        let obj = serde_json::json!({
            "severity": severity, "code": d.code, "message": d.message,
            "labels": labels, "notes": d.notes, "help": d.help,
        });
        writeln!(out, "{obj}")?;
    }
    Ok(())
}

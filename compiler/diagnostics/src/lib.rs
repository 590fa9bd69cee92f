//! Diagnostics as data, and the one place they are rendered.
//!
//! Every stage reports problems as its own error enum that holds values and [`Span`]s, never rendered text; at the
//! boundary each error becomes a [`Diagnostic`] (a stable code, a primary label, secondary labels, notes and help)
//! and [`render`] turns diagnostics into text (through `codespan-reporting`) or JSON lines.
//!
//! Invariants:
//! - **Every diagnostic has a code** (`E0001`...) listed in some crate's [`CodeInfo`] table, and at least one
//!   primary label whose span lies inside its file, except a diagnostic about no place in any file (a GPU fault,
//!   a failed write to standard output): [`Diagnostic::unlocated`] makes those, with no label at all. The JSON
//!   form is the same for both (`"labels": []` for an unlocated one).
//! - Rendering never panics, even for spans past the end of a file (they are clamped).
//! - **Rendering is bounded**: at most [`MAX_RENDERED`] diagnostics per call, then a count of the rest; each shows
//!   only the lines its labels need, long lines cut around the label ends.

mod excerpt;
mod render;
mod source;

pub use render::{ColorMode, ErrorFormat, MAX_RENDERED, render_json, render_plain, render_text};
pub use source::{FileId, SourceMap};

use std::fmt;

/// A half-open byte range `start..end` into one source file.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub struct Span {
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub fn new(start: usize, end: usize) -> Span {
        Span { start: start as u32, end: end as u32 }
    }
    /// The smallest span covering both.
    pub fn to(self, other: Span) -> Span {
        Span { start: self.start.min(other.start), end: self.end.max(other.end) }
    }
    pub fn range(self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }
    pub fn is_empty(self) -> bool {
        self.start >= self.end
    }
}

impl fmt::Debug for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}..{}", self.start, self.end)
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug, PartialOrd, Ord)]
pub enum Severity {
    Error,
    Warning,
    Note,
}

/// A span in a file with an optional message.
#[derive(Clone, PartialEq, Debug)]
pub struct Label {
    pub file: FileId,
    pub span: Span,
    pub message: String,
    pub primary: bool,
}

/// One problem found in the user's input, ready to render.
#[derive(Clone, PartialEq, Debug)]
pub struct Diagnostic {
    pub severity: Severity,
    /// A stable code such as `E0003`, explained by `cutec explain`.
    pub code: &'static str,
    pub message: String,
    pub labels: Vec<Label>,
    pub notes: Vec<String>,
    pub help: Vec<String>,
}

impl Diagnostic {
    /// An error with its primary label.
    pub fn error(code: &'static str, message: impl Into<String>, file: FileId, span: Span) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            code,
            message: message.into(),
            labels: vec![Label { file, span, message: String::new(), primary: true }],
            notes: Vec::new(),
            help: Vec::new(),
        }
    }
    /// An error about no place in any file or on the command line: what the GPU or the operating system
    /// reported while running a kernel, say. It has no label; the message must stand alone.
    pub fn unlocated(code: &'static str, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            code,
            message: message.into(),
            labels: Vec::new(),
            notes: Vec::new(),
            help: Vec::new(),
        }
    }
    pub fn warning(code: &'static str, message: impl Into<String>, file: FileId, span: Span) -> Diagnostic {
        Diagnostic { severity: Severity::Warning, ..Diagnostic::error(code, message, file, span) }
    }
    /// Sets the message of the primary label.
    pub fn with_primary_message(mut self, message: impl Into<String>) -> Diagnostic {
        if let Some(l) = self.labels.iter_mut().find(|l| l.primary) {
            l.message = message.into();
        }
        self
    }
    /// Adds a secondary label.
    pub fn with_label(mut self, file: FileId, span: Span, message: impl Into<String>) -> Diagnostic {
        self.labels.push(Label { file, span, message: message.into(), primary: false });
        self
    }
    pub fn with_note(mut self, note: impl Into<String>) -> Diagnostic {
        self.notes.push(note.into());
        self
    }
    pub fn with_help(mut self, help: impl Into<String>) -> Diagnostic {
        self.help.push(help.into());
        self
    }
    /// The primary label (every diagnostic has one, except an [`Diagnostic::unlocated`] one).
    pub fn primary(&self) -> Option<&Label> {
        self.labels.iter().find(|l| l.primary)
    }
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

/// One entry of an error-code index: what `cutec explain CODE` prints.
#[derive(Clone, Copy, Debug)]
pub struct CodeInfo {
    pub code: &'static str,
    /// A short title, e.g. "unknown name".
    pub title: &'static str,
    /// One paragraph or more: what the error means and how to fix it, with a small example.
    pub explanation: &'static str,
}

/// Finds the explanation of `code` in a list of tables.
pub fn explain<'a>(tables: &[&'a [CodeInfo]], code: &str) -> Option<&'a CodeInfo> {
    tables.iter().flat_map(|t| t.iter()).find(|c| c.code.eq_ignore_ascii_case(code))
}

/// The closest of `candidates` to `name` by edit distance, if it is close enough to be a plausible typo:
/// the "did you mean" of every diagnostic that reports an unknown name.
/// Names longer than [`MAX_SUGGEST_LEN`] characters get no suggestion: nobody mistypes a name that long, and the
/// edit distance costs the product of the lengths.
pub fn suggest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    // A char is at most 4 bytes: the byte length rules out long names without counting their characters.
    if name.len() > 4 * MAX_SUGGEST_LEN || name.chars().count() > MAX_SUGGEST_LEN {
        return None;
    }
    let len = name.chars().count();
    let max = (len.max(3) / 3).max(1);
    candidates
        .into_iter()
        .filter(|c| *c != name && c.chars().count().abs_diff(len) <= max)
        .map(|c| (edit_distance(name, c), c))
        .filter(|(d, _)| *d <= max)
        .min_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(b.1)))
        .map(|(_, c)| c)
}

/// The longest name [`suggest`] looks for a correction of.
pub const MAX_SUGGEST_LEN: usize = 64;

/// Levenshtein distance, case differences counting half (rounded down) so `F32` suggests `f32`.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).map(|j| j * 2).collect();
    let mut cur = vec![0; b.len() + 1];
    for i in 1..=a.len() {
        cur[0] = i * 2;
        for j in 1..=b.len() {
            let sub = if a[i - 1] == b[j - 1] {
                0
            } else if a[i - 1].eq_ignore_ascii_case(&b[j - 1]) {
                1
            } else {
                2
            };
            cur[j] = (prev[j - 1] + sub).min(prev[j] + 2).min(cur[j - 1] + 2);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()] / 2
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_close_names_only() {
        let names = ["thread_idx", "block_idx", "block_dim", "x"];
        assert_eq!(suggest("thread_id", names), Some("thread_idx"));
        assert_eq!(suggest("blok_idx", names), Some("block_idx"));
        assert_eq!(suggest("zzzzzz", names), None);
        assert_eq!(suggest("F32", ["f32", "f16"]), Some("f32"));
        // A name too long to be a typo, or a candidate whose length alone puts it too far, is not compared.
        let long = "a".repeat(MAX_SUGGEST_LEN + 1);
        assert_eq!(suggest(&long, [&long[1..]]), None);
        assert_eq!(suggest("ab", ["abcdef"]), None);
    }

    #[test]
    fn an_unlocated_diagnostic_renders_without_a_snippet() {
        let d = Diagnostic::unlocated("E0001", "the GPU faulted").with_note("a note");
        assert!(d.primary().is_none());
        let text = render_plain(&SourceMap::new(), std::slice::from_ref(&d));
        assert_eq!(text, "error[E0001]: the GPU faulted\n = a note\n\n");
        let mut json = Vec::new();
        render_json(&SourceMap::new(), &[d], &mut json).expect("writing to a Vec");
        let v: serde_json::Value = serde_json::from_slice(&json).expect("one JSON object");
        assert_eq!(v["labels"], serde_json::json!([]));
        assert_eq!(v["code"], "E0001");
    }

    #[test]
    fn edit_distance_is_levenshtein() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("abc", "abc"), 0);
    }
}

//! Excerpts: what one diagnostic shows of its files, and nothing more.
//!
//! codespan-reporting echoes every line a label touches in full and walks every line a multi-line label spans. On
//! adversarial input (a line of ten million characters, a label over a whole 50 MB file) that makes each diagnostic
//! cost as much as the input, and a run with many of them quadratic. So each diagnostic is rendered against an
//! excerpt: only the lines codespan would show, long ones cut to windows around the label ends (`…` marks what is
//! left out), reporting the original line and column numbers. Rendering a diagnostic then costs what its labels
//! cover on screen, not what the file holds. Lines up to [`MAX_LINE`] bytes are shown whole, so ordinary output is
//! exactly codespan's.

use crate::{Diagnostic, FileId, SourceMap};
use codespan_reporting::files::{self, Files};
use std::collections::BTreeMap;
use std::ops::Range;

/// Lines up to this many bytes are shown whole.
const MAX_LINE: usize = 200;
/// Bytes shown on each side of a label end on a longer line.
const CONTEXT: usize = 40;
/// Marks text left out of a line.
const ELLIPSIS: &str = "…";
/// codespan's `term::Config` defaults: the lines shown after the first line of a multi-line label and before its
/// last line.
const START_CONTEXT_LINES: usize = 3;
const END_CONTEXT_LINES: usize = 1;

/// The excerpts of the files one diagnostic labels, as codespan's `Files` (ids are indices into `files`).
pub(crate) struct Excerpt<'a> {
    map: &'a SourceMap,
    files: Vec<ExcerptFile>,
}

struct ExcerptFile {
    id: FileId,
    text: String,
    /// In excerpt order: the excerpt line index is the index here.
    lines: Vec<ExcerptLine>,
}

struct ExcerptLine {
    /// The line in `text`, its newline included.
    range: Range<usize>,
    /// The 0-based index of the line in the original file.
    line: usize,
    /// The kept pieces of the original line, in order: (original range, start in `text`).
    pieces: Vec<(Range<usize>, usize)>,
}

impl ExcerptLine {
    fn to_excerpt(&self, offset: usize) -> usize {
        let piece = self.pieces.iter().find(|(r, _)| r.contains(&offset) || r.end == offset);
        match piece.or_else(|| self.pieces.iter().rev().find(|(r, _)| r.end <= offset)) {
            Some((r, at)) => at + offset.clamp(r.start, r.end) - r.start,
            None => self.pieces.first().map_or(self.range.start, |(_, at)| *at),
        }
    }

    fn to_original(&self, offset: usize) -> Option<usize> {
        let piece = self.pieces.iter().rev().find(|(_, at)| *at <= offset)?;
        Some(piece.0.start + (offset - piece.1).min(piece.0.len()))
    }
}

/// A label of the diagnostic in its excerpt: the excerpt file's index and the range in its text.
pub(crate) type ExcerptLabel = (usize, Range<usize>);

/// The excerpt of `d`'s files, and each of `d`'s labels (in order) placed in it.
pub(crate) fn excerpt<'a>(map: &'a SourceMap, d: &Diagnostic) -> (Excerpt<'a>, Vec<ExcerptLabel>) {
    let mut ids: Vec<FileId> = Vec::new();
    for l in &d.labels {
        if !ids.contains(&l.file) {
            ids.push(l.file);
        }
    }
    let ranges: Vec<Range<usize>> = d.labels.iter().map(|l| map.clamp(l.file, l.span.range())).collect();
    let mut files = Vec::with_capacity(ids.len());
    for &id in &ids {
        let mine = d.labels.iter().zip(&ranges).filter(|(l, _)| l.file == id).map(|(_, r)| r.clone());
        files.push(excerpt_file(map, id, mine.collect()));
    }
    let labels = d
        .labels
        .iter()
        .zip(ranges)
        .map(|(l, r)| {
            let index = ids.iter().position(|&f| f == l.file).unwrap_or(0);
            let file = &files[index];
            (index, file.place(map, l.file, r.start)..file.place(map, l.file, r.end))
        })
        .collect();
    (Excerpt { map, files }, labels)
}

/// The lines codespan shows for labels over `ranges` of file `id`, each with the offsets that must stay visible.
fn shown_lines(map: &SourceMap, id: FileId, ranges: &[Range<usize>]) -> BTreeMap<usize, Vec<usize>> {
    let mut lines: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for r in ranges {
        let (first, last) = (map.line_of(id, r.start), map.line_of(id, r.end));
        lines.entry(first).or_default().push(r.start);
        lines.entry(last).or_default().push(r.end);
        if last > first {
            for l in (first + 1..=(first + START_CONTEXT_LINES).min(last))
                .chain(last.saturating_sub(END_CONTEXT_LINES)..last)
            {
                lines.entry(l.max(first)).or_default();
            }
        }
    }
    // codespan shows the one line between two shown lines rather than a break.
    let keys: Vec<usize> = lines.keys().copied().collect();
    for pair in keys.windows(2) {
        if pair[1] - pair[0] == 2 {
            lines.entry(pair[0] + 1).or_default();
        }
    }
    lines
}

fn excerpt_file(map: &SourceMap, id: FileId, ranges: Vec<Range<usize>>) -> ExcerptFile {
    let src = map.source(id);
    let mut file = ExcerptFile { id, text: String::new(), lines: Vec::new() };
    let mut previous: Option<usize> = None;
    for (line, points) in shown_lines(map, id, &ranges) {
        // Two empty lines stand for any gap, so that codespan draws a break there as it would over the gap.
        if let Some(p) = previous
            && line > p + 1
        {
            for _ in 0..2 {
                let at = file.text.len();
                file.text.push('\n');
                file.lines.push(ExcerptLine { range: at..at + 1, line: p + 1, pieces: Vec::new() });
            }
        }
        previous = Some(line);
        let whole = map.line_span(id, line);
        let content = whole.start..src[whole.clone()].trim_end_matches(['\n', '\r']).len() + whole.start;
        let start = file.text.len();
        let mut pieces = Vec::new();
        for window in windows(src, content.clone(), &points) {
            if window.start > pieces.last().map_or(content.start, |(r, _): &(Range<usize>, usize)| r.end) {
                file.text.push_str(ELLIPSIS);
            }
            pieces.push((window.clone(), file.text.len()));
            file.text.push_str(&src[window]);
        }
        if pieces.last().is_some_and(|(r, _)| r.end < content.end) {
            file.text.push_str(ELLIPSIS);
        }
        file.text.push('\n');
        file.lines.push(ExcerptLine { range: start..file.text.len(), line, pieces });
    }
    file
}

/// The parts of the line `content` to show: all of it when short, else a window around each of `points`
/// (merged where they overlap), or its beginning when no point is on it.
fn windows(src: &str, content: Range<usize>, points: &[usize]) -> Vec<Range<usize>> {
    if content.len() <= MAX_LINE {
        return vec![content];
    }
    let floor = |mut i: usize| {
        while !src.is_char_boundary(i) {
            i -= 1;
        }
        i
    };
    let ceil = |mut i: usize| {
        while !src.is_char_boundary(i) {
            i += 1;
        }
        i
    };
    let mut ws: Vec<Range<usize>> = points
        .iter()
        .map(|&p| {
            let p = p.clamp(content.start, content.end);
            floor(p.saturating_sub(CONTEXT).max(content.start))..ceil((p + CONTEXT).min(content.end))
        })
        .collect();
    if ws.is_empty() {
        ws.push(content.start..floor(content.start + MAX_LINE));
    }
    ws.sort_by_key(|w| w.start);
    let mut merged: Vec<Range<usize>> = Vec::with_capacity(ws.len());
    for w in ws {
        match merged.last_mut() {
            Some(last) if w.start <= last.end => last.end = last.end.max(w.end),
            _ => merged.push(w),
        }
    }
    merged
}

impl ExcerptFile {
    /// Where the original `offset` (on a shown line) is in the excerpt.
    fn place(&self, map: &SourceMap, id: FileId, offset: usize) -> usize {
        let line = map.line_of(id, offset);
        match self.lines.iter().find(|l| l.line == line && !l.pieces.is_empty()) {
            Some(l) => l.to_excerpt(offset),
            None => self.lines.iter().find(|l| l.line == line).map_or(0, |l| l.range.start),
        }
    }

    fn line(&self, index: usize) -> Result<&ExcerptLine, files::Error> {
        self.lines
            .get(index)
            .ok_or(files::Error::LineTooLarge { given: index, max: self.lines.len().saturating_sub(1) })
    }
}

impl Excerpt<'_> {
    fn file(&self, id: usize) -> Result<&ExcerptFile, files::Error> {
        self.files.get(id).ok_or(files::Error::FileMissing)
    }
}

impl<'a> Files<'a> for Excerpt<'_> {
    type FileId = usize;
    type Name = &'a str;
    type Source = &'a str;

    fn name(&'a self, id: usize) -> Result<&'a str, files::Error> {
        Ok(self.map.name(self.file(id)?.id))
    }
    fn source(&'a self, id: usize) -> Result<&'a str, files::Error> {
        Ok(&self.file(id)?.text)
    }
    fn line_index(&'a self, id: usize, byte_index: usize) -> Result<usize, files::Error> {
        let f = self.file(id)?;
        Ok(f.lines.partition_point(|l| l.range.start <= byte_index).saturating_sub(1))
    }
    fn line_number(&'a self, id: usize, line_index: usize) -> Result<usize, files::Error> {
        Ok(self.file(id)?.line(line_index)?.line + 1)
    }
    /// The column in the original line, in characters.
    fn column_number(&'a self, id: usize, line_index: usize, byte_index: usize) -> Result<usize, files::Error> {
        let f = self.file(id)?;
        let line = f.line(line_index)?;
        let Some(offset) = line.to_original(byte_index) else { return Ok(1) };
        Ok(self.map.line_col(f.id, offset).1)
    }
    fn line_range(&'a self, id: usize, line_index: usize) -> Result<Range<usize>, files::Error> {
        Ok(self.file(id)?.line(line_index)?.range.clone())
    }
}

#[cfg(test)]
mod tests {
    use crate::{Diagnostic, FileId, SourceMap, Span, render_plain};
    use codespan_reporting::diagnostic as cs;
    use codespan_reporting::term::{self, termcolor};

    /// What codespan renders from the whole file: the excerpt must not change it where lines are short.
    fn codespan_plain(map: &SourceMap, d: &Diagnostic) -> String {
        let labels = d
            .labels
            .iter()
            .map(|l| {
                let style = if l.primary { cs::LabelStyle::Primary } else { cs::LabelStyle::Secondary };
                cs::Label::new(style, l.file, map.clamp(l.file, l.span.range())).with_message(l.message.clone())
            })
            .collect();
        let diagnostic = cs::Diagnostic::error().with_code(d.code).with_message(&d.message).with_labels(labels);
        let mut buf = termcolor::Buffer::no_color();
        term::emit_to_write_style(&mut buf, &term::Config::default(), map, &diagnostic).expect("renders");
        String::from_utf8_lossy(buf.as_slice()).into_owned()
    }

    fn sample() -> (SourceMap, FileId, FileId) {
        let mut map = SourceMap::new();
        let text: String = (1..=40).map(|i| format!("line {i} of a short file ü\n")).collect();
        let a = map.add("a.cute", text);
        let b = map.add("b.cute", "fn f() {\n    x\n}");
        (map, a, b)
    }

    #[test]
    fn short_lines_render_exactly_as_codespan_does() {
        let (map, a, b) = sample();
        let line = |n: usize| map.line_span(a, n - 1).start;
        let cases = [
            Diagnostic::error("E0001", "one label", a, Span::new(line(3) + 5, line(3) + 7)),
            Diagnostic::error("E0001", "empty label at the end", b, Span::new(19, 19)),
            Diagnostic::error("E0001", "multi-line", a, Span::new(line(2) + 1, line(30) + 4)).with_primary_message("m"),
            Diagnostic::error("E0001", "short multi-line", a, Span::new(line(5), line(8) + 2)),
            Diagnostic::error("E0001", "two files", a, Span::new(line(10), line(10) + 4))
                .with_label(b, Span::new(13, 14), "here")
                .with_label(a, Span::new(line(12), line(12) + 1), "two lines on")
                .with_label(a, Span::new(line(39), line(40) + 3), "far"),
            Diagnostic::error("E0001", "past the end", a, Span::new(10_000, 10_010)),
        ];
        for d in cases {
            assert_eq!(render_plain(&map, std::slice::from_ref(&d)), codespan_plain(&map, &d), "{}", d.message);
        }
    }

    #[test]
    fn long_lines_are_cut_around_the_labels() {
        let mut map = SourceMap::new();
        let line = format!("{}ü{}", "}".repeat(500_000), "(".repeat(500_000));
        let head = "kernel k() {\n";
        let f = map.add("long.cute", format!("{head}{line}\n}}\n"));
        let at = head.len() + 500_000;
        let d = Diagnostic::error("E0001", "here", f, Span::new(at, at + 2))
            .with_label(f, Span::new(head.len(), head.len() + 1), "start")
            .with_label(f, Span::new(0, head.len() + line.len()), "across");
        let out = render_plain(&map, &[d]);
        assert!(out.len() < 2_000, "{} bytes:\n{out}", out.len());
        // Line and column are those of the original file, in characters.
        assert!(out.contains("long.cute:2:500001"), "{out}");
        assert!(out.contains("}}}}ü((((") && out.contains('…'), "{out}");
        // The multi-line label ends under the last character of the long line.
        let width = |l: &str, upto: char| l.chars().position(|c| c == upto);
        let shown = out.lines().find(|l| l.starts_with("2 ")).expect("line 2");
        let across = out.lines().find(|l| l.ends_with("' across")).expect("the label's end");
        assert_eq!(width(across, '\''), Some(shown.chars().count() - 1), "{out}");
    }

    #[test]
    fn a_label_over_a_big_file_shows_its_ends() {
        let mut map = SourceMap::new();
        let f = map.add("big.cute", "let x = 1;\n".repeat(200_000));
        let d = Diagnostic::error("E0001", "everything", f, Span::new(0, 2_200_000));
        let out = render_plain(&map, &[d]);
        assert!(out.len() < 1_000 && out.contains("200001"), "{out}");
    }
}

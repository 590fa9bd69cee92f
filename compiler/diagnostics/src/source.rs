//! The files a compilation reads: user files and the standard library modules it `use`s.

use codespan_reporting::files::{self, Files};
use std::ops::Range;

/// Index of a file in a [`SourceMap`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default, PartialOrd, Ord)]
pub struct FileId(pub u32);

/// Names and contents of every source file, with precomputed line starts.
#[derive(Default, Debug, Clone)]
pub struct SourceMap {
    files: Vec<SourceFile>,
}

#[derive(Debug, Clone)]
struct SourceFile {
    name: String,
    source: String,
    line_starts: Vec<usize>,
}

impl SourceMap {
    pub fn new() -> SourceMap {
        SourceMap::default()
    }
    pub fn add(&mut self, name: impl Into<String>, source: impl Into<String>) -> FileId {
        let source = source.into();
        let line_starts = files::line_starts(&source).collect();
        self.files.push(SourceFile { name: name.into(), source, line_starts });
        FileId(self.files.len() as u32 - 1)
    }
    pub fn name(&self, id: FileId) -> &str {
        self.files.get(id.0 as usize).map_or("<unknown>", |f| &f.name)
    }
    pub fn source(&self, id: FileId) -> &str {
        self.files.get(id.0 as usize).map_or("", |f| &f.source)
    }
    /// 1-based line and column (in characters) of a byte offset, clamped to the file.
    pub fn line_col(&self, id: FileId, offset: usize) -> (usize, usize) {
        let Some(f) = self.files.get(id.0 as usize) else { return (1, 1) };
        let offset = clamp_to_char_boundary(&f.source, offset);
        let line = f.line_starts.partition_point(|&s| s <= offset).saturating_sub(1);
        let start = f.line_starts.get(line).copied().unwrap_or(0);
        let col = f.source[start..offset].chars().count();
        (line + 1, col + 1)
    }
    /// The 0-based index of the line holding `offset`.
    pub(crate) fn line_of(&self, id: FileId, offset: usize) -> usize {
        self.files.get(id.0 as usize).map_or(0, |f| f.line_starts.partition_point(|&s| s <= offset).saturating_sub(1))
    }
    /// The byte range of a line, its newline included (empty past the end of the file).
    pub(crate) fn line_span(&self, id: FileId, line: usize) -> Range<usize> {
        let Some(f) = self.files.get(id.0 as usize) else { return 0..0 };
        let start = f.line_starts.get(line).copied().unwrap_or(f.source.len());
        let end = f.line_starts.get(line + 1).copied().unwrap_or(f.source.len());
        start..end.max(start)
    }
    /// `range` clamped to the file and to character boundaries, so rendering never panics.
    pub fn clamp(&self, id: FileId, range: Range<usize>) -> Range<usize> {
        let src = self.source(id);
        let start = clamp_to_char_boundary(src, range.start);
        let end = clamp_to_char_boundary(src, range.end.max(start));
        start..end
    }
}

fn clamp_to_char_boundary(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

impl<'a> Files<'a> for SourceMap {
    type FileId = FileId;
    type Name = &'a str;
    type Source = &'a str;

    fn name(&'a self, id: FileId) -> Result<&'a str, files::Error> {
        self.files.get(id.0 as usize).map(|f| f.name.as_str()).ok_or(files::Error::FileMissing)
    }
    fn source(&'a self, id: FileId) -> Result<&'a str, files::Error> {
        self.files.get(id.0 as usize).map(|f| f.source.as_str()).ok_or(files::Error::FileMissing)
    }
    fn line_index(&'a self, id: FileId, byte_index: usize) -> Result<usize, files::Error> {
        let f = self.files.get(id.0 as usize).ok_or(files::Error::FileMissing)?;
        Ok(f.line_starts.partition_point(|&s| s <= byte_index).saturating_sub(1))
    }
    fn line_range(&'a self, id: FileId, line_index: usize) -> Result<Range<usize>, files::Error> {
        let f = self.files.get(id.0 as usize).ok_or(files::Error::FileMissing)?;
        let start = *f
            .line_starts
            .get(line_index)
            .ok_or(files::Error::LineTooLarge { given: line_index, max: f.line_starts.len() - 1 })?;
        let end = f.line_starts.get(line_index + 1).copied().unwrap_or(f.source.len());
        Ok(start..end)
    }
}

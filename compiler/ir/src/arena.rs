//! Typed handles into per-kernel arenas, with source locations in a side table.
//!
//! A [`Handle<T>`] is a 32-bit index that only an [`Arena<T>`] hands out, so a handle to an expression cannot be
//! mistaken for a handle to a variable. Handles are dense and ordered by creation, which the printer and the
//! passes rely on for stable output. The arena never removes entries: passes that delete code leave dead entries
//! behind (they are unreachable from the body and the printer does not show them).

use cutec_diagnostics::{FileId, Span};
use std::fmt;
use std::marker::PhantomData;

/// Where a node came from: a byte range in one source file. [`Loc::NONE`] for nodes the compiler made up.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct Loc {
    pub file: FileId,
    pub span: Span,
}

impl Loc {
    /// The location of synthesized nodes (an empty span in file 0).
    pub const NONE: Loc = Loc { file: FileId(0), span: Span { start: 0, end: 0 } };

    pub fn new(file: FileId, span: Span) -> Loc {
        Loc { file, span }
    }
}

/// An index into an [`Arena<T>`].
pub struct Handle<T> {
    index: u32,
    _marker: PhantomData<fn() -> T>,
}

impl<T> Handle<T> {
    pub(crate) const fn new(index: u32) -> Self {
        Handle { index, _marker: PhantomData }
    }
    /// The position of the node in its arena (0-based).
    pub fn index(self) -> usize {
        self.index as usize
    }
    /// A handle from an index; whether it is in range is checked by the validator, not here.
    pub fn from_index(index: usize) -> Self {
        Handle::new(index as u32)
    }
}

// Manual impls: derives would require `T: Clone` etc.
impl<T> Clone for Handle<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Handle<T> {}
impl<T> PartialEq for Handle<T> {
    fn eq(&self, other: &Self) -> bool {
        self.index == other.index
    }
}
impl<T> Eq for Handle<T> {}
impl<T> PartialOrd for Handle<T> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl<T> Ord for Handle<T> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.index.cmp(&other.index)
    }
}
impl<T> std::hash::Hash for Handle<T> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.index.hash(state)
    }
}
impl<T> fmt::Debug for Handle<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}]", self.index)
    }
}

/// Nodes of one kind, each with the [`Loc`] it came from.
#[derive(Clone, Debug)]
pub struct Arena<T> {
    data: Vec<T>,
    locs: Vec<Loc>,
}

impl<T> Default for Arena<T> {
    fn default() -> Self {
        Arena { data: Vec::new(), locs: Vec::new() }
    }
}

impl<T> Arena<T> {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn append(&mut self, value: T, loc: Loc) -> Handle<T> {
        let h = Handle::new(self.data.len() as u32);
        self.data.push(value);
        self.locs.push(loc);
        h
    }
    pub fn len(&self) -> usize {
        self.data.len()
    }
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }
    pub fn get(&self, h: Handle<T>) -> Option<&T> {
        self.data.get(h.index())
    }
    pub fn get_mut(&mut self, h: Handle<T>) -> Option<&mut T> {
        self.data.get_mut(h.index())
    }
    /// Whether `h` points into this arena.
    pub fn contains(&self, h: Handle<T>) -> bool {
        h.index() < self.data.len()
    }
    pub fn loc(&self, h: Handle<T>) -> Loc {
        self.locs.get(h.index()).copied().unwrap_or(Loc::NONE)
    }
    pub fn iter(&self) -> impl Iterator<Item = (Handle<T>, &T)> {
        self.data.iter().enumerate().map(|(i, v)| (Handle::from_index(i), v))
    }
}

/// Indexing panics on a handle from another arena; code after validation may rely on it.
impl<T> std::ops::Index<Handle<T>> for Arena<T> {
    type Output = T;
    fn index(&self, h: Handle<T>) -> &T {
        &self.data[h.index()]
    }
}

impl<T> std::ops::IndexMut<Handle<T>> for Arena<T> {
    fn index_mut(&mut self, h: Handle<T>) -> &mut T {
        &mut self.data[h.index()]
    }
}

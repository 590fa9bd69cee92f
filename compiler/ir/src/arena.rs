//! Typed handles into per-kernel arenas, with source locations in a side table.
//!
//! A [`Handle<T>`] is a 32-bit index that only an [`Arena<T>`] hands out, so a handle to an expression cannot be
//! mistaken for a handle to a variable. Handles are dense and ordered by creation, which the printer and the
//! passes rely on for stable output. The arena never removes entries: passes that delete code leave dead entries
//! behind (they are unreachable from the body and the printer does not show them).
//!
//! Only this module turns an integer into a handle: elsewhere handles come from [`Arena::append`], from
//! iterating an arena, or (for the lowering's symbolic integers) from [`Handle::from_value_id`], the typed way
//! back from the [`ValueId`] an expression handle converts into.

use crate::Expr;
use cutec_diagnostics::{FileId, Span};
use cutec_symint::ValueId;
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
    /// Private: a handle is made by the arena it points into (see the module docs).
    const fn new(index: u32) -> Self {
        Handle { index, _marker: PhantomData }
    }
    /// The position of the node in its arena (0-based).
    pub fn index(self) -> usize {
        self.index as usize
    }
}

/// An IR expression as the run-time leaf of a symbolic integer (`cutec_symint::SymInt::Value`), owned by the IR.
impl From<Handle<Expr>> for ValueId {
    fn from(h: Handle<Expr>) -> ValueId {
        ValueId::Ir(h.index)
    }
}

impl Handle<Expr> {
    /// The IR expression a symbolic integer's run-time leaf stands for; `None` for a leaf of the checker's (a
    /// source expression, which is no IR value). Whether it is in range is checked by the validator, not here.
    pub fn from_value_id(id: ValueId) -> Option<Handle<Expr>> {
        match id {
            ValueId::Ir(index) => Some(Handle::new(index)),
            ValueId::Node(_) => None,
        }
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
        let h = self.next_handle();
        self.data.push(value);
        self.locs.push(loc);
        h
    }
    /// The handle the next [`Arena::append`] returns.
    pub fn next_handle(&self) -> Handle<T> {
        Handle::new(self.data.len() as u32)
    }
    /// Every handle of the arena, in order. The iterator does not borrow the arena, so nodes may be replaced
    /// while it runs (nodes appended meanwhile are not visited).
    pub fn handles(&self) -> impl Iterator<Item = Handle<T>> + use<T> {
        (0..self.data.len() as u32).map(Handle::new)
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
        self.handles().zip(&self.data)
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

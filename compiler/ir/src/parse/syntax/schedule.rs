//! The schedule's entities (`barrier #b0 ..`, `ring #r0: ..`) as [`crate::schedule`] prints them.

use super::super::lexer::Tok;
use super::{PResult, Parser};
use crate::arena::{Handle, Loc};
use crate::module::Alloc;
use crate::schedule::{Barrier, BarrierKind, Filler, Owner, Release, Ring, WgmmaGroup};

impl Parser {
    /// `#bN` or `#rN`, checked against the next handle of its arena: entities are declared in order.
    fn entity(&mut self, prefix: char) -> PResult<usize> {
        match self.next()? {
            Tok::Entity(name) => match name.strip_prefix(prefix).and_then(|n| n.parse::<usize>().ok()) {
                Some(n) => Ok(n),
                None => self.error(format!("expected `#{prefix}N`, found `#{name}`")),
            },
            other => {
                self.pos -= 1;
                self.error(format!("expected `#{prefix}N`, found {other:?}"))
            }
        }
    }

    /// A declared barrier: `#bN`.
    pub(super) fn barrier_ref(&mut self) -> PResult<Handle<Barrier>> {
        let n = self.entity('b')?;
        match self.kernel.barriers.handles().nth(n) {
            Some(h) => Ok(h),
            None => self.error(format!("no barrier `#b{n}`")),
        }
    }

    fn alloc_ref(&mut self) -> PResult<Handle<Alloc>> {
        match self.next()? {
            Tok::Alloc(name) => match self.allocs.get(&name) {
                Some(&a) => Ok(a),
                None => self.error(format!("no allocation `@{name}`")),
            },
            other => {
                self.pos -= 1;
                self.error(format!("expected an allocation `@name`, found {other:?}"))
            }
        }
    }

    /// `#bN PURPOSE: mbarrier @a arrivals(A) bytes(B) [program]` or `#bN PURPOSE: named ids(F..E) threads(T)
    /// [program]`, after `barrier`.
    pub(super) fn barrier_decl(&mut self) -> PResult<()> {
        let n = self.entity('b')?;
        if n != self.kernel.barriers.len() {
            return self.error(format!("barrier `#b{n}` declared out of order"));
        }
        let purpose = self.word()?;
        self.punct(':')?;
        let kind = match self.word()?.as_str() {
            "mbarrier" => {
                let alloc = self.alloc_ref()?;
                self.keyword("arrivals")?;
                let arrivals = self.paren_int()?;
                self.keyword("bytes")?;
                BarrierKind::Mbarrier { alloc, arrivals, bytes: self.paren_int()? }
            }
            "named" => {
                self.keyword("ids")?;
                self.punct('(')?;
                let first: u32 = self.integer()?;
                if self.next()? != Tok::DotDot {
                    return self.error("expected `..`");
                }
                let end: u32 = self.integer()?;
                self.punct(')')?;
                let Some(count) = end.checked_sub(first).filter(|&c| c > 0) else {
                    return self.error(format!("ids {first}..{end} is an empty range"));
                };
                self.keyword("threads")?;
                BarrierKind::Named { first, count, threads: self.paren_int()? }
            }
            other => return self.error(format!("expected `mbarrier` or `named`, found `{other}`")),
        };
        let owner = if self.eat_word("program") { Owner::Program } else { Owner::Compiler };
        self.kernel.barriers.append(Barrier { purpose, kind, owner }, Loc::NONE);
        Ok(())
    }

    /// `#rN: tiles(@a, ..) stages(S) full(#bF) empty(#bE) filler(thread0|producer)
    /// release(end_of_iteration|after_group)`, after `ring`.
    pub(super) fn ring_decl(&mut self) -> PResult<()> {
        let n = self.entity('r')?;
        if n != self.kernel.rings.len() {
            return self.error(format!("ring `#r{n}` declared out of order"));
        }
        self.punct(':')?;
        self.keyword("tiles")?;
        self.punct('(')?;
        let mut tiles = vec![self.alloc_ref()?];
        while self.eat_punct(',') {
            tiles.push(self.alloc_ref()?);
        }
        self.punct(')')?;
        self.keyword("stages")?;
        let stages = self.paren_int()?;
        self.keyword("full")?;
        self.punct('(')?;
        let full = self.barrier_ref()?;
        self.punct(')')?;
        self.keyword("empty")?;
        self.punct('(')?;
        let empty = self.barrier_ref()?;
        self.punct(')')?;
        self.keyword("filler")?;
        self.punct('(')?;
        let filler = match self.word()?.as_str() {
            "thread0" => Filler::Thread0,
            "producer" => Filler::Producer,
            other => return self.error(format!("expected `thread0` or `producer`, found `{other}`")),
        };
        self.punct(')')?;
        self.keyword("release")?;
        self.punct('(')?;
        let release = match self.word()?.as_str() {
            "end_of_iteration" => Release::EndOfIteration,
            "after_group" => Release::AfterGroup,
            other => return self.error(format!("expected `end_of_iteration` or `after_group`, found `{other}`")),
        };
        self.punct(')')?;
        self.kernel.rings.append(Ring { tiles, stages, full, empty, filler, release }, Loc::NONE);
        Ok(())
    }
}

impl Parser {
    /// A declared wgmma group: `#gN`.
    pub(super) fn group_ref(&mut self) -> PResult<Handle<WgmmaGroup>> {
        let n = self.entity('g')?;
        match self.kernel.groups.handles().nth(n) {
            Some(h) => Ok(h),
            None => self.error(format!("no wgmma group `#g{n}`")),
        }
    }

    /// `(@a, @b)`, possibly empty.
    fn alloc_list(&mut self) -> PResult<Vec<Handle<Alloc>>> {
        self.punct('(')?;
        let mut v = Vec::new();
        if self.eat_punct(')') {
            return Ok(v);
        }
        loop {
            v.push(self.alloc_ref()?);
            if self.eat_punct(')') {
                return Ok(v);
            }
            self.punct(',')?;
        }
    }

    /// `#gN: reads(@a, ..) writes(@acc, ..)`, after `group`.
    pub(super) fn group_decl(&mut self) -> PResult<()> {
        let n = self.entity('g')?;
        if n != self.kernel.groups.len() {
            return self.error(format!("wgmma group `#g{n}` declared out of order"));
        }
        self.punct(':')?;
        self.keyword("reads")?;
        let reads = self.alloc_list()?;
        self.keyword("writes")?;
        let writes = self.alloc_list()?;
        self.kernel.groups.append(WgmmaGroup { reads, writes }, Loc::NONE);
        Ok(())
    }
}

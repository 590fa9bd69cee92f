//! The grammar of the text form, one method per construct, as [`crate::print`] writes it. Operands are parsed
//! into *references* (a printed number, or a global expression) that [`super::number`] turns into handles. Kernels,
//! declarations, statements and operands are here; operations in [`op`], expressions in [`expr`].

mod expr;
mod op;
mod schedule;

use super::ParseError;
use super::lexer::{Spanned, Tok};
use crate::arena::{Arena, Handle, Loc};
use crate::expr::{Expr, Literal, SpecialReg};
use crate::module::{Alloc, Kernel, Param, Var};
use crate::schedule::RoleKind;
use crate::stmt::{Barrier, Block, Role, RoleRegion, Stmt, Unroll};
use crate::types::{AddrSpace, Scalar, Type};
use std::collections::HashMap;

/// What an operand refers to before numbering.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum Ref {
    /// `%12`: the expression printed with that number.
    Num(u32),
    /// A literal, parameter or allocation address.
    Global(Expr),
}

/// A parsed kernel: declarations in `kernel`, and a body whose handles index `refs`.
pub struct Parsed {
    pub kernel: Kernel,
    pub body: Block,
    pub refs: Vec<Ref>,
    /// The expression each printed number defines, operands indexing `refs`; where it is defined (for errors).
    pub defs: HashMap<u32, (Expr, u32, u32)>,
}

pub struct Parser {
    toks: Vec<Spanned>,
    pos: usize,
    kernel: Kernel,
    refs: Vec<Ref>,
    /// One placeholder per reference: it hands out the operands' handles, which index `refs`.
    ref_handles: Arena<Expr>,
    ref_ids: HashMap<Ref, Handle<Expr>>,
    defs: HashMap<u32, (Expr, u32, u32)>,
    vars: HashMap<String, Handle<Var>>,
    allocs: HashMap<String, Handle<Alloc>>,
}

type PResult<T> = Result<T, ParseError>;

fn scalar(name: &str) -> Option<Scalar> {
    Some(match name {
        "i1" => Scalar::I1,
        "i32" => Scalar::I32,
        "i64" => Scalar::I64,
        "f16" => Scalar::F16,
        "bf16" => Scalar::BF16,
        "f32" => Scalar::F32,
        "f64" => Scalar::F64,
        "e4m3" => Scalar::E4M3,
        "e5m2" => Scalar::E5M2,
        _ => return None,
    })
}

fn space(name: &str) -> Option<AddrSpace> {
    Some(match name {
        "global" => AddrSpace::Global,
        "shared" => AddrSpace::Shared,
        "local" => AddrSpace::Local,
        "param" => AddrSpace::Param,
        "shared_cluster" => AddrSpace::SharedCluster,
        _ => return None,
    })
}

/// `f32`, `f32x4`.
fn value_type(name: &str) -> Option<Type> {
    if let Some(s) = scalar(name) {
        return Some(Type::Scalar(s));
    }
    let (s, lanes) = name.rsplit_once('x')?;
    Some(Type::Vector { scalar: scalar(s)?, lanes: lanes.parse().ok()? })
}

/// A literal as the printer writes it (see `print::literal`).
fn literal(text: &str) -> Option<Literal> {
    // `bf16` before `f16`, which is its tail.
    let suffixes = ["bf16", "i1", "i32", "i64", "f16", "f32", "f64"];
    let (body, suffix) = suffixes
        .iter()
        .filter(|s| text.len() > s.len() && text.ends_with(*s))
        .map(|s| (&text[..text.len() - s.len()], scalar(s)))
        .next()
        .unwrap_or((text, None));
    let float = |v: f64, ty| Some(Literal::Float { value: v, ty });
    match body {
        "inf" => return float(f64::INFINITY, suffix.unwrap_or(Scalar::F32)),
        "-inf" => return float(f64::NEG_INFINITY, suffix.unwrap_or(Scalar::F32)),
        "nan" => return float(f64::NAN, suffix.unwrap_or(Scalar::F32)),
        _ => {}
    }
    if body.contains(['.', 'e', 'E']) {
        let ty = suffix.unwrap_or(Scalar::F32);
        // f32 literals print through f32's own shortest form: read them back the same way.
        let value = if ty == Scalar::F32 { body.parse::<f32>().ok()? as f64 } else { body.parse::<f64>().ok()? };
        return float(value, ty);
    }
    Some(Literal::Int { value: body.parse().ok()?, ty: suffix.unwrap_or(Scalar::I32) })
}

impl Parser {
    pub fn new(toks: Vec<Spanned>) -> Parser {
        Parser {
            toks,
            pos: 0,
            kernel: Kernel::new(""),
            refs: Vec::new(),
            ref_handles: Arena::new(),
            ref_ids: HashMap::new(),
            defs: HashMap::new(),
            vars: HashMap::new(),
            allocs: HashMap::new(),
        }
    }

    pub fn at_end(&self) -> bool {
        self.pos >= self.toks.len()
    }

    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|t| &t.tok)
    }

    fn here(&self) -> (u32, u32) {
        self.toks.get(self.pos).or(self.toks.last()).map_or((1, 1), |t| (t.line, t.col))
    }

    fn error<T>(&self, message: impl Into<String>) -> PResult<T> {
        let (l, c) = self.here();
        Err(ParseError::new(l, c, message))
    }

    fn next(&mut self) -> PResult<Tok> {
        match self.toks.get(self.pos) {
            Some(t) => {
                self.pos += 1;
                Ok(t.tok.clone())
            }
            None => self.error("unexpected end of text"),
        }
    }

    fn punct(&mut self, c: char) -> PResult<()> {
        match self.next()? {
            Tok::Punct(p) if p == c => Ok(()),
            other => {
                self.pos -= 1;
                self.error(format!("expected `{c}`, found {other:?}"))
            }
        }
    }

    fn eat_punct(&mut self, c: char) -> bool {
        let yes = self.peek() == Some(&Tok::Punct(c));
        self.pos += yes as usize;
        yes
    }

    fn word(&mut self) -> PResult<String> {
        match self.next()? {
            Tok::Word(w) => Ok(w),
            other => {
                self.pos -= 1;
                self.error(format!("expected a word, found {other:?}"))
            }
        }
    }

    fn keyword(&mut self, k: &str) -> PResult<()> {
        let w = self.word()?;
        if w != k {
            self.pos -= 1;
            return self.error(format!("expected `{k}`, found `{w}`"));
        }
        Ok(())
    }

    fn eat_word(&mut self, k: &str) -> bool {
        let yes = matches!(self.peek(), Some(Tok::Word(w)) if w == k);
        self.pos += yes as usize;
        yes
    }

    fn integer<T: std::str::FromStr>(&mut self) -> PResult<T> {
        match self.next()? {
            Tok::Number(n) => match n.parse() {
                Ok(v) => Ok(v),
                Err(_) => {
                    self.pos -= 1;
                    self.error(format!("`{n}` is not an integer here"))
                }
            },
            other => {
                self.pos -= 1;
                self.error(format!("expected an integer, found {other:?}"))
            }
        }
    }

    /// `(n)`.
    fn paren_int<T: std::str::FromStr>(&mut self) -> PResult<T> {
        self.punct('(')?;
        let n = self.integer()?;
        self.punct(')')?;
        Ok(n)
    }

    /// `(x, y, z)`.
    fn dims(&mut self) -> PResult<[u32; 3]> {
        self.punct('(')?;
        let x = self.integer()?;
        self.punct(',')?;
        let y = self.integer()?;
        self.punct(',')?;
        let z = self.integer()?;
        self.punct(')')?;
        Ok([x, y, z])
    }

    fn ty(&mut self) -> PResult<Type> {
        let w = self.word()?;
        if w == "ptr" {
            self.punct('<')?;
            let s = self.word()?;
            self.punct('>')?;
            return match space(&s) {
                Some(s) => Ok(Type::Ptr(s)),
                None => self.error(format!("unknown address space `{s}`")),
            };
        }
        match value_type(&w) {
            Some(t) => Ok(t),
            None => self.error(format!("unknown type `{w}`")),
        }
    }

    fn scalar(&mut self) -> PResult<Scalar> {
        let w = self.word()?;
        match scalar(&w) {
            Some(s) => Ok(s),
            None => self.error(format!("unknown scalar type `{w}`")),
        }
    }

    fn reference(&mut self, r: Ref) -> Handle<Expr> {
        *self.ref_ids.entry(r.clone()).or_insert_with(|| {
            self.refs.push(r);
            self.ref_handles.append(Expr::Special(SpecialReg::LaneId), Loc::NONE)
        })
    }

    /// An operand: `%12`, `%param`, `@alloc`, or a literal.
    fn operand(&mut self) -> PResult<Handle<Expr>> {
        let r = match self.next()? {
            Tok::Value(name) => match name.parse::<u32>() {
                Ok(n) => Ref::Num(n),
                Err(_) => match self.kernel.params.iter().position(|p| p.name == name) {
                    Some(i) => Ref::Global(Expr::Param(i as u32)),
                    None => return self.error(format!("no parameter `%{name}`")),
                },
            },
            Tok::Alloc(name) => match self.allocs.get(&name) {
                Some(&a) => Ref::Global(Expr::AllocPtr(a)),
                None => return self.error(format!("no allocation `@{name}`")),
            },
            Tok::Number(n) | Tok::Word(n) if literal(&n).is_some() || n == "true" || n == "false" => match n.as_str() {
                "true" => Ref::Global(Expr::Literal(Literal::Bool(true))),
                "false" => Ref::Global(Expr::Literal(Literal::Bool(false))),
                _ => Ref::Global(Expr::Literal(literal(&n).unwrap_or(Literal::Bool(false)))),
            },
            other => {
                self.pos -= 1;
                return self.error(format!("expected an operand, found {other:?}"));
            }
        };
        Ok(self.reference(r))
    }

    fn operands(&mut self, n: usize) -> PResult<Vec<Handle<Expr>>> {
        let mut out = vec![self.operand()?];
        for _ in 1..n {
            self.punct(',')?;
            out.push(self.operand()?);
        }
        Ok(out)
    }

    fn var(&mut self) -> PResult<Handle<Var>> {
        match self.next()? {
            Tok::Var(name) => match self.vars.get(&name) {
                Some(&v) => Ok(v),
                None => self.error(format!("no variable `${name}`")),
            },
            other => {
                self.pos -= 1;
                self.error(format!("expected a variable, found {other:?}"))
            }
        }
    }

    /// `kernel @name(params) block(..) cluster(..) warp_specialized { decls stmts }`.
    pub fn kernel(&mut self) -> PResult<Parsed> {
        self.keyword("kernel")?;
        let name = match self.next()? {
            Tok::Alloc(n) => n,
            _ => return self.error("expected the kernel's `@name`"),
        };
        self.kernel = Kernel::new(name);
        self.refs.clear();
        self.ref_handles = Arena::new();
        self.ref_ids.clear();
        self.defs.clear();
        self.vars.clear();
        self.allocs.clear();
        self.punct('(')?;
        while !self.eat_punct(')') {
            if !self.kernel.params.is_empty() {
                self.punct(',')?;
            }
            self.param()?;
        }
        loop {
            if self.eat_word("block") {
                self.kernel.block_size = Some(self.dims()?);
            } else if self.eat_word("cluster") {
                self.kernel.cluster = Some(self.dims()?);
            } else if self.eat_word("warp_specialized") {
                self.kernel.warp_specialized = true;
            } else if self.eat_word("unchecked_protocol") {
                self.kernel.unchecked_protocol = true;
            } else {
                break;
            }
        }
        self.punct('{')?;
        self.declarations()?;
        let body = self.stmts()?;
        Ok(Parsed {
            kernel: std::mem::replace(&mut self.kernel, Kernel::new("")),
            body,
            refs: std::mem::take(&mut self.refs),
            defs: std::mem::take(&mut self.defs),
        })
    }

    fn param(&mut self) -> PResult<()> {
        let name = match self.next()? {
            Tok::Value(n) => n,
            _ => return self.error("expected a parameter `%name`"),
        };
        self.punct(':')?;
        let ty = self.ty()?;
        let mut p = Param { name, ty, align: 1, noalias: false, readonly: false };
        loop {
            if self.eat_word("align") {
                p.align = self.paren_int()?;
            } else if self.eat_word("noalias") {
                p.noalias = true;
            } else if self.eat_word("readonly") {
                p.readonly = true;
            } else if self.eat_word("box") {
                let bytes: u64 = self.paren_int()?;
                let index = self.kernel.params.len() as u32;
                self.kernel.tma_box_bytes.push((index, bytes));
            } else {
                break;
            }
        }
        self.kernel.params.push(p);
        Ok(())
    }

    /// Allocations (`shared @buf: [256 x f32] align(16)`) and variables (`var $i: i32`).
    fn declarations(&mut self) -> PResult<()> {
        loop {
            match self.peek() {
                Some(Tok::Word(w)) if w == "var" => {
                    self.pos += 1;
                    let name = match self.next()? {
                        Tok::Var(n) => n,
                        _ => return self.error("expected a variable `$name`"),
                    };
                    self.punct(':')?;
                    let ty = self.ty()?;
                    let h = self.kernel.vars.append(Var { name: name.clone(), ty }, Loc::NONE);
                    self.vars.insert(name, h);
                }
                Some(Tok::Word(w))
                    if space(w).is_some()
                        && matches!(self.toks.get(self.pos + 1), Some(t) if matches!(t.tok, Tok::Alloc(_))) =>
                {
                    let space = space(&self.word()?).unwrap_or(AddrSpace::Shared);
                    let Tok::Alloc(name) = self.next()? else { return self.error("expected `@name`") };
                    self.punct(':')?;
                    self.punct('[')?;
                    let len = self.integer()?;
                    self.keyword("x")?;
                    let elem = self.scalar()?;
                    self.punct(']')?;
                    self.keyword("align")?;
                    let align = self.paren_int()?;
                    let h = self.kernel.allocs.append(Alloc { name: name.clone(), space, elem, len, align }, Loc::NONE);
                    self.allocs.insert(name, h);
                }
                Some(Tok::Word(w)) if w == "barrier" => {
                    self.pos += 1;
                    self.barrier_decl()?;
                }
                Some(Tok::Word(w)) if w == "ring" => {
                    self.pos += 1;
                    self.ring_decl()?;
                }
                Some(Tok::Word(w)) if w == "group" => {
                    self.pos += 1;
                    self.group_decl()?;
                }
                _ => return Ok(()),
            }
        }
    }

    /// Statements up to and including the closing `}`.
    fn stmts(&mut self) -> PResult<Block> {
        let mut block = Block::new();
        while !self.eat_punct('}') {
            let s = self.stmt()?;
            block.push(s, Loc::NONE);
        }
        Ok(block)
    }

    fn stmt(&mut self) -> PResult<Stmt> {
        let (line, col) = self.here();
        match self.next()? {
            Tok::Value(name) => {
                let Ok(n) = name.parse::<u32>() else { return self.error("expected a numbered value `%N`") };
                self.punct(':')?;
                let ty = self.ty()?;
                self.punct('=')?;
                let mnemonic = self.word()?;
                let me = self.reference(Ref::Num(n));
                let (stmt, expr) = match self.op(&mnemonic)? {
                    Some(op) => (Stmt::Op { result: Some(me), op }, Expr::OpResult(ty)),
                    None => (Stmt::Emit(me), self.expr(&mnemonic)?),
                };
                if self.defs.insert(n, (expr, line, col)).is_some() {
                    return Err(ParseError::new(line, col, format!("%{n} is defined twice")));
                }
                Ok(stmt)
            }
            Tok::Var(_) => {
                self.pos -= 1;
                let var = self.var()?;
                self.punct('=')?;
                Ok(Stmt::WriteVar { var, value: self.operand()? })
            }
            Tok::Word(w) => self.keyword_stmt(&w),
            other => {
                self.pos -= 1;
                self.error(format!("expected a statement, found {other:?}"))
            }
        }
    }

    /// `KIND FIRST..END [regs(R)] { .. }` after `warpgroup`: one region of a role chain, whose kind is
    /// `producer`, `consumer` or `role NAME`.
    fn role_region(&mut self) -> PResult<RoleRegion> {
        let kind = match self.word()?.as_str() {
            "producer" => RoleKind::Producer,
            "consumer" => RoleKind::Consumer,
            "role" => RoleKind::Source(self.word()?),
            other => return self.error(format!("expected `producer`, `consumer` or `role NAME`, found `{other}`")),
        };
        let first: u32 = self.integer()?;
        match self.next()? {
            Tok::DotDot => {}
            _ => return self.error("expected `..`"),
        }
        let end: u32 = self.integer()?;
        let Some(count) = end.checked_sub(first) else {
            return self.error(format!("warpgroups {first}..{end} is an empty range"));
        };
        let role = Role { kind, first, count };
        let regs = if self.eat_word("regs") { Some(self.paren_int()?) } else { None };
        self.punct('{')?;
        Ok(RoleRegion { role, regs, body: self.stmts()?, at: Loc::NONE })
    }

    fn keyword_stmt(&mut self, w: &str) -> PResult<Stmt> {
        Ok(match w {
            "store" => {
                let v = self.operands(2)?;
                self.keyword("align")?;
                Stmt::Store { value: v[0], ptr: v[1], align: self.paren_int()? }
            }
            "if" => {
                let cond = self.operand()?;
                self.punct('{')?;
                let accept = self.stmts()?;
                let reject = if self.eat_word("else") {
                    self.punct('{')?;
                    self.stmts()?
                } else {
                    Block::new()
                };
                Stmt::If { cond, accept, reject }
            }
            "for" => {
                let var = self.var()?;
                self.keyword("in")?;
                let start = self.operand()?;
                match self.next()? {
                    Tok::DotDot => {}
                    _ => return self.error("expected `..`"),
                }
                let end = self.operand()?;
                self.keyword("step")?;
                let step = self.integer()?;
                let (mut unroll, mut stages) = (Unroll::Auto, None);
                if self.eat_word("unroll") {
                    self.punct('(')?;
                    unroll = match self.peek() {
                        Some(Tok::Word(w)) if w == "full" => Unroll::Full,
                        Some(Tok::Word(w)) if w == "disable" => Unroll::Disable,
                        _ => Unroll::Count(self.integer()?),
                    };
                    if !matches!(unroll, Unroll::Count(_)) {
                        self.pos += 1;
                    }
                    self.punct(')')?;
                }
                if self.eat_word("pipelined") {
                    self.punct('(')?;
                    self.keyword("stages")?;
                    self.punct('=')?;
                    stages = Some(self.integer()?);
                    self.punct(')')?;
                }
                self.punct('{')?;
                Stmt::For { var, start, end, step, unroll, stages, body: self.stmts()? }
            }
            "loop" => {
                self.punct('{')?;
                let header = self.stmts()?;
                self.keyword("while")?;
                let cond = self.operand()?;
                self.punct('{')?;
                Stmt::While { header, cond, body: self.stmts()? }
            }
            "warpgroup" => {
                let mut regions = vec![self.role_region()?];
                while self.eat_word("else") {
                    self.keyword("warpgroup")?;
                    regions.push(self.role_region()?);
                }
                Stmt::Roles(regions)
            }
            "break" => Stmt::Break,
            "continue" => Stmt::Continue,
            "return" => Stmt::Return,
            "barrier.cta" => Stmt::Barrier(Barrier::Cta),
            other => match self.op(other)? {
                Some(op) => Stmt::Op { result: None, op },
                None => return self.error(format!("unknown statement `{other}`")),
            },
        })
    }
}

//! The grammar of the text form, one method per construct, as [`crate::print`] writes it. Operands are parsed
//! into *references* (a printed number, or a global expression) that [`super::number`] turns into handles.

use super::ParseError;
use super::lexer::{Spanned, Tok};
use crate::arena::{Arena, Handle, Loc};
use crate::expr::{BinaryOp, CompareOp, Dim, Expr, Literal, MathFn, ShuffleMode, SpecialReg, UnaryOp};
use crate::module::{Alloc, Kernel, Param, Var};
use crate::op::{Op, WgmmaShape};
use crate::stmt::{Barrier, Block, Role, Stmt, Unroll};
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

fn special(name: &str) -> Option<SpecialReg> {
    if name == "laneid" {
        return Some(SpecialReg::LaneId);
    }
    if name == "cluster_ctarank" {
        return Some(SpecialReg::ClusterCtaRank);
    }
    let (reg, d) = name.rsplit_once('.')?;
    let d = match d {
        "x" => Dim::X,
        "y" => Dim::Y,
        "z" => Dim::Z,
        _ => return None,
    };
    Some(match reg {
        "tid" => SpecialReg::ThreadIdx(d),
        "ctaid" => SpecialReg::BlockIdx(d),
        "ntid" => SpecialReg::BlockDim(d),
        "nctaid" => SpecialReg::GridDim(d),
        _ => return None,
    })
}

fn binary(name: &str) -> Option<BinaryOp> {
    Some(match name {
        "add" => BinaryOp::Add,
        "sub" => BinaryOp::Sub,
        "mul" => BinaryOp::Mul,
        "div" => BinaryOp::Div,
        "rem" => BinaryOp::Rem,
        "and" => BinaryOp::And,
        "or" => BinaryOp::Or,
        "xor" => BinaryOp::Xor,
        "shl" => BinaryOp::Shl,
        "shr" => BinaryOp::Shr,
        _ => return None,
    })
}

fn compare(name: &str) -> Option<CompareOp> {
    Some(match name.strip_prefix("cmp.")? {
        "eq" => CompareOp::Eq,
        "ne" => CompareOp::Ne,
        "lt" => CompareOp::Lt,
        "le" => CompareOp::Le,
        "gt" => CompareOp::Gt,
        "ge" => CompareOp::Ge,
        _ => return None,
    })
}

fn math(name: &str) -> Option<MathFn> {
    Some(match name {
        "exp" => MathFn::Exp,
        "exp2" => MathFn::Exp2,
        "sqrt" => MathFn::Sqrt,
        "rsqrt" => MathFn::Rsqrt,
        "tanh" => MathFn::Tanh,
        "abs" => MathFn::Abs,
        "max" => MathFn::Max,
        "min" => MathFn::Min,
        "fma" => MathFn::Fma,
        _ => return None,
    })
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
                let name = self.word()?;
                let first: u32 = self.integer()?;
                match self.next()? {
                    Tok::DotDot => {}
                    _ => return self.error("expected `..`"),
                }
                let end: u32 = self.integer()?;
                let Some(count) = end.checked_sub(first) else {
                    return self.error(format!("warpgroups {first}..{end} is an empty range"));
                };
                let role = Role { name, first, count };
                let regs = if self.eat_word("regs") { Some(self.paren_int()?) } else { None };
                self.punct('{')?;
                Stmt::Warpgroup { role, regs, body: self.stmts()? }
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

    /// The operation named `m` with its operands, or `None` if `m` names no operation.
    fn op(&mut self, m: &str) -> PResult<Option<Op>> {
        Ok(Some(match m {
            "load" => {
                let ty = self.ty()?;
                self.punct(',')?;
                let ptr = self.operand()?;
                self.keyword("align")?;
                Op::Load { ptr, ty, align: self.paren_int()? }
            }
            "shfl.bfly" | "shfl.down" | "shfl.up" | "shfl.idx" => {
                let mode = match m {
                    "shfl.bfly" => ShuffleMode::Bfly,
                    "shfl.down" => ShuffleMode::Down,
                    "shfl.up" => ShuffleMode::Up,
                    _ => ShuffleMode::Idx,
                };
                let v = self.operands(2)?;
                Op::Shuffle { mode, value: v[0], lane: v[1] }
            }
            "mbarrier.init" => {
                let v = self.operands(2)?;
                Op::MbarrierInit { bar: v[0], count: v[1] }
            }
            "mbarrier.arrive.expect_tx" => {
                let v = self.operands(2)?;
                Op::MbarrierArriveExpectTx { bar: v[0], bytes: v[1] }
            }
            "mbarrier.arrive" => Op::MbarrierArrive { bar: self.operand()? },
            "mbarrier.wait" => {
                let bar = self.operand()?;
                self.punct(',')?;
                self.keyword("parity")?;
                Op::MbarrierWait { bar, parity: self.operand()? }
            }
            "tma.load" => {
                let dst = self.operand()?;
                self.punct(',')?;
                let map = self.operand()?;
                let coords = self.coords()?;
                self.punct(',')?;
                let bar = self.operand()?;
                let multicast = if self.eat_word("multicast") { Some(self.operand()?) } else { None };
                Op::TmaLoad { dst, map, coords, bar, multicast }
            }
            "mbarrier.arrive.cluster" => {
                let bar = self.operand()?;
                self.punct(',')?;
                self.keyword("cta")?;
                Op::MbarrierArriveRemote { bar, cta: self.operand()? }
            }
            "barrier.cluster" => Op::ClusterBarrier,
            "tma.store" => {
                let map = self.operand()?;
                let coords = self.coords()?;
                self.punct(',')?;
                Op::TmaStore { src: self.operand()?, map, coords }
            }
            "stmatrix.x1" | "stmatrix.x2" | "stmatrix.x4" => {
                let n = if m.ends_with('1') {
                    1
                } else if m.ends_with('2') {
                    2
                } else {
                    4
                };
                let ptr = self.operand()?;
                self.punct(',')?;
                Op::Stmatrix { ptr, values: self.operands(n)? }
            }
            "bulk.commit_group" => Op::BulkCommit,
            "bulk.wait_group" => Op::BulkWait { pending: self.integer()?, read: false },
            "bulk.wait_group.read" => Op::BulkWait { pending: self.integer()?, read: true },
            "prefetch.tensormap" => Op::PrefetchTensorMap { map: self.operand()? },
            "fence.mbarrier_init" => Op::FenceMbarrierInit,
            "elect.sync" => Op::ElectOne,
            "bar.sync" => {
                let v = self.operands(2)?;
                Op::NamedBarrier { id: v[0], threads: v[1] }
            }
            "fence.proxy.async" => Op::FenceProxyAsync,
            "wgmma.fence" => Op::WgmmaFence,
            "wgmma.commit_group" => Op::WgmmaCommit,
            "wgmma.wait_group" => Op::WgmmaWait { pending: self.integer()? },
            "wgmma.mma_async" => {
                let shape_text = self.word()?;
                let Some(shape) = wgmma_shape(&shape_text) else {
                    return self.error(format!("`{shape_text}` is not a wgmma shape like `m64n128k16.bf16`"));
                };
                let acc = self.operand()?;
                self.punct(',')?;
                let a = self.operand()?;
                // A in registers (`regs`) or in shared memory (`desc(..)`).
                let a_desc = if self.eat_word("regs") { None } else { Some(self.gmma_desc()?) };
                self.punct(',')?;
                let b = self.operand()?;
                let b_desc = self.gmma_desc()?;
                self.punct(',')?;
                self.keyword("scale_d")?;
                Op::Wgmma { shape, acc, a, a_desc, b, b_desc, scale_d: self.operand()? }
            }
            "setmaxnreg.inc" => Op::Setmaxnreg { regs: self.integer()?, inc: true },
            "setmaxnreg.dec" => Op::Setmaxnreg { regs: self.integer()?, inc: false },
            _ => return Ok(None),
        }))
    }

    /// A tensor map's box coordinates: `[%c0, %c1, ...]`.
    fn coords(&mut self) -> PResult<Vec<Handle<Expr>>> {
        self.punct('[')?;
        let mut coords = vec![self.operand()?];
        while self.eat_punct(',') {
            coords.push(self.operand()?);
        }
        self.punct(']')?;
        Ok(coords)
    }

    /// A wgmma descriptor's fields: `desc(sw128, lbo 16, sbo 1024, k)` (`k` or `mn` major).
    fn gmma_desc(&mut self) -> PResult<crate::GmmaDesc> {
        self.keyword("desc")?;
        self.punct('(')?;
        let sw = self.word()?;
        let swizzle = match sw.as_str() {
            "none" => crate::GmmaSwizzle::None,
            "sw32" => crate::GmmaSwizzle::B32,
            "sw64" => crate::GmmaSwizzle::B64,
            "sw128" => crate::GmmaSwizzle::B128,
            _ => return self.error(format!("`{sw}` is not a wgmma swizzle (none, sw32, sw64, sw128)")),
        };
        self.punct(',')?;
        self.keyword("lbo")?;
        let lbo = self.integer()?;
        self.punct(',')?;
        self.keyword("sbo")?;
        let sbo = self.integer()?;
        self.punct(',')?;
        let major = self.word()?;
        let mn_major = match major.as_str() {
            "k" => false,
            "mn" => true,
            _ => return self.error(format!("`{major}` is not a major-ness (k, mn)")),
        };
        self.punct(')')?;
        Ok(crate::GmmaDesc { lbo, sbo, swizzle, mn_major })
    }

    /// The expression named `m` with its operands.
    fn expr(&mut self, m: &str) -> PResult<Expr> {
        if let Some(op) = binary(m) {
            let v = self.operands(2)?;
            return Ok(Expr::Binary { op, lhs: v[0], rhs: v[1] });
        }
        if let Some(op) = compare(m) {
            let v = self.operands(2)?;
            return Ok(Expr::Compare { op, lhs: v[0], rhs: v[1] });
        }
        if let Some(fun) = math(m) {
            let mut args = vec![self.operand()?];
            while self.eat_punct(',') {
                args.push(self.operand()?);
            }
            return Ok(Expr::Math { fun, arg: args[0], arg1: args.get(1).copied(), arg2: args.get(2).copied() });
        }
        Ok(match m {
            "sreg" => {
                let r = self.word()?;
                match special(&r) {
                    Some(reg) => Expr::Special(reg),
                    None => return self.error(format!("unknown special register `{r}`")),
                }
            }
            "read" => Expr::ReadVar(self.var()?),
            "neg" => Expr::Unary { op: UnaryOp::Neg, value: self.operand()? },
            "not" => Expr::Unary { op: UnaryOp::Not, value: self.operand()? },
            "select" => {
                let v = self.operands(3)?;
                Expr::Select { cond: v[0], accept: v[1], reject: v[2] }
            }
            "convert" => {
                let value = self.operand()?;
                self.keyword("to")?;
                Expr::Convert { value, to: self.scalar()? }
            }
            "offset" => {
                let v = self.operands(2)?;
                self.keyword("x")?;
                Expr::Offset { base: v[0], index: v[1], elem: self.ty()? }
            }
            "mapa" => {
                let ptr = self.operand()?;
                self.punct(',')?;
                self.keyword("cta")?;
                Expr::MapShared { ptr, cta: self.operand()? }
            }
            "extract" => {
                let vector = self.operand()?;
                self.punct(',')?;
                Expr::Extract { vector, lane: self.integer()? }
            }
            "compose" => {
                let ty = self.ty()?;
                self.punct('[')?;
                let mut parts = Vec::new();
                while !self.eat_punct(']') {
                    if !parts.is_empty() {
                        self.punct(',')?;
                    }
                    parts.push(self.operand()?);
                }
                Expr::Compose { ty, parts }
            }
            other => return self.error(format!("unknown expression `{other}`")),
        })
    }
}

/// `m64n128k16.bf16`.
fn wgmma_shape(text: &str) -> Option<WgmmaShape> {
    let (dims, input) = text.split_once('.')?;
    let rest = dims.strip_prefix('m')?;
    let (m, rest) = rest.split_once('n')?;
    let (n, k) = rest.split_once('k')?;
    Some(WgmmaShape { m: m.parse().ok()?, n: n.parse().ok()?, k: k.parse().ok()?, input: scalar(input)? })
}

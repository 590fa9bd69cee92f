//! Parsing CuTe's notation: `((2,2),3):((24,2),8)`, `4:2`, a shape alone (`(4,8)` is `(4,8):(1,4)`),
//! `Sw<3,4,3>`, and swizzled layouts `Sw<3,4,3> o 0 o (8,64):(64,1)` (the offset may be left out). Spaces are
//! allowed anywhere between tokens. A name where an integer is expected is a dynamic integer of unknown value.

use std::fmt;
use std::str::FromStr;

use crate::int_tuple::{Int, IntTuple};
use crate::layout::Layout;
use crate::swizzle::{ComposedLayout, Swizzle};

/// A syntax error, at a byte offset of the input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    pub offset: usize,
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "parse error at column {}: {}", self.offset + 1, self.message)
    }
}

impl std::error::Error for ParseError {}

/// A token of the notation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Tok {
    Int(i64),
    Ident(String),
    Punct(char),
    End,
}

impl fmt::Display for Tok {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tok::Int(v) => write!(f, "`{v}`"),
            Tok::Ident(s) => write!(f, "`{s}`"),
            Tok::Punct(c) => write!(f, "`{c}`"),
            Tok::End => f.write_str("the end of the input"),
        }
    }
}

/// Split `src` into tokens with their byte offsets; the last token is [`Tok::End`].
pub(crate) fn tokenize(src: &str) -> Result<Vec<(Tok, usize)>, ParseError> {
    let bytes = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        let start = i;
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() || (c == b'-' && bytes.get(i + 1).is_some_and(u8::is_ascii_digit)) {
            i += 1;
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                i += 1;
            }
            let text = &src[start..i];
            let v = text.parse::<i64>().map_err(|_| ParseError {
                offset: start,
                message: format!("integer {text} does not fit in 64 bits"),
            })?;
            out.push((Tok::Int(v), start));
        } else if c.is_ascii_alphabetic() || c == b'_' {
            i += 1;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_' || bytes[i] == b'.') {
                i += 1;
            }
            out.push((Tok::Ident(src[start..i].to_string()), start));
        } else if b"(),:<>".contains(&c) {
            i += 1;
            out.push((Tok::Punct(c as char), start));
        } else {
            let ch = src[start..].chars().next().unwrap_or('?');
            return Err(ParseError { offset: start, message: format!("unexpected character `{ch}`") });
        }
    }
    out.push((Tok::End, src.len()));
    Ok(out)
}

/// A cursor over tokens, shared with the expression parser of `eval`.
pub(crate) struct Cursor {
    toks: Vec<(Tok, usize)>,
    pos: usize,
    depth: usize,
}

/// Deepest nesting of tuples accepted in a literal (protects the stack against hostile input).
const MAX_TUPLE_DEPTH: usize = 64;

impl Cursor {
    pub(crate) fn new(src: &str) -> Result<Cursor, ParseError> {
        Ok(Cursor { toks: tokenize(src)?, pos: 0, depth: 0 })
    }

    pub(crate) fn peek(&self) -> &Tok {
        &self.toks[self.pos].0
    }

    pub(crate) fn peek_at(&self, k: usize) -> &Tok {
        &self.toks[(self.pos + k).min(self.toks.len() - 1)].0
    }

    pub(crate) fn offset(&self) -> usize {
        self.toks[self.pos].1
    }

    pub(crate) fn bump(&mut self) -> Tok {
        let t = self.toks[self.pos].0.clone();
        if self.pos + 1 < self.toks.len() {
            self.pos += 1;
        }
        t
    }

    pub(crate) fn eat(&mut self, c: char) -> bool {
        if *self.peek() == Tok::Punct(c) {
            self.bump();
            true
        } else {
            false
        }
    }

    pub(crate) fn error(&self, message: impl Into<String>) -> ParseError {
        ParseError { offset: self.offset(), message: message.into() }
    }

    pub(crate) fn expect(&mut self, c: char) -> Result<(), ParseError> {
        if self.eat(c) { Ok(()) } else { Err(self.error(format!("expected `{c}`, found {}", self.peek()))) }
    }

    pub(crate) fn expect_end(&self) -> Result<(), ParseError> {
        match self.peek() {
            Tok::End => Ok(()),
            t => Err(self.error(format!("unexpected {t} after the end of the expression"))),
        }
    }

    /// `INT | NAME | '(' [int_tuple (',' int_tuple)* [',']] ')'`.
    pub(crate) fn int_tuple(&mut self) -> Result<IntTuple, ParseError> {
        match self.bump() {
            Tok::Int(v) => Ok(IntTuple::int(v)),
            Tok::Ident(name) if name != "_" => Ok(IntTuple::Int(Int::named(name))),
            Tok::Punct('(') => {
                self.depth += 1;
                if self.depth > MAX_TUPLE_DEPTH {
                    return Err(self.error("tuple nested too deeply"));
                }
                let mut items = Vec::new();
                while !self.eat(')') {
                    items.push(self.int_tuple()?);
                    if !self.eat(',') {
                        self.expect(')')?;
                        break;
                    }
                }
                self.depth -= 1;
                Ok(IntTuple::Tuple(items))
            }
            t => {
                self.pos = self.pos.saturating_sub(1);
                Err(self.error(format!("expected an integer or a tuple, found {t}")))
            }
        }
    }

    /// `<a,b,...>` of integers.
    pub(crate) fn int_args(&mut self) -> Result<Vec<i64>, ParseError> {
        self.expect('<')?;
        let mut out = Vec::new();
        loop {
            match self.bump() {
                Tok::Int(v) => out.push(v),
                t => {
                    self.pos = self.pos.saturating_sub(1);
                    return Err(self.error(format!("expected an integer, found {t}")));
                }
            }
            if self.eat('>') {
                return Ok(out);
            }
            self.expect(',')?;
        }
    }

    /// `Sw<B,M,S>` or `Swizzle<B,M,S>` after the name.
    pub(crate) fn swizzle_args(&mut self) -> Result<Swizzle, ParseError> {
        let at = self.offset();
        let args = self.int_args()?;
        match args[..] {
            [b, m, s] => Swizzle::new(b, m, s).map_err(|e| ParseError { offset: at, message: e.to_string() }),
            _ => Err(ParseError { offset: at, message: format!("a swizzle takes 3 integers, found {}", args.len()) }),
        }
    }

    /// `shape [':' stride]`.
    pub(crate) fn layout(&mut self) -> Result<Layout, ParseError> {
        let at = self.offset();
        let shape = self.int_tuple()?;
        let layout = if self.eat(':') { Layout::new(shape, self.int_tuple()?) } else { Layout::compact(shape) };
        layout.map_err(|e| ParseError { offset: at, message: e.to_string() })
    }

    /// `Sw<B,M,S> o [offset o] layout`.
    pub(crate) fn composed(&mut self) -> Result<ComposedLayout, ParseError> {
        match self.bump() {
            Tok::Ident(name) if name == "Sw" || name == "Swizzle" => {}
            t => {
                self.pos = self.pos.saturating_sub(1);
                return Err(self.error(format!("expected `Sw<B,M,S>`, found {t}")));
            }
        }
        let swizzle = self.swizzle_args()?;
        self.keyword_o()?;
        let offset = match (self.peek().clone(), self.peek_at(1).clone()) {
            (Tok::Int(v), Tok::Ident(o)) if o == "o" => {
                self.bump();
                self.bump();
                Int::Static(v)
            }
            _ => Int::Static(0),
        };
        Ok(ComposedLayout { swizzle, offset, layout: self.layout()? })
    }

    fn keyword_o(&mut self) -> Result<(), ParseError> {
        match self.bump() {
            Tok::Ident(o) if o == "o" => Ok(()),
            t => {
                self.pos = self.pos.saturating_sub(1);
                Err(self.error(format!("expected `o`, found {t}")))
            }
        }
    }
}

fn parse_all<T>(src: &str, f: impl FnOnce(&mut Cursor) -> Result<T, ParseError>) -> Result<T, ParseError> {
    let mut c = Cursor::new(src)?;
    let v = f(&mut c)?;
    c.expect_end()?;
    Ok(v)
}

/// Parse an integer tuple: `((2,2),3)`, `8`, `(M,K)`.
pub fn parse_int_tuple(src: &str) -> Result<IntTuple, ParseError> {
    parse_all(src, Cursor::int_tuple)
}

/// Parse a layout: `shape:stride`, or a shape alone with compact column-major strides.
pub fn parse_layout(src: &str) -> Result<Layout, ParseError> {
    parse_all(src, Cursor::layout)
}

/// Parse a swizzle: `Sw<3,4,3>` (CuTe's print) or `Swizzle<3,4,3>`.
pub fn parse_swizzle(src: &str) -> Result<Swizzle, ParseError> {
    parse_all(src, |c| match c.bump() {
        Tok::Ident(name) if name == "Sw" || name == "Swizzle" => c.swizzle_args(),
        t => Err(ParseError { offset: 0, message: format!("expected `Sw<B,M,S>`, found {t}") }),
    })
}

/// Parse a swizzled layout: `Sw<3,4,3> o 0 o (8,64):(64,1)` or `Sw<3,4,3> o (8,64):(64,1)`.
pub fn parse_composed(src: &str) -> Result<ComposedLayout, ParseError> {
    parse_all(src, Cursor::composed)
}

impl FromStr for Layout {
    type Err = ParseError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse_layout(s)
    }
}

impl FromStr for Swizzle {
    type Err = ParseError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse_swizzle(s)
    }
}

impl FromStr for ComposedLayout {
    type Err = ParseError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse_composed(s)
    }
}

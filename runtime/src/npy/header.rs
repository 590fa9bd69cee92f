//! The `.npy` header: magic, version, length, and a Python dict literal such as
//! `{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }` (numpy's `format.py`, versions 1.0 to 3.0).
//!
//! Parsed here rather than by a library so that every size is checked arithmetic and every input, however hostile,
//! is an [`NpyError`]: nesting is bounded, numbers may not overflow, and nothing is allocated from what a header
//! claims.

use std::io::Read;

use super::NpyError;

const MAGIC: &[u8] = b"\x93NUMPY";
/// Deeper nesting than any numpy type needs; a hostile header cannot exhaust the stack.
const MAX_DEPTH: usize = 16;

/// The byte order of an element type's string (`<`, `>`, `|` or `=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Endian {
    Little,
    Big,
    /// `|`: single bytes or raw data.
    NotApplicable,
}

/// A plain numpy element type: `<f4` is (Little, 'f', 4).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct TypeStr {
    pub(super) endian: Endian,
    pub(super) kind: char,
    pub(super) size: u64,
    /// The type string as written, for messages.
    pub(super) text: String,
}

/// What the header says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Header {
    pub(super) descr: TypeStr,
    pub(super) fortran_order: bool,
    pub(super) shape: Vec<u64>,
    /// Bytes before the data.
    pub(super) data_offset: u64,
}

#[derive(Debug, Clone, PartialEq)]
enum Value {
    Str(String),
    Bool(bool),
    Int(u64),
    /// A tuple or a list.
    Seq(Vec<Value>),
    None,
}

fn bad(message: impl Into<String>) -> NpyError {
    NpyError::Header(message.into())
}

/// numpy refuses headers over 10,000 bytes unless told otherwise; a megabyte leaves room and bounds what a
/// hostile file can make us read before its data is checked.
const MAX_HEADER_BYTES: u64 = 1 << 20;

/// Reads the header from the start of a file, leaving `r` at the first data byte.
pub(super) fn read(r: &mut impl Read) -> Result<Header, NpyError> {
    let eof = |e: std::io::Error| match e.kind() {
        std::io::ErrorKind::UnexpectedEof => bad("the file ends inside the header"),
        _ => NpyError::Io(e),
    };
    let mut fixed = [0u8; 8];
    r.read_exact(&mut fixed).map_err(eof)?;
    if &fixed[..6] != MAGIC {
        return Err(bad("it does not start with \\x93NUMPY"));
    }
    let (major, minor) = (fixed[6], fixed[7]);
    let (len, start) = match major {
        1 => {
            let mut b = [0u8; 2];
            r.read_exact(&mut b).map_err(eof)?;
            (u64::from(u16::from_le_bytes(b)), 10)
        }
        2 | 3 => {
            let mut b = [0u8; 4];
            r.read_exact(&mut b).map_err(eof)?;
            (u64::from(u32::from_le_bytes(b)), 12)
        }
        _ => return Err(bad(format!("format version {major}.{minor} is not supported (1.0 to 3.0 are)"))),
    };
    if len > MAX_HEADER_BYTES {
        return Err(bad(format!("a header of {len} bytes is longer than the {MAX_HEADER_BYTES} this reader accepts")));
    }
    let mut text = Vec::new();
    r.take(len).read_to_end(&mut text)?;
    if text.len() as u64 != len {
        return Err(bad(format!("the header claims {len} bytes; the file ends after {}", text.len())));
    }
    let (descr, fortran_order, shape) = parse_dict(&text)?;
    Ok(Header { descr, fortran_order, shape, data_offset: start + len })
}

/// The header's dict: (`descr`, `fortran_order`, `shape`).
pub(super) fn parse_dict(text: &[u8]) -> Result<(TypeStr, bool, Vec<u64>), NpyError> {
    let text = std::str::from_utf8(text).map_err(|_| bad("the header is not UTF-8 text"))?;
    let mut p = Parser { s: text, at: 0 };
    let items = p.dict()?;
    p.skip_ws();
    if p.at != p.s.len() {
        return Err(bad(format!("unexpected text after the dict at byte {}", p.at)));
    }
    let get = |key: &str| items.iter().find(|(k, _)| k == key).map(|(_, v)| v);
    let descr = match get("descr") {
        Some(Value::Str(s)) => type_str(s)?,
        Some(Value::Seq(_)) => return Err(NpyError::Structured { descr: "(a list of fields)".into() }),
        _ => return Err(bad("the dict has no string 'descr'")),
    };
    let fortran_order = match get("fortran_order") {
        Some(Value::Bool(b)) => *b,
        _ => return Err(bad("the dict has no boolean 'fortran_order'")),
    };
    let shape = match get("shape") {
        Some(Value::Seq(extents)) => extents
            .iter()
            .map(|e| match e {
                Value::Int(v) => Ok(*v),
                _ => Err(bad("'shape' holds something other than non-negative integers")),
            })
            .collect::<Result<Vec<u64>, _>>()?,
        _ => return Err(bad("the dict has no tuple 'shape'")),
    };
    Ok((descr, fortran_order, shape))
}

/// `<f4`, `|b1`, `>i8`, `|V2`, `f4`; also `<M8[ns]` and the like, which no parameter accepts.
fn type_str(s: &str) -> Result<TypeStr, NpyError> {
    let (endian, rest) = match s.chars().next() {
        Some('<' | '=') => (Endian::Little, &s[1..]),
        Some('>') => (Endian::Big, &s[1..]),
        Some('|') => (Endian::NotApplicable, &s[1..]),
        _ => (Endian::NotApplicable, s),
    };
    let mut chars = rest.chars();
    let kind =
        chars.next().filter(char::is_ascii_alphabetic).ok_or_else(|| bad(format!("`{s}` is not a numpy type")))?;
    let rest = chars.as_str();
    let digits = &rest[..rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len())];
    let size = digits.parse::<u64>().map_err(|_| bad(format!("`{s}` is not a numpy type with a size")))?;
    Ok(TypeStr { endian, kind, size, text: s.to_owned() })
}

struct Parser<'a> {
    s: &'a str,
    at: usize,
}

impl Parser<'_> {
    fn rest(&self) -> &str {
        self.s.get(self.at..).unwrap_or_default()
    }

    fn skip_ws(&mut self) {
        let rest = self.rest();
        self.at += rest.len() - rest.trim_start().len();
    }

    fn eat(&mut self, c: char) -> bool {
        self.skip_ws();
        let found = self.rest().starts_with(c);
        if found {
            self.at += c.len_utf8();
        }
        found
    }

    /// `{ 'key': value, ... }` with string keys.
    fn dict(&mut self) -> Result<Vec<(String, Value)>, NpyError> {
        if !self.eat('{') {
            return Err(bad("expected a dict"));
        }
        let mut items = Vec::new();
        loop {
            if self.eat('}') {
                return Ok(items);
            }
            let Value::Str(key) = self.value(1)? else { return Err(bad("a key of the dict is not a string")) };
            if !self.eat(':') {
                return Err(bad(format!("expected `:` at byte {}", self.at)));
            }
            items.push((key, self.value(1)?));
            if self.eat('}') {
                return Ok(items);
            }
            if !self.eat(',') {
                return Err(bad(format!("expected `,` or `}}` at byte {}", self.at)));
            }
        }
    }

    /// A string, a boolean, `None`, a non-negative integer, or a tuple or list of values.
    fn value(&mut self, depth: usize) -> Result<Value, NpyError> {
        if depth > MAX_DEPTH {
            return Err(bad("the header nests too deeply"));
        }
        self.skip_ws();
        let Some(c) = self.rest().chars().next() else { return Err(bad("the header ends inside the dict")) };
        match c {
            '\'' | '"' => {
                let body = &self.rest()[1..];
                let len = body.find(c).ok_or_else(|| bad("an unterminated string"))?;
                let value = body[..len].to_owned();
                self.at += 1 + len + 1;
                Ok(Value::Str(value))
            }
            '(' | '[' => {
                let close = if c == '(' { ')' } else { ']' };
                self.at += 1;
                let mut items = Vec::new();
                loop {
                    if self.eat(close) {
                        return Ok(Value::Seq(items));
                    }
                    items.push(self.value(depth + 1)?);
                    if !self.eat(',') {
                        if self.eat(close) {
                            return Ok(Value::Seq(items));
                        }
                        return Err(bad(format!("expected `,` or `{close}` at byte {}", self.at)));
                    }
                }
            }
            '0'..='9' => {
                let rest = self.rest();
                let digits = &rest[..rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len())];
                let v = digits.parse::<u64>().map_err(|_| bad(format!("the number {digits} is too large")))?;
                self.at += digits.len();
                // Python 2 wrote long integers with an `L`.
                if self.rest().starts_with('L') {
                    self.at += 1;
                }
                Ok(Value::Int(v))
            }
            _ => {
                for (word, value) in [("True", Value::Bool(true)), ("False", Value::Bool(false)), ("None", Value::None)]
                {
                    if self.rest().starts_with(word) {
                        self.at += word.len();
                        return Ok(value);
                    }
                }
                Err(bad(format!("unexpected `{c}` at byte {}", self.at)))
            }
        }
    }
}

/// The header numpy writes for a C-order array: version 1.0 (2.0 if the text does not fit 65,535 bytes), padded
/// with spaces to a multiple of 64 bytes and ended by a newline.
pub(super) fn format(descr: &str, shape: &[usize]) -> Vec<u8> {
    let dims: Vec<String> = shape.iter().map(usize::to_string).collect();
    let tuple = if dims.len() == 1 { format!("({},)", dims[0]) } else { format!("({})", dims.join(", ")) };
    let mut text = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {tuple}, }}");
    let (version, len_bytes) = if text.len() + 11 + 64 <= usize::from(u16::MAX) { (1u8, 2) } else { (2u8, 4) };
    // As numpy pads: 1 to 64 spaces, so that the data starts at a multiple of 64 bytes.
    let unpadded = MAGIC.len() + 2 + len_bytes + text.len() + 1;
    text.extend(std::iter::repeat_n(' ', 64 - unpadded % 64));
    text.push('\n');
    let mut out = MAGIC.to_vec();
    out.extend([version, 0]);
    if version == 1 {
        out.extend((text.len() as u16).to_le_bytes());
    } else {
        out.extend((text.len() as u32).to_le_bytes());
    }
    out.extend(text.as_bytes());
    out
}

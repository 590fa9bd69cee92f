//! The tokens of `.cute`, produced by a `logos` lexer. Tokens borrow the source text.
//!
//! A few variants are never produced by logos itself but by the token adapter behind [`crate::lex`]:
//! [`Token::DocComment`] and [`Token::ModuleDoc`] (classified from line comments), [`Token::GenericOpen`] and
//! [`Token::GenericClose`] (C#'s rule for `<`, see `lexer::mark_generics`) and [`Token::Shr`] (two adjacent `>`).

use logos::{FilterResult, Lexer, Logos};
use std::fmt;

/// What went wrong while lexing one token; positions are byte offsets relative to the token's start.
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub enum LexError {
    /// A character that starts no token.
    #[default]
    UnexpectedChar,
    /// A string without its closing quote on the same line.
    UnterminatedString,
    /// `\q` and friends; `at..end` is the escape inside the token.
    BadEscape { at: usize, end: usize },
    /// `\u` without `{hex}` (`value == None`) or naming no Unicode scalar value (`\u{110000}`, a surrogate);
    /// `at..end` is the whole escape inside the token.
    BadUnicodeEscape { at: usize, end: usize, value: Option<u32> },
    /// Several bad escapes in one string, each a `BadEscape` or `BadUnicodeEscape`, in order: every one is
    /// reported, not only the first.
    BadEscapes(Vec<LexError>),
    /// An integer literal that does not fit in 64 bits.
    IntOverflow,
    /// `0x` or `0b` with no digits, or a digit that the radix does not allow (`0b102`, `0xfg`).
    BadDigit { at: usize, radix: u32 },
    /// `/*` without its `*/`.
    UnterminatedComment,
}

#[derive(Logos, Clone, Copy, PartialEq, Debug)]
#[logos(error = LexError)]
#[logos(skip r"[ \t\r\n\f]+")]
pub enum Token<'src> {
    // Keywords.
    #[token("kernel")]
    Kernel,
    #[token("fn")]
    Fn,
    #[token("const")]
    Const,
    #[token("use")]
    Use,
    #[token("let")]
    Let,
    #[token("mut")]
    Mut,
    #[token("for")]
    For,
    #[token("in")]
    In,
    #[token("while")]
    While,
    #[token("if")]
    If,
    #[token("else")]
    Else,
    #[token("return")]
    Return,
    #[token("break")]
    Break,
    #[token("continue")]
    Continue,
    #[token("as")]
    As,
    #[token("role")]
    Role,
    /// CuTe's composition operator: `A o B`. (A one-letter keyword: it outranks the identifier pattern.)
    #[token("o", priority = 3)]
    Compose,
    #[token("launch")]
    Launch,
    #[token("true", |_| true)]
    #[token("false", |_| false)]
    Bool(bool),

    // Names and literals.
    #[regex(r"[A-Za-z_][A-Za-z0-9_]*")]
    Ident(&'src str),
    /// `_` alone, CuTe's wildcard; the identifier pattern matches it too, hence the priority.
    #[token("_", priority = 10)]
    Underscore,
    // The radix patterns accept any letter so that `0xfg` or `0b102` is one token with a precise error, not a
    // number followed by a name.
    #[regex(r"[0-9][0-9_]*", |lex| int_value(lex.slice(), 10))]
    #[regex(r"0[xX][0-9A-Za-z_]*", |lex| int_value(lex.slice(), 16))]
    #[regex(r"0[bB][0-9A-Za-z_]*", |lex| int_value(lex.slice(), 2))]
    Int(u64),
    #[regex(r"[0-9][0-9_]*\.[0-9][0-9_]*([eE][+-]?[0-9][0-9_]*)?", float_value)]
    #[regex(r"[0-9][0-9_]*[eE][+-]?[0-9][0-9_]*", float_value)]
    Float(f64),
    /// A string literal as written, quotes included; its escapes have been checked by the lexer.
    #[token("\"", string)]
    Str(&'src str),

    // Comments. Plain line comments are dropped by the adapter; `///` and `//!` become docs.
    #[regex(r"//[^\n]*", allow_greedy = true)]
    LineComment(&'src str),
    #[token("/*", block_comment)]
    BlockComment,
    /// `/// text`: the text after the marker.
    DocComment(&'src str),
    /// `//! text`: the text after the marker.
    ModuleDoc(&'src str),

    // Delimiters.
    #[token("(")]
    LParen,
    #[token(")")]
    RParen,
    #[token("[")]
    LBracket,
    #[token("]")]
    RBracket,
    #[token("{")]
    LBrace,
    #[token("}")]
    RBrace,
    /// A `<` that opens generic arguments or parameters (decided by the adapter).
    GenericOpen,
    /// The `>` that closes a [`Token::GenericOpen`].
    GenericClose,

    // Punctuation and operators.
    #[token(",")]
    Comma,
    #[token(";")]
    Semi,
    #[token(":")]
    Colon,
    #[token("::")]
    PathSep,
    #[token(".")]
    Dot,
    #[token("..")]
    DotDot,
    #[token("->")]
    Arrow,
    #[token("=")]
    Eq,
    #[token("==")]
    EqEq,
    #[token("!=")]
    Ne,
    #[token("<")]
    Lt,
    #[token("<=")]
    Le,
    /// Always a single `>`: `>>` is two of them, merged into [`Token::Shr`] by the adapter unless they close
    /// generic arguments (`A<B<C>>`).
    #[token(">")]
    Gt,
    #[token(">=")]
    Ge,
    #[token("<<")]
    Shl,
    Shr,
    #[token("+")]
    Plus,
    #[token("-")]
    Minus,
    #[token("*")]
    Star,
    #[token("/")]
    Slash,
    #[token("%")]
    Percent,
    #[token("&")]
    Amp,
    #[token("|")]
    Pipe,
    #[token("^")]
    Caret,
    #[token("!")]
    Bang,
    #[token("~")]
    Tilde,
    #[token("&&")]
    AndAnd,
    #[token("||")]
    OrOr,
    #[token("+=")]
    PlusEq,
    #[token("-=")]
    MinusEq,
    #[token("*=")]
    StarEq,
    #[token("/=")]
    SlashEq,
    #[token("%=")]
    PercentEq,
    #[token("&=")]
    AmpEq,
    #[token("|=")]
    PipeEq,
    #[token("^=")]
    CaretEq,
    #[token("<<=")]
    ShlEq,
    #[token(">>=")]
    ShrEq,
}

fn int_value(text: &str, radix: u32) -> Result<u64, LexError> {
    let prefix = if radix == 10 { 0 } else { 2 };
    let digits = &text[prefix..];
    if !digits.bytes().any(|b| b != b'_') {
        return Err(LexError::BadDigit { at: 0, radix });
    }
    let mut value: u64 = 0;
    for (i, c) in digits.char_indices() {
        if c == '_' {
            continue;
        }
        let d = c.to_digit(radix).ok_or(LexError::BadDigit { at: prefix + i, radix })?;
        value = value
            .checked_mul(u64::from(radix))
            .and_then(|v| v.checked_add(u64::from(d)))
            .ok_or(LexError::IntOverflow)?;
    }
    Ok(value)
}

fn float_value<'src>(lex: &mut Lexer<'src, Token<'src>>) -> f64 {
    // The regexes only admit well-formed literals, so parsing cannot fail; NaN is a harmless fallback.
    lex.slice().replace('_', "").parse().unwrap_or(f64::NAN)
}

/// Scans a string literal after its opening quote. Strings end at the end of their line: an unclosed one is
/// reported there and lexing resumes on the next line, which keeps one mistake from swallowing the file.
fn string<'src>(lex: &mut Lexer<'src, Token<'src>>) -> Result<&'src str, LexError> {
    let rest = lex.remainder();
    let mut chars = rest.char_indices();
    let mut bad: Vec<LexError> = Vec::new();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => {
                lex.bump(i + 1);
                return match bad.len() {
                    0 => Ok(lex.slice()),
                    1 => Err(bad.swap_remove(0)),
                    _ => Err(LexError::BadEscapes(bad)),
                };
            }
            '\n' => break,
            '\\' => {
                let Some((j, e)) = chars.next() else { break };
                let ok = match e {
                    'n' | 't' | 'r' | '\\' | '"' | '0' => true,
                    'u' => match unicode_escape(&rest[j + 1..]) {
                        Ok(len) => {
                            // The braces and hex digits are ASCII: bytes and chars agree.
                            for _ in 0..len {
                                chars.next();
                            }
                            true
                        }
                        Err((len, value)) => {
                            bad.push(LexError::BadUnicodeEscape { at: 1 + i, end: 2 + j + len, value });
                            // Past the braced part (by bytes: it may hold any character), so that what it holds
                            // is not read as more escapes; it never holds the closing quote.
                            let past = j + 1 + len;
                            while chars.clone().next().is_some_and(|(k, _)| k < past) {
                                chars.next();
                            }
                            true
                        }
                    },
                    _ => false,
                };
                if !ok {
                    // Offsets are relative to the token start, which is the opening quote.
                    bad.push(LexError::BadEscape { at: 1 + i, end: 1 + j + e.len_utf8() });
                }
                if e == '\n' {
                    lex.bump(j);
                    return Err(LexError::UnterminatedString);
                }
            }
            _ => {}
        }
    }
    // Unterminated: the token runs to the end of the line (not including the newline).
    let end = rest.find('\n').unwrap_or(rest.len());
    lex.bump(end);
    Err(LexError::UnterminatedString)
}

/// `{XXXX}` after `\u`: 1 to 6 hex digits naming a Unicode scalar value. Returns its length in bytes, or why
/// not: the length of the braced part (0 if there is none on this line of the string) and the value it names if
/// it is a hex number.
fn unicode_escape(rest: &str) -> Result<usize, (usize, Option<u32>)> {
    let Some(body) = rest.strip_prefix('{') else { return Err((0, None)) };
    let Some(close) = body.find(['}', '"', '\n']).filter(|&c| body[c..].starts_with('}')) else {
        return Err((0, None));
    };
    let (hex, len) = (&body[..close], close + 2);
    if hex.is_empty() || hex.len() > 6 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err((len, None));
    }
    // At most 6 hex digits: the value fits in a u32.
    let value = u32::from_str_radix(hex, 16).map_err(|_| (len, None))?;
    char::from_u32(value).map(|_| len).ok_or((len, Some(value)))
}

/// Skips a block comment after its `/*`, honouring nesting.
fn block_comment<'src>(lex: &mut Lexer<'src, Token<'src>>) -> FilterResult<(), LexError> {
    let bytes = lex.remainder().as_bytes();
    let mut depth = 1usize;
    let mut i = 0;
    while i + 1 < bytes.len() {
        match (bytes[i], bytes[i + 1]) {
            (b'/', b'*') => {
                depth += 1;
                i += 2;
            }
            (b'*', b'/') => {
                depth -= 1;
                i += 2;
                if depth == 0 {
                    lex.bump(i);
                    return FilterResult::Skip;
                }
            }
            _ => i += 1,
        }
    }
    // The adapter reports the `/*` itself; the rest of the file is swallowed.
    lex.bump(bytes.len());
    FilterResult::Error(LexError::UnterminatedComment)
}

/// Decodes the escapes of a string token (quotes included) that the lexer has already validated.
pub fn unescape(raw: &str) -> String {
    let inner = raw.strip_prefix('"').and_then(|s| s.strip_suffix('"')).unwrap_or(raw);
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('0') => out.push('\0'),
            Some('u') => {
                let rest: String = chars.by_ref().take_while(|&c| c != '}').collect();
                let hex = rest.trim_start_matches('{');
                out.push(u32::from_str_radix(hex, 16).ok().and_then(char::from_u32).unwrap_or('\u{fffd}'));
            }
            Some(other) => out.push(other),
            None => {}
        }
    }
    out
}

impl Token<'_> {
    /// The token's kind as one stable word, used by the token printer.
    pub fn kind_name(&self) -> &'static str {
        use Token::*;
        match self {
            Kernel => "Kernel",
            Fn => "Fn",
            Const => "Const",
            Use => "Use",
            Let => "Let",
            Mut => "Mut",
            For => "For",
            In => "In",
            While => "While",
            If => "If",
            Else => "Else",
            Return => "Return",
            Break => "Break",
            Continue => "Continue",
            Role => "Role",
            As => "As",
            Compose => "Compose",
            Launch => "Launch",
            Bool(_) => "Bool",
            Ident(_) => "Ident",
            Underscore => "Underscore",
            Int(_) => "Int",
            Float(_) => "Float",
            Str(_) => "Str",
            LineComment(_) => "LineComment",
            BlockComment => "BlockComment",
            DocComment(_) => "DocComment",
            ModuleDoc(_) => "ModuleDoc",
            LParen => "LParen",
            RParen => "RParen",
            LBracket => "LBracket",
            RBracket => "RBracket",
            LBrace => "LBrace",
            RBrace => "RBrace",
            GenericOpen => "GenericOpen",
            GenericClose => "GenericClose",
            Comma => "Comma",
            Semi => "Semi",
            Colon => "Colon",
            PathSep => "PathSep",
            Dot => "Dot",
            DotDot => "DotDot",
            Arrow => "Arrow",
            Eq => "Eq",
            EqEq => "EqEq",
            Ne => "Ne",
            Lt => "Lt",
            Le => "Le",
            Gt => "Gt",
            Ge => "Ge",
            Shl => "Shl",
            Shr => "Shr",
            Plus => "Plus",
            Minus => "Minus",
            Star => "Star",
            Slash => "Slash",
            Percent => "Percent",
            Amp => "Amp",
            Pipe => "Pipe",
            Caret => "Caret",
            Bang => "Bang",
            Tilde => "Tilde",
            AndAnd => "AndAnd",
            OrOr => "OrOr",
            PlusEq => "PlusEq",
            MinusEq => "MinusEq",
            StarEq => "StarEq",
            SlashEq => "SlashEq",
            PercentEq => "PercentEq",
            AmpEq => "AmpEq",
            PipeEq => "PipeEq",
            CaretEq => "CaretEq",
            ShlEq => "ShlEq",
            ShrEq => "ShrEq",
        }
    }

    /// The fixed text of a keyword or punctuation token; `None` for names, literals and comments.
    pub fn text(&self) -> Option<&'static str> {
        use Token::*;
        Some(match self {
            Kernel => "kernel",
            Fn => "fn",
            Const => "const",
            Use => "use",
            Let => "let",
            Mut => "mut",
            For => "for",
            In => "in",
            While => "while",
            If => "if",
            Else => "else",
            Return => "return",
            Break => "break",
            Continue => "continue",
            As => "as",
            Role => "role",
            Compose => "o",
            Launch => "launch",
            Underscore => "_",
            LParen => "(",
            RParen => ")",
            LBracket => "[",
            RBracket => "]",
            LBrace => "{",
            RBrace => "}",
            GenericOpen | Lt => "<",
            GenericClose | Gt => ">",
            Comma => ",",
            Semi => ";",
            Colon => ":",
            PathSep => "::",
            Dot => ".",
            DotDot => "..",
            Arrow => "->",
            Eq => "=",
            EqEq => "==",
            Ne => "!=",
            Le => "<=",
            Ge => ">=",
            Shl => "<<",
            Shr => ">>",
            Plus => "+",
            Minus => "-",
            Star => "*",
            Slash => "/",
            Percent => "%",
            Amp => "&",
            Pipe => "|",
            Caret => "^",
            Bang => "!",
            Tilde => "~",
            AndAnd => "&&",
            OrOr => "||",
            PlusEq => "+=",
            MinusEq => "-=",
            StarEq => "*=",
            SlashEq => "/=",
            PercentEq => "%=",
            AmpEq => "&=",
            PipeEq => "|=",
            CaretEq => "^=",
            ShlEq => "<<=",
            ShrEq => ">>=",
            Bool(_) | Ident(_) | Int(_) | Float(_) | Str(_) | LineComment(_) | BlockComment | DocComment(_)
            | ModuleDoc(_) => return None,
        })
    }

    /// Whether this is a keyword (which cannot be used as a name).
    pub fn is_keyword(&self) -> bool {
        use Token::*;
        matches!(
            self,
            Kernel
                | Fn
                | Const
                | Use
                | Let
                | Mut
                | For
                | In
                | While
                | If
                | Else
                | Return
                | Break
                | Continue
                | As
                | Role
                | Launch
                | Bool(_)
        )
    }
}

/// How a token is named in a diagnostic: "`(`", "keyword `for`", "identifier `x`", "integer literal `3`".
impl fmt::Display for Token<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Token::Bool(b) => write!(f, "keyword `{b}`"),
            Token::Ident(name) => write!(f, "identifier `{name}`"),
            Token::Int(v) => write!(f, "integer literal `{v}`"),
            Token::Float(v) => write!(f, "float literal `{v:?}`"),
            Token::Str(raw) => write!(f, "string literal {raw}"),
            Token::LineComment(_) | Token::BlockComment => f.write_str("comment"),
            Token::DocComment(_) => f.write_str("doc comment"),
            Token::ModuleDoc(_) => f.write_str("module doc comment"),
            t if t.is_keyword() => write!(f, "keyword `{}`", t.text().unwrap_or("?")),
            t => write!(f, "`{}`", t.text().unwrap_or("?")),
        }
    }
}

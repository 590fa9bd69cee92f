//! The token adapter between logos and lalrpop.
//!
//! It runs in passes over a token vector (the generics rule needs lookahead, and token vectors are small):
//! 1. logos tokens, with lexer errors collected and whitespace and plain comments dropped; doc comments are
//!    classified; a literal with an error is replaced by a harmless literal of its kind so that one typo makes
//!    one error, not a lexer error plus a parser error.
//! 2. the generics rule ([`mark_generics`]), which turns some `<`/`>` into [`Token::GenericOpen`] and
//!    [`Token::GenericClose`], and merges the remaining adjacent `> >` into [`Token::Shr`].
//! 3. delimiter matching ([`check_delimiters`]): records unclosed and stray delimiters for the diagnostics,
//!    and drops whatever is nested deeper than [`MAX_NESTING`] so that no later recursive pass can overflow.

use crate::MAX_NESTING;
use crate::error::{SyntaxError, SyntaxErrorKind};
use crate::token::{LexError, Token};
use cutec_diagnostics::Span;
use logos::Logos;

pub type Spanned<'src> = (usize, Token<'src>, usize);

/// The output of the adapter: the token stream the parser reads, and what the adapter learned on the way.
pub struct Lexed<'src> {
    pub tokens: Vec<Spanned<'src>>,
    pub errors: Vec<SyntaxError>,
    /// Openers never closed, innermost last.
    pub unclosed: Vec<(Span, char)>,
    /// The same openers grouped by kind, each list in source order.
    pub unclosed_by_kind: Vec<(char, Vec<Span>)>,
    /// Ends of lexer errors that dropped or cut short some text (a stray character, an unterminated string): a
    /// parser complaint right after one is a consequence, not a new problem.
    pub suspects: Vec<usize>,
    /// True when a lexer error swallowed the rest of the file, which makes any "unexpected end of file"
    /// from the parser a consequence rather than a new problem.
    pub truncated: bool,
}

pub fn lex(src: &str) -> Lexed<'_> {
    let mut lexed = Lexed {
        tokens: Vec::new(),
        errors: Vec::new(),
        unclosed: Vec::new(),
        unclosed_by_kind: Vec::new(),
        suspects: Vec::new(),
        truncated: false,
    };
    if src.len() > crate::MAX_SOURCE_BYTES {
        let mut at = crate::MAX_SOURCE_BYTES;
        while !src.is_char_boundary(at) {
            at -= 1;
        }
        let end = at + src[at..].chars().next().map_or(0, char::len_utf8);
        lexed.errors.push(SyntaxError::new(SyntaxErrorKind::FileTooLarge { bytes: src.len() }, Span::new(at, end)));
        // Nothing more to say about a file not read: "unexpected end of file" would be a consequence.
        lexed.truncated = true;
        return lexed;
    }
    raw_tokens(src, &mut lexed);
    mark_generics(&mut lexed);
    merge_shifts(&mut lexed.tokens);
    check_delimiters(&mut lexed);
    lexed
}

/// Pass 1: logos, error reporting, comment classification.
fn raw_tokens<'src>(src: &'src str, out: &mut Lexed<'src>) {
    let mut lexer = Token::lexer(src);
    // `//!` is accepted only before any other token.
    let mut seen_item = false;
    while let Some(result) = lexer.next() {
        let span = lexer.span();
        let (start, end) = (span.start, span.end);
        let token = match result {
            Ok(Token::LineComment(text)) => {
                if let Some(doc) = text.strip_prefix("//!") {
                    if seen_item {
                        out.errors
                            .push(SyntaxError::new(SyntaxErrorKind::MisplacedModuleDoc, Span::new(start, start + 3)));
                        continue;
                    }
                    Token::ModuleDoc(doc)
                } else if let Some(doc) = text.strip_prefix("///").filter(|d| !d.starts_with('/')) {
                    Token::DocComment(doc)
                } else {
                    continue;
                }
            }
            Ok(token) => token,
            Err(error) => match lex_error(src, start, end, error, out) {
                Some(token) => token,
                None => continue,
            },
        };
        if !matches!(token, Token::ModuleDoc(_)) {
            seen_item = true;
        }
        out.tokens.push((start, token, end));
    }
}

/// Records a lexer error and returns the token that stands in for the bad one, if any.
fn lex_error<'src>(
    src: &'src str,
    start: usize,
    end: usize,
    error: LexError,
    out: &mut Lexed<'src>,
) -> Option<Token<'src>> {
    let (kind, span, stand_in) = match error {
        LexError::UnexpectedChar => {
            // logos reports one byte; widen to the whole character so spans stay on char boundaries.
            let c = src.get(start..).and_then(|s| s.chars().next()).unwrap_or('\u{fffd}');
            out.suspects.push(start + c.len_utf8());
            (SyntaxErrorKind::UnexpectedChar(c), Span::new(start, start + c.len_utf8()), None)
        }
        LexError::UnterminatedString => {
            out.suspects.push(end);
            (SyntaxErrorKind::UnterminatedString, Span::new(start, end), Some(Token::Str("\"\"")))
        }
        LexError::BadEscapes(errors) => {
            // Each is reported on its own escape; the string stands in once.
            for e in errors {
                lex_error(src, start, end, e, out);
            }
            return Some(Token::Str("\"\""));
        }
        LexError::BadEscape { at, end: e } => {
            let text = src.get(start + at..start + e).unwrap_or("\\").to_string();
            (SyntaxErrorKind::BadEscape(text), Span::new(start + at, start + e), Some(Token::Str("\"\"")))
        }
        LexError::BadUnicodeEscape { at, end: e, value } => {
            let escape = src.get(start + at..start + e).unwrap_or("\\u").to_string();
            let kind = SyntaxErrorKind::BadUnicodeEscape { escape, value };
            (kind, Span::new(start + at, start + e), Some(Token::Str("\"\"")))
        }
        LexError::IntOverflow => (SyntaxErrorKind::IntOverflow, Span::new(start, end), Some(Token::Int(0))),
        LexError::BadDigit { at, radix } => {
            let digit = if at == 0 { None } else { src.get(start + at..).and_then(|s| s.chars().next()) };
            let span = match digit {
                Some(d) => Span::new(start + at, start + at + d.len_utf8()),
                None => Span::new(start, end),
            };
            (SyntaxErrorKind::BadDigit { digit, radix }, span, Some(Token::Int(0)))
        }
        LexError::UnterminatedComment => {
            out.truncated = true;
            (SyntaxErrorKind::UnterminatedComment, Span::new(start, start + 2), None)
        }
    };
    out.errors.push(SyntaxError::new(kind, span));
    stand_in
}

/// The longest generic argument list the rule scans for; generic lists are short, and the bound keeps the scan
/// linear on adversarial input such as `a < b, a < b, a < b, ...`.
const MAX_GENERIC_SCAN: usize = 512;

/// Pass 2: decides which `<` after an identifier opens generic arguments, using C#'s rule (C# spec, "Grammar
/// ambiguities"): the `<` opens a generic list if scanning forward finds its matching `>` (tracking `()` and
/// `[]` nesting and nested generic lists, and giving up at `;`, `{`, `}`, `&&`, `||`, an unbalanced `)` or
/// `]`, or the end of input), and the token right after that `>` is one of `( ) ] } , ; . : = { o`, another
/// `>` (a nested list closing), or the end of input. Otherwise the `<` is a comparison. So `Swizzle<3, 4, 3>`,
/// `size<0>(acc)` and `Tensor<f32, N:1, gmem>` are generic, while `a < b`, `a < b && c > d` and
/// `f(a < b, c > d)` (the `>` is followed by `d`) are comparisons.
///
/// Two additions for types, where nothing is ever compared: a `>=` closes the list (`x: Tensor<f32>= v`), and
/// a list that never closes is closed where it evidently ends, with an error, instead of becoming a comparison.
fn mark_generics(lexed: &mut Lexed<'_>) {
    let tokens = &mut lexed.tokens;
    // Generic lists in type position that never close: (span of the `<`, index to insert a `>` before).
    let mut unclosed: Vec<(Span, usize)> = Vec::new();
    let mut i = 1;
    while i < tokens.len() {
        if matches!(tokens[i].1, Token::Lt) && matches!(tokens[i - 1].1, Token::Ident(_)) {
            if let Some(close) = generic_close(tokens, i) {
                tokens[i].1 = Token::GenericOpen;
                let (start, token, end) = tokens[close];
                tokens[close].1 = Token::GenericClose;
                if token == Token::Ge {
                    // `x: Tensor<f32>= v`: the `>=` is a closer and a `=`.
                    tokens[close].2 = start + 1;
                    tokens.insert(close + 1, (start + 1, Token::Eq, end));
                }
            } else if in_type_position(tokens, i - 1) {
                tokens[i].1 = Token::GenericOpen;
                unclosed.push((Span::new(tokens[i].0, tokens[i].2), generic_recovery_point(tokens, i)));
            }
        }
        i += 1;
    }
    if unclosed.is_empty() {
        return;
    }
    // A type is never compared, so a `<` there must open a list: pretend the `>` is where the list clearly ends
    // and report it missing, which keeps a forgotten `>` from cascading into errors about the rest of the line.
    let old = std::mem::take(tokens);
    let len = old.len();
    let mut pending = unclosed.into_iter().peekable();
    for k in 0..=len {
        while let Some(&(open, at)) = pending.peek() {
            if at != k {
                break;
            }
            pending.next();
            let end = tokens.last().map_or(0, |t: &Spanned<'_>| t.2);
            let (found, text) = match old.get(k) {
                Some(t) => (Span::new(t.0, t.2), t.1.to_string()),
                None => (Span::new(end, end), "end of file".to_string()),
            };
            tokens.push((end, Token::GenericClose, end));
            lexed.errors.push(
                SyntaxError::new(SyntaxErrorKind::UnclosedGenerics { found: text }, found)
                    .with_related(open, "this generic argument list is never closed"),
            );
        }
        if let Some(&t) = old.get(k) {
            tokens.push(t);
        }
    }
}

/// Whether the name at `i` is a type: it follows `->` or `as`, or the `:` of a binding (`x: T` after `(`, `,`,
/// `let`, `mut` or `const`).
fn in_type_position(tokens: &[Spanned<'_>], i: usize) -> bool {
    let at = |k: usize| i.checked_sub(k).and_then(|j| tokens.get(j)).map(|t| t.1);
    match at(1) {
        Some(Token::Arrow | Token::As) => true,
        Some(Token::Colon) => {
            matches!(at(2), Some(Token::Ident(_)))
                && matches!(at(3), Some(Token::LParen | Token::Comma | Token::Let | Token::Mut | Token::Const))
        }
        _ => false,
    }
}

/// Where a never-closed generic list in a type evidently ends: before the first token at its nesting level that
/// cannot be inside generic arguments, or at the end of input.
fn generic_recovery_point(tokens: &[Spanned<'_>], open: usize) -> usize {
    let mut depth = 0usize;
    for (j, t) in tokens.iter().enumerate().skip(open + 1) {
        match t.1 {
            Token::LParen | Token::LBracket => depth += 1,
            Token::RParen | Token::RBracket if depth > 0 => depth -= 1,
            Token::RParen
            | Token::RBracket
            | Token::RBrace
            | Token::LBrace
            | Token::Semi
            | Token::Eq
            | Token::AndAnd
            | Token::OrOr => return j,
            _ => {}
        }
    }
    tokens.len()
}

/// The index of the `>` that closes the generic list opened at `open`, if the rule says it is one.
fn generic_close(tokens: &[Spanned<'_>], open: usize) -> Option<usize> {
    let mut depth = 0usize; // () and [] nesting inside the list
    let mut nested = 0usize; // generic lists opened inside this one
    let limit = tokens.len().min(open + MAX_GENERIC_SCAN);
    let mut j = open + 1;
    while j < limit {
        match tokens[j].1 {
            Token::Semi | Token::LBrace | Token::RBrace | Token::AndAnd | Token::OrOr => return None,
            Token::LParen | Token::LBracket => depth += 1,
            Token::RParen | Token::RBracket => depth = depth.checked_sub(1)?,
            // A nested `Ident <` is counted as a generic opener; if it were a comparison, the list would not
            // balance and the outer `<` would fail too, which is what C#'s rule does.
            Token::Lt if depth == 0 && matches!(tokens[j - 1].1, Token::Ident(_)) => nested += 1,
            // In a type, a `>=` can only be a closer glued to the `=` of a binding: `x: Tensor<f32>= v`.
            Token::Ge if depth == 0 && nested == 0 && in_type_position(tokens, open - 1) => return Some(j),
            Token::Gt if depth == 0 => {
                if nested > 0 {
                    nested -= 1;
                } else {
                    let ok = match tokens.get(j + 1) {
                        None => true,
                        Some((_, next, _)) => matches!(
                            next,
                            Token::LParen
                                | Token::RParen
                                | Token::RBracket
                                | Token::RBrace
                                | Token::Comma
                                | Token::Semi
                                | Token::Dot
                                | Token::Colon
                                | Token::Eq
                                | Token::LBrace
                                | Token::Gt
                                // `Sw<3,4,3> o L`: `o` cannot start an operand, so it cannot follow a comparison.
                                | Token::Compose
                                // An enclosing list already decided: `A<B<C>>`.
                                | Token::GenericClose
                        ),
                    };
                    return ok.then_some(j);
                }
            }
            _ => {}
        }
        j += 1;
    }
    None
}

/// Pass 2b: `>>` is lexed as two `>` so that `A<B<C>>` closes two lists; two adjacent `>` that do not close
/// generics are one shift operator.
fn merge_shifts(tokens: &mut Vec<Spanned<'_>>) {
    let mut out = Vec::with_capacity(tokens.len());
    let mut iter = std::mem::take(tokens).into_iter().peekable();
    while let Some((start, token, end)) = iter.next() {
        if token == Token::Gt
            && let Some(&(next_start, Token::Gt, next_end)) = iter.peek()
            && next_start == end
        {
            iter.next();
            out.push((start, Token::Shr, next_end));
            continue;
        }
        out.push((start, token, end));
    }
    *tokens = out;
}

/// Pass 3: matches `()`, `[]`, `{}` and generic brackets; records unclosed and stray delimiters; drops tokens
/// nested deeper than [`MAX_NESTING`] (reporting each such region once) and doc comments inside delimiters.
fn check_delimiters(lexed: &mut Lexed<'_>) {
    let mut stack: Vec<(Span, char)> = Vec::new();
    // How many openers of each kind the stack holds: a closer with none open is stray without scanning the
    // stack, which keeps the pass linear (a scan that finds its opener pops everything it passed).
    let mut open_count = [0usize; 4];
    let slot = |d: char| match d {
        '(' => 0,
        '[' => 1,
        '{' => 2,
        _ => 3,
    };
    let mut kept = Vec::with_capacity(lexed.tokens.len());
    // While skipping an over-deep region: the stack height at which skipping stops.
    let mut skip_until: Option<usize> = None;
    for (start, token, end) in std::mem::take(&mut lexed.tokens) {
        // `///` documents items; inside a body or a list it is an ordinary comment.
        if matches!(token, Token::DocComment(_)) && !stack.is_empty() {
            continue;
        }
        let span = Span::new(start, end);
        let open = match token {
            Token::LParen => Some('('),
            Token::LBracket => Some('['),
            Token::LBrace => Some('{'),
            Token::GenericOpen => Some('<'),
            _ => None,
        };
        let close = match token {
            Token::RParen => Some('('),
            Token::RBracket => Some('['),
            Token::RBrace => Some('{'),
            Token::GenericClose => Some('<'),
            _ => None,
        };
        if let Some(delim) = open {
            stack.push((span, delim));
            open_count[slot(delim)] += 1;
            if stack.len() > MAX_NESTING && skip_until.is_none() {
                lexed.errors.push(SyntaxError::new(SyntaxErrorKind::NestingTooDeep, span));
                skip_until = Some(stack.len() - 1);
            }
        } else if let Some(delim) = close {
            let found = if open_count[slot(delim)] > 0 { stack.iter().rposition(|&(_, d)| d == delim) } else { None };
            match found {
                Some(pos) => {
                    // Openers above the match are unclosed: `f(a, b; }` leaves the `(` open.
                    for &(_, d) in &stack[pos..] {
                        open_count[slot(d)] -= 1;
                    }
                    lexed.unclosed.extend(stack.drain(pos + 1..));
                    stack.pop();
                }
                None if delim != '<' => {
                    lexed.suspects.push(end);
                    let text = crate::error::closer(delim);
                    let mut error =
                        SyntaxError::new(SyntaxErrorKind::UnexpectedCloser { delim: text, open: None }, span);
                    // With another delimiter open, this is most likely a typo for its closer: `g(a]`.
                    if let Some(&(open_span, open)) = stack.last().filter(|(_, d)| *d != '<') {
                        error.kind = SyntaxErrorKind::UnexpectedCloser { delim: text, open: Some(open) };
                        error = error.with_related(open_span, "unclosed delimiter");
                    }
                    lexed.errors.push(error);
                    // Dropped: the parser would only report it again.
                    continue;
                }
                None => {}
            }
        }
        if let Some(height) = skip_until {
            if stack.len() <= height {
                skip_until = None;
            }
            continue;
        }
        kept.push((start, token, end));
    }
    lexed.unclosed.extend(stack);
    lexed.unclosed.sort_by_key(|(span, _)| span.start);
    lexed.unclosed_by_kind = ['(', '[', '{', '<']
        .into_iter()
        .map(|kind| (kind, lexed.unclosed.iter().filter(|(_, d)| *d == kind).map(|(s, _)| *s).collect()))
        .collect();
    lexed.tokens = kept;
}

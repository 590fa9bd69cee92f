//! Tokens of the IR text form.

use super::ParseError;

#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    /// A mnemonic, keyword, type or register name: letters, digits, `_` and `.` (`cmp.lt`, `f32x4`, `tid.x`),
    /// also `inf`, `-inf`, `nan` with an optional type suffix.
    Word(String),
    /// A number with its suffix as written (`4`, `-3`, `7i64`, `0.5bf16`, `1e-5`).
    Number(String),
    /// `%name` or `%12`.
    Value(String),
    /// `@name`.
    Alloc(String),
    /// `$name`.
    Var(String),
    /// `#name`: an entity of the schedule (`#b0` a barrier, `#r0` a ring).
    Entity(String),
    /// `..`.
    DotDot,
    Punct(char),
}

/// A token and the line and column it starts at (1-based).
#[derive(Clone, Debug)]
pub struct Spanned {
    pub tok: Tok,
    pub line: u32,
    pub col: u32,
}

fn name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '.'
}

/// Splits `text` into tokens; `//` starts a comment that runs to the end of the line.
pub fn lex(text: &str) -> Result<Vec<Spanned>, ParseError> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let (mut i, mut line, mut col) = (0usize, 1u32, 1u32);
    let take = |i: &mut usize, col: &mut u32, f: &dyn Fn(char) -> bool| -> String {
        let start = *i;
        while *i < chars.len() && f(chars[*i]) {
            // A `.` followed by another `.` ends a name or number: `0..4`.
            if chars[*i] == '.' && chars.get(*i + 1) == Some(&'.') {
                break;
            }
            *i += 1;
            *col += 1;
        }
        chars[start..*i].iter().collect()
    };
    while i < chars.len() {
        let c = chars[i];
        let (l, cl) = (line, col);
        let mut push = |tok| out.push(Spanned { tok, line: l, col: cl });
        match c {
            '\n' => {
                i += 1;
                line += 1;
                col = 1;
            }
            c if c.is_whitespace() => {
                i += 1;
                col += 1;
            }
            '/' if chars.get(i + 1) == Some(&'/') => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            '%' | '@' | '$' | '#' => {
                i += 1;
                col += 1;
                let name = take(&mut i, &mut col, &name_char);
                if name.is_empty() {
                    return Err(ParseError::new(l, cl, format!("`{c}` without a name")));
                }
                push(match c {
                    '%' => Tok::Value(name),
                    '@' => Tok::Alloc(name),
                    '#' => Tok::Entity(name),
                    _ => Tok::Var(name),
                });
            }
            '.' if chars.get(i + 1) == Some(&'.') => {
                i += 2;
                col += 2;
                push(Tok::DotDot);
            }
            '-' if chars.get(i + 1).is_some_and(|c| c.is_ascii_alphabetic()) => {
                i += 1;
                col += 1;
                let w = take(&mut i, &mut col, &name_char);
                push(Tok::Word(format!("-{w}")));
            }
            c if c.is_ascii_digit() || (c == '-' && chars.get(i + 1).is_some_and(char::is_ascii_digit)) => {
                let start = i;
                i += 1;
                col += 1;
                // Digits, a fraction, an exponent (with its sign), then a type suffix.
                while i < chars.len() {
                    let d = chars[i];
                    let exp_sign = (d == '-' || d == '+') && matches!(chars[i - 1], 'e' | 'E');
                    if d == '.' && chars.get(i + 1) == Some(&'.') {
                        break;
                    }
                    if !(name_char(d) || exp_sign) {
                        break;
                    }
                    i += 1;
                    col += 1;
                }
                push(Tok::Number(chars[start..i].iter().collect()));
            }
            c if c.is_ascii_alphabetic() || c == '_' => {
                let w = take(&mut i, &mut col, &name_char);
                push(Tok::Word(w));
            }
            '(' | ')' | '{' | '}' | '[' | ']' | ',' | ':' | ';' | '=' | '<' | '>' => {
                i += 1;
                col += 1;
                push(Tok::Punct(c));
            }
            other => return Err(ParseError::new(l, cl, format!("unexpected character `{other}`"))),
        }
    }
    Ok(out)
}

//! Syntax errors as data, their conversion to [`Diagnostic`]s, and the table of codes `cutec explain` prints.
//!
//! Lexer errors use E0001..E0019, parser errors E0020..E0099.

use cutec_diagnostics::{CodeInfo, Diagnostic, FileId, Span};

/// One syntax error: what went wrong and where (the primary span), plus secondary spans that help the reader.
#[derive(Clone, PartialEq, Debug)]
pub struct SyntaxError {
    pub kind: SyntaxErrorKind,
    pub span: Span,
    /// Secondary labels, e.g. the unclosed `(` of an argument list.
    pub related: Vec<(Span, String)>,
}

#[derive(Clone, PartialEq, Debug)]
pub enum SyntaxErrorKind {
    /// E0001: a character that starts no token.
    UnexpectedChar(char),
    /// E0002: a string literal without its closing `"` on the same line.
    UnterminatedString,
    /// E0003: an unknown escape sequence in a string (the escape as written).
    BadEscape(String),
    /// E0003: `\u` not followed by 1 to 6 hex digits in braces (`value == None`), or naming no Unicode scalar
    /// value (above 10FFFF or a surrogate). `escape` is the escape as written.
    BadUnicodeEscape { escape: String, value: Option<u32> },
    /// E0004: an integer literal that does not fit in 64 bits.
    IntOverflow,
    /// E0005: a digit the radix does not allow, or a radix prefix with no digits (`digit == None`).
    BadDigit { digit: Option<char>, radix: u32 },
    /// E0006: `/*` without a matching `*/` (span: the opener).
    UnterminatedComment,
    /// E0007: a `//!` module doc comment after the start of the file.
    MisplacedModuleDoc,
    /// E0008: a file longer than [`crate::MAX_SOURCE_BYTES`] (span: the character where the limit is crossed).
    FileTooLarge { bytes: usize },
    /// E0020: the parser met a token it cannot use here.
    UnexpectedToken { found: String, expected: Vec<String> },
    /// E0021: the file ended in the middle of something.
    UnexpectedEof { expected: Vec<String> },
    /// E0022: an opening delimiter that is never closed (span: the opener).
    UnclosedDelimiter { delim: char },
    /// E0023: a closing delimiter that closes nothing (`open == None`), or that does not match the innermost
    /// open delimiter `open` (which is then a secondary label).
    UnexpectedCloser { delim: char, open: Option<char> },
    /// E0024: a keyword where a name was expected.
    KeywordAsName { keyword: String },
    /// E0025: brackets or an expression nested deeper than [`crate::MAX_NESTING`].
    NestingTooDeep,
    /// E0025 too: a chain of binary operators (`1 + 1 + ... + 1`) longer than the nesting limit, which each of
    /// its operators counts against.
    OperatorChainTooLong,
    /// E0026: a comparison operand that is itself a comparison: `a < b < c`.
    ChainedComparison,
    /// E0027: a generic argument list in a type without its `>` (span: where the `>` was expected).
    UnclosedGenerics { found: String },
    /// E0028: a layout whose stride is followed by another `:`: `8:1:2`.
    ChainedLayout,
    /// E0029: `///` at the end of the file, documenting nothing.
    DanglingDocComment,
}

impl SyntaxError {
    pub fn new(kind: SyntaxErrorKind, span: Span) -> SyntaxError {
        SyntaxError { kind, span, related: Vec::new() }
    }

    pub fn with_related(mut self, span: Span, message: impl Into<String>) -> SyntaxError {
        self.related.push((span, message.into()));
        self
    }

    /// The stable code of this error.
    pub fn code(&self) -> &'static str {
        use SyntaxErrorKind::*;
        match self.kind {
            UnexpectedChar(_) => "E0001",
            UnterminatedString => "E0002",
            BadEscape(_) | BadUnicodeEscape { .. } => "E0003",
            IntOverflow => "E0004",
            BadDigit { .. } => "E0005",
            UnterminatedComment => "E0006",
            MisplacedModuleDoc => "E0007",
            FileTooLarge { .. } => "E0008",
            UnexpectedToken { .. } => "E0020",
            UnexpectedEof { .. } => "E0021",
            UnclosedDelimiter { .. } => "E0022",
            UnexpectedCloser { .. } => "E0023",
            KeywordAsName { .. } => "E0024",
            NestingTooDeep | OperatorChainTooLong => "E0025",
            ChainedComparison => "E0026",
            UnclosedGenerics { .. } => "E0027",
            ChainedLayout => "E0028",
            DanglingDocComment => "E0029",
        }
    }

    /// The one-line message, as in `error[E0020]: expected `)`, found `{``.
    pub fn message(&self) -> String {
        use SyntaxErrorKind::*;
        match &self.kind {
            UnexpectedChar(c) => format!("unknown start of token: `{}`", c.escape_debug()),
            UnterminatedString => "unterminated string literal".into(),
            BadEscape(e) => format!("unknown character escape: `{e}`"),
            BadUnicodeEscape { escape, value: Some(_) } => format!("`{escape}` is not a Unicode scalar value"),
            BadUnicodeEscape { escape, value: None } => format!("malformed Unicode escape `{escape}`"),
            IntOverflow => "integer literal is too large".into(),
            BadDigit { digit: Some(d), radix } => {
                format!("invalid digit `{}` in {} literal", d.escape_debug(), radix_name(*radix))
            }
            BadDigit { digit: None, radix } => format!("no digits after the {} prefix", radix_name(*radix)),
            UnterminatedComment => "unterminated block comment".into(),
            MisplacedModuleDoc => "module doc comment after the start of the file".into(),
            FileTooLarge { bytes } => {
                format!("the file is {bytes} bytes long, more than the limit of {} bytes", crate::MAX_SOURCE_BYTES)
            }
            UnexpectedToken { found, expected } => format!("expected {}, found {found}", expected_list(expected)),
            UnexpectedEof { expected } => format!("expected {}, found end of file", expected_list(expected)),
            UnclosedDelimiter { delim } => format!("unclosed delimiter `{delim}`"),
            UnexpectedCloser { delim, open: None } => format!("unexpected closing delimiter: `{delim}`"),
            UnexpectedCloser { delim, open: Some(_) } => format!("mismatched closing delimiter: `{delim}`"),
            KeywordAsName { keyword } if keyword == "o" => {
                "expected a name, found `o`, which is reserved as the composition operator".into()
            }
            KeywordAsName { keyword } => format!("expected a name, found keyword `{keyword}`"),
            NestingTooDeep => format!("nesting is deeper than {} levels", crate::MAX_NESTING),
            OperatorChainTooLong => {
                format!("an expression with a chain of more than {} binary operators", crate::MAX_NESTING)
            }
            ChainedComparison => "comparison operators cannot be chained".into(),
            UnclosedGenerics { found } => format!("expected `>` to close the generic arguments, found {found}"),
            ChainedLayout => "layout literals cannot be chained".into(),
            DanglingDocComment => "expected an item after this doc comment".into(),
        }
    }

    /// Converts to a rendered-ready diagnostic: primary label at [`SyntaxError::span`], secondary labels for
    /// [`SyntaxError::related`], and a `help:` where there is something useful to say.
    pub fn to_diagnostic(&self, file: FileId) -> Diagnostic {
        use SyntaxErrorKind::*;
        let (label, help): (String, Option<String>) = match &self.kind {
            UnexpectedChar(_) => ("not valid here".into(), Some("delete this character".into())),
            UnterminatedString => (
                "this string is never closed".into(),
                Some("add a closing `\"`; strings cannot span lines (use `\\n`)".into()),
            ),
            BadEscape(_) => (
                "unknown escape".into(),
                Some("the escapes are `\\n`, `\\t`, `\\r`, `\\\\`, `\\\"`, `\\0` and `\\u{...}`".into()),
            ),
            BadUnicodeEscape { value: Some(v), .. } => (
                if (0xd800..=0xdfff).contains(v) { "a surrogate, not a character" } else { "above 10FFFF" }.into(),
                Some("a Unicode scalar value is at most 10FFFF and not a surrogate (D800 to DFFF)".into()),
            ),
            BadUnicodeEscape { value: None, .. } => (
                "expected 1 to 6 hex digits in braces".into(),
                Some("write the character's code point in hex: `\\u{41}` is `A`".into()),
            ),
            IntOverflow => ("does not fit in 64 bits".into(), Some(format!("the largest integer is {}", u64::MAX))),
            BadDigit { digit: Some(_), radix } => (format!("not a {} digit", radix_name(*radix)), None),
            BadDigit { digit: None, .. } => ("expected digits here".into(), None),
            UnterminatedComment => (
                "this comment is never closed".into(),
                Some("add `*/`; block comments nest, so every inner `/*` needs its own `*/`".into()),
            ),
            MisplacedModuleDoc => (
                "`//!` documents the whole file".into(),
                Some("move it to the top of the file, or use `///` to document the next item".into()),
            ),
            // `o` where an expression may start: most likely a variable named `o`, which cannot be declared.
            UnexpectedToken { found, expected } if found == "`o`" => (
                format!("expected {}", expected_list(expected)),
                Some(
                    "`o` is reserved as the composition operator (`A o B`) and cannot name a variable; name it \
                     something else, such as `o_` or `out`"
                        .into(),
                ),
            ),
            UnexpectedToken { expected, .. } if expected.iter().any(|e| e == "`const`") => (
                format!("expected {}", expected_list(expected)),
                Some("generic parameters are compile-time constants: `<const N: int, const T: int = 256>`".into()),
            ),
            FileTooLarge { .. } => (
                "the limit is crossed here".into(),
                Some("split the file, or generate loops instead of repeated code".into()),
            ),
            UnexpectedToken { expected, .. } => (
                format!("expected {}", expected_list(expected)),
                if expected.iter().any(|e| e == "`;`") && expected.len() <= 3 {
                    Some("statements and `use`/`const` items end with `;`".into())
                } else {
                    None
                },
            ),
            UnexpectedEof { expected } => (format!("expected {}", expected_list(expected)), None),
            UnclosedDelimiter { delim } => {
                (format!("this `{delim}` is never closed"), Some(format!("add the matching `{}`", closer(*delim))))
            }
            UnexpectedCloser { open: None, .. } => ("this closes nothing".into(), Some("delete it".into())),
            UnexpectedCloser { open: Some(open), .. } => (
                "mismatched closing delimiter".into(),
                Some(format!("close the `{open}` with `{}` first", closer(*open))),
            ),
            KeywordAsName { keyword } if keyword == "o" => (
                "`o` is reserved: `A o B` composes two layouts".into(),
                Some("choose another name, such as `o_` or `out`".into()),
            ),
            KeywordAsName { keyword } => (
                "expected a name".into(),
                Some(format!("`{keyword}` is a keyword; choose another name, such as `{keyword}_`")),
            ),
            OperatorChainTooLong => (
                format!("more than {} operators in one chain", crate::MAX_NESTING),
                Some(
                    "each operator of `a + b + c` nests the sum so far one level deeper; split the chain into \
                      partial sums with `let` bindings"
                        .into(),
                ),
            ),
            NestingTooDeep => (
                "too deeply nested".into(),
                Some("split the expression with `let` bindings or flatten the nesting".into()),
            ),
            ChainedComparison => (
                "this comparison's left side is already a comparison".into(),
                Some("split it with `&&`: `a < b && b < c`".into()),
            ),
            UnclosedGenerics { .. } => {
                ("expected `>`".into(), Some("generic arguments end with `>`, as in `Tensor<f32, N:1, gmem>`".into()))
            }
            DanglingDocComment => (
                "this doc comment documents nothing".into(),
                Some("doc comments (`///`) document the item after them; use `//` for a plain comment".into()),
            ),
            ChainedLayout => (
                "a second `:` after a complete layout".into(),
                Some(
                    "a layout literal is `shape:stride`; parenthesise to use a layout inside another expression".into(),
                ),
            ),
        };
        let mut d = Diagnostic::error(self.code(), self.message(), file, self.span).with_primary_message(label);
        for (span, message) in &self.related {
            d = d.with_label(file, *span, message.clone());
        }
        if let Some(help) = help {
            d = d.with_help(help);
        }
        d
    }
}

fn radix_name(radix: u32) -> &'static str {
    match radix {
        2 => "binary",
        16 => "hexadecimal",
        _ => "decimal",
    }
}

pub(crate) fn closer(open: char) -> char {
    match open {
        '(' => ')',
        '[' => ']',
        '{' => '}',
        '<' => '>',
        other => other,
    }
}

/// "`)`", "`,` or `)`", "one of `,`, `)` or an operator".
fn expected_list(expected: &[String]) -> String {
    match expected {
        [] => "something else".into(),
        [one] => one.clone(),
        [a, b] => format!("{a} or {b}"),
        [init @ .., last] => format!("one of {}, or {last}", init.join(", ")),
    }
}

/// Every code this crate emits, for `cutec explain`.
pub const CODES: &[CodeInfo] = &[
    CodeInfo {
        code: "E0001",
        title: "unknown start of token",
        explanation: "The lexer met a character that begins no token of the language, such as `@`, `$` or a \
non-ASCII letter. Names are ASCII letters, digits and `_`.\n\n    let x = a @ b;   // error: `@` is not an operator\n\n\
Delete the character, or replace it with the operator you meant.",
    },
    CodeInfo {
        code: "E0002",
        title: "unterminated string literal",
        explanation: "A string literal has no closing `\"` before the end of its line. Strings cannot span \
lines; write a line break as `\\n`.\n\n    let s = \"hello;     // error: the string is never closed\n    let s = \"hello\";    // ok",
    },
    CodeInfo {
        code: "E0003",
        title: "invalid character escape",
        explanation: "A string contains a backslash escape the language does not define, or a `\\u{HEX}` escape \
that names no character. The escapes are `\\n`, `\\t`, `\\r`, `\\\\`, `\\\"`, `\\0` and `\\u{HEX}`: 1 to 6 hex \
digits in braces naming a Unicode scalar value, that is at most 10FFFF and not a surrogate (D800 to DFFF).\n\n    \
let s = \"a\\qb\";     // error: `\\q` is not an escape\n    let s = \"a\\\\qb\";    // ok: a backslash followed by `q`\n    \
let s = \"\\u{110000}\"; // error: above 10FFFF\n    let s = \"\\u{1F600}\";  // ok: an emoji",
    },
    CodeInfo {
        code: "E0004",
        title: "integer literal is too large",
        explanation: "Integer literals must fit in 64 bits unsigned (at most 18446744073709551615).\n\n    \
const BIG: int = 99999999999999999999;   // error\n    const BIG: int = 0xffff_ffff_ffff_ffff;  // ok: the largest value",
    },
    CodeInfo {
        code: "E0005",
        title: "invalid digit in integer literal",
        explanation: "An integer literal contains a digit its radix does not allow, or a `0x`/`0b` prefix has \
no digits after it. Hexadecimal literals use `0-9 a-f`, binary literals `0` and `1`; `_` may separate digits.\n\n    \
let m = 0b102;   // error: `2` is not a binary digit\n    let m = 0b101;   // ok",
    },
    CodeInfo {
        code: "E0006",
        title: "unterminated block comment",
        explanation: "A `/*` comment has no matching `*/` before the end of the file. Block comments nest, so \
each inner `/*` needs its own `*/`.\n\n    /* outer /* inner */      // error: the outer comment is still open\n    \
/* outer /* inner */ */   // ok",
    },
    CodeInfo {
        code: "E0007",
        title: "module doc comment after the start of the file",
        explanation: "`//!` comments document the whole file and must come before its first item. To document \
an item, use `///` just above it.\n\n    kernel k() launch(grid = (1), block = (1)) {}\n    //! Copies.   // error: \
too late for a module doc\n\nMove the `//!` lines to the top of the file.",
    },
    CodeInfo {
        code: "E0008",
        title: "file too large",
        explanation: "A source file may be at most 2 MiB (2097152 bytes). That is far more than any kernel needs, and it bounds the time and memory a compilation takes whatever the input; the compiler reads no more of a file than the limit and one byte, so a longer file, or an endless one such as `/dev/zero`, is refused at once, from `cutec check`, `build`, `run`, `tune` and `layout --eval-file` alike. If the file is generated, generate loops or several files instead of repeated code:\n\n    w[0] = x[0]; w[1] = x[1]; ...   // a million times: error\n    for i in 0..N { w[i] = x[i]; }  // ok",
    },
    CodeInfo {
        code: "E0020",
        title: "unexpected token",
        explanation: "The parser met a token that cannot appear at this point. The message lists what could \
have come instead. A common cause is a missing `;` at the end of the previous statement, or a missing \
`)` or `,` in a list.\n\n    let x = 1\n    let y = 2;   // error: expected `;`, found keyword `let`\n\n\
Add the missing token, or remove the stray one. The one-letter `o` is not a name but a reserved word, the \
composition operator (`A o B`): a variable cannot be called `o`.",
    },
    CodeInfo {
        code: "E0021",
        title: "unexpected end of file",
        explanation: "The file ends in the middle of an item, statement or expression.\n\n    \
const N: int =   // error: expected an expression, found end of file\n\nFinish the construct or delete it.",
    },
    CodeInfo {
        code: "E0022",
        title: "unclosed delimiter",
        explanation: "A `(`, `[` or `{` is never closed by its matching `)`, `]` or `}`. The label points at \
the opening delimiter.\n\n    fn f(x: f32) -> f32 {\n        return x;\n    // error: the `{` of the body is never closed\n\n\
Add the closing delimiter where the construct ends.",
    },
    CodeInfo {
        code: "E0023",
        title: "unexpected closing delimiter",
        explanation: "A `)`, `]` or `}` closes nothing: there is no open delimiter of its kind before it.\n\n    \
let x = f(a));   // error: the second `)` closes nothing\n\nDelete it, or add the opening delimiter it was meant to close.",
    },
    CodeInfo {
        code: "E0024",
        title: "keyword used as a name",
        explanation: "Keywords (`kernel fn const use let mut for in while if else return break continue as \
role launch true false`) cannot name variables, parameters, functions or fields, and neither can `o`, which is \
reserved as CuTe's composition operator (`A o B` composes two layouts).\n\n    let for = 3;    // error\n    \
let for_ = 3;   // ok\n    let o = 3;      // error: `o` is the composition operator\n    let out = 3;    // ok",
    },
    CodeInfo {
        code: "E0025",
        title: "nesting too deep",
        explanation: "Brackets, blocks or an expression are nested more than 256 levels deep, or one chain of \
binary operators has more than 256 of them: `a + b + c` is `(a + b) + c`, so each operator of a chain nests the \
expression one level deeper. The compiler refuses such input rather than risk running out of stack. No real \
kernel needs this much nesting.\n\n    let x = ((((((((...))))))));   // error past 256 levels\n    let s = 1 + 1 + \
... + 1;             // error past 256 operators\n\nBind intermediate results (partial sums) with `let` to \
flatten it.",
    },
    CodeInfo {
        code: "E0026",
        title: "chained comparison",
        explanation: "Comparison operators do not associate: `a < b < c` does not mean what it means in \
mathematics, so it is rejected.\n\n    if 0 <= i < n { }          // error\n    if 0 <= i && i < n { }     // ok",
    },
    CodeInfo {
        code: "E0027",
        title: "unclosed generic argument list",
        explanation: "A type's generic arguments open with `<` but never close with `>`. In a type, `<` always \
opens generic arguments, so the parser reports where the `>` is missing.\n\n    \
x: Tensor<f32, N:1, gmem,    // error: expected `>`\n    x: Tensor<f32, N:1, gmem>,   // ok",
    },
    CodeInfo {
        code: "E0028",
        title: "chained layout literal",
        explanation: "A layout literal is `shape:stride`, and `:` is not associative: `8:1:2` has no meaning. \
`:` binds more loosely than every other operator, so `THREADS * VEC:1` is the layout `(THREADS * VEC):1`.\n\n    \
let l = 8:1:2;            // error\n    let l = (4, 2):(1, 4);    // ok: a rank-2 layout",
    },
    CodeInfo {
        code: "E0029",
        title: "doc comment documents nothing",
        explanation: "A `///` doc comment documents the item that follows it, but the file ends after it.\n\n    \
const N: int = 4;\n    /// The tile size.   // error: no item follows\n\nAdd the item, delete the comment, or make it a \
plain comment with `//`.",
    },
];

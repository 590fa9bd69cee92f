//! Lexer edge cases: numbers, strings, comments, doc comments, keywords, and the token printer.

use cutec_grammar::token::Token;
use cutec_grammar::{SyntaxErrorKind, lex, parse, print_tokens};

fn tokens(src: &str) -> Vec<Token<'_>> {
    let (tokens, errors) = lex(src);
    assert!(errors.is_empty(), "{src}: {errors:?}");
    tokens.into_iter().map(|t| t.1).collect()
}

fn error_kinds(src: &str) -> Vec<SyntaxErrorKind> {
    lex(src).1.into_iter().map(|e| e.kind).collect()
}

#[test]
fn integers() {
    assert_eq!(tokens("0 42 1_000 0xff 0XFF 0b101 0x_1"), [0, 42, 1000, 255, 255, 5, 1].map(Token::Int));
    assert_eq!(tokens("18446744073709551615"), [Token::Int(u64::MAX)]);
    assert_eq!(tokens("0xffff_ffff_ffff_ffff"), [Token::Int(u64::MAX)]);
    assert_eq!(error_kinds("18446744073709551616"), [SyntaxErrorKind::IntOverflow]);
    assert_eq!(error_kinds("0x1_0000_0000_0000_0000"), [SyntaxErrorKind::IntOverflow]);
    assert_eq!(error_kinds("0b102"), [SyntaxErrorKind::BadDigit { digit: Some('2'), radix: 2 }]);
    assert_eq!(error_kinds("0x"), [SyntaxErrorKind::BadDigit { digit: None, radix: 16 }]);
    // The overflowing literal is replaced, so the parser sees a well-formed item: one error in all.
    assert_eq!(parse("const X: int = 99999999999999999999;").1.len(), 1);
}

#[test]
fn floats_and_ranges() {
    assert_eq!(tokens("1.0 1e-3 2.5e4 1_0.5 3E+2"), [1.0, 1e-3, 2.5e4, 10.5, 300.0].map(Token::Float));
    // `1.` is not a float: it is `1` then `.`; `0..5` is a range.
    assert_eq!(tokens("1."), [Token::Int(1), Token::Dot]);
    assert_eq!(tokens("0..5"), [Token::Int(0), Token::DotDot, Token::Int(5)]);
    assert_eq!(tokens("a.0"), [Token::Ident("a"), Token::Dot, Token::Int(0)]);
}

#[test]
fn strings() {
    assert_eq!(tokens(r#""a\n\t\\\"\0\u{1F600}""#), [Token::Str(r#""a\n\t\\\"\0\u{1F600}""#)]);
    assert_eq!(cutec_grammar::token::unescape(r#""a\n\t\\\"\0\u{41}""#), "a\n\t\\\"\0A");
    assert_eq!(error_kinds(r#""a\qb""#), [SyntaxErrorKind::BadEscape("\\q".into())]);
    let unicode = |escape: &str, value| SyntaxErrorKind::BadUnicodeEscape { escape: escape.into(), value };
    assert_eq!(error_kinds(r#""\u{110000}""#), [unicode("\\u{110000}", Some(0x110000))]);
    assert_eq!(error_kinds(r#""\u{d800}x""#), [unicode("\\u{d800}", Some(0xd800))]);
    assert_eq!(error_kinds(r#""\u{zz}""#), [unicode("\\u{zz}", None)]);
    assert_eq!(error_kinds(r#""\u{1234567}""#), [unicode("\\u{1234567}", None)]);
    assert_eq!(error_kinds(r#""\u41""#), [unicode("\\u", None)]);
    assert_eq!(error_kinds(r#""\u{41""#), [unicode("\\u", None)]);
    assert_eq!(error_kinds("\"abc"), [SyntaxErrorKind::UnterminatedString]);
    assert_eq!(error_kinds("\"abc\nlet"), [SyntaxErrorKind::UnterminatedString]);
    assert_eq!(error_kinds("\"abc\\"), [SyntaxErrorKind::UnterminatedString]);
    // The bad escape's span is the escape itself.
    let (_, errors) = lex(r#"let s = "a\qb";"#);
    assert_eq!((errors[0].span.start, errors[0].span.end), (10, 12));
    // A \u escape's span is the whole escape, braces included.
    let (_, errors) = lex(r#"let s = "a\u{110000}b";"#);
    assert_eq!((errors[0].span.start, errors[0].span.end), (10, 20));
    assert_eq!(errors[0].message(), "`\\u{110000}` is not a Unicode scalar value");
}

#[test]
fn comments() {
    assert_eq!(tokens("a // b\nc"), [Token::Ident("a"), Token::Ident("c")]);
    assert_eq!(tokens("a /* b /* nested */ still */ c"), [Token::Ident("a"), Token::Ident("c")]);
    assert_eq!(tokens("a /**/ c"), [Token::Ident("a"), Token::Ident("c")]);
    assert_eq!(error_kinds("a /* b /* c */"), [SyntaxErrorKind::UnterminatedComment]);
    assert_eq!(
        tokens("//! top\n/// item\n//// plain\nfn"),
        [Token::ModuleDoc(" top"), Token::DocComment(" item"), Token::Fn]
    );
    assert_eq!(error_kinds("fn //! late"), [SyntaxErrorKind::MisplacedModuleDoc]);
}

#[test]
fn docs_reach_the_ast() {
    let (module, errors) = parse("//! Module.\n//!\n/// First.\n///   Indented.\nconst A: int = 1;\n");
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(module.docs, ["Module.", ""]);
    assert_eq!(module.items[0].docs, ["First.", "  Indented."]);
    // Inside a body, `///` is an ordinary comment.
    assert!(parse("fn f() {\n    /// a note\n    g();\n}\n").1.is_empty());
}

#[test]
fn keywords_names_and_wildcards() {
    assert_eq!(
        tokens("kernel kernels _ _x x_ true falsey launch"),
        [
            Token::Kernel,
            Token::Ident("kernels"),
            Token::Underscore,
            Token::Ident("_x"),
            Token::Ident("x_"),
            Token::Bool(true),
            Token::Ident("falsey"),
            Token::Launch
        ]
    );
}

#[test]
fn stray_characters_are_reported_once_each_with_whole_char_spans() {
    let (tokens, errors) = lex("a @ b é c");
    assert_eq!(tokens.len(), 3);
    assert_eq!(errors.len(), 2);
    assert_eq!(errors[0].kind, SyntaxErrorKind::UnexpectedChar('@'));
    assert_eq!(errors[1].kind, SyntaxErrorKind::UnexpectedChar('é'));
    assert_eq!(errors[1].span.end - errors[1].span.start, 2);
}

#[test]
fn token_printer_format() {
    let out = print_tokens("let x = 0x10; @\n/// doc\nSwizzle<3>");
    let expected = "\
0..3 Let \"let\"
4..5 Ident \"x\"
6..7 Eq \"=\"
8..12 Int \"0x10\"
12..13 Semi \";\"
14..15 error[E0001]: unknown start of token: `@`
16..23 DocComment \"/// doc\"
24..31 Ident \"Swizzle\"
31..32 GenericOpen \"<\"
32..33 Int \"3\"
33..34 GenericClose \">\"
";
    assert_eq!(out, expected);
}

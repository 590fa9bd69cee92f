//! C#'s rule for `<`: generic arguments or less-than, decided in the token adapter.

use crate::common::{errors_of, expr};
use cutec_grammar::lex;
use cutec_grammar::token::Token;

fn kinds(src: &str) -> Vec<&'static str> {
    lex(src).0.iter().map(|t| t.1.kind_name()).collect()
}

#[test]
fn comparisons_stay_comparisons() {
    assert_eq!(expr("a < b"), "(< a b)");
    assert_eq!(expr("a < b && c > d"), "(&& (< a b) (> c d))");
    assert_eq!(expr("f(a < b, c > d)"), "(call f (< a b) (> c d))");
    assert_eq!(expr("a < b || c"), "(|| (< a b) c)");
    assert_eq!(expr("x < (y)"), "(< x y)");
    assert_eq!(expr("i < n"), "(< i n)");
}

#[test]
fn generic_arguments() {
    assert_eq!(expr("Swizzle<3,4,3>"), "Swizzle<3 4 3>");
    assert_eq!(expr("Swizzle<3, 4, 3>"), "Swizzle<3 4 3>");
    assert_eq!(expr("wgmma<64, BN, 16, bf16, bf16, f32>"), "wgmma<64 BN 16 bf16 bf16 f32>");
    assert_eq!(expr("size<0>(acc)"), "(call size<0> acc)");
    assert_eq!(expr("make_tensor<f32, smem>(32:1)"), "(call make_tensor<f32 smem> (: 32 1))");
    assert_eq!(expr("f(SW128_K<bf16>, (BM, BK))"), "(call f SW128_K<bf16> (tuple BM BK))");
    assert_eq!(expr("A<B<C>>"), "A<B<C>>");
    assert_eq!(expr("A<B<C<D>>>"), "A<B<C<D>>>");
    assert_eq!(expr("get<1>(coord[i])"), "(call get<1> (index coord i))");
    assert_eq!(expr("Layout<(4, 8):(8, 1)>"), "Layout<(: (tuple 4 8) (tuple 8 1))>");
}

#[test]
fn generic_types() {
    let src = "fn f(x: Tensor<f32, N:1, gmem>, y: Tensor<f32, (M, N):(N, 1), gmem>) {}";
    assert!(errors_of(src).is_empty());
    assert_eq!(
        kinds("(x: Tensor<f32, N:1, gmem>)"),
        [
            "LParen",
            "Ident",
            "Colon",
            "Ident",
            "GenericOpen",
            "Ident",
            "Comma",
            "Ident",
            "Colon",
            "Int",
            "Comma",
            "Ident",
            "GenericClose",
            "RParen"
        ]
    );
}

#[test]
fn shifts_and_nested_closers() {
    assert_eq!(kinds("a >> b"), ["Ident", "Shr", "Ident"]);
    assert_eq!(kinds("a > > b"), ["Ident", "Gt", "Gt", "Ident"]);
    assert_eq!(
        kinds("A<B<C>>;"),
        ["Ident", "GenericOpen", "Ident", "GenericOpen", "Ident", "GenericClose", "GenericClose", "Semi"]
    );
    assert_eq!(kinds("a >>= 1"), ["Ident", "ShrEq", "Int"]);
    assert_eq!(kinds("a << b"), ["Ident", "Shl", "Ident"]);
    assert_eq!(expr("x >> 2 > 1"), "(> (>> x 2) 1)");
}

#[test]
fn the_token_after_the_closer_decides() {
    // `>` followed by a name: a comparison.
    assert_eq!(lex("f(a < b, c > d)").0[3].1, Token::Lt);
    // `>` followed by `(`: generic.
    assert_eq!(lex("f(a < b, c > (d))").0[3].1, Token::GenericOpen);
    // Stops at `;`, `{`, `&&`, `||`.
    assert_eq!(lex("a < b; c > (d)").0[1].1, Token::Lt);
    assert_eq!(lex("a < b { c > (d) }").0[1].1, Token::Lt);
    // After a literal, `<` is never generic.
    assert_eq!(lex("1 < b > (c)").0[1].1, Token::Lt);
}

#[test]
fn a_closer_glued_to_an_equals_sign() {
    assert!(errors_of("fn f() { let x: Tensor<f32>= g(); }").is_empty());
    assert_eq!(expr("f(a < b, c >= d)"), "(call f (< a b) (>= c d))");
}

#[test]
fn unclosed_generic_list_in_a_type_is_one_error() {
    let e = errors_of("fn f(x: Tensor<f32, N:1, gmem) {}");
    assert_eq!(e.len(), 1, "{e:?}");
    assert!(e[0].contains("E0027"), "{e:?}");
    let e = errors_of("fn f(x: int) -> Tensor<f32 {}");
    assert_eq!(e.len(), 1, "{e:?}");
}

//! Operator precedence and associativity, layouts, postfix forms and casts.

use crate::common::{errors_of, expr};

#[test]
fn arithmetic_is_c_like_and_left_associative() {
    assert_eq!(expr("a + b * c"), "(+ a (* b c))");
    assert_eq!(expr("a - b - c"), "(- (- a b) c)");
    assert_eq!(expr("a / b % c * d"), "(* (% (/ a b) c) d)");
    assert_eq!(expr("a << 1 + b"), "(<< a (+ 1 b))");
    assert_eq!(expr("16 >> i"), "(>> 16 i)");
}

#[test]
fn bitwise_binds_tighter_than_comparison() {
    assert_eq!(expr("x & 1 == 0"), "(== (& x 1) 0)");
    assert_eq!(expr("a | b ^ c & d"), "(| a (^ b (& c d)))");
    assert_eq!(expr("a < b && c > d || e"), "(|| (&& (< a b) (> c d)) e)");
}

#[test]
fn unary_and_cast() {
    assert_eq!(expr("-a * b"), "(* (- a) b)");
    assert_eq!(expr("!a && ~b"), "(&& (! a) (~ b))");
    assert_eq!(expr("-x as f32"), "(as (- x) f32)");
    assert_eq!(expr("rx[i] as f32 * scale"), "(* (as (index rx i) f32) scale)");
    assert_eq!(expr("x as f32 as bf16"), "(as (as x f32) bf16)");
    assert_eq!(expr("-inf"), "(- inf)");
}

#[test]
fn composition_is_cutes_o_right_associative_and_looser_than_layouts() {
    assert_eq!(expr("a o b"), "(o a b)");
    assert_eq!(expr("a o b o c"), "(o a (o b c))");
    assert_eq!(expr("Sw<3,4,3> o (8,64):(64,1)"), "(o Sw<3 4 3> (: (tuple 8 64) (tuple 64 1)))");
    // CuTe's printed form: the offset 0 is the identity and is dropped.
    assert_eq!(expr("Sw<3,4,3> o 0 o (8,64):(64,1)"), "(o Sw<3 4 3> (: (tuple 8 64) (tuple 64 1)))");
    assert_eq!(expr("(a o b) o c"), "(o (o a b) c)");
    assert_eq!(expr("f(a o b, 4:1)"), "(call f (o a b) (: 4 1))");
    // `o` is a keyword; longer names that start with it are names.
    assert_eq!(expr("out o offset"), "(o out offset)");
}

#[test]
fn layouts_bind_loosest() {
    assert_eq!(expr("8:1"), "(: 8 1)");
    assert_eq!(expr("(4,8):(8,1)"), "(: (tuple 4 8) (tuple 8 1))");
    assert_eq!(expr("((2,2),3):((24,2),8)"), "(: (tuple (tuple 2 2) 3) (tuple (tuple 24 2) 8))");
    assert_eq!(expr("THREADS * VEC:1"), "(: (* THREADS VEC) 1)");
    assert_eq!(expr("N:1"), "(: N 1)");
    assert_eq!(expr("(a:b)"), "(: a b)");
    assert_eq!(expr("f(8:1, 4:2)"), "(call f (: 8 1) (: 4 2))");
}

#[test]
fn layouts_and_comparisons_do_not_chain() {
    let e = errors_of("const X = 8:1:2;");
    assert_eq!(e.len(), 1, "{e:?}");
    assert!(e[0].contains("E0028"), "{e:?}");
    let e = errors_of("const X = a < b < c;");
    assert_eq!(e.len(), 1, "{e:?}");
    assert!(e[0].contains("E0026"), "{e:?}");
    let e = errors_of("const X = a == b == c;");
    assert!(e[0].contains("E0026"), "{e:?}");
}

#[test]
fn tuples_and_parentheses() {
    assert_eq!(expr("(a)"), "a");
    assert_eq!(expr("(a,)"), "(tuple a)");
    assert_eq!(expr("(a, b,)"), "(tuple a b)");
    assert_eq!(expr("()"), "(tuple )");
    assert_eq!(expr("(a + b) * c"), "(* (+ a b) c)");
}

#[test]
fn postfix_forms() {
    assert_eq!(expr("block_idx.x"), "(. block_idx x)");
    assert_eq!(expr("t[i, _, k]"), "(index t i _ k)");
    assert_eq!(expr("mma.fragment_c((BM, BN))"), "(method mma fragment_c (tuple BM BN))");
    assert_eq!(expr("tma_load(x, s, multicast = 2)"), "(call tma_load x s (= multicast 2))");
    assert_eq!(expr("a.b.c(d)[0].e"), "(. (index (method (. a b) c d) 0) e)");
    assert_eq!(expr("composition(gx, tv)[thread_idx.x, _]"), "(index (call composition gx tv) (. thread_idx x) _)");
    assert_eq!(expr("f(a)(b)"), "(call (call f a) b)");
    assert_eq!(expr("(a.f)(x)"), "(call (. a f) x)");
    assert_eq!(expr("x.part<0>(y)"), "(method x part<0> y)");
}

#[test]
fn literals() {
    assert_eq!(expr("0x1F"), "31");
    assert_eq!(expr("0b1010_1010"), "170");
    assert_eq!(expr("1_000_000"), "1000000");
    assert_eq!(expr("2.5e4"), "25000.0");
    assert_eq!(expr("1e-3"), "0.001");
    assert_eq!(expr("true && false"), "(&& true false)");
    assert_eq!(expr(r#""a\tb\u{41}\"""#), r#""a\tbA\"""#);
}

//! Printing and parsing CuTe's notation; `print_layout` pictures.

use cutec_layout::*;

use super::rng::{self, Rng};

#[test]
fn print_parse_roundtrip() {
    let seed = rng::seed(7);
    let mut rng = Rng::new(seed);
    for _ in 0..2000 {
        let pow2 = rng.chance(50);
        let mut l = rng::layout(&mut rng, pow2);
        if rng.chance(20) {
            // A dynamic leaf of unknown value.
            let names = ["M", "N", "K", "ldA"];
            let shape = l.shape().map(|s| if rng.chance(30) { Int::named(*rng.pick(&names)) } else { s.clone() });
            l = Layout::new(shape, l.stride().clone()).unwrap();
        }
        let text = l.to_string();
        assert!(!text.contains(' '), "{text}");
        assert_eq!(parse_layout(&text).unwrap(), l, "seed {seed}: {text}");
        let spaced = text.replace(',', " , ").replace(':', " : ");
        assert_eq!(parse_layout(&spaced).unwrap(), l, "seed {seed}: {spaced}");
        let sw = ComposedLayout {
            swizzle: Swizzle::new(2, rng.range(0, 3), 3).unwrap(),
            offset: Int::Static(rng.range(0, 4)),
            layout: l.clone(),
        };
        assert_eq!(parse_composed(&sw.to_string()).unwrap(), sw, "seed {seed}: {sw}");
    }
}

#[test]
fn notation() {
    assert_eq!(parse_layout("((2,2),3):((24,2),8)").unwrap().to_string(), "((2,2),3):((24,2),8)");
    assert_eq!(parse_layout("4:2").unwrap().to_string(), "4:2");
    assert_eq!(parse_layout(" ( 2 , 3 ) : ( 1 , 8 ) ").unwrap().to_string(), "(2,3):(1,8)");
    assert_eq!(parse_layout("(4,8)").unwrap().to_string(), "(4,8):(1,4)");
    assert_eq!(parse_layout("(4,1,2)").unwrap().to_string(), "(4,1,2):(1,0,4)");
    assert_eq!(parse_layout("(M,K):(K,1)").unwrap().to_string(), "(M,K):(K,1)");
    assert_eq!(parse_layout("(4)").unwrap().to_string(), "(4):(1)");
    assert_eq!(parse_swizzle("Swizzle<3,4,3>").unwrap().to_string(), "Sw<3,4,3>");
    assert_eq!(parse_composed("Sw<3,4,3> o (8,64):(64,1)").unwrap().to_string(), "Sw<3,4,3> o 0 o (8,64):(64,1)");
    assert_eq!(parse_int_tuple("((2,2),3)").unwrap().to_string(), "((2,2),3)");
    let known = Layout::new(
        IntTuple::Int(Int::Dynamic { sym: cutec_layout::int_tuple::SymInt::dim("M"), value: Some(6) }),
        IntTuple::int(1),
    )
    .unwrap();
    assert_eq!(known.to_string(), "6:1");
    for bad in ["(2,3):(1)", "(2,3", "4:", "(0,2)", "Sw<1,2,0>", "4:2:1", "(2,3):(1,a b)"] {
        assert!(parse_layout(bad).is_err() || parse_composed(bad).is_err(), "{bad}");
    }
    let err = parse_layout("(2,3):(1)").unwrap_err().to_string();
    assert_eq!(
        err,
        "parse error at column 1: make_layout: rank mismatch: shape (2,3) and stride (1) are not congruent"
    );
}

#[test]
fn print_layout_like_cute() {
    let l = parse_layout("(2,3):(3,1)").unwrap();
    assert_eq!(
        print_layout(&l).unwrap(),
        "(2,3):(3,1)\n      0   1   2 \n    +---+---+---+\n 0  | 0 | 1 | 2 |\n    +---+---+---+\n 1  | 3 | 4 | 5 |\n    +---+---+---+\n"
    );
    // A rank-1 layout is one column, as CuTe's `append<2>` makes it.
    let col = print_layout(&parse_layout("3:4").unwrap()).unwrap();
    assert_eq!(col, "3:4\n      0 \n    +---+\n 0  | 0 |\n    +---+\n 1  | 4 |\n    +---+\n 2  | 8 |\n    +---+\n");
    let sw = parse_composed("Sw<1,0,1> o (2,2):(2,1)").unwrap();
    assert_eq!(
        print_layout(&sw).unwrap(),
        "Sw<1,0,1> o 0 o (2,2):(2,1)\n      0   1 \n    +---+---+\n 0  | 0 | 1 |\n    +---+---+\n 1  | 3 | 2 |\n    +---+---+\n"
    );
}

#[test]
fn svg_pictures_are_deterministic() {
    let l = parse_layout("(2,3):(3,1)").unwrap();
    let a = svg_layout(&l).unwrap();
    assert_eq!(a, svg_layout(&l).unwrap());
    assert!(a.starts_with("<svg ") && a.ends_with("</svg>\n"));
    assert_eq!(a.matches("<rect ").count(), 1 + 6);
    let tv = parse_layout("((2,2),2):((1,4),2)").unwrap();
    let s = svg_tv(&tv, 2, 4).unwrap();
    assert!(s.contains(">T3</text>") && s.contains(">V1</text>"));
    assert!(svg_tv(&parse_layout("8:1").unwrap(), 2, 4).is_err());
}

#[test]
fn hostile_literals_are_errors() {
    let deep = format!("{}1{}", "(".repeat(100_000), ")".repeat(100_000));
    assert!(parse_layout(&deep).is_err() && parse_int_tuple(&deep).is_err());
    assert!(parse_layout("99999999999999999999:1").is_err());
    assert!(parse_layout("(4611686018427387904,4):(4,1)").unwrap().size().is_err());
}

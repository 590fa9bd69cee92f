//! CuTe's documented examples (`01_layout.md`, `02_layout_algebra.md`, the CUTLASS unit tests' comments and
//! `layout.hpp`'s comments), each evaluated through `eval` and compared with CuTe's printed answer (without
//! CuTe's `_` marks for static integers). Where CUTLASS 4.2's C++ prints another form than the older docs
//! (uncoalesced blocked products and `tile_to_shape`, `right_inverse` of negative strides), the expected text
//! is C++'s, as the differential test against the C++ headers (module `cpp`) checks.

use cutec_layout::eval;

fn check(cases: &[(&str, &str)]) {
    let mut failures = Vec::new();
    for (expr, expected) in cases {
        let actual = match eval(expr) {
            Ok(v) => v.to_string(),
            Err(e) => format!("error: {e}"),
        };
        if actual != *expected {
            failures.push(format!("{expr}\n  expected {expected}\n  actual   {actual}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn layout_basics() {
    check(&[
        ("(4,8)", "(4,8)"),
        ("make_layout((4,8))", "(4,8):(1,4)"),
        ("make_layout((4,(2,1)))", "(4,(2,1)):(1,(4,0))"),
        ("make_layout((2,4), (4,1))", "(2,4):(4,1)"),
        ("make_layout(4:1, 8:4)", "(4,8):(1,4)"),
        ("size((2,(3,4)):(1,(2,6)))", "24"),
        ("size<1>((2,(3,4)):(1,(2,6)))", "12"),
        ("rank((2,(3,4)):(1,(2,6)))", "2"),
        ("depth((2,(3,4)):(1,(2,6)))", "2"),
        ("depth(8:1)", "0"),
        ("shape<1>((2,(3,4)):(1,(2,6)))", "(3,4)"),
        ("stride<1,0>((2,(3,4)):(1,(2,6)))", "2"),
        ("cosize((2,(3,4)):(1,(2,6)))", "24"),
        ("cosize((4,8):(8,1))", "32"),
        ("get<1,1>((2,(3,4)):(1,(2,6)))", "4:6"),
        ("select<1,0>((2,3,4):(1,2,6))", "(3,2):(2,1)"),
        ("take<1,3>((2,3,4):(1,2,6))", "(3,4):(2,6)"),
        ("flatten(((2,2),(3,(4,5))):((1,2),(4,(12,48))))", "(2,2,3,4,5):(1,2,4,12,48)"),
        // 01_layout.md: coordinates and indices of (3,(2,3)):(3,(12,1)).
        ("crd2idx(16, (3,(2,3)):(3,(12,1)))", "17"),
        ("crd2idx((1,5), (3,(2,3)):(3,(12,1)))", "17"),
        ("crd2idx((1,(1,2)), (3,(2,3)):(3,(12,1)))", "17"),
        ("idx2crd(16, (3,(2,3)))", "(1,(1,2))"),
        ("idx2crd((1,5), (3,(2,3)))", "(1,(1,2))"),
        ("crd2idx((1,2), (3,4))", "7"),
        // layout.hpp: make_ordered_layout.
        ("make_ordered_layout((2,2,2,2), (0,2,3,1))", "(2,2,2,2):(1,4,8,2)"),
        ("slice_and_offset((_,1), (4,8):(8,1))", "((4):(8),1)"),
        ("slice((1,_), (4,(2,3)):(1,(4,8)))", "((2,3)):((4,8))"),
    ]);
}

#[test]
fn coalesce_and_filter() {
    check(&[
        ("coalesce((2,(1,6)):(1,(6,2)))", "12:1"),
        ("coalesce((2,(1,6)):(1,(6,2)), (1,1))", "(2,6):(1,2)"),
        ("coalesce((2,4):(1,2))", "8:1"),
        ("coalesce((2,4):(4,1))", "(2,4):(4,1)"),
        ("coalesce((4,1):(1,0))", "4:1"),
        ("coalesce((1,1):(3,5))", "1:0"),
        ("coalesce((M,4):(1,M))", "(M,4):(1,M)"),
        ("filter((2,(1,6),3):(0,(6,2),12))", "18:2"),
        ("filter((2,(1,6),4):(0,(6,2),13))", "(6,4):(2,13)"),
        ("filter((4,2):(0,0))", "1:0"),
    ]);
}

#[test]
fn composition_examples() {
    check(&[
        // 02_layout_algebra.md
        ("composition((6,2):(8,2), (4,3):(3,1))", "((2,2),3):((24,2),8)"),
        ("composition(20:2, (5,4):(4,1))", "(5,4):(8,2)"),
        ("composition((10,2):(16,4), (5,4):(1,5))", "(5,(2,2)):(16,(80,4))"),
        ("composition((12,(4,8)):(59,(13,1)), (3:4, 8:2))", "(3,(2,4)):(236,(26,1))"),
        ("composition((12,(4,8)):(59,(13,1)), (3, 8))", "(3,(4,2)):(59,(13,1))"),
        ("composition((3,6,2,8):(1000,100,10,1), 16:9)", "(2,2,4):(300,10,1)"),
        ("composition((12,(4,8)):(59,(13,1)), (_, 8:2))", "(12,(2,4)):(59,(26,1))"),
        ("(6,2):(8,2) o (4,3):(3,1)", "((2,2),3):((24,2),8)"),
        (
            "composition((4,4):(1,8), 2:6)",
            "error: composition: stride 6 and shape 4 of (4,4):(1,8) do not divide each other (stride divisibility)",
        ),
        (
            "composition((4,5):(1,5), 6:1)",
            "error: composition: shape 6 and shape 4 of (4,5):(1,5) do not divide each other (shape divisibility)",
        ),
    ]);
}

#[test]
fn complement_examples() {
    check(&[
        ("complement(4:1, 24)", "6:4"),
        ("complement(6:4, 24)", "4:1"),
        ("complement((4,6):(1,4), 24)", "1:0"),
        ("complement(4:2, 24)", "(2,3):(1,8)"),
        ("complement((2,4):(1,6), 24)", "3:2"),
        ("complement((2,2):(1,6), 24)", "(3,2):(2,12)"),
        ("complement(4:2)", "2:1"),
        (
            "complement((2,3):(3,2), 12)",
            "error: complement: layout (2,3):(3,2) is not injective (or its sorted strides do not nest)",
        ),
        ("right_inverse((2,4):(4,1))", "(4,2):(2,1)"),
        ("left_inverse((2,4):(4,1))", "(4,2):(2,1)"),
        ("right_inverse(4:-1)", "1:0"),
        ("left_inverse(4:2)", "(2,4):(0,1)"),
        ("nullspace((2,3,4):(0,1,0))", "(2,4):(1,6)"),
        ("max_common_vector((4,8):(1,4), (4,8):(1,4))", "32"),
        ("max_common_vector((4,8):(8,1), (4,8):(1,4))", "1"),
        ("max_common_layout((8,4):(1,8), (8,4):(1,8))", "32:1"),
    ]);
}

#[test]
fn divide_examples() {
    check(&[
        ("logical_divide((4,2,3):(2,1,8), 4:2)", "((2,2),(2,3)):((4,1),(2,8))"),
        (
            "logical_divide((9,(4,8)):(59,(13,1)), (3:3, (2,4):(1,8)))",
            "((3,3),((2,4),(2,2))):((177,59),((13,2),(26,1)))",
        ),
        (
            "zipped_divide((9,(4,8)):(59,(13,1)), (3:3, (2,4):(1,8)))",
            "((3,(2,4)),(3,(2,2))):((177,(13,2)),(59,(26,1)))",
        ),
        ("tiled_divide((9,(4,8)):(59,(13,1)), (3:3, (2,4):(1,8)))", "((3,(2,4)),3,(2,2)):((177,(13,2)),59,(26,1))"),
        ("flat_divide((9,(4,8)):(59,(13,1)), (3:3, (2,4):(1,8)))", "(3,(2,4),3,(2,2)):(177,(13,2),59,(26,1))"),
        ("zipped_divide((8,16):(16,1), (2,4))", "((2,4),(4,4)):((16,1),(32,4))"),
        ("local_tile((8,16):(16,1), (2,4), (1,2))", "((2,4):(16,1),40)"),
        ("local_partition((8,16):(16,1), (2,4):(4,1), 5)", "((4,4):(32,4),17)"),
        ("local_tile((M,K):(K,1), (128,64), (3,_))", "((128,64,ceil_div(K,64)):(K,1,64),3*128*K)"),
    ]);
}

#[test]
fn product_examples() {
    check(&[
        ("logical_product((2,2):(4,1), 6:1)", "((2,2),(2,3)):((4,1),(2,8))"),
        ("logical_product((2,2):(4,1), (4,2):(2,1))", "((2,2),(4,2)):((4,1),(8,2))"),
        ("logical_product((2,2):(4,1), 6)", "((2,2),(2,3)):((4,1),(2,8))"),
        ("blocked_product((2,5):(5,1), (3,4):(1,3))", "((2,3),(5,4)):((5,10),(1,30))"),
        ("raked_product((2,5):(5,1), (3,4):(1,3))", "((3,2),(4,5)):((10,5),(30,1))"),
        ("zipped_product((2,5):(5,1), (3,4))", "((2,5),(3,4)):((5,1),(1,5))"),
        ("tile_to_shape((2,2):(1,2), (8,6))", "((2,4),(2,3)):((1,4),(2,16))"),
        ("tile_to_shape((8,8):(8,1), (64,128))", "((8,8),(8,16)):((8,64),(1,512))"),
        (
            "tile_to_shape((2,2):(1,2), (6,5))",
            "error: tile_to_shape: block shape (2,2) of (2,2):(1,2) does not divide the target shape (6,5)",
        ),
        ("make_layout_tv((4,8):(8,1), (2,2):(2,1))", "((8,16),((8,4),(2,2)):((16,2),(8,1)))"),
        ("upcast<2>((4,8):(8,1))", "(4,4):(4,1)"),
        ("downcast<2>((4,8):(8,1))", "(4,16):(16,1)"),
    ]);
}

#[test]
fn swizzle_examples() {
    check(&[
        ("Sw<3,4,3>", "Sw<3,4,3>"),
        ("Swizzle<3,4,3> o (8,64):(64,1)", "Sw<3,4,3> o 0 o (8,64):(64,1)"),
        ("composition(Swizzle<3,3,3>, (8,64):(64,1))", "Sw<3,3,3> o 0 o (8,64):(64,1)"),
        ("crd2idx((1,0), Sw<3,0,3> o (8,8):(8,1))", "9"),
        ("crd2idx((1,1), Sw<3,0,3> o (8,8):(8,1))", "8"),
        ("size(Sw<3,4,3> o (8,64):(64,1))", "512"),
        ("tile_to_shape(Sw<3,4,3> o (8,64):(64,1), (64,128))", "Sw<3,4,3> o 0 o ((8,8),(64,2)):((64,512),(1,4096))"),
        ("upcast<8>(Sw<3,4,3> o (8,64):(64,1))", "Sw<3,1,3> o 0 o (8,8):(8,1)"),
        ("Swizzle<3,4,2>", "error: parse error at column 8: Swizzle: Swizzle<3,4,2> needs |S| >= B"),
    ]);
}

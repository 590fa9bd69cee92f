//! The evaluator: `eval_lines`, `apply`, the operation table, and fuzzing (no input may panic).

use cutec_layout::*;

use super::rng::{self, Rng};

#[test]
fn eval_lines_answers_each_line() {
    let out = eval_lines("size((4,8))\n\n# a comment\nfoo(1)\ncomposition((6,2):(8,2), (4,3):(3,1))\nget<5>(4:1)\n");
    assert_eq!(
        out,
        "32\n\n\nerror: eval: unknown operation `foo`\n((2,2),3):((24,2),8)\nerror: get: mode 5 is out of range for rank 1\n"
    );
}

#[test]
fn a_negative_mode_is_said_to_be_negative_with_the_real_rank() {
    // It used to report "rank 0" whatever was indexed.
    assert_eq!(eval_lines("get<-1>((4,8):(8,1))\n"), "error: get: mode -1 is negative; the modes of rank 2 are 0..2\n");
    assert_eq!(
        eval_lines("get<0,-1>(((2,3,4),8):((1,2,6),24))\n"),
        "error: get: mode -1 is negative; the modes of rank 3 are 0..3\n"
    );
    assert_eq!(
        eval_lines("select<-1>((4,8,2))\n"),
        "error: select: mode -1 is negative; the modes of rank 3 are 0..3\n"
    );
}

#[test]
fn apply_folds_values() {
    let l = Value::Layout(parse_layout("((2,2),3):((24,2),8)").unwrap());
    assert_eq!(apply(LayoutOp::Get, &[0, 1], std::slice::from_ref(&l)).unwrap().to_string(), "2:2");
    assert_eq!(apply(LayoutOp::Size, &[], std::slice::from_ref(&l)).unwrap(), Value::Int(Int::Static(12)));
    assert!(apply(LayoutOp::Size, &[], &[]).is_err());
    // The table lists the operations in declaration order, and names round-trip.
    for (k, op) in LayoutOp::ALL.iter().enumerate() {
        assert_eq!(OPS[k].op, *op);
        assert_eq!(LayoutOp::from_name(op.name()), Some(*op));
    }
    assert_eq!(OPS.len(), LayoutOp::ALL.len());
    assert!(apply_named("nope", &[], &[]).is_err());
    assert!(is_layout_op("composition") && !is_layout_op("gemm"));
    let info = op_info("complement").unwrap();
    assert_eq!((info.args, info.signature), ((1, 2), "complement(L[, M])"));
    for op in OPS {
        assert!(op.args.0 <= op.args.1 && !op.summary.is_empty(), "{}", op.name);
    }
    // Dynamic integers: folded where possible, a clear error where a value is needed.
    assert_eq!(eval("size((M,4))").unwrap().to_string(), "M*4");
    assert_eq!(
        eval("complement((M,4):(1,M), 64)").unwrap_err().to_string(),
        "complement needs a static value, but `M` is only known at run time"
    );
}

const ATOMS: &[&str] = &[
    "(",
    ")",
    ",",
    ":",
    "<",
    ">",
    "_",
    "o",
    "0",
    "1",
    "2",
    "-3",
    "8",
    "64",
    "M",
    "Sw<3,4,3>",
    "Sw",
    "get",
    "size",
    "composition",
    "complement",
    "logical_divide",
    "zipped_divide",
    "blocked_product",
    "raked_product",
    "upcast",
    "tile_to_shape",
    "local_tile",
    "local_partition",
    "make_layout_tv",
    "print_layout",
    "crd2idx",
    "idx2crd",
    "right_inverse",
    "left_inverse",
    "coalesce",
    "9223372036854775807",
    "-9223372036854775808",
    "4611686018427387904",
    "(4,8):(1,4)",
    "((2,2),3):((24,2),8)",
    " ",
    "é",
    "#",
];

#[test]
fn eval_never_panics_on_random_input() {
    let seed = rng::seed(99);
    let mut rng = Rng::new(seed);
    for _ in 0..4000 {
        let n = rng.range(1, 14);
        let s: String = (0..n).map(|_| *rng.pick(ATOMS)).collect();
        let _ = eval(&s);
    }
    // Random bytes, and hostile nesting.
    for _ in 0..1000 {
        let bytes: Vec<u8> = (0..rng.range(0, 30)).map(|_| rng.range(32, 126) as u8).collect();
        let _ = eval(&String::from_utf8(bytes).unwrap());
    }
    let deep = format!("{}1{}", "(".repeat(10_000), ")".repeat(10_000));
    assert!(eval(&deep).is_err());
    let deep_calls = format!("{}1{}", "size(".repeat(5_000), ")".repeat(5_000));
    assert!(eval(&deep_calls).is_err());
}

#[test]
fn eval_never_panics_on_random_calls() {
    let seed = rng::seed(1234);
    let mut rng = Rng::new(seed);
    let values = [
        "(4,8):(1,4)",
        "(4,8):(8,1)",
        "((2,2),3):((24,2),8)",
        "8:0",
        "(3,5):(5,1)",
        "4:-1",
        "(M,K):(K,1)",
        "(4,8)",
        "6",
        "0",
        "-2",
        "_",
        "(2,_)",
        "(4:1,8:2)",
        "Sw<3,4,3> o (8,64):(64,1)",
        "Sw<2,0,2>",
        "(1073741824,4):(4,1)",
        "(4611686018427387904,2):(2,1)",
    ];
    for _ in 0..6000 {
        let op = rng.pick(OPS);
        let args: Vec<&str> = (0..rng.range(0, 3)).map(|_| *rng.pick(&values)).collect();
        let generics = if rng.chance(30) { format!("<{}>", rng.range(-1, 4)) } else { String::new() };
        let _ = eval(&format!("{}{}({})", op.name, generics, args.join(",")));
    }
}

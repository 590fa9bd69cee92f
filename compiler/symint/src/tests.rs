use super::*;

fn dim(n: &str) -> SymInt {
    SymInt::dim(n)
}

fn env(l: &SymInt) -> Option<i64> {
    match l {
        SymInt::Dim(n) if n == "M" => Some(1000),
        SymInt::Dim(n) if n == "N" => Some(4096),
        SymInt::Dim(n) if n == "Z" => Some(0),
        SymInt::Dim(n) if n == "BIG" => Some(i64::MAX),
        _ => None,
    }
}

#[test]
fn constants_fold_when_defined() {
    assert_eq!(SymInt::op(Op::Mul, 4.into(), 8.into()), SymInt::Const(32));
    assert_eq!(SymInt::op(Op::CeilDiv, 1025.into(), 128.into()), SymInt::Const(9));
    // Division by zero and overflow stay as trees, so that evaluation reports them.
    let z = SymInt::op(Op::Div, 4.into(), 0.into());
    assert!(matches!(z, SymInt::Op(Op::Div, ..)));
    assert_eq!(z.eval(&env), Err(EvalError::DivisionByZero { op: Op::Div, lhs: 4 }));
    let o = SymInt::op(Op::Mul, dim("BIG"), 2.into());
    assert_eq!(o.eval(&env), Err(EvalError::Overflow { op: Op::Mul, lhs: i64::MAX, rhs: 2 }));
}

#[test]
fn operations_follow_their_definitions() {
    let cd = |a: i64, b: i64| Op::CeilDiv.apply(a, b);
    assert_eq!((cd(1024, 128), cd(1025, 128), cd(0, 128)), (Ok(8), Ok(9), Ok(0)));
    assert_eq!((cd(-7, 2), cd(7, -2), cd(-7, -2)), (Ok(-3), Ok(-3), Ok(4)));
    assert_eq!(cd(i64::MAX, 2), Ok(i64::MAX / 2 + 1));
    assert!(matches!(cd(i64::MIN, -1), Err(EvalError::Overflow { .. })));
    let sd = |a: i64, b: i64| Op::ShapeDiv.apply(a, b);
    assert_eq!((sd(12, 4), sd(3, 4), sd(-3, 4), sd(0, 4)), (Ok(3), Ok(1), Ok(-1), Ok(0)));
    assert_eq!((Op::Div.apply(-7, 2), Op::Rem.apply(-7, 2)), (Ok(-3), Ok(-1)));
    for op in Op::ALL {
        assert_eq!(Op::from_name(op.name()), Some(op));
    }
}

#[test]
fn prints_cute_notation() {
    let m = dim("M");
    let k = dim("K");
    let t = |op, a: &SymInt, b: &SymInt| SymInt::op(op, a.clone(), b.clone());
    assert_eq!(t(Op::Mul, &SymInt::Const(128), &k).to_string(), "128*K");
    assert_eq!(t(Op::CeilDiv, &m, &SymInt::Const(128)).to_string(), "ceil_div(M,128)");
    let sum = t(Op::Add, &m, &SymInt::Const(1));
    assert_eq!(t(Op::Div, &sum, &SymInt::Const(2)).to_string(), "(M+1)/2");
    assert_eq!(t(Op::Add, &m, &t(Op::Mul, &k, &SymInt::Const(2))).to_string(), "M+K*2");
    assert_eq!(t(Op::Sub, &m, &t(Op::Sub, &k, &SymInt::Const(2))).to_string(), "M-(K-2)");
    assert_eq!(t(Op::Mul, &m, &SymInt::Const(-2)).to_string(), "M*(-2)");
    assert_eq!(SymInt::value(ValueId::Node(7), "thread_idx.x").to_string(), "thread_idx.x");
    assert_eq!(SymInt::Param { index: 2, name: "n".into() }.to_string(), "n");
}

#[test]
fn divisors_follow_products_and_sums() {
    let v = SymInt::value(ValueId::Ir(0), "t");
    let off = SymInt::op(Op::Add, SymInt::op(Op::Mul, v.clone(), 1024.into()), SymInt::op(Op::Mul, dim("M"), 4.into()));
    assert_eq!(off.known_divisor(), 4);
    assert_eq!(SymInt::Const(0).known_divisor(), i64::MAX);
    assert_eq!(SymInt::op(Op::Add, SymInt::Const(0), SymInt::op(Op::Mul, v, 8.into())).known_divisor(), 8);
    assert_eq!(dim("M").known_divisor(), 1);
}

#[test]
fn leaves_are_classified() {
    let launch = SymInt::op(Op::CeilDiv, dim("M"), SymInt::Param { index: 1, name: "n".into() });
    assert!(launch.is_launch_time() && !launch.has_generic());
    let generic = SymInt::op(Op::Mul, SymInt::Generic("N".into()), 2.into());
    assert!(generic.has_generic() && !generic.is_launch_time());
    assert!(!SymInt::value(ValueId::Node(3), "i").is_launch_time());
    // The checker's expression 3 and the IR's expression 3 are different values.
    assert_ne!(SymInt::value(ValueId::Node(3), "i"), SymInt::value(ValueId::Ir(3), "i"));
    let mut dims = Vec::new();
    let x = SymInt::op(Op::Add, dim("M"), SymInt::op(Op::Mul, dim("N"), dim("M")));
    x.for_each_dim(&mut |d| dims.push(d));
    assert_eq!(dims, ["M", "N", "M"]);
    assert_eq!(dim("K").eval_dims(&|_| None), Err(EvalError::Unbound { name: "K".into() }));
}

#[cfg(feature = "serde")]
mod json {
    use super::*;

    fn e(json: &str) -> SymInt {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn parse_print_and_evaluate() {
        let x = e(r#"{"op": "ceil_div", "args": [{"dim": "M"}, {"int": 128}]}"#);
        assert_eq!(x.to_string(), "ceil_div(M,128)");
        assert_eq!(x.eval(&env), Ok(8));
        assert_eq!(serde_json::to_string(&x).unwrap(), r#"{"op":"ceil_div","args":[{"dim":"M"},{"int":128}]}"#);
        assert_eq!(e(r#"{"op": "ceil_div", "args": ["M", 128]}"#), x);
        let y = e(r#"{"op": "mul", "args": ["M", {"op": "min", "args": ["N", 64, 100]}, 2]}"#);
        assert_eq!(y.eval(&env), Ok(1000 * 64 * 2));
        assert_eq!(e(r#"{"op":"max","args":[1,{"op":"sub","args":["M",1001]}]}"#).eval(&env), Ok(1));
        assert_eq!(e(r#"{"op":"div","args":["M",3]}"#).eval(&env), Ok(333));
        assert_eq!(e("7").eval_static(), Some(7));
        assert_eq!(e("\"M\"").eval_static(), None);
        // Written as a tree, even where it could fold: evaluation reports the error.
        assert_eq!(
            e(r#"{"op":"div","args":[1,0]}"#).eval(&env).unwrap_err().to_string(),
            "division by zero in div(1, 0)"
        );
    }

    #[test]
    fn malformed_json_is_rejected() {
        for bad in [
            r#"{"int": 1, "dim": "M"}"#,
            r#"{"op": "add"}"#,
            r#"{"op": "pow", "args": [1, 2]}"#,
            r#"{"op": "sub", "args": [1, 2, 3]}"#,
            r#"{"op": "add", "args": []}"#,
            r#"{"op": "max", "args": [2]}"#,
            r#"{"int": 1, "extra": 2}"#,
            r#"{"int": 1.5}"#,
            r#"[1, 2]"#,
            r#"{}"#,
        ] {
            assert!(serde_json::from_str::<SymInt>(bad).is_err(), "{bad} should not parse");
        }
        let err = serde_json::from_str::<SymInt>(r#"{"op": "sub", "args": [1, 2, 3]}"#).unwrap_err().to_string();
        assert!(err.starts_with("`sub` takes exactly 2 arguments, found 3"), "{err}");
    }

    #[test]
    fn only_launch_time_leaves_are_written() {
        assert!(serde_json::to_string(&SymInt::value(crate::ValueId::Ir(1), "i")).is_err());
        assert!(serde_json::to_string(&SymInt::Generic("N".into())).is_err());
        assert!(serde_json::to_string(&SymInt::Param { index: 0, name: "n".into() }).is_err());
    }
}

#[test]
fn substitute_folds_identities() {
    let m = SymInt::dim("M");
    let t0 = SymInt::dim("#0");
    let t1 = SymInt::dim("#1");
    // 4*#0 + M*#1 + 7*#0: the component of #0 is 11, of #1 is M.
    let s = SymInt::op(
        Op::Add,
        SymInt::op(Op::Add, SymInt::op(Op::Mul, SymInt::Const(4), t0.clone()), SymInt::op(Op::Mul, m.clone(), t1)),
        SymInt::op(Op::Mul, SymInt::Const(7), t0),
    );
    let pick = |k: &str| {
        let k = k.to_owned();
        move |l: &SymInt| match l {
            SymInt::Dim(n) if n.starts_with('#') => Some(SymInt::Const(i64::from(*n == k))),
            _ => None,
        }
    };
    assert_eq!(s.substitute(&pick("#0")), SymInt::Const(11));
    assert_eq!(s.substitute(&pick("#1")), m);
    // Leaves `f` does not know stay.
    assert_eq!(m.substitute(&|_| None), m);
}

use cutec_diagnostics::{FileId, Span};
use cutec_ir::{
    AddrSpace, CompareOp, Expr, KernelBuilder, Loc, Module, Scalar, Stmt, Type, Unroll, ValidationError, fixtures,
    validate,
};

fn error_of(b: KernelBuilder) -> ValidationError {
    let module = Module { kernels: vec![b.finish()] };
    match validate(&module) {
        Ok(_) => panic!("expected an error in\n{}", cutec_ir::print(&module)),
        Err(e) => e.error,
    }
}

#[test]
fn fixtures_are_valid() {
    for m in [fixtures::copy(), fixtures::softmax(), fixtures::kitchen_sink()] {
        let info = validate(&m).unwrap_or_else(|e| panic!("{e}\n{}", cutec_ir::print(&m)));
        assert_eq!(info.kernels[0].expr_types.len(), m.kernels[0].exprs.len());
    }
    assert_eq!(validate(&fixtures::softmax()).unwrap().kernels[0].shared_bytes, 256);
}

#[test]
fn values_do_not_escape_their_block() {
    let mut b = KernelBuilder::new("k");
    let x = b.ptr_param("x", 4);
    let t = b.bool(true);
    let mut inner = None;
    b.if_then(t, |b| inner = Some(b.load(x, Type::I32, 4)));
    b.store(x, inner.unwrap(), 4);
    assert!(matches!(error_of(b), ValidationError::UseBeforeDef(_)));
}

#[test]
fn an_expression_is_emitted_once() {
    let mut b = KernelBuilder::new("k");
    let t = b.thread_idx_x();
    b.push(Stmt::Emit(t));
    assert!(matches!(error_of(b), ValidationError::EmittedTwice(_)));
}

#[test]
fn globals_are_not_emitted() {
    let mut b = KernelBuilder::new("k");
    let one = b.i32(1);
    b.push(Stmt::Emit(one));
    assert!(matches!(error_of(b), ValidationError::EmitGlobal(_)));
}

#[test]
fn mixed_operand_types_are_reported_where_they_are() {
    let mut b = KernelBuilder::new("k");
    let loc = Loc::new(FileId(3), Span::new(10, 20));
    b.set_loc(loc);
    let one = b.i32(1);
    let half = b.f32(0.5);
    b.add(one, half);
    let module = Module { kernels: vec![b.finish()] };
    let e = validate(&module).unwrap_err();
    assert!(matches!(e.error, ValidationError::Mismatch { left: Type::I32, right: Type::F32, .. }), "{e}");
    assert_eq!(e.loc, loc);
    let d = e.to_diagnostic();
    assert_eq!(d.code, "E0399");
    assert_eq!(d.primary().unwrap().span, Span::new(10, 20));
}

#[test]
fn accesses_are_aligned_to_their_scalar() {
    let mut b = KernelBuilder::new("k");
    let x = b.ptr_param("x", 16);
    b.load(x, Type::vector(Scalar::F32, 4), 2);
    assert!(matches!(error_of(b), ValidationError::BadAccess { .. }));
}

#[test]
fn vectors_are_at_most_16_bytes() {
    let mut b = KernelBuilder::new("k");
    let x = b.ptr_param("x", 16);
    b.load(x, Type::vector(Scalar::F64, 4), 16);
    assert!(matches!(error_of(b), ValidationError::BadAccess { .. }));
}

#[test]
fn loops_do_not_write_their_variable() {
    let mut b = KernelBuilder::new("k");
    let (zero, four) = (b.i32(0), b.i32(4));
    b.for_range("i", zero, four, 1, Unroll::Auto, |b, i| {
        let var = b.kernel().vars.iter().next().map(|(v, _)| v).expect("the loop's variable");
        b.write(var, i);
    });
    assert!(matches!(error_of(b), ValidationError::WritesLoopVar(_)));
}

#[test]
fn break_needs_a_loop() {
    let mut b = KernelBuilder::new("k");
    b.break_();
    assert!(matches!(error_of(b), ValidationError::JumpOutsideLoop));
}

#[test]
fn handles_out_of_range_are_errors_not_panics() {
    // A handle from another, larger arena: the only way to hold one that is out of range.
    let mut other = cutec_ir::Arena::new();
    let far = (0..=1000).map(|_| other.append(Expr::Param(0), Loc::NONE)).last().expect("1001 expressions");
    let mut b = KernelBuilder::new("k");
    b.expr(Expr::Param(9));
    b.push(Stmt::Emit(far));
    assert!(matches!(error_of(b), ValidationError::ParamOutOfRange(9)));
    let mut b = KernelBuilder::new("k");
    b.push(Stmt::Emit(far));
    assert!(matches!(error_of(b), ValidationError::ExprOutOfRange(_)));
}

#[test]
fn conditions_are_i1() {
    let mut b = KernelBuilder::new("k");
    let one = b.i32(1);
    b.if_then(one, |_| {});
    assert!(matches!(error_of(b), ValidationError::StmtType { .. }));
}

#[test]
fn shared_memory_is_static_and_storable() {
    let mut b = KernelBuilder::new("k");
    let s = b.alloc("buf", AddrSpace::Shared, Scalar::F32, 0, 4);
    let _ = s;
    assert!(matches!(error_of(b), ValidationError::BadDecl { .. }));
    let mut b = KernelBuilder::new("k");
    let s = b.alloc("buf", AddrSpace::Shared, Scalar::F32, 8, 4);
    let t = b.thread_idx_x();
    let c = b.compare(CompareOp::Lt, t, t);
    let v = b.convert(c, Scalar::F32);
    b.store(s, v, 4);
    assert!(validate(&Module { kernels: vec![b.finish()] }).is_ok());
}

/// fp8 is a storage format: loads, stores, conversions and comparisons, 16 lanes to a 16-byte vector, but no
/// arithmetic, math function or literal (the builder turns an fp8 literal into a converted `f32` one).
#[test]
fn fp8_values_are_stored_and_converted_but_not_computed_on() {
    let arithmetic = |f: fn(&mut KernelBuilder, cutec_ir::Handle<Expr>)| {
        let mut b = KernelBuilder::new("k");
        let x = b.ptr_param("x", 16);
        let v = b.load(x, Type::E4M3, 1);
        f(&mut b, v);
        error_of(b)
    };
    let add = arithmetic(|b, v| {
        b.add(v, v);
    });
    let neg = arithmetic(|b, v| {
        b.unary(cutec_ir::UnaryOp::Neg, v);
    });
    let max = arithmetic(|b, v| {
        b.math(cutec_ir::MathFn::Max, &[v, v]);
    });
    for e in [add, neg, max] {
        assert!(matches!(e, ValidationError::OperandType { .. }), "{e:?}");
    }
    let mut b = KernelBuilder::new("k");
    b.expr(Expr::Literal(cutec_ir::Literal::Float { value: 1.0, ty: Scalar::E5M2 }));
    assert!(matches!(error_of(b), ValidationError::BadLiteral(_)));

    let mut b = KernelBuilder::new("k");
    let x = b.ptr_param("x", 16);
    let v = b.load(x, Type::vector(Scalar::E4M3, 16), 16);
    let wide = b.convert(v, Scalar::F32);
    let back = b.convert(wide, Scalar::E5M2);
    b.store(x, back, 16);
    let one = b.lit(cutec_ir::Literal::Float { value: 1.0, ty: Scalar::E4M3 });
    let s = b.load(x, Type::E4M3, 1);
    let same = b.compare(CompareOp::Eq, s, one);
    b.if_then(same, |b| b.store(x, one, 1));
    let module = Module { kernels: vec![b.finish()] };
    let info = validate(&module).unwrap_or_else(|e| panic!("{e}\n{}", cutec_ir::print(&module)));
    assert_eq!(info.kernels[0].expr_types[wide.index()], Type::vector(Scalar::F32, 16));
    assert!(cutec_ir::print(&module).contains("convert 1.0 to e4m3"), "{}", cutec_ir::print(&module));
}

/// An fp8 wgmma is m64nNk32 with A and B both fp8 (any mix) and A in shared memory; a 16-bit type does not mix
/// with fp8.
#[test]
fn fp8_wgmma_is_k32_from_shared_memory() {
    let desc = cutec_ir::GmmaDesc { lbo: 16, sbo: 1024, swizzle: cutec_ir::GmmaSwizzle::B128, mn_major: false };
    let wgmma = |input, input_b, k, a_space| {
        let mut b = KernelBuilder::new("k");
        let acc = b.alloc("acc", AddrSpace::Local, Scalar::F32, 64, 16);
        let a = b.alloc("a", a_space, input, 4096, 1024);
        let sb = b.alloc("b", AddrSpace::Shared, input_b, 4096, 1024);
        let t = b.bool(true);
        let shape = cutec_ir::WgmmaShape { m: 64, n: 128, k, input, input_b };
        let a_desc = (a_space == AddrSpace::Shared).then_some(desc);
        let steps = vec![cutec_ir::WgmmaStep { a, b: sb, scale_d: t }];
        b.op(cutec_ir::Op::Wgmma { shape, acc, a_desc, b_desc: desc, steps });
        validate(&Module { kernels: vec![b.finish()] }).map(|_| ()).map_err(|e| e.error)
    };
    assert_eq!(wgmma(Scalar::E4M3, Scalar::E5M2, 32, AddrSpace::Shared), Ok(()));
    assert_eq!(wgmma(Scalar::E5M2, Scalar::E5M2, 32, AddrSpace::Shared), Ok(()));
    for (a, b, k, space) in [
        (Scalar::E4M3, Scalar::E4M3, 16, AddrSpace::Shared),
        (Scalar::E4M3, Scalar::BF16, 32, AddrSpace::Shared),
        (Scalar::BF16, Scalar::F16, 16, AddrSpace::Shared),
        (Scalar::E4M3, Scalar::E4M3, 32, AddrSpace::Local),
    ] {
        assert!(matches!(wgmma(a, b, k, space), Err(ValidationError::BadOp { .. })), "{a} {b} k{k} {space:?}");
    }
}

/// The text of `schedule_entities.ir` with `from` replaced by `to`, parsed; the validator's error.
fn entities_error(from: &str, to: &str) -> ValidationError {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ir/schedule_entities.ir");
    let text = std::fs::read_to_string(path).unwrap();
    assert!(text.contains(from), "{from}");
    let module = cutec_ir::parse(&text.replace(from, to)).unwrap();
    match validate(&module) {
        Ok(_) => panic!("expected an error with `{to}`"),
        Err(e) => e.error,
    }
}

#[test]
fn a_ring_has_one_barrier_per_stage() {
    let e = entities_error("stages(2) full", "stages(3) full");
    assert!(matches!(e, ValidationError::BadEntity { why, .. } if why.contains("one mbarrier per stage")), "{e:?}");
}

#[test]
fn a_rings_barriers_are_mbarrier_arrays() {
    let e = entities_error("full(#b0)", "full(#b2)");
    assert!(matches!(e, ValidationError::BadEntity { why, .. } if why.contains("mbarrier arrays")), "{e:?}");
    let e = entities_error("mbarrier @full arrivals(1)", "mbarrier @tile arrivals(1)");
    assert!(matches!(e, ValidationError::BadEntity { why, .. } if why.contains("shared allocation of i64")), "{e:?}");
}

#[test]
fn the_compilers_named_barriers_are_in_range_and_disjoint() {
    let e = entities_error("named ids(1..3)", "named ids(14..17)");
    assert!(matches!(e, ValidationError::BadEntity { why, .. } if why.contains("1..=15")), "{e:?}");
    let e = entities_error("  ring #r0", "  barrier #b3 spare: named ids(2..3) threads(96)\n  ring #r0");
    assert!(matches!(e, ValidationError::BadEntity { why, .. } if why.contains("disjoint")), "{e:?}");
}

#[test]
fn a_declared_named_barrier_is_used_with_its_thread_count() {
    let e = entities_error("bar.sync %3, 128 of #b2", "bar.sync %3, 256 of #b2");
    assert!(matches!(e, ValidationError::BadOp { op: "bar.sync", .. }), "{e:?}");
    let e = entities_error("bar.sync %3, 128 of #b2", "bar.sync 7, 128 of #b2");
    assert!(matches!(e, ValidationError::BadOp { op: "bar.sync", .. }), "{e:?}");
}

#[test]
fn a_declared_mbarrier_is_initialised_and_expected_as_declared() {
    let init = |count: u32| format!("  warpgroup producer 0..1 regs(40) {{\n    mbarrier.init @full, {count}\n");
    let e = entities_error("  warpgroup producer 0..1 regs(40) {\n", &init(2));
    assert!(matches!(e, ValidationError::BadOp { op: "mbarrier.init", .. }), "{e:?}");
    let expect = "  warpgroup producer 0..1 regs(40) {\n    mbarrier.arrive.expect_tx @full, 4096\n";
    let e = entities_error("  warpgroup producer 0..1 regs(40) {\n", expect);
    assert!(matches!(e, ValidationError::BadOp { op: "mbarrier.arrive.expect_tx", .. }), "{e:?}");
    // As declared: valid.
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ir/schedule_entities.ir");
    let text = std::fs::read_to_string(path).unwrap().replace("  warpgroup producer 0..1 regs(40) {\n", &init(1));
    validate(&cutec_ir::parse(&text).unwrap()).unwrap();
}

#[test]
fn a_commit_names_what_its_wgmmas_read_and_write() {
    // The group declares the tile the wgmma reads and the accumulator it writes: valid as it is (above); a group
    // that leaves the accumulator out, or the tile, is not.
    let e = entities_error("group #g0: reads(@tile) writes(@acc)", "group #g0: reads(@tile) writes()");
    assert!(matches!(e, ValidationError::BadOp { op: "wgmma.commit_group", .. }), "{e:?}");
    let e = entities_error("group #g0: reads(@tile) writes(@acc)", "group #g0: reads() writes(@acc)");
    assert!(matches!(e, ValidationError::BadOp { op: "wgmma.commit_group", .. }), "{e:?}");
}

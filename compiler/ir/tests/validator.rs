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

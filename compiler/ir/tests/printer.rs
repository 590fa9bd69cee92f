use cutec_ir::{KernelBuilder, Literal, Module, Scalar, Type, fixtures, print};

#[test]
fn prints_the_copy_kernel() {
    let text = print(&fixtures::copy());
    assert!(
        text.starts_with(
            "kernel @copy(%x: ptr<global> align(16) noalias, %y: ptr<global> align(16) noalias, %N: i32) \
             block(256, 1, 1) {\n"
        ),
        "{text}"
    );
    insta::assert_snapshot!(text);
}

#[test]
fn literals_read_back_as_written() {
    let mut b = KernelBuilder::new("k");
    let x = b.ptr_param("x", 4);
    for l in [
        Literal::f32(0.1),
        Literal::f32(f32::NEG_INFINITY),
        Literal::f32(2.0),
        Literal::i64(7),
        Literal::Float { value: 0.5, ty: Scalar::BF16 },
    ] {
        let v = b.lit(l);
        b.store(x, v, 8);
    }
    let text = print(&Module { kernels: vec![b.finish()] });
    insta::assert_snapshot!(text);
    // And they read back as the same values.
    assert_eq!(cutec_ir::print(&cutec_ir::parse(&text).unwrap()), text);
}

#[test]
fn ill_typed_expressions_print_with_a_question_mark() {
    let mut b = KernelBuilder::new("k");
    let one = b.i32(1);
    let half = b.f32(0.5);
    b.add(one, half);
    let text = print(&Module { kernels: vec![b.finish()] });
    insta::assert_snapshot!(text);
    let _ = Type::I32;
}

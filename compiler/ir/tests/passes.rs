use cutec_ir::{
    CompareOp, KernelBuilder, Module, PipelineOptions, Scalar, Stmt, Type, Unroll, describe_pipeline, find_pass,
    fixtures, pipeline, print, run_pipeline,
};

fn run(mut module: Module) -> String {
    run_pipeline(&mut module, PipelineOptions { verify_each: true, ..Default::default() })
        .unwrap_or_else(|e| panic!("{e}\n{}", print(&module)));
    print(&module)
}

#[test]
fn the_pipeline_is_listed_in_order() {
    let names: Vec<_> = pipeline().iter().map(|p| p.name()).collect();
    assert_eq!(
        names,
        ["unroll", "forward-vars", "fold-constants", "cse", "dce", "pipeline-loops", "specialize-warps", "compact"]
    );
    assert!(describe_pipeline().starts_with("unroll: "));
    assert!(find_pass("dce").is_some());
    assert!(find_pass("nope").is_none());
}

#[test]
fn the_hook_sees_every_pass() {
    let mut module = fixtures::copy();
    let mut seen = Vec::new();
    let mut hook = |name: &str, _: &Module| seen.push(name.to_string());
    run_pipeline(&mut module, PipelineOptions { verify_each: true, after_pass: Some(&mut hook) }).unwrap();
    assert_eq!(
        seen,
        ["unroll", "forward-vars", "fold-constants", "cse", "dce", "pipeline-loops", "specialize-warps", "compact"]
    );
}

#[test]
fn full_unrolling_makes_register_offsets_literal() {
    let text = run(fixtures::softmax());
    // No loop left, register offsets are literals (`offset @rx, 15 x f32`), ntid.x folded from the static block
    // size (256 / 32 = 8).
    insta::assert_snapshot!(text);
}

#[test]
fn unrolling_needs_literal_bounds() {
    let mut b = KernelBuilder::new("k");
    let x = b.ptr_param("x", 4);
    let n = b.scalar_param("n", Scalar::I32);
    let zero = b.i32(0);
    b.for_range("i", zero, n, 1, Unroll::Full, |b, i| {
        let p = b.offset(x, i, Type::I32);
        b.store(p, i, 4);
    });
    let text = run(Module { kernels: vec![b.finish()] });
    insta::assert_snapshot!(text);
}

#[test]
fn unrolling_keeps_loops_that_break() {
    let mut b = KernelBuilder::new("k");
    let (zero, four) = (b.i32(0), b.i32(4));
    b.for_range("i", zero, four, 1, Unroll::Full, |b, _| b.break_());
    let text = run(Module { kernels: vec![b.finish()] });
    insta::assert_snapshot!(text);
}

#[test]
fn constants_fold_and_literal_ifs_disappear() {
    let mut b = KernelBuilder::new("k");
    let x = b.ptr_param("x", 4);
    let (two, three, one) = (b.i32(2), b.i32(3), b.i32(1));
    let six = b.mul(two, three);
    let seven = b.add(six, one);
    let yes = b.compare(CompareOp::Lt, six, seven);
    b.if_else(yes, |b| b.store(x, seven, 4), |b| b.store(x, six, 4));
    let t = b.thread_idx_x();
    let zero = b.i32(0);
    let same = b.add(t, zero);
    let p = b.offset(x, zero, Type::I32);
    b.store(p, same, 4);
    let text = run(Module { kernels: vec![b.finish()] });
    insta::assert_snapshot!(text);
}

#[test]
fn division_by_zero_is_left_to_run() {
    let mut b = KernelBuilder::new("k");
    let x = b.ptr_param("x", 4);
    let (one, zero) = (b.i32(1), b.i32(0));
    let q = b.div(one, zero);
    b.store(x, q, 4);
    let text = run(Module { kernels: vec![b.finish()] });
    insta::assert_snapshot!(text);
}

#[test]
fn unused_expressions_are_removed() {
    let mut b = KernelBuilder::new("k");
    let x = b.ptr_param("x", 4);
    let v = b.load(x, Type::F32, 4);
    let _unused = b.add(v, v);
    let module = run(Module { kernels: vec![b.finish()] });
    insta::assert_snapshot!(module);
    let _ = Stmt::Return;
}

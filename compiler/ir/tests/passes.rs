use cutec_ir::{
    CompareOp, KernelBuilder, Module, PipelineOptions, Scalar, Stmt, Type, Unroll, describe_pipeline, find_pass,
    fixtures, pipeline, print, run_pipeline,
};

fn run(mut module: Module) -> String {
    run_pipeline(&mut module, PipelineOptions { verify_each: true, ..Default::default() })
        .unwrap_or_else(|e| panic!("{e}\n{}", print(&module)));
    print(&module)
}

/// The passes, in the order they run.
const PIPELINE: [&str; 18] = [
    "unroll",
    "forward-vars",
    "fold-constants",
    "cse",
    "dce",
    "pipeline-loops",
    "complete-wgmma",
    "complete-copies",
    "specialize-warps",
    "fold-constants",
    "dce",
    "compact",
    "check-collectives",
    "check-operands",
    "check-sync",
    "check-schedule",
    "check-protocol",
    "check-fragment-bounds",
];

#[test]
fn the_pipeline_is_listed_in_order() {
    let names: Vec<_> = pipeline().iter().map(|p| p.name()).collect();
    assert_eq!(names, PIPELINE);
    assert!(describe_pipeline().starts_with("unroll: "));
    assert!(find_pass("dce").is_some());
    assert!(find_pass("nope").is_none());
}

#[test]
fn the_hook_sees_every_pass() {
    let mut module = fixtures::copy();
    let mut seen = Vec::new();
    let mut hook = |name: &str, _: &Module| seen.push(name.to_string());
    run_pipeline(&mut module, PipelineOptions { verify_each: true, after_pass: Some(&mut hook), ..Default::default() })
        .unwrap();
    assert_eq!(seen, PIPELINE);
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

/// Three nested loops of `trips` iterations marked `unroll`, the innermost storing its indices.
fn nested_unrolled_loops(trips: i32, hints: [Unroll; 3], break_inner: bool) -> Module {
    let mut b = KernelBuilder::new("k");
    let x = b.ptr_param("x", 4);
    let (zero, n) = (b.i32(0), b.i32(trips));
    b.for_range("i", zero, n, 1, hints[0], |b, i| {
        b.for_range("j", zero, n, 1, hints[1], |b, j| {
            b.for_range("k", zero, n, 1, hints[2], |b, k| {
                let s = b.add(i, j);
                let p = b.offset(x, k, Type::I32);
                b.store(p, s, 4);
                if break_inner {
                    b.break_();
                }
            });
        });
    });
    Module { kernels: vec![b.finish()] }
}

/// The code, message and primary label of the error the pipeline stops with.
fn pipeline_error(mut module: Module) -> (String, String, String) {
    let e = run_pipeline(&mut module, PipelineOptions::default()).expect_err("over the budget");
    let d = e.to_diagnostic();
    let label = d.primary().map(|l| l.message.clone()).unwrap_or_default();
    (d.code.to_string(), d.message, label)
}

#[test]
fn unrolling_past_the_budget_is_an_error_naming_the_loop() {
    let full = [Unroll::Full; 3];
    // 20^3 copies of the body fit; 1000 copies of the inner loop's 1000 do not: the middle loop is named.
    run(nested_unrolled_loops(20, full, false));
    let (code, message, label) = pipeline_error(nested_unrolled_loops(1000, full, false));
    assert_eq!(code, "E0320");
    assert!(message.contains("statements, more than the limit of 32768"), "{message}");
    // The middle loop's body: the inner loop's 1000 copies of 3 statements, and the loop itself.
    assert_eq!(label, "1000 copies of a body of 3001 statements");
    // A loop left to the back end (it breaks) counts as what the back end would make of it.
    let (code, _, label) = pipeline_error(nested_unrolled_loops(1000, full, true));
    assert_eq!(code, "E0320");
    assert_eq!(label, "1000 copies of a body of 5002 statements");
    // `unroll(2)` asks for two copies per trip, whatever the trip count.
    run(nested_unrolled_loops(1000, [Unroll::Auto, Unroll::Count(2), Unroll::Count(2)], false));
}

#[test]
fn a_partial_unroll_of_a_run_time_trip_count_is_counted() {
    // The back end makes N copies of an `unroll(N)` body whatever the trip count: a run-time bound does not
    // hide them from the budget (`unroll(1000000000)` once ran LLVM for minutes).
    let module = |n: u32| {
        let text = format!(
            "kernel @k(%x: ptr<global> align(4), %n: i32) {{\n  var $i: i32\n  for $i in 0..%n step 1 unroll({n}) {{\n    \
             %0: i32 = read $i\n    %1: ptr<global> = offset %x, %0 x i32\n    store %0, %1 align(4)\n  }}\n}}\n"
        );
        cutec_ir::parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"))
    };
    run(module(8));
    let (code, _, label) = pipeline_error(module(1_000_000_000));
    assert_eq!(code, "E0320");
    assert_eq!(label, "1000000000 copies of a body of 3 statements");
    // Nested partial unrolls of run-time trip counts multiply: the outer loop's body is the inner loop's copies.
    let nested = |n: u32| {
        let text = format!(
            "kernel @k(%x: ptr<global> align(4), %n: i32) {{\n  var $i: i32\n  var $j: i32\n  \
             for $i in 0..%n step 1 unroll({n}) {{\n    for $j in 0..%n step 1 unroll({n}) {{\n      \
             %0: i32 = read $j\n      %1: ptr<global> = offset %x, %0 x i32\n      store %0, %1 align(4)\n    \
             }}\n  }}\n}}\n"
        );
        cutec_ir::parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"))
    };
    run(nested(8));
    let (code, _, label) = pipeline_error(nested(1000));
    assert_eq!(code, "E0320");
    // 1000 copies of the inner loop (1000 copies of 3 statements, and the loop itself).
    assert_eq!(label, "1000 copies of a body of 3001 statements");
}

#[test]
fn a_kernel_past_the_budget_is_an_error() {
    let mut b = KernelBuilder::new("k");
    let x = b.ptr_param("x", 4);
    for v in 0..70_000 {
        let v = b.i32(v);
        b.store(x, v, 4);
    }
    let (code, message, _) = pipeline_error(Module { kernels: vec![b.finish()] });
    assert_eq!(code, "E0321");
    assert!(message.contains("kernel has 70000 statements"), "{message}");
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

#[test]
fn constant_accesses_outside_a_register_array_are_refused() {
    // A register array of 4 `f32`, accessed at a constant element offset with a type of `ty`.
    let module = |offset: i64, ty: &str| {
        let text = format!(
            "kernel @k(%x: ptr<global> align(16)) block(32, 1, 1) {{\n  local @r: [4 x f32] align(16)\n  \
             %0: ptr<local> = offset @r, {offset} x f32\n  %1: {ty} = load {ty}, %0 align(4)\n  \
             store %1, %x align(4)\n}}\n"
        );
        cutec_ir::parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"))
    };
    run(module(0, "f32"));
    run(module(3, "f32"));
    run(module(0, "f32x4"));
    // Past the end, before the start, and a vector that starts inside and ends outside.
    for (offset, ty, label) in [
        (4, "f32", "element 4 of the register tensor `r` is outside its 4 elements"),
        (-1, "f32", "element -1 of the register tensor `r` is outside its 4 elements"),
        (2, "f32x4", "elements 2..=5 of the register tensor `r` are outside its 4 elements"),
        (i64::MAX / 8, "f32", "is outside its 4 elements"),
    ] {
        let (code, message, primary) = pipeline_error(module(offset, ty));
        assert_eq!(code, "E0323", "{offset} {ty}: {message}");
        assert!(message.contains(label), "{offset} {ty}: {message}");
        assert_eq!(primary, "`r` has elements 0..4");
    }
}

#[test]
fn run_time_indices_into_a_register_array_are_proved_inside_it_or_refused() {
    // A register array of 4 `f32`, read at the element `index` computes (from `%0` = tid.x and `%n`).
    let module = |index: &str| {
        let text = format!(
            "kernel @k(%x: ptr<global> align(16), %n: i32) block(128, 1, 1) {{\n  local @r: [4 x f32] align(16)\n  \
             %0: i32 = sreg tid.x\n  %1: i32 = {index}\n  %2: ptr<local> = offset @r, %1 x f32\n  \
             %3: f32 = load f32, %2 align(4)\n  store %3, %x align(4)\n}}\n"
        );
        cutec_ir::parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"))
    };
    run(module("and %0, 3"));
    run(module("rem %0, 4"));
    run(module("div %0, 32"));
    for (index, reach) in [
        ("div %0, 16", "this may reach elements 0..=7"),
        ("rem %n, 4", "this may reach elements -3..=3"),
        ("add %n, 0", "this may reach elements -2147483648..=2147483647"),
    ] {
        let (code, message, primary) = pipeline_error(module(index));
        assert_eq!(code, "E0323", "{index}: {message}");
        assert_eq!(message, "an index into the register tensor `r` may be outside its 4 elements", "{index}");
        assert_eq!(primary, format!("{reach}; `r` has elements 0..4"), "{index}");
    }
}

/// A consumer loop of a ring released after its groups, written in the text form: `{body}` between its wait on
/// `full` and its release of the previous stage.
fn ring_consumer(body: &str) -> String {
    format!(
        "kernel @k(%a: ptr<param> align(64) box(8192), %n: i32, %c: i1) block(128, 1, 1) {{
  shared @tile: [8192 x bf16] align(1024)
  shared @full: [2 x i64] align(8)
  shared @empty: [2 x i64] align(8)
  local @acc: [64 x f32] align(4)
  var $i: i32
  barrier #b0 full: mbarrier @full arrivals(1) bytes(8192)
  barrier #b1 empty: mbarrier @empty arrivals(4) bytes(0)
  ring #r0: tiles(@tile) stages(2) full(#b0) empty(#b1) filler(thread0) release(after_group)
  for $i in 0..%n step 1 {{
    %0: i32 = read $i
    %1: i32 = rem %0, 2
    %2: ptr<shared> = offset @full, %1 x i64
    mbarrier.wait %2, parity 0
{body}
    wgmma.wait_group 1
    %3: ptr<shared> = offset @empty, %1 x i64
    mbarrier.arrive %3
  }}
}}
"
    )
}

fn check_schedule(text: &str) -> Result<(), String> {
    let mut module = cutec_ir::parse(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    cutec_ir::validate(&module).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let pass = find_pass("check-schedule").unwrap();
    cutec_ir::passes::run_pass(pass, &mut module, &mut Default::default())
        .map_err(|e| e.to_diagnostic().code.to_string())
}

#[test]
fn check_schedule_proves_one_group_per_iteration_before_a_release() {
    let commit = "    wgmma.fence\n    wgmma.commit_group";
    assert_eq!(check_schedule(&ring_consumer(commit)), Ok(()));
    // Two groups on every path are as good: the wait retires all but the last, iteration i's own.
    assert_eq!(check_schedule(&ring_consumer(&format!("{commit}\n    wgmma.commit_group"))), Ok(()));
    // A group on one path only, or none at all: refused.
    let conditional = "    if %c {\n      wgmma.commit_group\n    }";
    assert_eq!(check_schedule(&ring_consumer(conditional)), Err("E0346".to_string()));
    assert_eq!(check_schedule(&ring_consumer("    wgmma.fence")), Err("E0346".to_string()));
    let both = "    if %c {\n      wgmma.commit_group\n    } else {\n      wgmma.commit_group\n    }";
    assert_eq!(check_schedule(&ring_consumer(both)), Ok(()));
    // An exit from the body, or a group in an inner loop: refused.
    let exit = format!("{commit}\n    if %c {{\n      break\n    }}");
    assert_eq!(check_schedule(&ring_consumer(&exit)), Err("E0346".to_string()));
    let inner = "    for $i in 0..%n step 1 {\n      wgmma.commit_group\n    }";
    assert_eq!(check_schedule(&ring_consumer(inner)), Err("E0346".to_string()));
    // The release without the wait for the groups before it.
    let unwaited = ring_consumer(commit).replace("    wgmma.wait_group 1\n", "");
    assert_eq!(check_schedule(&unwaited), Err("E0346".to_string()));
}

#[test]
fn check_schedule_refuses_a_store_into_a_rings_tile() {
    let store = "    wgmma.commit_group\n    store 0.0bf16, @tile align(2)";
    assert_eq!(check_schedule(&ring_consumer(store)), Err("E0347".to_string()));
    // A store into memory of its own is the program's business.
    let own = "    wgmma.commit_group\n    store 0.0, @acc align(4)";
    assert_eq!(check_schedule(&ring_consumer(own)), Ok(()));
}

/// A kernel that stores into `@s`, then runs `{between}`, then TMA-stores `@s`.
fn store_then_tma_store(between: &str) -> String {
    format!(
        "kernel @k(%y: ptr<param> align(64) box(512)) block(128, 1, 1) {{
  shared @s: [128 x f32] align(128)
  %0: i32 = sreg tid.x
  %1: ptr<shared> = offset @s, %0 x f32
  store 1.0, %1 align(4)
{between}
  %2: i1 = cmp.eq %0, 0
  if %2 {{
    tma.store %y[0], @s
    bulk.commit_group
    bulk.wait_group 0
  }}
}}
"
    )
}

#[test]
fn check_schedule_proves_a_proxy_fence_between_stores_and_async_reads() {
    assert_eq!(check_schedule(&store_then_tma_store("  fence.proxy.async\n  barrier.cta")), Ok(()));
    // The barrier alone does not order the generic writes before the async proxy's read.
    assert_eq!(check_schedule(&store_then_tma_store("  barrier.cta")), Err("E0349".to_string()));
    // A fence on one path only.
    let one_path = "  %9: i1 = cmp.lt %0, 64\n  if %9 {\n    fence.proxy.async\n  }\n  barrier.cta";
    assert_eq!(check_schedule(&store_then_tma_store(one_path)), Err("E0349".to_string()));
}

/// The checks at the end of the pipeline change nothing and say so (`Preserved::ALL`): the analyses they share
/// (the validator's, each kernel's uniformity and ranges) are computed once for all of them, and again only
/// after a pass that changes the module.
#[test]
fn the_checks_share_their_analyses() {
    let (transforms, checks) = cutec_ir::passes::pipeline_parts();
    for module in [fixtures::softmax(), fixtures::kitchen_sink()] {
        let mut module = module;
        let kernels = u32::try_from(module.kernels.len()).expect("few kernels");
        let mut analyses = cutec_ir::passes::Analyses::default();
        for pass in &transforms {
            cutec_ir::passes::run_pass(*pass, &mut module, &mut analyses).expect("the transforms succeed");
        }
        let before = analyses.computed();
        for pass in &checks {
            assert_eq!(pass.preserves(), cutec_ir::passes::Preserved::ALL, "{} is a check", pass.name());
            cutec_ir::passes::run_pass(*pass, &mut module, &mut analyses).expect("the checks pass");
        }
        let after = analyses.computed();
        assert_eq!(after.info - before.info, 1, "the checks validate once");
        assert_eq!(after.uniformity - before.uniformity, kernels, "uniformity once per kernel");
        assert_eq!(after.ranges - before.ranges, kernels, "ranges once per kernel");
        // A pass that changes the module drops them: the next check computes them again.
        let dce = find_pass("dce").expect("dce");
        cutec_ir::passes::run_pass(dce, &mut module, &mut analyses).expect("dce");
        let check = find_pass("check-operands").expect("check-operands");
        cutec_ir::passes::run_pass(check, &mut module, &mut analyses).expect("the check passes");
        assert_eq!(analyses.computed().ranges - after.ranges, kernels, "ranges again after dce");
    }
}

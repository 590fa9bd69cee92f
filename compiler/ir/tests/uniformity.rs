//! The uniformity analysis and its proof that collectives run in whole groups, on hand-written kernels: each
//! wrong program of its class is refused with the cause a message shows, each right one is accepted.

use cutec_ir::analysis::uniformity::{Cause, Divergence, Scope, Uniformity, Why, check};

/// The divergences of the one kernel of `text` (IR text).
fn divergences(text: &str) -> Vec<Divergence> {
    let module = cutec_ir::parse(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    cutec_ir::validate(&module).unwrap_or_else(|e| panic!("{e}\n{text}"));
    check(&module.kernels[0])
}

/// The one refusal of `text`: its instruction, group and why.
fn refused(text: &str) -> (&'static str, Scope, Why) {
    let d = divergences(text);
    assert_eq!(d.len(), 1, "{d:#?}\n{text}");
    (d[0].what, d[0].needs, d[0].why)
}

fn accepted(text: &str) {
    let d = divergences(text);
    assert!(d.is_empty(), "{d:#?}\n{text}");
}

/// A kernel of block `block` whose body is `body`, with `%0 = tid.x` and `%1 = laneid` defined first.
fn kernel(block: &str, body: &str) -> String {
    format!(
        "kernel @k(%p: ptr<global> align(4), %n: i32) block({block}) {{\n  shared @s: [1024 x bf16] align(1024)\n  \
         var $d: i32\n  var $i: i32\n  %0: i32 = sreg tid.x\n  %1: i32 = sreg laneid\n{body}}}\n"
    )
}

fn condition(d: Why) -> bool {
    matches!(d, Why::Control(Cause::Condition(_)))
}

#[test]
fn a_warpgroup_index_condition_keeps_wgmma_whole_and_a_thread_condition_does_not() {
    for whole in ["%2: i32 = div %0, 128", "%2: i32 = shr %0, 7", "%2: i32 = and %0, -128"] {
        accepted(&kernel(
            "256, 1, 1",
            &format!("  {whole}\n  %3: i1 = cmp.eq %2, 0\n  if %3 {{\n    wgmma.fence\n  }}\n"),
        ));
    }
    for split in ["%2: i32 = div %0, 64", "%2: i32 = rem %0, 128", "%2: i32 = and %0, 127", "%2: i32 = add %1, 0"] {
        let (what, needs, why) = refused(&kernel(
            "256, 1, 1",
            &format!("  {split}\n  %3: i1 = cmp.eq %2, 0\n  if %3 {{\n    wgmma.fence\n  }}\n"),
        ));
        assert_eq!((what, needs), ("wgmma.fence", Scope::Warpgroup), "{split}");
        assert!(condition(why), "{split}: {why:?}");
    }
}

#[test]
fn a_variable_written_under_a_lane_condition_is_not_uniform() {
    // `let mut d = 0; if lane_idx == 0 { d = 1; } if d == 1 { gemm(..) }`.
    let body = "  $d = 0\n  %2: i1 = cmp.eq %1, 0\n  if %2 {\n    $d = 1\n  }\n  %3: i32 = read $d\n  \
                %4: i1 = cmp.eq %3, 1\n  if %4 {\n    wgmma.commit_group\n  }\n";
    let (what, _, why) = refused(&kernel("128, 1, 1", body));
    assert_eq!(what, "wgmma.commit_group");
    assert!(condition(why), "{why:?}");
    // The same variable written by every thread is uniform.
    let body = "  $d = 0\n  %2: i1 = cmp.eq %n, 0\n  if %2 {\n    $d = 1\n  }\n  %3: i32 = read $d\n  \
                %4: i1 = cmp.eq %3, 1\n  if %4 {\n    wgmma.commit_group\n  }\n";
    accepted(&kernel("128, 1, 1", body));
    let module = cutec_ir::parse(&kernel("128, 1, 1", body)).expect("parses");
    let u = Uniformity::of(&module.kernels[0]);
    assert_eq!(u.var(module.kernels[0].vars.iter().next().expect("a var").0).scope(), Scope::Cta);
}

#[test]
fn loads_and_shuffles_are_not_uniform() {
    let load = "  %2: i32 = load i32, %p align(4)\n  %3: i1 = cmp.eq %2, 0\n  if %3 {\n    wgmma.fence\n  }\n";
    assert!(condition(refused(&kernel("128, 1, 1", load)).2));
    let shfl = "  %2: i32 = shfl.idx %n, 0\n  %3: i1 = cmp.eq %2, 0\n  if %3 {\n    wgmma.fence\n  }\n";
    assert!(condition(refused(&kernel("128, 1, 1", shfl)).2));
}

#[test]
fn warpgroup_instructions_need_a_block_of_whole_warpgroups_along_x() {
    for (block, shape) in [("64, 1, 1", [64, 1, 1]), ("64, 2, 1", [64, 2, 1]), ("192, 1, 1", [192, 1, 1])] {
        let (what, _, why) = refused(&kernel(block, "  wgmma.fence\n"));
        assert_eq!((what, why), ("wgmma.fence", Why::Block(shape)), "{block}");
    }
    accepted(&kernel("384, 1, 1", "  wgmma.fence\n"));
    // A warp instruction only needs whole warps.
    accepted(&kernel("32, 2, 1", "  %2: i1 = elect.sync\n"));
    assert_eq!(refused(&kernel("48, 1, 1", "  %2: i1 = elect.sync\n")).2, Why::Block([48, 1, 1]));
}

#[test]
fn a_return_some_threads_take_leaves_the_rest_of_the_kernel_split() {
    let body = "  %2: i1 = cmp.eq %0, 5\n  if %2 {\n    return\n  }\n  setmaxnreg.inc 232\n";
    let (what, _, why) = refused(&kernel("128, 1, 1", body));
    assert_eq!(what, "setmaxnreg");
    assert!(matches!(why, Why::Control(Cause::Return(_))), "{why:?}");
    // A whole CTA returning leaves whole warpgroups.
    let body = "  %2: i1 = cmp.eq %n, 5\n  if %2 {\n    return\n  }\n  setmaxnreg.inc 232\n";
    accepted(&kernel("128, 1, 1", body));
}

#[test]
fn a_break_some_threads_take_splits_the_whole_loop_body() {
    // The fence comes before the `break` in the body, but later iterations run without the threads that left.
    let body = "  for $i in 0..%n step 1 {\n    wgmma.fence\n    %2: i1 = cmp.eq %1, 0\n    if %2 {\n      break\n    }\n  }\n  \
                wgmma.commit_group\n";
    let d = divergences(&kernel("128, 1, 1", body));
    assert_eq!(d.len(), 1, "{d:#?}");
    assert_eq!(d[0].what, "wgmma.fence");
    assert!(matches!(d[0].why, Why::Control(Cause::Exit(_))), "{:?}", d[0].why);
    // Loop bounds that differ between threads split the body too.
    let body = "  for $i in 0..%0 step 1 {\n    wgmma.fence\n  }\n";
    assert!(matches!(refused(&kernel("128, 1, 1", body)).2, Why::Control(Cause::LoopBounds(_))));
}

#[test]
fn warp_and_cta_collectives_have_their_own_groups() {
    // stmatrix under `thread_idx.x & 16 != 0` splits warps; under `thread_idx.x / 32 == 1` it does not.
    let split = "  %2: i32 = and %0, 16\n  %3: i1 = cmp.ne %2, 0\n  if %3 {\n    %4: ptr<shared> = offset @s, 0 x bf16\n    \
                 %5: bf16 = convert %n to bf16\n    %6: bf16x2 = compose bf16x2 [%5, %5]\n    \
                 stmatrix.x4 %4, %6, %6, %6, %6\n  }\n";
    assert_eq!(refused(&kernel("128, 1, 1", split)).1, Scope::Warp);
    let whole = "  %2: i32 = div %0, 32\n  %3: i1 = cmp.eq %2, 1\n  if %3 {\n    %4: ptr<shared> = offset @s, 0 x bf16\n    \
                 %5: bf16 = convert %n to bf16\n    %6: bf16x2 = compose bf16x2 [%5, %5]\n    \
                 stmatrix.x4 %4, %6, %6, %6, %6\n  }\n";
    accepted(&kernel("128, 1, 1", whole));
    // A CTA barrier under a warpgroup condition is still executed by part of the CTA.
    let bar = "  %2: i32 = div %0, 128\n  %3: i1 = cmp.eq %2, 0\n  if %3 {\n    barrier.cta\n  }\n";
    let (what, needs, why) = refused(&kernel("256, 1, 1", bar));
    assert_eq!((what, needs), ("bar.sync 0", Scope::Cta));
    assert!(condition(why));
}

#[test]
fn a_role_region_is_entered_by_whole_warpgroups() {
    let body = "  warpgroup producer 0..1 regs(40) {\n    %2: i1 = cmp.eq %0, 0\n    if %2 {\n      %3: i1 = elect.sync\n    }\n  }\n  \
                warpgroup consumer 1..2 regs(232) {\n    wgmma.fence\n    wgmma.commit_group\n  }\n";
    let d = divergences(&kernel("256, 1, 1", body));
    // The consumer's wgmma is fine; the producer's `elect.sync` under `tid.x == 0` is not.
    assert_eq!(d.len(), 1, "{d:#?}");
    assert_eq!((d[0].what, d[0].needs), ("elect.sync", Scope::Warp));
}

/// `if OUTER {} else { if INNER { elect.sync } }` in a block of 256 threads, with `%2` = `tid.x / 32`
/// (`warp_idx`) and `%4` = `tid.x / 128`.
fn else_if(outer: &str, inner: &str) -> String {
    kernel(
        "256, 1, 1",
        &format!(
            "  %2: i32 = div %0, 32\n  %4: i32 = div %0, 128\n  %5: i1 = {outer}\n  if %5 {{\n    $d = 1\n  }} else {{\n    \
             %6: i1 = {inner}\n    if %6 {{\n      %7: i1 = elect.sync\n    }}\n  }}\n"
        ),
    )
}

#[test]
fn an_inner_condition_that_implies_the_outer_one_keeps_whole_groups() {
    // `if thread_idx.x == 0 {..} else if warp_idx >= 1 {..}`: warps 1 and up are never thread 0, so the inner
    // branch runs whole warps even though the outer condition splits warp 0.
    accepted(&else_if("cmp.eq %0, 0", "cmp.ge %2, 1"));
    accepted(&else_if("cmp.lt %0, 40", "cmp.ge %2, 2"));
    accepted(&else_if("cmp.eq %0, 0", "cmp.eq %4, 1"));
    // A constant first: `1 <= warp_idx`.
    accepted(&else_if("cmp.eq %0, 0", "cmp.le 1, %2"));
    // In the accepting branch too: `if thread_idx.x < 64 { if warp_idx == 1 {..} }`.
    let body = "  %2: i32 = div %0, 32\n  %3: i1 = cmp.lt %0, 64\n  if %3 {\n    %4: i1 = cmp.eq %2, 1\n    if %4 {\n      \
                %5: i1 = elect.sync\n    }\n  }\n";
    accepted(&kernel("128, 1, 1", body));
}

#[test]
fn an_inner_condition_that_does_not_imply_the_outer_one_is_refused() {
    // Warp 0 is in the inner branch too, less thread 0: lanes 1 to 31 run `elect.sync`.
    let (what, needs, why) = refused(&else_if("cmp.eq %0, 0", "cmp.ge %2, 0"));
    assert_eq!((what, needs), ("elect.sync", Scope::Warp));
    assert!(condition(why), "{why:?}");
    // `thread_idx.x != 5` is not one interval of threads: nothing is implied (warp 0 less thread 5).
    assert!(condition(refused(&else_if("cmp.eq %0, 5", "cmp.eq %2, 0")).2));
    // Threads 32 to 39 take the outer branch; warp 1 is split.
    assert!(condition(refused(&else_if("cmp.lt %0, 40", "cmp.eq %2, 1")).2));
    // A loop between the two conditions: its bounds could narrow the control too, so nothing is implied.
    let body = "  %2: i32 = div %0, 32\n  %3: i1 = cmp.eq %0, 0\n  if %3 {\n    $d = 1\n  } else {\n    \
                for $i in 0..%n step 1 {\n      %4: i1 = cmp.ge %2, 1\n      if %4 {\n        %5: i1 = elect.sync\n      }\n    }\n  }\n";
    assert!(condition(refused(&kernel("128, 1, 1", body)).2));
}

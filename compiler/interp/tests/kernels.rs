//! Kernels in the IR's text form, run by the interpreter: what they compute, and the errors it reports.

use cutec_interp::{Arg, InterpError, Launch, Options, run};

fn launch(threads: u32) -> Launch {
    Launch { grid: [1, 1, 1], block: [threads, 1, 1], cluster: [1, 1, 1] }
}

fn run_text(text: &str, threads: u32, args: &mut Vec<Arg>) -> Result<(), InterpError> {
    let module = cutec_ir::parse(text).unwrap_or_else(|e| panic!("the test's IR parses: {e:?}"));
    let name = module.kernels[0].name.clone();
    run(&module, &name, launch(threads), args, Options::default()).map(drop)
}

fn f32s(bytes: &[u8]) -> Vec<f32> {
    bytes.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

fn buffer(args: &[Arg], i: usize) -> &[u8] {
    match &args[i] {
        Arg::Buffer(b) => b,
        other => panic!("argument {i} is {other:?}"),
    }
}

#[test]
fn a_while_loop_fills_with_a_stride() {
    let text = include_str!("../../ir/tests/ir/while_loop.ir");
    let mut args = vec![Arg::Buffer(vec![0xff; 4 * 300]), Arg::Scalar(300)];
    run_text(text, 128, &mut args).expect("runs");
    assert!(f32s(buffer(&args, 0)).iter().all(|&x| x == 0.0));
    // With n = 200, elements 200.. keep their poison.
    let mut args = vec![Arg::Buffer(vec![0xff; 4 * 300]), Arg::Scalar(200)];
    run_text(text, 128, &mut args).expect("runs");
    let y = f32s(buffer(&args, 0));
    assert!(y[..200].iter().all(|&x| x == 0.0) && y[200..].iter().all(|x| x.is_nan()));
}

const BFLY_SUM: &str = "kernel @warp_sum(%x: ptr<global> align(4), %y: ptr<global> align(4)) block(32, 1, 1) {
  var $v: f32
  %0: i32 = sreg tid.x
  %1: ptr<global> = offset %x, %0 x f32
  %2: f32 = load f32, %1 align(4)
  %3: f32 = shfl.bfly %2, 16
  %4: f32 = add %2, %3
  %5: f32 = shfl.bfly %4, 8
  %6: f32 = add %4, %5
  %7: f32 = shfl.bfly %6, 4
  %8: f32 = add %6, %7
  %9: f32 = shfl.bfly %8, 2
  %10: f32 = add %8, %9
  %11: f32 = shfl.bfly %10, 1
  %12: f32 = add %10, %11
  %13: ptr<global> = offset %y, %0 x f32
  store %12, %13 align(4)
}";

#[test]
fn butterfly_shuffles_sum_the_warp() {
    let x: Vec<u8> = (0..32).flat_map(|i| (i as f32).to_le_bytes()).collect();
    let mut args = vec![Arg::Buffer(x), Arg::Buffer(vec![0; 128])];
    run_text(BFLY_SUM, 32, &mut args).expect("runs");
    assert!(f32s(buffer(&args, 1)).iter().all(|&s| s == 496.0), "{:?}", f32s(buffer(&args, 1)));
}

#[test]
fn an_out_of_bounds_store_names_the_memory_and_the_offset() {
    let text = "kernel @oob(%y: ptr<global> align(4)) block(32, 1, 1) {
  %0: i32 = sreg tid.x
  %1: i32 = add %0, 1
  %2: ptr<global> = offset %y, %1 x f32
  store 1.0, %2 align(4)
}";
    let mut args = vec![Arg::Buffer(vec![0; 4 * 32])];
    match run_text(text, 32, &mut args) {
        Err(InterpError::OutOfBounds { offset, size, memory, thread, .. }) => {
            assert_eq!((offset, size), (128, 128));
            assert!(memory.contains("`y`"), "{memory}");
            assert_eq!(thread.thread, [31, 0, 0]);
        }
        other => panic!("expected an out-of-bounds error, got {other:?}"),
    }
}

#[test]
fn an_mbarrier_short_of_arrivals_is_a_deadlock() {
    let text = "kernel @short(%y: ptr<global> align(4)) block(64, 1, 1) {
  shared @bar: [1 x i64] align(8)
  %0: i32 = sreg tid.x
  %1: i1 = cmp.eq %0, 0
  if %1 {
    mbarrier.init @bar, 2
  }
  barrier.cta
  if %1 {
    mbarrier.arrive @bar
  }
  mbarrier.wait @bar, parity 0
}";
    let mut args = vec![Arg::Buffer(vec![0; 4])];
    match run_text(text, 64, &mut args) {
        Err(InterpError::Deadlock { waits }) => {
            assert_eq!(waits.len(), 1, "{waits:?}");
            assert_eq!(waits[0].threads, "threads 0..63 of block [0, 0, 0]");
            assert!(waits[0].what.contains("pending arrivals 1"), "{}", waits[0].what);
        }
        other => panic!("expected a deadlock, got {other:?}"),
    }
    // With the second arrival the wait returns.
    let fixed = text.replace("    mbarrier.arrive @bar\n", "    mbarrier.arrive @bar\n    mbarrier.arrive @bar\n");
    run_text(&fixed, 64, &mut args).expect("two arrivals complete the phase");
}

#[test]
fn a_named_barrier_counting_more_threads_than_reach_it_is_a_deadlock() {
    let text = "kernel @named(%y: ptr<global> align(4)) block(128, 1, 1) {
  %0: i32 = sreg tid.x
  %1: i1 = cmp.lt %0, 64
  if %1 {
    bar.sync 1, 128
  }
}";
    let mut args = vec![Arg::Buffer(vec![0; 4])];
    match run_text(text, 128, &mut args) {
        Err(InterpError::Deadlock { waits }) => assert!(waits[0].what.contains("named barrier 1 of 128")),
        other => panic!("expected a deadlock, got {other:?}"),
    }
    run_text(&text.replace("128\n", "64\n"), 128, &mut args).expect("64 threads of 64");
}

#[test]
fn setmaxnreg_is_checked_against_the_registers_the_thread_has() {
    // 128 threads start with 248 registers each (the register file shared evenly, at most 248).
    let text = |op: &str| format!("kernel @k(%y: ptr<global> align(4)) block(128, 1, 1) {{\n  {op}\n}}");
    let mut args = vec![Arg::Buffer(vec![0; 4])];
    run_text(&text("setmaxnreg.dec 40"), 128, &mut args).expect("fewer registers");
    // (A count that is no multiple of 8 is the validator's to refuse.)
    assert!(matches!(run_text(&text("setmaxnreg.dec 42"), 128, &mut args), Err(InterpError::Invalid { .. })));
    for wrong in ["setmaxnreg.inc 40", "setmaxnreg.dec 256"] {
        match run_text(&text(wrong), 128, &mut args) {
            Err(InterpError::Collective { message, .. }) => assert!(message.starts_with(wrong), "{message}"),
            other => panic!("{wrong}: expected an error, got {other:?}"),
        }
    }
}

#[test]
fn an_arrival_on_another_ctas_mbarrier_completes_its_phase() {
    // Each CTA's thread 0 arrives on the other CTA's barrier, then every thread waits on its own: the phase
    // completes only through the other CTA's arrival.
    let text = "kernel @k(%y: ptr<global> align(4)) block(32, 1, 1) cluster(2, 1, 1) {
  shared @bar: [1 x i64] align(8)
  %0: i32 = sreg tid.x
  %1: i1 = cmp.eq %0, 0
  %2: i32 = sreg cluster_ctarank
  %3: i32 = xor %2, 1
  if %1 {
    mbarrier.init @bar, 1
  }
  barrier.cluster
  if %1 {
    mbarrier.arrive.cluster @bar, cta TARGET
  }
  mbarrier.wait @bar, parity 0
  barrier.cluster
}";
    let module = |target: &str| cutec_ir::parse(&text.replace("TARGET", target)).unwrap_or_else(|e| panic!("{e:?}"));
    let launch = Launch { grid: [2, 1, 1], block: [32, 1, 1], cluster: [2, 1, 1] };
    let mut args = vec![Arg::Buffer(vec![0; 4])];
    run(&module("%3"), "k", launch, &mut args, Options::default()).expect("each barrier gets the other CTA's arrival");
    // Both arrive on CTA 0's barrier: CTA 0's has two arrivals for a count of one, CTA 1's none.
    match run(&module("0"), "k", launch, &mut args, Options::default()) {
        Err(InterpError::Mbarrier { message, .. }) => {
            assert!(message.contains("more arrivals than its count"), "{message}")
        }
        Err(InterpError::Deadlock { waits }) => assert!(waits.iter().any(|w| w.what.contains("pending arrivals 1"))),
        other => panic!("expected an error, got {other:?}"),
    }
}

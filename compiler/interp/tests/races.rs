//! One kernel per race class the interpreter reports (`race.rs`), each beside its fixed version, which runs
//! clean: the report is about the missing synchronisation, not the access.

use cutec_interp::{Arg, InterpError, Launch, Options, RaceKind, TensorMap, TmaSwizzle, run};

fn run_text(text: &str, threads: u32, args: &mut Vec<Arg>) -> Result<(), InterpError> {
    let module = cutec_ir::parse(text).unwrap_or_else(|e| panic!("the test's IR parses: {e:?}\n{text}"));
    let name = module.kernels[0].name.clone();
    let launch = Launch { grid: [1, 1, 1], block: [threads, 1, 1], cluster: [1, 1, 1] };
    run(&module, &name, launch, args, Options::default()).map(drop)
}

/// The race `text` must report. (The text form carries no source locations: the suite's `.cute` tests check
/// that both statements are named.)
fn expect_race(text: &str, threads: u32, args: &mut Vec<Arg>, kind: RaceKind) {
    match run_text(text, threads, args) {
        Err(InterpError::Race { kind: k, .. }) => assert_eq!(k, kind),
        other => panic!("expected a race {kind:?}, got {other:?}"),
    }
}

const WRITE_THEN_READ: &str = "kernel @k(%y: ptr<global> align(4)) block(64, 1, 1) {
  shared @s: [64 x f32] align(16)
  %0: i32 = sreg tid.x
  %1: i1 = cmp.eq %0, 0
  if %1 {
    store 1.0, @s align(4)
  }
  SYNC
  %2: f32 = load f32, @s align(4)
  %3: ptr<global> = offset %y, %0 x f32
  store %2, %3 align(4)
}";

#[test]
fn a_read_of_another_threads_write_without_a_barrier_races() {
    let mut args = vec![Arg::Buffer(vec![0; 256])];
    expect_race(&WRITE_THEN_READ.replace("  SYNC\n", ""), 64, &mut args, RaceKind::WriteRead);
    run_text(&WRITE_THEN_READ.replace("SYNC", "barrier.cta"), 64, &mut args).expect("the barrier orders them");
}

#[test]
fn two_writes_and_a_write_after_a_read_race() {
    let both_write = "kernel @k(%y: ptr<global> align(4)) block(64, 1, 1) {
  shared @s: [64 x f32] align(16)
  %0: i32 = sreg tid.x
  %1: f32 = convert %0 to f32
  store %1, @s align(4)
}";
    let mut args = vec![Arg::Buffer(vec![0; 4])];
    expect_race(both_write, 64, &mut args, RaceKind::WriteWrite);
    // Thread 0 reads first (threads run in order until they block); thread 1's write then races with it.
    let read_then_write = "kernel @k(%y: ptr<global> align(4)) block(64, 1, 1) {
  shared @s: [64 x f32] align(16)
  %0: i32 = sreg tid.x
  %1: i1 = cmp.eq %0, 0
  %2: i1 = cmp.eq %0, 1
  if %1 {
    %3: f32 = load f32, @s align(4)
    store %3, %y align(4)
  }
  if %2 {
    store 2.0, @s align(4)
  }
}";
    expect_race(read_then_write, 64, &mut args, RaceKind::ReadWrite);
}

/// A 1-D f32 tensor map over parameter `tensor`: boxes of 32 elements.
fn map(tensor: u32, len: u64) -> Arg {
    Arg::TensorMap(TensorMap {
        tensor,
        elem_bytes: 4,
        dims: vec![len],
        strides: vec![],
        box_dims: vec![32],
        element_strides: vec![1],
        swizzle: TmaSwizzle::None,
        oob_nan: false,
    })
}

const TMA_LOAD: &str = "kernel @k(%x: ptr<global> align(16), %xm: ptr<param> align(64) box(128), %y: ptr<global> align(4)) block(32, 1, 1) {
  shared @s: [32 x f32] align(128)
  shared @bar: [1 x i64] align(8)
  %0: i32 = sreg tid.x
  %1: i1 = cmp.eq %0, 0
  if %1 {
    mbarrier.init @bar, 1
    mbarrier.arrive.expect_tx @bar, 128
    tma.load @s, %xm[0], @bar
  }
  barrier.cta
  WAIT
  %2: ptr<shared> = offset @s, %0 x f32
  %3: f32 = load f32, %2 align(4)
  %4: ptr<global> = offset %y, %0 x f32
  store %3, %4 align(4)
}";

#[test]
fn a_read_of_a_tma_load_before_its_wait_races() {
    let x: Vec<u8> = (0..32).flat_map(|i| (i as f32).to_le_bytes()).collect();
    let mut args = vec![Arg::Buffer(x.clone()), map(0, 32), Arg::Buffer(vec![0; 128])];
    expect_race(&TMA_LOAD.replace("  WAIT\n", ""), 32, &mut args, RaceKind::UnfinishedAsyncWrite);
    run_text(&TMA_LOAD.replace("WAIT", "mbarrier.wait @bar, parity 0"), 32, &mut args).expect("the wait orders them");
    let Arg::Buffer(y) = &args[2] else { panic!("y is a buffer") };
    assert_eq!(y, &x, "the copy arrives");
}

const TMA_STORE: &str = "kernel @k(%y: ptr<global> align(16), %ym: ptr<param> align(64) box(128)) block(32, 1, 1) {
  shared @s: [32 x f32] align(128)
  %0: i32 = sreg tid.x
  %1: ptr<shared> = offset @s, %0 x f32
  store 3.0, %1 align(4)
  FENCE
  barrier.cta
  %2: i1 = cmp.eq %0, 0
  if %2 {
    tma.store %ym[0], @s
    bulk.commit_group
    REWRITE
    bulk.wait_group.read 0
  }
}";

#[test]
fn the_async_proxy_reading_an_unfenced_write_races() {
    let mut args = vec![Arg::Buffer(vec![0; 128]), map(0, 32)];
    let unfenced = TMA_STORE.replace("  FENCE\n", "").replace("    REWRITE\n", "");
    expect_race(&unfenced, 32, &mut args, RaceKind::MissingProxyFence);
    let fenced = TMA_STORE.replace("FENCE", "fence.proxy.async").replace("    REWRITE\n", "");
    run_text(&fenced, 32, &mut args).expect("the fence covers every thread's write through the barrier");
    let Arg::Buffer(y) = &args[0] else { panic!("y is a buffer") };
    assert!(y.chunks_exact(4).all(|c| c == 3.0f32.to_le_bytes()), "the store arrives");
}

#[test]
fn a_write_to_a_tma_stores_source_before_its_wait_races() {
    let mut args = vec![Arg::Buffer(vec![0; 128]), map(0, 32)];
    let early = TMA_STORE.replace("FENCE", "fence.proxy.async").replace("REWRITE", "store 4.0, @s align(4)");
    expect_race(&early, 32, &mut args, RaceKind::InFlightRead);
    let late = TMA_STORE
        .replace("FENCE", "fence.proxy.async")
        .replace("    REWRITE\n", "")
        .replace("    bulk.wait_group.read 0\n", "    bulk.wait_group.read 0\n    store 4.0, @s align(4)\n");
    run_text(&late, 32, &mut args).expect("after the wait the source may be reused");
}

/// A wait for the wrong parity: when the copy lands at once the phase it waits for never comes (a deadlock);
/// when the copy lands late the wait returns at once (the "preceding phase"), before the data (a race).
#[test]
fn a_wait_for_the_wrong_parity_is_caught_under_both_schedules() {
    let text = TMA_LOAD.replace("WAIT", "mbarrier.wait @bar, parity 1");
    let module = cutec_ir::parse(&text).expect("parses");
    let launch = Launch { grid: [1, 1, 1], block: [32, 1, 1], cluster: [1, 1, 1] };
    let args = || vec![Arg::Buffer(vec![0; 128]), map(0, 32), Arg::Buffer(vec![0; 128])];
    let run_with = |schedule| {
        let options = Options { schedule, ..Options::default() };
        run(&module, "k", launch, &mut args(), options).map(drop)
    };
    assert!(matches!(run_with(cutec_interp::Schedule::Earliest), Err(InterpError::Deadlock { .. })));
    match run_with(cutec_interp::Schedule::Latest) {
        Err(InterpError::Race { kind, .. }) => assert_eq!(kind, RaceKind::UnfinishedAsyncWrite),
        other => panic!("expected a race, got {other:?}"),
    }
    // The right parity runs clean under every schedule.
    let right = cutec_ir::parse(&TMA_LOAD.replace("WAIT", "mbarrier.wait @bar, parity 0")).expect("parses");
    for schedule in
        [cutec_interp::Schedule::Earliest, cutec_interp::Schedule::Latest, cutec_interp::Schedule::Seeded(1)]
    {
        let options = Options { schedule, ..Options::default() };
        run(&right, "k", launch, &mut args(), options).expect("runs");
    }
}

/// One wgmma group, then the accumulator read back and stored: before its `wgmma.wait_group` the read is an
/// access to a register the tensor cores may still write.
const WGMMA_THEN_READ: &str = "kernel @k(%y: ptr<global> align(4)) block(128, 1, 1) {
  shared @a: [4096 x bf16] align(1024)
  shared @b: [1024 x bf16] align(1024)
  local @acc: [4 x f32] align(16)
  %0: i32 = sreg tid.x
  wgmma.fence
  wgmma.mma_async m64n8k16.bf16 @acc, @a desc(sw128, lbo 16, sbo 1024, k), @b desc(sw128, lbo 16, sbo 1024, k), scale_d false
  wgmma.commit_group
  WAIT
  %1: f32 = load f32, @acc align(4)
  %2: ptr<global> = offset %y, %0 x f32
  store %1, %2 align(4)
}";

#[test]
fn reading_an_accumulator_before_its_wgmma_wait_is_reported() {
    let mut args = vec![Arg::Buffer(vec![0xff; 4 * 128])];
    expect_race(&WGMMA_THEN_READ.replace("  WAIT\n", ""), 128, &mut args, RaceKind::InFlightRegister);
    run_text(&WGMMA_THEN_READ.replace("WAIT", "wgmma.wait_group 0"), 128, &mut args).expect("after the wait");
    // Zero operands (shared memory starts zeroed here) and scale_d false: the accumulator is 0.
    let Arg::Buffer(y) = &args[0] else { panic!("y is a buffer") };
    assert!(y.iter().all(|&b| b == 0));
}

/// Two blocks (clusters of one) writing the same element of global memory: nothing can order them.
#[test]
fn blocks_writing_the_same_global_element_race() {
    let text = "kernel @k(%y: ptr<global> align(4)) block(32, 1, 1) {
  %0: i32 = sreg tid.x
  %1: i32 = sreg ctaid.x
  %2: i32 = INDEX
  %3: ptr<global> = offset %y, %2 x f32
  store 1.0, %3 align(4)
}";
    let module = |index: &str| cutec_ir::parse(&text.replace("INDEX", index)).expect("parses");
    let launch = Launch { grid: [2, 1, 1], block: [32, 1, 1], cluster: [1, 1, 1] };
    // Element tid.x of each block: both blocks write elements 0..31.
    let mut args = vec![Arg::Buffer(vec![0; 4 * 64])];
    match run(&module("add %0, 0"), "k", launch, &mut args, Options::default()) {
        Err(InterpError::GlobalRace { memory, offset, thread, .. }) => {
            assert!(memory.contains("`y`"), "{memory}");
            assert_eq!((offset, thread.block), (0, [1, 0, 0]));
        }
        other => panic!("expected a race between blocks, got {other:?}"),
    }
    // Element 32 * ctaid.x + tid.x: disjoint.
    let text_disjoint = text.replace("  %2: i32 = INDEX\n", "  %4: i32 = mul %1, 32\n  %2: i32 = add %4, %0\n");
    let m = cutec_ir::parse(&text_disjoint).expect("parses");
    run(&m, "k", launch, &mut args, Options::default()).expect("each block its own elements");
}

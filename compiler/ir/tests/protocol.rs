//! The protocol check (`analysis/protocol`, `check-protocol`) on IR text: the examples' kernels as the pipeline
//! leaves them are proved, and small rings with one mistake each are refused with the right code, place and
//! trace.

use cutec_ir::analysis::protocol::{Kind, Outcome, ProtocolError, analyse};

fn outcome(text: &str) -> Outcome {
    let module = cutec_ir::parse(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let info = cutec_ir::validate(&module).unwrap_or_else(|e| panic!("{e}\n{text}"));
    analyse(&module.kernels[0], &info.kernels[0])
}

fn proved(text: &str) -> (usize, u64) {
    match outcome(text) {
        Outcome::Passed { runs, work } => (runs, work),
        other => panic!("expected a proof, got {other:?}\n{text}"),
    }
}

fn failed(text: &str) -> ProtocolError {
    match outcome(text) {
        Outcome::Failed(e) => *e,
        other => panic!("expected a protocol error, got {other:?}\n{text}"),
    }
}

/// A two-stage ring over `%K` k-tiles in a block of two warps: thread 0 produces (waits for a free stage,
/// expects the box's bytes, loads), warp 1 consumes (waits for the bytes; once the warp has synchronised, its
/// lane 0 releases the stage for all of it). The
/// arguments replace one piece each: the empty barriers' init count, the consumer's parity, the bytes expected,
/// the release.
fn ring(empty_count: u32, parity: &str, bytes: u32, release: &str) -> String {
    format!(
        "kernel @ring(%K: i32, %map: ptr<param> align(64) noalias readonly box(1024)) block(64, 1, 1) {{
  shared @buf: [512 x f32] align(128)
  shared @full: [2 x i64] align(8)
  shared @empty: [2 x i64] align(8)
  var $s: i32
  var $k: i32
  var $j: i32
  %0: i32 = sreg tid.x
  %1: i1 = cmp.eq %0, 0
  if %1 {{
    for $s in 0..2 step 1 {{
      %2: i32 = read $s
      %3: ptr<shared> = offset @full, %2 x i64
      mbarrier.init %3, 1
      %4: ptr<shared> = offset @empty, %2 x i64
      mbarrier.init %4, {empty_count}
    }}
    fence.mbarrier_init
  }}
  barrier.cta
  %5: i1 = cmp.lt %0, 32
  if %5 {{
    if %1 {{
      for $k in 0..%K step 1 {{
        %6: i32 = read $k
        %7: i32 = rem %6, 2
        %8: i32 = div %6, 2
        %9: i32 = add %8, 1
        %10: i32 = and %9, 1
        %11: ptr<shared> = offset @empty, %7 x i64
        mbarrier.wait %11, parity %10
        %12: ptr<shared> = offset @full, %7 x i64
        mbarrier.arrive.expect_tx %12, {bytes}
        %13: i32 = mul %7, 256
        %14: ptr<shared> = offset @buf, %13 x f32
        %15: i32 = mul %6, 256
        tma.load %14, %map[%15], %12
      }}
    }}
  }} else {{
    for $j in 0..%K step 1 {{
      %16: i32 = read $j
      %17: i32 = rem %16, 2
      %18: i32 = div %16, 2
      %19: i32 = {parity}
      %20: ptr<shared> = offset @full, %17 x i64
      mbarrier.wait %20, parity %19
      bar.sync 1, 32
      %21: i32 = and %0, 31
      %22: i1 = cmp.eq %21, 0
      if %22 {{
        %23: ptr<shared> = offset @empty, %17 x i64
        {release}
      }}
    }}
  }}
}}
"
    )
}

const PARITY: &str = "and %18, 1";
const RELEASE: &str = "mbarrier.arrive %23";

#[test]
fn the_ring_is_proved_for_every_trip_count_up_to_2s_plus_1() {
    let (runs, work) = proved(&ring(1, PARITY, 1024, RELEASE));
    // K takes 5 values (1..=5 k-tiles), each under two schedules.
    assert_eq!(runs, 10);
    assert!(work < 20_000, "{work} steps");
}

#[test]
fn a_lane_that_releases_for_its_warp_without_synchronising_it_is_refused() {
    // Without the warp's barrier, lane 0 may release stage 0 twice while lanes 1..31 still wait for its first
    // phase: the producer refills it twice and their wait sees the same parity again (triton#10035).
    let e = failed(&ring(1, PARITY, 1024, RELEASE).replace("      bar.sync 1, 32\n", ""));
    assert_eq!(e.kind, Kind::Parity, "{e:?}");
    assert!(e.message.contains("already in phase 2, of the same parity"), "{}", e.message);
    assert!(e.trace[1].contains("threads 33..=63"), "{:?}", e.trace);
}

#[test]
fn a_lane_elected_by_elect_sync_releases_for_its_converged_warp() {
    // `elect.sync` converges the warp before one lane arrives: the release the scheduling passes write. (The
    // check once lost the elected lane's value when the warp had to converge first, and gave up.)
    let text = ring(1, PARITY, 1024, RELEASE)
        .replace("      bar.sync 1, 32\n", "")
        .replace("%22: i1 = cmp.eq %21, 0", "%22: i1 = elect.sync");
    assert!(text.contains("elect.sync"));
    let (runs, _) = proved(&text);
    assert_eq!(runs, 10);
}

#[test]
fn an_init_count_above_the_arrivals_deadlocks_at_the_producers_wait() {
    let e = failed(&ring(2, PARITY, 1024, RELEASE));
    assert_eq!(e.kind, Kind::Deadlock);
    assert!(e.message.contains("phase 0 of @empty[0] has 1 of its 2 arrivals"), "{}", e.message);
    // The first K that shows it: the producer's third k-tile waits for the first release.
    assert!(e.trace[0].contains("K = 3"), "{:?}", e.trace);
    assert!(e.trace[1].contains("thread 0"), "{:?}", e.trace);
}

#[test]
fn a_missing_release_deadlocks() {
    let e = failed(&ring(1, PARITY, 1024, "fence.proxy.async"));
    assert_eq!(e.kind, Kind::Deadlock);
    assert!(e.message.contains("0 of its 1 arrivals"), "{}", e.message);
}

#[test]
fn a_consumer_parity_off_by_one_is_refused() {
    // (j / 2 + 1) & 1: the consumer waits for the phase before the first, which returns at once.
    let e = failed(&ring(1, "xor %18, 1", 1024, RELEASE));
    assert_eq!(e.kind, Kind::Parity, "{e:?}");
}

#[test]
fn expect_tx_below_the_box_is_refused() {
    let e = failed(&ring(1, PARITY, 512, RELEASE));
    assert_eq!(e.kind, Kind::Bytes, "{e:?}");
}

#[test]
fn expect_tx_above_the_box_never_completes() {
    let e = failed(&ring(1, PARITY, 2048, RELEASE));
    assert_eq!(e.kind, Kind::Bytes, "{e:?}");
    assert!(e.message.contains("expects 2048 bytes"), "{}", e.message);
    assert!(e.message.contains("deliver 1024"), "{}", e.message);
}

#[test]
fn an_unknown_box_or_a_loaded_bound_skips_the_check() {
    let text = ring(2, PARITY, 1024, RELEASE).replace(" box(1024)", "");
    assert!(matches!(outcome(&text), Outcome::Skipped(_)));
    let text = ring(2, PARITY, 1024, RELEASE)
        .replace("(%K: i32,", "(%K: i32, %p: ptr<global> align(4),")
        .replace("  %0: i32 = sreg tid.x\n", "  %0: i32 = sreg tid.x\n  %99: i32 = load i32, %p align(4)\n")
        .replace("for $k in 0..%K", "for $k in 0..%99");
    assert!(matches!(outcome(&text), Outcome::Skipped(_)), "{:?}", outcome(&text));
}

/// Two CTAs each multicast their half of a stage to both and release the stage in both CTAs; `end` is what
/// follows the loops (a cluster barrier, or nothing).
fn cluster_ring(end: &str, mask: &str) -> String {
    format!(
        "kernel @pair(%K: i32, %map: ptr<param> align(64) noalias readonly box(512)) block(64, 1, 1) cluster(2, 1, 1) {{
  shared @buf: [512 x f32] align(128)
  shared @full: [2 x i64] align(8)
  shared @empty: [2 x i64] align(8)
  var $s: i32
  var $k: i32
  var $j: i32
  %0: i32 = sreg tid.x
  %30: i32 = sreg cluster_ctarank
  %1: i1 = cmp.eq %0, 0
  if %1 {{
    for $s in 0..2 step 1 {{
      %2: i32 = read $s
      %3: ptr<shared> = offset @full, %2 x i64
      mbarrier.init %3, 1
      %4: ptr<shared> = offset @empty, %2 x i64
      mbarrier.init %4, 2
    }}
    fence.mbarrier_init
  }}
  barrier.cluster
  %5: i1 = cmp.lt %0, 32
  if %5 {{
    if %1 {{
      for $k in 0..%K step 1 {{
        %6: i32 = read $k
        %7: i32 = rem %6, 2
        %8: i32 = div %6, 2
        %9: i32 = add %8, 1
        %10: i32 = and %9, 1
        %11: ptr<shared> = offset @empty, %7 x i64
        mbarrier.wait %11, parity %10
        %12: ptr<shared> = offset @full, %7 x i64
        mbarrier.arrive.expect_tx %12, 1024
        %13: i32 = mul %7, 256
        %31: i32 = mul %30, 128
        %32: i32 = add %13, %31
        %14: ptr<shared> = offset @buf, %32 x f32
        %15: i32 = mul %6, 256
        tma.load %14, %map[%15], %12 multicast {mask}
      }}
    }}
  }} else {{
    for $j in 0..%K step 1 {{
      %16: i32 = read $j
      %17: i32 = rem %16, 2
      %18: i32 = div %16, 2
      %19: i32 = and %18, 1
      %20: ptr<shared> = offset @full, %17 x i64
      mbarrier.wait %20, parity %19
      bar.sync 1, 32
      %21: i32 = and %0, 31
      %22: i1 = cmp.eq %21, 0
      if %22 {{
        %23: ptr<shared> = offset @empty, %17 x i64
        mbarrier.arrive.cluster %23, cta 0
        mbarrier.arrive.cluster %23, cta 1
      }}
    }}
  }}
{end}}}
"
    )
}

#[test]
fn a_cluster_ring_that_ends_with_a_cluster_barrier_is_proved() {
    let (runs, _) = proved(&cluster_ring("  barrier.cluster\n", "3"));
    assert_eq!(runs, 10);
}

#[test]
fn a_cta_that_exits_while_its_peer_still_arrives_is_refused() {
    let e = failed(&cluster_ring("", "3"));
    assert_eq!(e.kind, Kind::Exit, "{e:?}");
    assert!(e.message.contains("has exited"), "{}", e.message);
}

#[test]
fn a_multicast_that_leaves_out_a_cta_starves_its_wait() {
    // Mask 1: CTA 1 expects 1024 bytes a stage but gets only its own... none: both halves go to CTA 0.
    let e = failed(&cluster_ring("  barrier.cluster\n", "1"));
    assert_eq!(e.kind, Kind::Bytes, "{e:?}");
}

fn fixture(name: &str) -> String {
    let path = format!("{}/tests/ir/protocol/{name}.ir", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn the_examples_are_proved() {
    // The IR the pipeline leaves for the examples (`cutec build --dump-after check-operands`).
    for (name, min_runs) in [
        ("gemm_sm90_manual", 40),
        ("gemm_sm90_manual_cluster1", 40),
        ("tma_copy", 2),
        ("tma_copy_batched", 2),
        ("dsmem_exchange", 2),
    ] {
        let (runs, work) = proved(&fixture(name));
        assert!(runs >= min_runs, "{name}: {runs} runs");
        eprintln!("{name}: {runs} runs, {work} steps");
    }
}

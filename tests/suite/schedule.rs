//! The schedules the passes write from the plain loops of `examples/gemm_sm90.cute` and
//! `examples/gemm_pipelined.cute`: the scheduled IR is pinned, and the warp-specialized one has the protocol of
//! the hand-written `examples/gemm_sm90_manual.cute`: per k-tile, the same operations in each role; the loop
//! over tiles `persistent` writes is the one `examples/gemm_sm90_persistent.cute` writes by hand.

use cutec::build::{BuildOptions, build_source};
use cutec_ir::{Block, Module, Op, RoleRegion, Stmt};
use std::collections::BTreeMap;

fn build(example: &str, defines: &[(&str, i64)]) -> cutec::build::Artifacts {
    let path = cutec_tests::repo_root().join(format!("examples/{example}.cute"));
    let src = std::fs::read_to_string(&path).expect("example is readable");
    let opts = BuildOptions {
        defines: defines.iter().map(|(n, v)| (n.to_string(), (*v).into())).collect(),
        module_file: format!("{example}.ptx"),
        ..BuildOptions::default()
    };
    match build_source(&format!("examples/{example}.cute"), &src, &opts) {
        Ok((_, art)) => art,
        Err(f) => panic!("{example} does not build:\n{}", cutec_diagnostics::render_plain(&f.map, &f.diagnostics)),
    }
}

fn scheduled(example: &str, defines: &[(&str, i64)]) -> Module {
    let art = build(example, defines);
    assert!(art.warnings.is_empty(), "{example}: {:?}", art.warnings);
    let text = art.ir_scheduled();
    cutec_ir::parse(&text).unwrap_or_else(|e| panic!("{example}: {e}\n{text}"))
}

#[test]
fn the_scheduled_gemms_are_pinned() {
    // Narrow tiles keep the text short; the schedule is the same for any BN.
    for example in ["gemm_sm90", "gemm_pipelined"] {
        let art = build(example, &[("BN", 64)]);
        insta::assert_snapshot!(format!("{example}.sched.ir"), art.ir_scheduled());
    }
}

/// The operations of the innermost loop of each role (`None`: outside roles), by name; remote arrivals count
/// as arrivals (the hand-written kernel arrives on each CTA of its cluster, here of one).
fn per_iteration(module: &Module) -> BTreeMap<String, BTreeMap<String, usize>> {
    fn innermost(b: &Block, out: &mut Vec<Block>) {
        for s in b.stmts() {
            if let Stmt::For { body, .. } = s {
                let mut deeper = false;
                body.visit(&mut |x| deeper |= matches!(x, Stmt::For { .. }));
                if deeper { innermost(body, out) } else { out.push(body.clone()) }
            } else {
                for inner in s.blocks() {
                    innermost(inner, out);
                }
            }
        }
    }
    let kernel = &module.kernels[0];
    let mut roles = BTreeMap::new();
    let regions = kernel.body.stmts().iter().filter_map(|s| if let Stmt::Roles(r) = s { Some(r) } else { None });
    for RoleRegion { role, body, .. } in regions.flatten() {
        let mut loops = Vec::new();
        innermost(body, &mut loops);
        // The k-loop: the innermost loop with a TMA load or a wgmma.
        let mut counts = BTreeMap::new();
        for l in loops {
            let mut ops = BTreeMap::new();
            l.visit(&mut |x| {
                if let Stmt::Op { op, .. } = x {
                    let name = match op {
                        Op::MbarrierArriveRemote { .. } => "mbarrier.arrive",
                        o => o.name(),
                    };
                    *ops.entry(name.to_string()).or_insert(0) += 1;
                }
            });
            if ops.contains_key("tma.load") || ops.contains_key("wgmma.mma_async") {
                counts = ops;
            }
        }
        roles.insert(role.kind.name().to_string(), counts);
    }
    roles
}

#[test]
fn the_warp_specialized_schedule_has_the_hand_written_protocol() {
    let ours = scheduled("gemm_sm90", &[("BN", 256), ("STAGES", 3)]);
    let theirs = scheduled("gemm_sm90_manual", &[("BN", 256), ("STAGES", 3), ("CLUSTER_M", 2)]);
    let (a, b) = (per_iteration(&ours), per_iteration(&theirs));
    assert_eq!(a.keys().collect::<Vec<_>>(), vec!["consumer", "producer"], "{a:?}");
    assert_eq!(a, b, "per k-tile, in each role: scheduled {a:#?}\nby hand {b:#?}");
    // The same ring: stages, barrier counts and bytes.
    let inits = |m: &Module| {
        let mut v = Vec::new();
        m.kernels[0].body.visit(&mut |s| {
            if let Stmt::Op { op: Op::MbarrierInit { .. }, .. } = s {
                v.push(());
            }
        });
        v.len()
    };
    assert_eq!(inits(&ours), 2 * 3, "a full and an empty barrier per stage");
    // The pass declares the ring it wrote: its depth, its tiles and barriers, its filler and release.
    let k = &ours.kernels[0];
    let rings: Vec<&cutec_ir::Ring> = k.rings.iter().map(|(_, r)| r).collect();
    assert_eq!(rings.len(), 1, "one ring");
    let ring = rings[0];
    assert_eq!((ring.stages, ring.tiles.len()), (3, 2), "three stages of A's and B's tiles");
    assert_eq!((ring.filler, ring.release), (cutec_ir::Filler::Producer, cutec_ir::Release::AfterGroup));
    let barrier = |b| k.barriers.get(b).map(|b| b.kind);
    assert!(matches!(barrier(ring.full), Some(cutec_ir::BarrierKind::Mbarrier { arrivals: 1, bytes: 49152, .. })));
    // One arrival per consumer warp of both CTAs of the cluster (B is multicast).
    assert!(matches!(barrier(ring.empty), Some(cutec_ir::BarrierKind::Mbarrier { arrivals: 16, bytes: 0, .. })));
    // The hand-written kernel declares no ring: its rings are the program's.
    assert_eq!(theirs.kernels[0].rings.len(), 0);
    let text = cutec_ir::print(&ours);
    assert!(text.contains("mbarrier.arrive.expect_tx") && text.contains(", 49152"), "the bytes of A's and B's boxes");
    assert!(text.contains("warpgroup producer 0..1 regs(40)") && text.contains("warpgroup consumer 1..3 regs(232)"));
}

#[test]
fn a_loop_over_tiles_runs_in_both_roles_with_a_shared_ring() {
    // The loop over tiles written by hand, and the one `persistent(raster = grouped(8))` writes.
    for example in ["gemm_sm90_persistent", "gemm_sm90"] {
        a_loop_over_tiles_in_both_roles(&scheduled(example, &[("BN", 64)]));
    }
    // Both have the same protocol per k-tile in each role.
    let (explicit, attribute) = (scheduled("gemm_sm90_persistent", &[]), scheduled("gemm_sm90", &[]));
    assert_eq!(per_iteration(&explicit), per_iteration(&attribute));
}

fn a_loop_over_tiles_in_both_roles(m: &Module) {
    let kernel = &m.kernels[0];
    // One role chain: the producer's region and the consumers', entered once by every warp.
    let chains: Vec<&Vec<RoleRegion>> =
        kernel.body.stmts().iter().filter_map(|s| if let Stmt::Roles(r) = s { Some(r) } else { None }).collect();
    assert_eq!(chains.len(), 1, "one role chain");
    let regions: Vec<(&str, &Block)> = chains[0].iter().map(|r| (r.role.kind.name(), &r.body)).collect();
    assert_eq!(regions.iter().map(|(n, _)| *n).collect::<Vec<_>>(), vec!["producer", "consumer"]);
    // Each role loops over the tiles: its region's top level is that loop (after the values it computes).
    for (name, body) in &regions {
        let loops = body.stmts().iter().filter(|s| matches!(s, Stmt::For { .. })).count();
        assert_eq!(loops, 1, "{name}: one loop over tiles at the region's top level");
    }
    let ops = |b: &Block| {
        let mut names = Vec::new();
        b.visit(&mut |s| {
            if let Stmt::Op { op, .. } = s {
                names.push(op.name());
            }
        });
        names
    };
    let (producer, consumer) = (ops(regions[0].1), ops(regions[1].1));
    assert!(producer.contains(&"tma.load") && !producer.contains(&"wgmma.mma_async"));
    assert!(consumer.contains(&"wgmma.mma_async") && !consumer.contains(&"tma.load"));
    // B is shared by the cluster's two CTAs: stages are released in both, and cluster barriers open and close
    // the kernel.
    assert_eq!(consumer.iter().filter(|n| **n == "mbarrier.arrive.cluster").count(), 4, "{consumer:?}");
    let top: Vec<&str> = kernel
        .body
        .stmts()
        .iter()
        .filter_map(|s| match s {
            Stmt::Op { op, .. } => Some(op.name()),
            _ => None,
        })
        .collect();
    assert_eq!(top.iter().filter(|n| **n == "barrier.cluster").count(), 2, "{top:?}");
}

/// B stored K x N: the plain loop of `examples/gemm_kn.cute` gets gemm_sm90's schedule, its B tile (256 columns
/// of N, MN-major) loaded in boxes of 64 columns, each CTA of the cluster multicasting its two.
#[test]
fn the_k_by_n_gemm_has_the_k_major_schedule_with_b_in_boxes() {
    let (kn, km) = (scheduled("gemm_kn", &[]), scheduled("gemm_sm90", &[]));
    let (mut a, b) = (per_iteration(&kn), per_iteration(&km));
    // Per k-tile, the producer issues one copy of A and two boxes of B where gemm_sm90 issues one copy of each.
    let loads = a.get_mut("producer").and_then(|p| p.get_mut("tma.load")).expect("the producer's copies");
    assert_eq!(*loads, 3);
    *loads = 2;
    assert_eq!(a, b, "per k-tile, in each role: K x N {a:#?}\nK-major {b:#?}");
    // The same bytes per stage: 128 x 64 of A and 256 x 64 of B.
    let text = cutec_ir::print(&kn);
    assert!(text.contains("mbarrier.arrive.expect_tx") && text.contains(", 49152"), "the bytes of A's and B's boxes");
    // wgmma reads B N-major: its descriptor's leading byte offset is the distance between two 64-column slices.
    assert!(text.contains("desc(sw128, lbo 8192, sbo 1024, mn)"), "B's MN-major descriptor");
    // 128 x 128 tiles without clusters: two boxes of B, at the two halves of its stage.
    let art = build("gemm_kn", &[("BN", 128), ("CLUSTER_M", 1)]);
    insta::assert_snapshot!("gemm_kn.sched.ir", art.ir_scheduled());
}

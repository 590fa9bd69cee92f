//! Hopper's operations written by hand: the tensor maps the lowering derives for TMA copies, the descriptors of
//! wgmma operands, and what each refuses.

use crate::lower::{example, lowered_and_optimized};
use cutec_ir::{AddrSpace, GmmaSwizzle, Op, Stmt, Type};
use cutec_manifest::{TensorMapParam, TmaSwizzle};

fn ops(k: &cutec_ir::Kernel) -> Vec<Op> {
    let mut v = Vec::new();
    k.body.visit(&mut |s| {
        if let Stmt::Op { op, .. } = s {
            v.push(op.clone());
        }
    });
    v
}

fn maps(k: &cutec_ir::Kernel) -> Vec<TensorMapParam> {
    k.interface.as_ref().expect("a manifest entry").tensor_maps.clone()
}

#[test]
fn tma_copy_derives_one_map_per_tensor_with_the_contiguous_mode_first() {
    let (module, _) = lowered_and_optimized(&example("tma_copy.cute"), "tma_copy", &[]);
    let k = &module.kernels[0];
    let maps = maps(k);
    assert_eq!(maps.len(), 2, "{maps:?}");
    for (m, tensor) in maps.iter().zip(["x", "y"]) {
        assert_eq!(m.tensor, tensor);
        assert_eq!(m.name, format!("{tensor}_tma0"));
        // (M, N):(N, 1): N is contiguous, so TMA dimension 0 is mode 1; the box is the (32, 256) tile.
        assert_eq!(m.modes, [1, 0]);
        assert_eq!(m.box_shape, [256, 32]);
        assert_eq!(m.swizzle, TmaSwizzle::None);
    }
    // The maps are parameters after the dims, in parameter space.
    let names: Vec<_> = k.params.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["x", "y", "M", "N", "x_tma0", "y_tma0"]);
    assert!(k.params[4..].iter().all(|p| p.ty == Type::Ptr(AddrSpace::Param)));
    // x is only read and y only written, through the maps.
    let iface = k.interface.as_ref().expect("a manifest entry");
    let access: Vec<_> = iface
        .params
        .iter()
        .map(|p| match p {
            cutec_manifest::Param::Tensor(t) => (t.access, t.align_bytes),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(access, [(cutec_manifest::Access::Read, 16), (cutec_manifest::Access::Write, 16)]);
    let ops = ops(k);
    let count = |f: &dyn Fn(&Op) -> bool| ops.iter().filter(|o| f(o)).count();
    assert_eq!(count(&|o| matches!(o, Op::TmaLoad { coords, .. } if coords.len() == 2)), 1);
    assert_eq!(count(&|o| matches!(o, Op::TmaStore { coords, .. } if coords.len() == 2)), 1);
    assert_eq!(count(&|o| matches!(o, Op::BulkWait { pending: 0, read: true })), 1);
    assert_eq!(count(&|o| matches!(o, Op::FenceMbarrierInit)), 1, "the init is followed by its fence");
}

#[test]
fn the_gemm_ring_is_128_byte_swizzled_aligned_and_dynamic() {
    let (module, _) = lowered_and_optimized(&example("gemm_sm90_manual.cute"), "gemm_sm90_manual", &[]);
    let k = &module.kernels[0];
    let maps = maps(k);
    let boxes: Vec<_> =
        maps.iter().map(|m| (m.tensor.as_str(), m.modes.clone(), m.box_shape.clone(), m.swizzle)).collect();
    assert_eq!(
        boxes,
        [
            ("a", vec![1, 0], vec![64, 128], TmaSwizzle::B128),
            // Each CTA of a cluster of two loads half of B's 256 rows and multicasts it.
            ("b", vec![1, 0], vec![64, 128], TmaSwizzle::B128),
            // The epilogue stores C 64 columns (one 128-byte swizzle row) at a time.
            ("c", vec![1, 0], vec![64, 64], TmaSwizzle::B128),
        ]
    );
    // The swizzled tiles are aligned to the swizzle's period; 196 KiB of shared memory is dynamic.
    let aligns: Vec<_> = k
        .allocs
        .iter()
        .filter(|(_, a)| a.space == AddrSpace::Shared)
        .map(|(_, a)| (a.name.as_str(), a.align))
        .collect();
    assert_eq!(aligns[..2], [("sa", 1024), ("sb", 1024)]);
    assert!(k.shared_is_dynamic());
    // Four k-steps of m64n256k16 per stage, K-major with a 128-byte swizzle: SBO is 8 rows of 128 bytes.
    let ops = ops(k);
    let wgmmas: Vec<_> = ops
        .iter()
        .filter_map(|o| match o {
            Op::Wgmma { shape, a_desc, b_desc, .. } => Some((shape.n, *a_desc, *b_desc)),
            _ => None,
        })
        .collect();
    assert_eq!(wgmmas.len(), 4);
    for (n, a, b) in wgmmas {
        assert_eq!(n, 256);
        for d in [a, b] {
            assert_eq!((d.swizzle, d.sbo, d.mn_major), (GmmaSwizzle::B128, 1024, false));
        }
    }
    assert!(ops.iter().any(|o| matches!(o, Op::TmaLoad { multicast: Some(_), .. })));
    assert!(ops.iter().any(|o| matches!(o, Op::MbarrierArriveRemote { .. })));
    assert_eq!(ops.iter().filter(|o| matches!(o, Op::ClusterBarrier)).count(), 2);
    assert_eq!(k.cluster, Some([2, 1, 1]));
    let iface = k.interface.as_ref().expect("a manifest entry");
    assert_eq!(iface.launch.cluster.as_ref().map(Vec::len), Some(2));
    // The registers are the roles' (`roles.rs` checks their regions), set where each region starts.
    let mut budgets = Vec::new();
    k.body.visit(&mut |s| {
        if let Stmt::Warpgroup { regs, .. } = s {
            budgets.push(*regs);
        }
    });
    assert_eq!(budgets, [Some(40), Some(232)]);
}

#[test]
fn a_batched_argument_gets_a_box_of_one_along_its_batch_mode() {
    let src = "kernel k(x: Tensor<bf16, (B, M, K):(BS, K, 1), gmem>) launch(grid = (1), block = (32)) {
    let s = make_tensor<bf16, smem>(tile_to_shape(SW64_K<bf16>, (16, 32)));
    let bar = make_tensor<u64, smem>(1);
    if elect_one() && thread_idx.x < 32 {
        mbarrier_init(bar[0], 1);
        mbarrier_arrive_expect_tx(bar[0], 16 * 32 * 2);
        tma_load(local_tile(x, (1, 16, 32), (block_idx.x, 2, 1))[0, _, _], s, bar = bar[0]);
        mbarrier_wait(bar[0], 0);
    }
}";
    let (module, text) = lowered_and_optimized(src, "k", &[]);
    let m = &maps(&module.kernels[0])[0];
    assert_eq!(
        (m.modes.clone(), m.box_shape.clone(), m.swizzle),
        (vec![2, 1, 0], vec![32, 16, 1], TmaSwizzle::B64),
        "{text}"
    );
    let coords = ops(&module.kernels[0]).into_iter().find_map(|o| match o {
        Op::TmaLoad { coords, .. } => Some(coords.len()),
        _ => None,
    });
    assert_eq!(coords, Some(3));
}

#[test]
fn cluster_words_lower_to_cluster_operations_and_round_trip() {
    let src = "kernel k(x: Tensor<f32, N:1, gmem>) launch(grid = (2), block = (32), cluster = (2)) {
    let bars = make_tensor<u64, smem>(1);
    if thread_idx.x == 0 {
        mbarrier_init(bars[0], 2);
    }
    cluster_sync();
    if thread_idx.x == 0 {
        mbarrier_arrive(bars[0], cta = 1 - block_rank_in_cluster); // the other CTA's barrier
        mbarrier_arrive(bars[0]);
        mbarrier_wait(bars[0], 0);
    }
    cluster_sync();
}";
    let (module, text) = lowered_and_optimized(src, "k", &[]);
    let k = &module.kernels[0];
    assert_eq!(k.cluster, Some([2, 1, 1]));
    let ops = ops(k);
    assert_eq!(ops.iter().filter(|o| matches!(o, Op::ClusterBarrier)).count(), 2, "{text}");
    assert_eq!(ops.iter().filter(|o| matches!(o, Op::MbarrierArriveRemote { .. })).count(), 1, "{text}");
    assert!(text.contains("sreg cluster_ctarank"), "{text}");
    let again = cutec_ir::print(&cutec_ir::parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}")));
    assert_eq!(again, text);
}

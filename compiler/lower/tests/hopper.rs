//! Hopper's operations written by hand: the tensor maps the lowering derives for TMA copies, the descriptors of
//! wgmma operands, and what each refuses.

use crate::lower::{example, lower_source, lowered_and_optimized, optimized_with_interface};
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

fn maps(iface: &cutec_manifest::Kernel) -> Vec<TensorMapParam> {
    iface.tensor_maps.clone()
}

#[test]
fn tma_copy_derives_one_map_per_tensor_with_the_contiguous_mode_first() {
    let (module, iface, _) = optimized_with_interface(&example("tma_copy.cute"), "tma_copy", &[]);
    let k = &module.kernels[0];
    let maps = maps(&iface);
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
    let (module, iface, _) = optimized_with_interface(&example("gemm_sm90_manual.cute"), "gemm_sm90_manual", &[]);
    let k = &module.kernels[0];
    let maps = maps(&iface);
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
            Op::Wgmma { shape, a_desc: Some(a_desc), b_desc, steps, .. } => {
                Some((shape.n, *a_desc, *b_desc, steps.len()))
            }
            _ => None,
        })
        .collect();
    // One wgmma group of four k-steps per consumer warpgroup's gemm.
    assert_eq!(wgmmas.iter().map(|w| w.3).collect::<Vec<_>>(), [4]);
    for (n, a, b, _) in wgmmas {
        assert_eq!(n, 256);
        for d in [a, b] {
            assert_eq!((d.swizzle, d.sbo, d.mn_major), (GmmaSwizzle::B128, 1024, false));
        }
    }
    assert!(ops.iter().any(|o| matches!(o, Op::TmaLoad { multicast: Some(_), .. })));
    assert!(ops.iter().any(|o| matches!(o, Op::MbarrierArriveRemote { .. })));
    assert_eq!(ops.iter().filter(|o| matches!(o, Op::ClusterBarrier)).count(), 2);
    assert_eq!(k.cluster, Some([2, 1, 1]));
    assert_eq!(iface.launch.cluster.as_ref().map(Vec::len), Some(2));
    // The registers are the roles' (`roles.rs` checks their regions), set where each region starts.
    let mut budgets = Vec::new();
    k.body.visit(&mut |s| {
        if let Stmt::Roles(regions) = s {
            budgets.extend(regions.iter().map(|r| r.regs));
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
    let (module, iface, text) = optimized_with_interface(src, "k", &[]);
    let m = &maps(&iface)[0];
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

/// A kernel storing a 64 x 64 accumulator into the shared tile `t` (`TILE` chooses it) from the whole warpgroup,
/// or from under a condition that splits warps (`SPLIT == 1`; an `int`, as the helpers give -D values as integers).
const STORE_ACC: &str = r#"
kernel store_acc<const TILE: int = 0, const SPLIT: int = 0>(c: Tensor<f32, (M, N):(N, 1), gmem>)
launch(grid = (1), block = (128)) {
    let mma = tiled_mma(wgmma<64, 64, 16, bf16, bf16, f32>, (1, 1, 1));
    let acc = mma.fragment_c((64, 64));
    fill(acc, 1.0);
    if TILE == 0 {
        let t = make_tensor<bf16, smem>(tile_to_shape(SW128_K<bf16>, (64, 64)));
        store(acc, mma.partition_c(t));
    } else if TILE == 1 {
        // Rows of 72 elements: 144 bytes, still 16-byte aligned.
        let t = make_tensor<bf16, smem>(make_layout((64, 64), (72, 1)));
        store(acc, mma.partition_c(t));
    } else if TILE == 2 {
        // Rows of 66 elements: 132 bytes, not 16-byte aligned.
        let t = make_tensor<bf16, smem>(make_layout((64, 64), (66, 1)));
        store(acc, mma.partition_c(t));
    } else if TILE == 3 {
        // Column-major: a thread's pair of columns is not contiguous.
        let t = make_tensor<bf16, smem>(make_layout((64, 64), (1, 64)));
        store(acc, mma.partition_c(t));
    } else {
        // 32-bit elements: not stmatrix's.
        let t = make_tensor<f32, smem>(make_layout((64, 64), (64, 1)));
        store(acc, mma.partition_c(t));
    }
    if SPLIT == 1 {
        if lane_idx < 16 {
            let t = make_tensor<bf16, smem>(make_layout((64, 64), (64, 1)));
            store(acc, mma.partition_c(t));
        }
    }
}
"#;

fn stmatrix_and_shared_stores(defines: &[(&str, i64)]) -> (usize, usize) {
    let (module, _) = lowered_and_optimized(STORE_ACC, "store_acc", defines);
    let info = cutec_ir::validate(&module).expect("valid");
    let (k, info) = (&module.kernels[0], &info.kernels[0]);
    let stmatrix = ops(k).iter().filter(|o| matches!(o, Op::Stmatrix { values, .. } if values.len() == 4)).count();
    let mut stores = 0;
    k.body.visit(&mut |s| {
        if let Stmt::Store { ptr, .. } = s
            && info.ty(*ptr) == Type::Ptr(AddrSpace::Shared)
        {
            stores += 1;
        }
    });
    (stmatrix, stores)
}

#[test]
fn a_warpgroup_stores_its_16_bit_accumulator_tile_with_stmatrix_where_the_rows_allow_it() {
    // 64 x 64: each warp holds 16 rows x 64 columns, four 16 x 16 blocks of four 8 x 8 matrices.
    assert_eq!(stmatrix_and_shared_stores(&[("TILE", 0)]), (4, 0), "the swizzled tile");
    assert_eq!(stmatrix_and_shared_stores(&[("TILE", 1)]), (4, 0), "rows of 144 bytes");
    // Otherwise `copy`'s vector path: 16 pairs (32-bit stores) or 32 elements per thread.
    assert_eq!(stmatrix_and_shared_stores(&[("TILE", 2)]), (0, 16), "rows of 132 bytes");
    assert_eq!(stmatrix_and_shared_stores(&[("TILE", 3)]), (0, 32), "column-major");
    assert_eq!(stmatrix_and_shared_stores(&[("TILE", 4)]), (0, 16), "f32 elements");
}

#[test]
fn stmatrix_is_not_used_where_a_condition_may_split_a_warp() {
    // The first store (swizzled tile) runs on every thread; the one under `lane_idx < 16` stores pairs.
    assert_eq!(stmatrix_and_shared_stores(&[("TILE", 0), ("SPLIT", 1)]), (4, 16));
}

#[test]
fn the_gemm_epilogue_converts_and_stores_its_tile_with_stmatrix() {
    let (module, text) = lowered_and_optimized(&example("gemm_sm90_manual.cute"), "gemm_sm90_manual", &[]);
    let info = cutec_ir::validate(&module).expect("valid");
    let (k, info) = (&module.kernels[0], &info.kernels[0]);
    // 64 x 256 per consumer warpgroup: 16 stmatrix.x4 of converted pairs, no element stores to shared memory.
    let st: Vec<_> = ops(k).into_iter().filter(|o| matches!(o, Op::Stmatrix { .. })).collect();
    assert_eq!(st.len(), 16, "{text}");
    for op in &st {
        let Op::Stmatrix { values, .. } = op else { unreachable!() };
        for &v in values {
            assert_eq!(info.ty(v), Type::vector(cutec_ir::Scalar::BF16, 2));
        }
    }
    // Printed and parsed back.
    assert!(text.contains("stmatrix.x4 "), "{text}");
    let parsed = cutec_ir::parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(cutec_ir::print(&parsed), text);
}

/// The TMA epilogue of examples/gemm_fp8.cute with `stages` stages: the staging tile's elements, and the
/// stmatrix, TMA stores and waits for their reads of the lowered kernel.
fn fp8_epilogue(stages: i64) -> (u32, usize, usize, usize) {
    let (module, text) = lowered_and_optimized(&example("gemm_fp8.cute"), "gemm_fp8", &[("STAGES", stages)]);
    let k = &module.kernels[0];
    let staging = k.allocs.iter().find(|(_, a)| a.name == "epilogue").map_or(0, |(_, a)| a.len);
    let all = ops(k);
    let count = |f: &dyn Fn(&Op) -> bool| all.iter().filter(|o| f(o)).count();
    let stmatrix = count(&|o| matches!(o, Op::Stmatrix { .. }));
    let stores = count(&|o| matches!(o, Op::TmaStore { .. }));
    let waits = count(&|o| matches!(o, Op::BulkWait { read: true, .. }));
    assert!(stmatrix > 0, "{text}");
    (staging, stmatrix, stores, waits)
}

#[test]
fn the_epilogue_is_staged_in_pieces_where_the_whole_tile_would_not_fit_beside_the_ring() {
    // Three stages of 48 KiB leave room for the whole 128 x 256 bf16 tile (64 KiB): one piece per warpgroup,
    // 16 stmatrix, 4 TMA stores of 64 columns, the wait for the last tile's stores before it (and the one after
    // the loop over tiles).
    assert_eq!(fp8_epilogue(3), (128 * 256, 16, 4, 2));
    // Four stages leave 32 KiB: two pieces of 64 x 128 per warpgroup, each written after the stores of the one
    // before have read the staging tile.
    assert_eq!(fp8_epilogue(4), (128 * 128, 16, 4, 3));
}

#[test]
fn b_stored_k_by_n_is_read_n_major_through_a_transposed_view() {
    let (module, iface, _) = optimized_with_interface(&example("gemm_sm90_kn.cute"), "gemm_sm90_kn", &[]);
    let k = &module.kernels[0];
    // `select<1, 0>(b)` views b (K, N):(N, 1) as the (N, K) operand; TMA dimension 0 is still b's contiguous N.
    let boxes: Vec<_> = maps(&iface).iter().map(|m| (m.tensor.clone(), m.modes.clone(), m.box_shape.clone())).collect();
    assert_eq!(boxes, [("a".to_string(), vec![1, 0], vec![64, 64]), ("b".to_string(), vec![1, 0], vec![64, 64])]);
    let descs: Vec<_> = ops(k)
        .iter()
        .filter_map(|o| match o {
            Op::Wgmma { a_desc, b_desc, steps, .. } => Some((*a_desc, *b_desc, steps.len())),
            _ => None,
        })
        .collect();
    assert_eq!(descs.iter().map(|d| d.2).collect::<Vec<_>>(), [4], "four k-steps of 16 per 64-deep k-tile");
    for (a, b, _) in descs {
        let a = a.expect("A in shared memory");
        assert!(!a.mn_major && b.mn_major, "A K-major, B N-major: {a:?} {b:?}");
        assert_eq!(b.swizzle, GmmaSwizzle::B128);
    }
}

#[test]
fn a_register_fragment_makes_rs_wgmmas_that_round_trip() {
    let (module, iface, text) = optimized_with_interface(&example("wgmma_rs.cute"), "wgmma_rs", &[]);
    let k = &module.kernels[0];
    let wgmmas: Vec<_> = ops(k)
        .into_iter()
        .filter_map(|o| match o {
            Op::Wgmma { shape, a_desc, b_desc, steps, .. } => Some((shape.n, a_desc, b_desc, steps.len())),
            _ => None,
        })
        .collect();
    // BK = 64: one group of four k-steps, A from the fragment's registers (the validator checked each step's A
    // is a `ptr<local>`), B a 128-byte-swizzled K-major descriptor.
    assert_eq!(wgmmas.iter().map(|w| w.3).collect::<Vec<_>>(), [4], "{text}");
    for (n, a_desc, b_desc, _) in wgmmas {
        assert_eq!(n, 128);
        assert_eq!(a_desc, None);
        assert_eq!((b_desc.swizzle, b_desc.sbo, b_desc.mn_major), (GmmaSwizzle::B128, 1024, false));
    }
    // One tensor map, for B: A comes through the threads' loads.
    assert_eq!(maps(&iface).iter().map(|m| m.tensor.as_str()).collect::<Vec<_>>(), ["b"]);
    assert!(text.contains("wgmma.mma_async m64n128k16.bf16") && text.contains(" regs, "), "{text}");
    let again = cutec_ir::print(&cutec_ir::parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}")));
    assert_eq!(again, text);
}

/// A kernel with a 64 x 64 B tile in shared memory, an accumulator, and `body` in between.
fn rs_kernel(body: &str) -> String {
    format!(
        "kernel k(c: Tensor<bf16, (64, 64):(64, 1), gmem>) launch(grid = (1), block = (128)) {{
    let sa = make_tensor<bf16, smem>(tile_to_shape(SW128_K<bf16>, (64, 64)));
    let sb = make_tensor<bf16, smem>(tile_to_shape(SW128_K<bf16>, (64, 64)));
    let mma = tiled_mma(wgmma<64, 64, 16, bf16, bf16, f32>, (1, 1, 1));
    let acc = mma.fragment_c((64, 64));
{body}
    wgmma_wait<0>();
    store(acc, mma.partition_c(c));
}}"
    )
}

fn lowering_codes(source: &str) -> Vec<String> {
    match lower_source(source, "k", &[]) {
        Ok(_) => Vec::new(),
        Err(d) => d.iter().map(|d| d.code.to_string()).collect(),
    }
}

#[test]
fn a_converted_accumulator_is_an_a_fragment() {
    // FlashAttention's P @ V: the f32 accumulator of S = Q K^T converted to bf16 is the A of the next gemm.
    let src = rs_kernel(
        "    let s = mma.fragment_c((64, 64));
    gemm(mma, sa, sb, s, accumulate = false);
    wgmma_wait<0>();
    let p = make_fragment_like<bf16>(s);
    store(s, p);
    gemm(mma, p, sb, acc, accumulate = false);",
    );
    let (module, text) = lowered_and_optimized(&src, "k", &[]);
    let descs: Vec<(bool, usize)> = ops(&module.kernels[0])
        .iter()
        .filter_map(|o| match o {
            Op::Wgmma { a_desc, steps, .. } => Some((a_desc.is_some(), steps.len())),
            _ => None,
        })
        .collect();
    // Two groups of four k-steps: S from shared memory, then P from registers.
    assert_eq!(descs, [(true, 4), (false, 4)], "{text}");
}

#[test]
fn a_register_operand_must_be_a_whole_a_fragment_of_the_gemms_k() {
    let ok = "    let fa = mma.fragment_a((64, 64));\n    copy(mma.partition_a(sa), fa);\n    gemm(mma, fa, sb, acc);";
    assert_eq!(lowering_codes(&rs_kernel(ok)), Vec::<String>::new());
    for (body, why) in [
        ("    let fa = make_tensor<bf16, rmem>(32);\n    gemm(mma, fa, sb, acc);", "a plain register tensor"),
        ("    let fa = mma.fragment_a((64, 32));\n    gemm(mma, fa, sb, acc);", "a fragment for K = 32"),
        ("    let fa = mma.fragment_a((64, 128));\n    gemm(mma, fa[_, _, 0], sb, acc);", "a slice of a fragment"),
        (
            "    let fa = mma.fragment_a((64, 64));\n    let g = make_fragment_like(fa[_, _, 0]);\n    gemm(mma, g, sb, acc);",
            "like a slice",
        ),
    ] {
        assert_eq!(lowering_codes(&rs_kernel(body)), ["E0316"], "{why}");
    }
    // Warpgroup-collective like the shared-memory form.
    let split =
        "    let fa = mma.fragment_a((64, 64));\n    if thread_idx.x < 64 {\n        gemm(mma, fa, sb, acc);\n    }";
    assert_eq!(lowering_codes(&rs_kernel(split)), ["E0312"]);
}

#[test]
fn prefetch_tensormap_names_the_map_of_the_copy_and_no_access() {
    // wgmma_rs prefetches B's map (`gb[_, _, 0]`) before loading boxes `gb[_, _, k]`: one map, one parameter.
    let (module, text) = lowered_and_optimized(&example("wgmma_rs.cute"), "wgmma_rs", &[]);
    let ops = ops(&module.kernels[0]);
    let prefetched: Vec<_> =
        ops.iter().filter_map(|o| if let Op::PrefetchTensorMap { map } = o { Some(*map) } else { None }).collect();
    let loaded: Vec<_> =
        ops.iter().filter_map(|o| if let Op::TmaLoad { map, .. } = o { Some(*map) } else { None }).collect();
    assert_eq!(prefetched.len(), 1, "{text}");
    assert!(!loaded.is_empty() && loaded.iter().all(|m| *m == prefetched[0]), "{text}");
    assert!(text.contains("prefetch.tensormap"), "{text}");
    // A prefetch before a store: the map is the store's, and the argument stays written only.
    let src = "kernel k(c: Tensor<bf16, (M, N):(N, 1), gmem>) launch(grid = (1), block = (128)) {
    let s = make_tensor<bf16, smem>(tile_to_shape(SW128_K<bf16>, (64, 64)));
    let g = local_tile(c, (64, 64), (block_idx.x, 0));
    if thread_idx.x == 0 {
        prefetch_tensormap(g, s);
        tma_store(s, g);
    }
}";
    let (_, iface, text) = optimized_with_interface(src, "k", &[]);
    assert_eq!(maps(&iface).len(), 1, "{text}");
    let access = match &iface.params[0] {
        cutec_manifest::Param::Tensor(t) => t.access,
        other => panic!("{other:?}"),
    };
    assert_eq!(access, cutec_manifest::Access::Write);
    let again = cutec_ir::print(&cutec_ir::parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}")));
    assert_eq!(again, text);
}

#[test]
fn map_shared_addresses_the_peer_ctas_shared_memory_and_round_trips() {
    let (module, text) = lowered_and_optimized(&example("dsmem_exchange.cute"), "dsmem_exchange", &[]);
    let info = cutec_ir::validate(&module).expect("valid");
    let (k, info) = (&module.kernels[0], &info.kernels[0]);
    let maps: Vec<_> = k.exprs.iter().filter(|(_, e)| matches!(e, cutec_ir::Expr::MapShared { .. })).collect();
    assert_eq!(maps.len(), 1, "{text}");
    // The write into the peer's inbox goes through the cluster window; the read of the own inbox does not.
    let mut stores = Vec::new();
    k.body.visit(&mut |s| {
        if let Stmt::Store { ptr, .. } = s {
            stores.push(info.ty(*ptr));
        }
    });
    assert!(stores.contains(&Type::Ptr(AddrSpace::SharedCluster)), "{stores:?}\n{text}");
    assert!(text.contains("mapa ") && text.contains("ptr<shared_cluster>"), "{text}");
    let parsed = cutec_ir::parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(cutec_ir::print(&parsed), text);
    // Accesses through the window count as shared-memory accesses: the barrier after them stays after them.
    let effects = cutec_ir::effects::block(k, &k.body);
    assert!(effects.contains(cutec_ir::Effects::writes(AddrSpace::Shared)), "{effects:?}");
    // And as nothing else: a store through the window is not an access to "any space" (global memory included).
    let mut window_stores = 0;
    k.body.visit(&mut |s| {
        if let Stmt::Store { ptr, .. } = s
            && info.ty(*ptr) == Type::Ptr(AddrSpace::SharedCluster)
        {
            window_stores += 1;
            assert_eq!(cutec_ir::effects::space_of(k, *ptr), Some(AddrSpace::SharedCluster), "{text}");
            assert_eq!(cutec_ir::effects::stmt(k, s), cutec_ir::Effects::writes(AddrSpace::SharedCluster), "{text}");
        }
    });
    assert!(window_stores > 0, "{text}");
}

/// `mapa`'s pointer, and offsets of it, are in `shared_cluster`: their accesses are shared-memory effects only, so
/// the dependency graph does not order them against global memory.
#[test]
fn map_shared_pointers_are_in_shared_cluster_not_any_space() {
    let text = "kernel @k(%out: ptr<global> align(4)) block(128, 1, 1) cluster(2, 1, 1) {
  shared @inbox: [32 x f32] align(16)
  %0: i32 = sreg cluster_ctarank
  %1: i32 = xor %0, 1
  %2: ptr<shared_cluster> = mapa @inbox, cta %1
  %3: i32 = sreg tid.x
  %4: ptr<shared_cluster> = offset %2, %3 x f32
  store 1.0, %4 align(4)
  %5: f32 = load f32, %4 align(4)
  %6: ptr<global> = offset %out, %3 x f32
  store %5, %6 align(4)
}
";
    let module = cutec_ir::parse(text).unwrap_or_else(|e| panic!("{e}"));
    cutec_ir::validate(&module).unwrap_or_else(|e| panic!("{e:?}"));
    let k = &module.kernels[0];
    let window =
        cutec_ir::Effects::writes(AddrSpace::SharedCluster) | cutec_ir::Effects::reads(AddrSpace::SharedCluster);
    let stmts = k.body.stmts();
    let effects: Vec<_> = stmts.iter().map(|s| cutec_ir::effects::stmt(k, s)).collect();
    let store = stmts.iter().position(|s| matches!(s, Stmt::Store { .. })).expect("a store");
    assert_eq!(effects[store], cutec_ir::Effects::writes(AddrSpace::SharedCluster));
    assert!(!effects[store].writes_space(AddrSpace::Global));
    let load = stmts.iter().position(|s| matches!(s, Stmt::Op { .. })).expect("a load");
    assert_eq!(effects[load], cutec_ir::Effects::reads(AddrSpace::SharedCluster));
    assert!(window.contains(effects[store] | effects[load]));
    assert_eq!(format!("{}", effects[store] | effects[load]), "read(shared) write(shared)");
}

#[test]
fn stmatrix_is_not_used_after_some_threads_returned() {
    // The same store as the swizzled case, after a `return` that some lanes take: stmatrix would need them.
    let src = STORE_ACC
        .replace("    if TILE == 0 {\n", "    if lane_idx == 31 {\n        return;\n    }\n    if TILE == 0 {\n");
    let (module, _) = lowered_and_optimized(&src, "store_acc", &[("TILE", 0)]);
    let st = ops(&module.kernels[0]).iter().filter(|o| matches!(o, Op::Stmatrix { .. })).count();
    assert_eq!(st, 0);
}

/// The manifest's `flops`: 2 per multiply-add of every wgmma a launch issues, as a formula of the dims.
#[test]
fn the_manifest_counts_the_tensor_core_work_of_a_launch() {
    let flops = |src: &str, kernel: &str| optimized_with_interface(src, kernel, &[]).1.flops;
    let eval = |f: &cutec_manifest::Expr, dims: &[(&str, i64)]| {
        f.eval_dims(&|d| dims.iter().find(|(n, _)| *n == d).map(|(_, v)| *v)).expect("evaluates")
    };
    // Tiles that divide the matrices: 2 M N K, for the plain persistent loop and the batched one.
    let sm90 = flops(&example("gemm_sm90.cute"), "gemm").expect("counted");
    assert_eq!(eval(&sm90, &[("M", 4096), ("N", 4096), ("K", 4096)]), 2 * 4096 * 4096 * 4096);
    // Tiles at the edges run whole: 1000 x 776 x 336 is 8 x 4 tiles of 128 x 256, 6 k-tiles of 64.
    assert_eq!(eval(&sm90, &[("M", 1000), ("N", 776), ("K", 336)]), 2 * (8 * 128) * (4 * 256) * (6 * 64));
    let batched = flops(&example("gemm_batched.cute"), "gemm_batched").expect("counted");
    assert_eq!(eval(&batched, &[("L", 3), ("M", 1024), ("N", 512), ("K", 256)]), 3 * 2 * 1024 * 512 * 256);
    // One warpgroup per 64-row tile, by hand: the same count.
    let kn = flops(&example("gemm_sm90_kn.cute"), "gemm_sm90_kn").expect("counted");
    assert_eq!(eval(&kn, &[("M", 512), ("N", 512), ("K", 512)]), 2 * 512 * 512 * 512);
    // Not a formula of the dims: a k-range from block_idx.z (split-K), a gemm under a condition.
    assert_eq!(flops(&example("gemm_splitk.cute"), "gemm_splitk"), None);
    let under_if = example("gemm_sm90_kn.cute").replace(
        "gemm(mma, sa[_, _, s], sb[_, _, s], acc, accumulate = k > 0);",
        "if k < K { gemm(mma, sa[_, _, s], sb[_, _, s], acc, accumulate = k > 0); }",
    );
    assert_ne!(under_if, example("gemm_sm90_kn.cute"));
    assert_eq!(flops(&under_if, "gemm_sm90_kn"), None);
    // No MMA: no count.
    assert_eq!(flops(&example("gemm_simt.cute"), "gemm_simt"), None);
}

/// The coordinates of a wgmma accumulator's partition of an identity tensor: a part of the thread's plus a
/// constant per element, so the per-element divisions of a flat index are gone (their count does not grow with
/// the elements) and the rows and columns of one thread are few distinct values.
#[test]
fn identity_coordinates_of_an_accumulator_are_the_threads_part_plus_constants() {
    let src = |n: u32| {
        format!(
            "kernel k(r: Tensor<i32, (64, {n}):({n}, 1), gmem>) launch(grid = (1), block = (128)) {{
    let mma = tiled_mma(wgmma<64, {n}, 16, bf16, bf16, f32>, (1, 1, 1));
    let coord = mma.partition_c(make_identity_tensor((64, {n})));
    let place = mma.partition_c(r);
    for i in 0..size(place) unroll {{
        place[i] = get<0>(coord[i]) * 1000 + get<1>(coord[i]);
    }}
}}"
        )
    };
    let divisions = |text: &str| text.lines().filter(|l| l.contains(" = div ") || l.contains(" = rem ")).count();
    let (_, small) = lowered_and_optimized(&src(64), "k", &[]);
    let (_, large) = lowered_and_optimized(&src(256), "k", &[]);
    // 32 and 128 elements per thread: the same divisions (the thread's part), none per element.
    assert_eq!(divisions(&small), divisions(&large), "{small}\n{large}");
    assert!(divisions(&large) < 16, "{large}");
}

#[test]
fn tma_load_into_a_shared_tensor_writes_that_tensor() {
    // `tma_load(view, s)` with a tensor `s`: the copy lands in `s`'s own allocation (it used to land in a fresh
    // tile of `s`'s layout, so later reads of `s` saw its old contents), after a proxy fence and a CTA barrier.
    let src = "kernel k(a: Tensor<f32, (M, K):(K, 1), gmem>, out: Tensor<f32, (M, K):(K, 1), gmem>) \
               launch(grid = (1), block = (128)) {
        let s = make_tensor<f32, smem>((32, 32):(32, 1));
        s[thread_idx.x % 32, 0] = 0.0;
        tma_load(local_tile(a, (32, 32), (0, 0)), s);
        out[thread_idx.x % 32, 0] = s[thread_idx.x % 32, 0];
    }";
    let m = lower_source(src, "k", &[]).unwrap_or_else(|d| panic!("{d:#?}"));
    let k = &m.kernels[0];
    let shared: Vec<_> = k.allocs.iter().filter(|(_, a)| a.space == AddrSpace::Shared).map(|(h, _)| h).collect();
    assert_eq!(shared.len(), 1, "one shared tensor, `s`, and no copy of it:\n{}", cutec_ir::print(&m));
    let copies: Vec<_> = ops(k)
        .into_iter()
        .filter_map(|op| match op {
            Op::TmaLoadUnscheduled { dst, .. } => Some(dst),
            _ => None,
        })
        .collect();
    assert_eq!(copies.len(), 1, "{}", cutec_ir::print(&m));
    assert!(
        matches!(k.exprs.get(copies[0]), Some(cutec_ir::Expr::AllocPtr(a)) if *a == shared[0]),
        "the copy lands in `s`:\n{}",
        cutec_ir::print(&m)
    );
    let fence = ops(k).iter().position(|op| matches!(op, Op::FenceProxyAsync));
    assert!(fence.is_some(), "the threads' own accesses to `s` are fenced before the copy");
}

/// A plain warp-specialized loop with two consumer warpgroups (not `persistent`, no cluster) is run persistent, as
/// `persistent(raster = grouped(8))` would run it; one with one consumer warpgroup (a kernel of few rows) keeps
/// one CTA per tile, in grouped order: `block_idx` reads the tile of the hardware's rank in groups of 8 rows,
/// unless the grid's CTAs would not fit an `i32` rank.
#[test]
fn a_plain_warp_specialized_kernel_is_run_persistent_or_in_grouped_order() {
    let plain = example("../scripts/gpu/gemm_ws_plain.cute");
    let (_, iface, text) = optimized_with_interface(&plain, "gemm", &[]);
    assert!(iface.launch.persistent, "two consumer warpgroups: persistent");
    assert!(text.contains("for $tile in"), "{text}");
    let (_, iface, text) = optimized_with_interface(&example("gemm_swap_ab.cute"), "gemm_swap_ab", &[]);
    assert!(!iface.launch.persistent, "one consumer warpgroup: one CTA per tile");
    assert!(text.contains("sreg nctaid.y") && text.contains("div 2147483647, "), "{text}");
    assert!(text.contains("mul 8, "), "groups of 8 rows: {text}");
    // Persistent and clustered kernels order their tiles themselves; kernels without warp specialization keep
    // the hardware's order.
    for (file, kernel) in [("gemm_sm90.cute", "gemm"), ("gemm_pipelined.cute", "gemm_pipelined")] {
        let (_, text) = lowered_and_optimized(&example(file), kernel, &[]);
        assert!(!text.contains("div 2147483647, "), "{file}: {text}");
    }
}

//! `store(acc, tile, map = f)`: `f` applied to the staged tile, by each warpgroup to its part, or, in a
//! `persistent` `warp_specialized` kernel, by the producer's spare warps beside the next tile's mainloop; with
//! `with = x`, `f` of each value and `x`'s element at its coordinate.

use crate::lower::{example, lowered_and_optimized};
use cutec_ir::effects::Resource;
use cutec_ir::{Expr, MathFn, Op, Stmt};

/// The statements of `block` and of every block nested in it.
fn ops(block: &cutec_ir::Block) -> Vec<Op> {
    let mut v = Vec::new();
    block.visit(&mut |s| {
        if let Stmt::Op { op, .. } = s {
            v.push(op.clone());
        }
    });
    v
}

/// A GEMM whose epilogue stores `gelu` of each value through the TMA epilogue; `attrs` the kernel's attributes.
fn gemm(attrs: &str) -> String {
    format!(
        "fn gelu(v: f32) -> f32 {{
    let h = 0.5 * v;
    return h + h * tanh(v * (0.7978845608 + 0.0356774081 * v * v));
}}

kernel k(a: Tensor<bf16, (M, K):(K, 1), gmem>, b: Tensor<bf16, (N, K):(K, 1), gmem>,
         c: Tensor<bf16, (M, N):(N, 1), gmem>)
launch(grid = (ceil_div(M, 128), ceil_div(N, 256)), {attrs} {{
    let mma = tiled_mma(wgmma<64, 256, 16, bf16, bf16, f32>, (2, 1, 1));
    let ga = local_tile(a, (128, 64), (block_idx.x, _));
    let gb = local_tile(b, (256, 64), (block_idx.y, _));
    let acc = mma.fragment_c((128, 256));
    fill(acc, 0.0);
    for k in 0..ceil_div(K, 64) pipelined(stages = 3) {{
        let ta = tma_load(ga[_, _, k], tile_to_shape(SW128_K<bf16>, (128, 64)));
        let tb = tma_load(gb[_, _, k], tile_to_shape(SW128_K<bf16>, (256, 64)));
        gemm(mma, ta, tb, acc);
    }}
    store(acc, local_tile(c, (128, 256), (block_idx.x, block_idx.y)), map = gelu);
}}"
    )
}

#[test]
fn without_spare_warps_each_warpgroup_maps_its_part_between_staging_and_storing() {
    let (module, text) = lowered_and_optimized(&gemm("block = (256))"), "k", &[]);
    let k = &module.kernels[0];
    let all = ops(&k.body);
    // No hand-over: no mbarrier of the epilogue, the tanh of `gelu` in the consumers' loop over their part.
    assert!(!text.contains("epilogue_staged"), "{text}");
    assert!(text.contains("for $map"), "{text}");
    assert!(text.contains("tanh"), "{text}");
    // The staging (stmatrix), then the map, then the TMA stores, in that order.
    let first = |f: &dyn Fn(&Op) -> bool| all.iter().position(f);
    let stmatrix = first(&|o| matches!(o, Op::Stmatrix { .. })).expect("stmatrix");
    let store = first(&|o| matches!(o, Op::TmaStore { .. })).expect("tma.store");
    let map_at = text.find("for $map").unwrap_or(0);
    assert!(stmatrix < store && text.find("stmatrix").unwrap_or(0) < map_at, "{text}");
    assert!(map_at < text.find("tma.store").unwrap_or(0), "{text}");
}

#[test]
fn with_spare_warps_the_consumers_hand_the_staged_tile_over_and_go_on() {
    let (module, text) = lowered_and_optimized(&example("gemm_epilogue.cute"), "gemm_bias_gelu", &[]);
    let k = &module.kernels[0];
    // The hand-over's two barriers: every consumer thread arrives on `staged`, the storing spare thread on
    // `drained`.
    assert!(text.contains("mbarrier.init @epilogue_staged, 256"), "{text}");
    assert!(text.contains("mbarrier.init @epilogue_drained, 1"), "{text}");
    // The spare warps' map and stores are in the producer's region, beside its copies.
    let (mut tanh, mut stores, mut map_loop) = (false, false, false);
    k.body.visit(&mut |s| {
        if let Stmt::Roles(regions) = s {
            for r in regions.iter().filter(|r| r.role.kind == cutec_ir::RoleKind::Producer) {
                r.body.visit(&mut |x| match x {
                    Stmt::Emit(h) => tanh |= matches!(k.exprs.get(*h), Some(Expr::Math { fun: MathFn::Tanh, .. })),
                    Stmt::Op { op: Op::TmaStore { .. }, .. } => stores = true,
                    Stmt::For { var, .. } => map_loop |= k.vars.get(*var).is_some_and(|v| v.name.starts_with("map")),
                    _ => {}
                });
            }
        }
    });
    assert!(tanh && stores && map_loop, "{text}");
}

#[test]
fn a_staging_tile_that_does_not_fit_whole_keeps_the_map_in_the_warpgroups_pieces() {
    // With a fourth stage the whole 128 x 256 staging tile the spare warps would take does not fit beside the
    // ring (it was refused, E0324): each warpgroup stages its part in pieces and applies the map to them itself.
    let (module, text) = lowered_and_optimized(&example("gemm_epilogue.cute"), "gemm_bias_gelu", &[("STAGES", 4)]);
    assert!(!text.contains("epilogue_staged"), "no hand-over to the spare warps: {text}");
    let staging = module.kernels[0].allocs.iter().find(|(_, a)| a.name == "epilogue").map_or(0, |(_, a)| a.len);
    assert_eq!(staging, 2 * 64 * 128, "pieces of 64 x 128 per warpgroup, not the whole 128 x 256 tile");
    assert!(text.contains("tanh") && text.contains("for $map"), "{text}");
}

#[test]
fn a_store_under_a_condition_is_mapped_by_its_warpgroups() {
    // The spare warps run the loop over tiles but not the consumers' conditions: a `store` under one keeps the
    // map in its warpgroups (handed over, the spare warps would wait for a tile that never comes).
    let store =
        "    store(acc, local_tile(c, (BM, BN), (block_idx.x, block_idx.y)), map = bias_gelu, with = bias_row);";
    let src = example("gemm_epilogue.cute").replace(store, &format!("    if K > 0 {{\n    {store}\n    }}"));
    assert!(src.contains("if K > 0"));
    let (_, text) = lowered_and_optimized(&src, "gemm_bias_gelu", &[]);
    assert!(!text.contains("epilogue_staged"), "{text}");
    assert!(text.contains("for $map") && text.contains("tanh"), "{text}");
}

#[test]
fn a_store_from_registers_maps_each_converted_value() {
    // `y = bf16(twice(f32(bf16(x))))`: each value rounded to the stored type before `twice`, into a new register
    // array (the source may be read after the `store`), then stored.
    let src = "fn twice(v: f32) -> f32 {
    return 2.0 * v;
}

kernel k(x: Tensor<f32, (128, 64):(64, 1), gmem>, y: Tensor<bf16, (128, 64):(64, 1), gmem>)
launch(grid = (1), block = (128)) {
    let r = make_fragment_like(x[thread_idx.x, _]);
    copy(x[thread_idx.x, _], r);
    store(r, y[thread_idx.x, _], map = twice);
    x[thread_idx.x, 0] = r[0];
}";
    let (module, text) = lowered_and_optimized(src, "k", &[]);
    let k = &module.kernels[0];
    let converts = |to: cutec_ir::Scalar| {
        k.exprs.iter().filter(|(_, e)| matches!(e, Expr::Convert { to: t, .. } if *t == to)).count()
    };
    // 64 values: each rounded to bf16 and widened back before `twice` (then rounded again as they are stored).
    assert!(converts(cutec_ir::Scalar::F32) >= 64, "{text}");
    assert!(converts(cutec_ir::Scalar::BF16) >= 64, "{text}");
    assert_eq!(text.matches("mul 2.0").count(), 64, "{text}");
}

#[test]
fn pieces_that_do_not_divide_the_threads_are_dealt_out_one_by_one() {
    // 192 columns are 24 pieces of 16 bytes per row, which 128 threads do not divide: thread t takes pieces t,
    // t + 128, ... of the warpgroup's 64 x 192 part, each at its own row and column group.
    let src = gemm("block = (256))").replace("256", "192").replace("block = (192)", "block = (256)");
    assert!(src.contains("wgmma<64, 192") && src.contains("block = (256)"), "{src}");
    let (_, text) = lowered_and_optimized(&src, "k", &[]);
    assert!(text.contains("for $map") && text.contains("tanh"), "{text}");
    // 64 rows of 24 pieces: the trip count counts pieces, and each piece's row and group come from its number.
    assert!(text.contains("sub 1536, "), "{text}");
    assert!(text.contains(", 24"), "{text}");
}

/// The loads of kernel `k` through its parameter `param` in the producer's regions: `(outside, inside)` the
/// loops of `map`.
fn producer_loads(k: &cutec_ir::Kernel, param: &str) -> (usize, usize) {
    let p = k.params.iter().position(|q| q.name == param).expect("the parameter") as u32;
    let is_load = |s: &Stmt| matches!(s, Stmt::Op { op: Op::Load { ptr, .. }, .. } if Resource::of(k, *ptr) == Resource::Param(p));
    let (mut all, mut inside) = (0, 0);
    k.body.visit(&mut |s| {
        if let Stmt::Roles(regions) = s {
            for r in regions.iter().filter(|r| r.role.kind == cutec_ir::RoleKind::Producer) {
                r.body.visit(&mut |x| {
                    all += usize::from(is_load(x));
                    if let Stmt::For { var, body, .. } = x
                        && k.vars.get(*var).is_some_and(|v| v.name.starts_with("map"))
                    {
                        body.visit(&mut |y| inside += usize::from(is_load(y)));
                    }
                });
            }
        }
    });
    (all - inside, inside)
}

#[test]
fn a_bias_row_is_read_once_per_tile_by_each_spare_thread() {
    // `with = bias_row` (256 columns broadcast along 128 rows): each spare thread keeps to one group of 8
    // columns, so it reads their 8 biases ahead of its loop over the rows, not per piece: two 16-byte loads
    // where the 8 columns are inside the bias, one load per column at its end.
    let (module, text) = lowered_and_optimized(&example("gemm_epilogue.cute"), "gemm_bias_gelu", &[]);
    let k = &module.kernels[0];
    assert!(text.contains("mbarrier.init @epilogue_staged, 256"), "{text}");
    assert_eq!(producer_loads(k, "bias"), (2 + 8, 0), "{text}");
    assert!(text.contains("load f32x4"), "{text}");
}

#[test]
fn an_operand_in_shared_memory_keeps_the_map_in_the_warpgroups() {
    // A tile in shared memory may be rewritten for the next tile before spare warps, one tile late, would read
    // it: the consumers' warpgroups apply such a map themselves, in program order.
    let row = "    let bias_row = local_tile(bias, (BN), (block_idx.y));";
    let src = example("gemm_epilogue.cute").replace(row, "").replace(
        "    for k in 0..",
        "    let bias_row = tma_load(local_tile(bias, (BN), (block_idx.y)), make_layout(BN));\n    for k in 0..",
    );
    assert!(src.contains("tma_load(local_tile(bias"), "{src}");
    let (module, text) = lowered_and_optimized(&src, "gemm_bias_gelu", &[]);
    assert!(!text.contains("epilogue_staged"), "{text}");
    assert!(text.contains("for $map") && text.contains("tanh"), "{text}");
    assert_eq!(producer_loads(&module.kernels[0], "bias"), (0, 0), "{text}");
}

#[test]
fn a_store_from_registers_pairs_each_value_with_the_operands_element() {
    // `y = bf16(f32(bf16(x)) + z)`: element i of the thread's row of `z` with element i of its row of `x`.
    let src = "fn add(v: f32, b: f32) -> f32 {
    return v + b;
}

kernel k(x: Tensor<f32, (128, 64):(64, 1), gmem>, z: Tensor<f32, (128, 64):(64, 1), gmem>,
         y: Tensor<bf16, (128, 64):(64, 1), gmem>)
launch(grid = (1), block = (128)) {
    let r = make_fragment_like(x[thread_idx.x, _]);
    copy(x[thread_idx.x, _], r);
    store(r, y[thread_idx.x, _], map = add, with = z[thread_idx.x, _]);
}";
    let (module, text) = lowered_and_optimized(src, "k", &[]);
    let k = &module.kernels[0];
    let z = k.params.iter().position(|q| q.name == "z").expect("z") as u32;
    let mut z_loads = 0;
    k.body.visit(&mut |s| {
        if let Stmt::Op { op: Op::Load { ptr, .. }, .. } = s {
            z_loads += usize::from(Resource::of(k, *ptr) == Resource::Param(z));
        }
    });
    // 64 elements of `z`, copied into registers 16 bytes at a time where the row is inside `z` (as `copy` does),
    // and one f32 add per value.
    assert!((16..=16 + 64).contains(&z_loads), "{text}");
    assert!(text.contains("load f32x4"), "{text}");
    assert!(text.matches(" add ").count() >= 64 || text.matches("add ").count() >= 64, "{text}");
}

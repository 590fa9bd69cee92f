//! fp8 (`e4m3`, `e5m2`): conversions, copies and fills of the one-byte storage formats, and the m64nNk32 wgmma
//! with its 8-bit K-major swizzled operands.

use crate::lower::{example, lower_source, lowered_and_optimized, optimized_with_interface};
use cutec_ir::{AddrSpace, Expr, GmmaSwizzle, Op, Scalar, Stmt, Type};
use cutec_manifest::TmaSwizzle;

fn ops(k: &cutec_ir::Kernel) -> Vec<Op> {
    let mut v = Vec::new();
    k.body.visit(&mut |s| {
        if let Stmt::Op { op, .. } = s {
            v.push(op.clone());
        }
    });
    v
}

fn lowering_codes(source: &str) -> Vec<String> {
    match lower_source(source, "k", &[]) {
        Ok(_) => Vec::new(),
        Err(d) => d.iter().map(|d| d.code.to_string()).collect(),
    }
}

#[test]
fn fp8_values_convert_copy_and_fill() {
    let src = "kernel k(x: Tensor<f32, N:1, gmem>, q: Tensor<e4m3, N:1, gmem>, r: Tensor<e4m3, N:1, gmem>,
        y: Tensor<bf16, N:1, gmem>) launch(grid = (ceil_div(N, 4096)), block = (256)) {
    static_assert(N % 4096 == 0, \"whole tiles\");
    let i = block_idx.x * 256 + thread_idx.x;
    q[i] = x[i] as e4m3;
    y[i] = q[i] as bf16;
    let s = make_tensor<e4m3, smem>(4096);
    fill(s, 0.0);
    // 16 e4m3 per thread: one 16-byte vector each way.
    let tv = (256, 16):(16, 1);
    copy(composition(local_tile(q, 4096, block_idx.x), tv)[thread_idx.x, _], composition(s, tv)[thread_idx.x, _]);
    copy(composition(s, tv)[thread_idx.x, _], composition(local_tile(r, 4096, block_idx.x), tv)[thread_idx.x, _]);
}";
    let (module, text) = lowered_and_optimized(src, "k", &[]);
    let k = &module.kernels[0];
    let converts: Vec<Scalar> =
        k.exprs.iter().filter_map(|(_, e)| if let Expr::Convert { to, .. } = e { Some(*to) } else { None }).collect();
    assert!(converts.contains(&Scalar::E4M3) && converts.contains(&Scalar::BF16), "{text}");
    // `fill(s, 0.0)`: fp8 has no literals, so the zero is an f32 one converted.
    assert!(text.contains("convert 0.0 to e4m3"), "{text}");
    let vectors: Vec<Type> = ops(k)
        .iter()
        .filter_map(|o| if let Op::Load { ty, .. } = o { Some(*ty) } else { None })
        .filter(|t| t.lanes() == Some(16))
        .collect();
    assert_eq!(vectors, [Type::vector(Scalar::E4M3, 16); 2], "{text}");
}

#[test]
fn the_fp8_gemm_ring_is_128_byte_swizzled_with_four_k32_steps() {
    let (module, iface, text) = optimized_with_interface(&example("gemm_fp8_manual.cute"), "gemm_fp8_manual", &[]);
    let k = &module.kernels[0];
    let boxes: Vec<_> = iface
        .tensor_maps
        .iter()
        .map(|m| (m.tensor.as_str(), m.modes.clone(), m.box_shape.clone(), m.swizzle))
        .collect();
    assert_eq!(
        boxes,
        [
            // 128 rows of 128 e4m3: one 128-byte swizzled row each.
            ("a", vec![1, 0], vec![128, 128], TmaSwizzle::B128),
            ("b", vec![1, 0], vec![128, 128], TmaSwizzle::B128),
            ("c", vec![1, 0], vec![64, 64], TmaSwizzle::B128),
        ]
    );
    let dtypes: Vec<_> = iface
        .params
        .iter()
        .filter_map(|p| if let cutec_manifest::Param::Tensor(t) = p { Some(t.dtype.to_string()) } else { None })
        .collect();
    assert_eq!(dtypes, ["e4m3", "e4m3", "bf16"]);
    let aligns: Vec<_> =
        k.allocs.iter().filter(|(_, a)| a.space == AddrSpace::Shared).map(|(_, a)| (a.elem, a.align)).take(2).collect();
    assert_eq!(aligns, [(Scalar::E4M3, 1024); 2]);
    // BK = 128 is four k-steps of m64n256k32 e4m3 x e4m3; SBO is 8 rows of 128 bytes, as for bf16 with BK = 64.
    let wgmmas: Vec<_> = ops(k)
        .into_iter()
        .filter_map(|o| match o {
            Op::Wgmma { shape, a_desc: Some(a), b_desc, steps, .. } => Some((shape, a, b_desc, steps.len())),
            _ => None,
        })
        .collect();
    // One wgmma group per k-tile, of four k-steps.
    assert_eq!(wgmmas.iter().map(|w| w.3).collect::<Vec<_>>(), [4], "{text}");
    for (shape, a, b, _) in wgmmas {
        assert_eq!((shape.m, shape.n, shape.k, shape.input, shape.input_b), (64, 256, 32, Scalar::E4M3, Scalar::E4M3));
        for d in [a, b] {
            assert_eq!((d.swizzle, d.lbo, d.sbo, d.mn_major), (GmmaSwizzle::B128, 16, 1024, false));
        }
    }
    // The k-steps start 32 bytes (32 e4m3) apart along the swizzled row.
    for step in [32, 64, 96] {
        assert!(text.contains(&format!("{step} x e4m3")) || text.contains(&format!(", {step}\n")), "{step}\n{text}");
    }
}

/// A kernel multiplying a (64, 128) e4m3 A tile by a (64, 128) e5m2 B tile in shared memory with `atom`.
fn mixed(atom: &str) -> String {
    format!(
        "kernel k(c: Tensor<bf16, (64, 64):(64, 1), gmem>) launch(grid = (1), block = (128)) {{
    let sa = make_tensor<e4m3, smem>(tile_to_shape(SW128_K<e4m3>, (64, 128)));
    let sb = make_tensor<e5m2, smem>(tile_to_shape(SW128_K<e5m2>, (64, 128)));
    let mma = tiled_mma({atom}, (1, 1, 1));
    let acc = mma.fragment_c((64, 64));
    gemm(mma, sa, sb, acc, accumulate = false);
    wgmma_wait<0>();
    store(acc, mma.partition_c(c));
}}"
    )
}

#[test]
fn fp8_gemms_mix_e4m3_and_e5m2_from_shared_memory() {
    let (module, text) = lowered_and_optimized(&mixed("wgmma<64, 64, 32, e4m3, e5m2, f32>"), "k", &[]);
    let shapes: Vec<_> = ops(&module.kernels[0])
        .into_iter()
        .filter_map(|o| {
            if let Op::Wgmma { shape, steps, .. } = o { Some((shape.input, shape.input_b, steps.len())) } else { None }
        })
        .collect();
    assert_eq!(shapes, [(Scalar::E4M3, Scalar::E5M2, 4)], "{text}");
    assert!(text.contains("m64n64k32.e4m3.e5m2"), "{text}");
    // fp8 A from registers is not supported yet (E0300).
    let rs = mixed("wgmma<64, 64, 32, e4m3, e5m2, f32>")
        .replace("gemm(mma, sa,", "let fa = make_tensor<e4m3, rmem>(32);\n    gemm(mma, fa,");
    assert_eq!(lowering_codes(&rs), ["E0300"]);
}

#[test]
fn an_fp8_result_goes_through_a_swizzled_staging_tile_and_tma_stores() {
    let (module, iface, text) = optimized_with_interface(&example("gemm_fp8_e4m3_out.cute"), "gemm_fp8_e4m3_out", &[]);
    let k = &module.kernels[0];
    let info = cutec_ir::validate(&module).expect("valid");
    let info = &info.kernels[0];
    // C's map, contiguous mode first: boxes of 128 e4m3 (one 128-byte swizzled row) x 64 rows, two per
    // warpgroup's 64 x 256 part.
    let c: Vec<_> = iface
        .tensor_maps
        .iter()
        .filter(|m| m.tensor == "c")
        .map(|m| (m.modes.clone(), m.box_shape.clone(), m.swizzle))
        .collect();
    assert_eq!(c, [(vec![1, 0], vec![128, 64], TmaSwizzle::B128)]);
    // Each thread writes its 128 values as 64 pairs of e4m3 into shared memory, and nothing to global memory.
    let (mut pairs, mut global) = (0, 0);
    k.body.visit(&mut |s| {
        if let Stmt::Store { ptr, value, .. } = s {
            match info.ty(*ptr) {
                Type::Ptr(AddrSpace::Shared) if info.ty(*value) == Type::vector(Scalar::E4M3, 2) => pairs += 1,
                Type::Ptr(AddrSpace::Global) => global += 1,
                _ => {}
            }
        }
    });
    assert_eq!((pairs, global), (64, 0), "{text}");
    // Two TMA stores of 64 x 128 per warpgroup part, from the staging tile.
    let stores = ops(k).iter().filter(|o| matches!(o, Op::TmaStore { .. })).count();
    assert_eq!(stores, 2, "{text}");
}

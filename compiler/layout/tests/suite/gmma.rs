//! `wgmma` descriptors (`cutec_layout::gmma`): CuTe's canonical atoms tiled to CTA tiles give the fields CUTLASS's
//! `make_gmma_desc` gives (`include/cute/atom/mma_traits_sm90_gmma.hpp`, C3 below), the PTX ISA's worked examples
//! (§9.7.15.5.1.2.1.3) give their LBO/SBO, the address model agrees with PTX's canonical layouts evaluated by the
//! algebra, wrong layouts are refused with the first wrong element, and the accumulator layout is PTX's fragment.
//!
//! How the expected CUTLASS values are derived: `make_gmma_desc` recasts the per-MMA slice of the tile to
//! `uint128_t` (16-byte units) and reads the canonical strides: K-major `((8,n),2):((W,SBO),LBO)`, SBO =
//! `stride<0,1>`, LBO = `stride<1,0>` (1 for swizzled modes); MN-major `((W,n),(8,k))`, swizzled LBO =
//! `stride<0,1>`, SBO = `stride<1,1>`; interleaved SBO = `stride<0,1>`, LBO = `stride<1,1>`. Each k-step (and
//! each MN block) adds the `uint128_t` offset of the unswizzled layout to the start (`DescriptorIterator`). Below,
//! strides of the printed element layouts are converted to bytes (x2 for bf16, x1 for e4m3).

use cutec_layout::gmma::{GmmaSwizzle, Major, SmemDescriptor, descriptor_address, unswizzled};
use cutec_layout::*;

fn tile(expr: &str) -> ComposedLayout {
    match eval(expr) {
        Ok(Value::Composed(c)) => c,
        Ok(Value::Layout(l)) => unswizzled(l),
        other => panic!("{expr} is not a layout: {other:?}"),
    }
}

/// `(major, swizzle, lbo, sbo, starts)` of the operand.
fn fields(expr: &str, elem_bytes: i64, mn: i64, k: i64) -> (Major, GmmaSwizzle, i64, i64, Vec<Vec<i64>>) {
    let d = operand_descriptor(&tile(expr), elem_bytes, mn, k).unwrap_or_else(|e| panic!("{expr}: {e}"));
    assert_eq!(d.desc.base_offset, 0);
    assert_eq!(d.alignment, d.desc.swizzle.alignment());
    (d.major, d.desc.swizzle, d.desc.lbo_bytes, d.desc.sbo_bytes, d.starts)
}

fn refusal(expr: &str, elem_bytes: i64, mn: i64, k: i64) -> String {
    match operand_descriptor(&tile(expr), elem_bytes, mn, k) {
        Ok(d) => panic!("{expr} was accepted: {d:?}"),
        Err(e) => e.to_string(),
    }
}

const SW128_K_BF16: &str = "composition(Swizzle<3,3,3>, (8,64):(64,1))";
const SW64_K_BF16: &str = "composition(Swizzle<2,3,3>, (8,32):(32,1))";
const SW32_K_BF16: &str = "composition(Swizzle<1,3,3>, (8,16):(16,1))";
const SW128_K_E4M3: &str = "composition(Swizzle<3,4,3>, (8,128):(128,1))";
const SW64_K_E4M3: &str = "composition(Swizzle<2,4,3>, (8,64):(64,1))";
const SW32_K_E4M3: &str = "composition(Swizzle<1,4,3>, (8,32):(32,1))";
const SW128_MN_BF16: &str = "composition(Swizzle<3,3,3>, (64,8):(1,64))";
const SW64_MN_BF16: &str = "composition(Swizzle<2,3,3>, (32,8):(1,32))";
const SW32_MN_BF16: &str = "composition(Swizzle<1,3,3>, (16,8):(1,16))";
const INTER_K_BF16: &str = "(8,8):(8,1)";
const INTER_MN_BF16: &str = "(8,8):(1,8)";

fn tiled(atom: &str, shape: &str) -> String {
    format!("tile_to_shape({atom}, {shape})")
}

#[test]
fn k_major_sw128_bf16_matches_cutlass() {
    // ((8,8),(64,1)):((64,512),(1,0)): u128 ((8,8),(8,1)):((8,64),(1,0)); SBO = 64 u128 = 1024 B, LBO = 1 u128;
    // k-steps of 16 bf16 = 2 u128 = 32 B.
    let (major, sw, lbo, sbo, starts) = fields(&tiled(SW128_K_BF16, "(64,64)"), 2, 64, 16);
    assert_eq!((major, sw, lbo, sbo), (Major::K, GmmaSwizzle::B128, 16, 1024));
    assert_eq!(starts, vec![vec![0, 32, 64, 96]]);
    // 128x64 as A (two 64-row MMAs): the second block starts 64 rows * 128 B = 8192 B in.
    let (_, _, _, sbo, starts) = fields(&tiled(SW128_K_BF16, "(128,64)"), 2, 64, 16);
    assert_eq!(sbo, 1024);
    assert_eq!(starts, vec![vec![0, 32, 64, 96], vec![8192, 8224, 8256, 8288]]);
    // 256x64 as B of m64n256k16: one block of 256 rows.
    let (_, _, _, sbo, starts) = fields(&tiled(SW128_K_BF16, "(256,64)"), 2, 256, 16);
    assert_eq!((sbo, starts), (1024, vec![vec![0, 32, 64, 96]]));
}

#[test]
fn k_major_sw64_sw32_bf16_match_cutlass() {
    // SW64: ((8,16),(32,2)):((32,256),(1,4096)): SBO = 256 el = 512 B; k-steps 0, 16 el, then the second atom
    // column at 4096 el = 8192 B.
    let (major, sw, lbo, sbo, starts) = fields(&tiled(SW64_K_BF16, "(128,64)"), 2, 128, 16);
    assert_eq!((major, sw, lbo, sbo), (Major::K, GmmaSwizzle::B64, 16, 512));
    assert_eq!(starts, vec![vec![0, 32, 8192, 8224]]);
    // SW32: ((8,8),(16,4)):((16,128),(1,1024)): SBO = 128 el = 256 B, one k-step per 32-byte atom column.
    let (_, sw, lbo, sbo, starts) = fields(&tiled(SW32_K_BF16, "(64,64)"), 2, 64, 16);
    assert_eq!((sw, lbo, sbo), (GmmaSwizzle::B32, 16, 256));
    assert_eq!(starts, vec![vec![0, 2048, 4096, 6144]]);
}

#[test]
fn k_major_e4m3_matches_cutlass() {
    // SW128 e4m3: ((8,16),(128,1)):((128,1024),(1,0)); SBO = 1024 B; k32 = 32 B per step, 4 steps in BK = 128.
    let (major, sw, lbo, sbo, starts) = fields(&tiled(SW128_K_E4M3, "(128,128)"), 1, 64, 32);
    assert_eq!((major, sw, lbo, sbo), (Major::K, GmmaSwizzle::B128, 16, 1024));
    assert_eq!(starts, vec![vec![0, 32, 64, 96], vec![8192, 8224, 8256, 8288]]);
    // SW64 e4m3 (64-byte rows): ((8,16),(64,2)):((64,512),(1,8192)): SBO = 512 B.
    let (_, sw, _, sbo, starts) = fields(&tiled(SW64_K_E4M3, "(128,128)"), 1, 128, 32);
    assert_eq!((sw, sbo, starts), (GmmaSwizzle::B64, 512, vec![vec![0, 32, 8192, 8224]]));
    // SW32 e4m3: ((8,8),(32,4)):((32,256),(1,2048)): SBO = 256 B.
    let (_, sw, _, sbo, starts) = fields(&tiled(SW32_K_E4M3, "(64,128)"), 1, 64, 32);
    assert_eq!((sw, sbo, starts), (GmmaSwizzle::B32, 256, vec![vec![0, 2048, 4096, 6144]]));
}

#[test]
fn mn_major_swizzled_bf16_matches_cutlass() {
    // SW128 (128,64): ((64,2),(8,8)):((1,512),(64,1024)). As B with N = 128: u128 mode 0 (8,2):(1,64), LBO =
    // 64 u128 = 1024 B; mode 1 (8,2):(8,128), SBO = 128 u128 = 2048 B; a k-step (16 rows of K) is 2048 el = 4096 B.
    let (major, sw, lbo, sbo, starts) = fields(&tiled(SW128_MN_BF16, "(128,64)"), 2, 128, 16);
    assert_eq!((major, sw, lbo, sbo), (Major::MN, GmmaSwizzle::B128, 1024, 2048));
    assert_eq!(starts, vec![vec![0, 4096, 8192, 12288]]);
    // As A (64-row blocks): one atom per block, so LBO is unused: CuTe's complement stride, 8 u128 = 128 B.
    let (_, _, lbo, sbo, starts) = fields(&tiled(SW128_MN_BF16, "(128,64)"), 2, 64, 16);
    assert_eq!((lbo, sbo), (128, 2048));
    assert_eq!(starts, vec![vec![0, 4096, 8192, 12288], vec![1024, 5120, 9216, 13312]]);
    // SW64 (128,64): ((32,4),(8,8)):((1,256),(32,1024)): LBO = 256 el = 512 B, SBO = 1024 el = 2048 B.
    let (_, sw, lbo, sbo, _) = fields(&tiled(SW64_MN_BF16, "(128,64)"), 2, 128, 16);
    assert_eq!((sw, lbo, sbo), (GmmaSwizzle::B64, 512, 2048));
    // SW32 (64,64): ((16,4),(8,8)):((1,128),(16,512)): LBO = 256 B, SBO = 1024 B.
    let (_, sw, lbo, sbo, starts) = fields(&tiled(SW32_MN_BF16, "(64,64)"), 2, 64, 16);
    assert_eq!((sw, lbo, sbo, starts), (GmmaSwizzle::B32, 256, 1024, vec![vec![0, 2048, 4096, 6144]]));
}

#[test]
fn interleaved_atoms_match_cutlass() {
    // K-major INTER (128,64): ((8,16),(8,8)):((8,64),(1,1024)): u128 ((8,16),(1,8)):((1,8),(_,128)):
    // SBO = 8 u128 = 128 B, LBO = 128 u128 = 2048 B; a k-step is 2 chunks = 2048 el = 4096 B.
    let (major, sw, lbo, sbo, starts) = fields(&tiled(INTER_K_BF16, "(128,64)"), 2, 64, 16);
    assert_eq!((major, sw, lbo, sbo), (Major::K, GmmaSwizzle::None, 2048, 128));
    assert_eq!(starts, vec![vec![0, 4096, 8192, 12288], vec![1024, 5120, 9216, 13312]]);
    // MN-major INTER (64,64): ((8,8),(8,8)):((1,64),(8,512)): SBO = 64 el = 128 B, LBO = 512 el = 1024 B.
    let (major, sw, lbo, sbo, starts) = fields(&tiled(INTER_MN_BF16, "(64,64)"), 2, 64, 16);
    assert_eq!((major, sw, lbo, sbo), (Major::MN, GmmaSwizzle::None, 1024, 128));
    assert_eq!(starts, vec![vec![0, 2048, 4096, 6144]]);
}

#[test]
fn ptx_worked_examples() {
    // PTX §9.7.15.5.1.2.1.3, "Examples" (element layouts; the swizzle column is in bytes there, in elements here).
    // K-major, no swizzle, tf32: LBO = 64*4 = 256 B, SBO = 32*4 = 128 B.
    let (_, _, lbo, sbo, _) = fields("((8,2),(4,4)):((4,32),(1,64))", 4, 16, 8);
    assert_eq!((lbo, sbo), (256, 128));
    // MN-major, no swizzle, bf16: LBO = 128*2 = 256 B, SBO = 64*2 = 128 B.
    let (_, _, lbo, sbo, _) = fields("((8,1,2),(8,2)):((1,8,64),(8,128))", 2, 16, 16);
    assert_eq!((lbo, sbo), (256, 128));
    // MN-major, 32B, bf16: LBO = 256 B, SBO = 512 B.
    let (_, _, lbo, sbo, _) = fields("composition(Swizzle<1,3,3>, ((8,2,2),(8,2)):((1,8,128),(16,256)))", 2, 32, 16);
    assert_eq!((lbo, sbo), (256, 512));
    // MN-major, 64B, bf16: LBO = 512 B, SBO = 1024 B.
    let (_, _, lbo, sbo, _) = fields("composition(Swizzle<2,3,3>, ((8,4,2),(8,2)):((1,8,256),(32,512)))", 2, 64, 16);
    assert_eq!((lbo, sbo), (512, 1024));
}

#[test]
fn a_stage_sliced_off_a_ring_moves_every_start() {
    // Stage 2 of a 4-stage 128x64 bf16 ring: the slice is Sw<3,3,3> o 16384 o ..., 16384 el = 32768 B.
    let ring = tiled(SW128_K_BF16, "(128,64,4)");
    let (_, _, lbo, sbo, starts) = fields(&format!("slice((_,_,2), {ring})"), 2, 64, 16);
    assert_eq!((lbo, sbo), (16, 1024));
    assert_eq!(starts, vec![vec![32768, 32800, 32832, 32864], vec![40960, 40992, 41024, 41056]]);
}

/// PTX's canonical layouts (§9.7.15.5.1.2.1.3) written in CuTe notation with this crate's algebra, in elements,
/// against `descriptor_address` for every element of one MMA operand: the formula and the table agree.
#[test]
fn address_model_is_ptx_canonical_layouts() {
    let (lbo, sbo) = (2048, 4096); // bytes, apart from any atom, so a wrong stride would show
    for (major, bits, eb, mn) in [
        (Major::K, 0, 2, 64),
        (Major::K, 1, 2, 64),
        (Major::K, 2, 2, 64),
        (Major::K, 3, 2, 64),
        (Major::K, 3, 1, 64),
        (Major::K, 0, 4, 64),
        (Major::MN, 0, 2, 64),
        (Major::MN, 1, 2, 64),
        (Major::MN, 2, 2, 64),
        (Major::MN, 3, 2, 128),
    ] {
        let sw = GmmaSwizzle::from_bits(bits).unwrap();
        let (t, w, k) = (16 / eb, sw.chunks(), 32 / eb);
        let (l, s) = (lbo / eb, sbo / eb);
        let canonical = match (major, bits) {
            (Major::K, 0) => format!("(({},{}),({t},2)):(({t},{s}),(1,{l}))", 8, mn / 8),
            (Major::K, _) => format!("((8,{}),({t},2)):(({},{s}),(1,{t}))", mn / 8, w * t),
            (Major::MN, 0) => format!("(({t},1,{}),(8,{})):((1,{t},{s}),({t},{l}))", mn / t, k / 8),
            (Major::MN, _) => format!("(({t},{w},{}),(8,{})):((1,{t},{l}),({},{s}))", mn / (t * w), k / 8, w * t),
        };
        let layout = parse_layout(&canonical).unwrap();
        let swizzle = sw.element_swizzle(eb).unwrap();
        let desc =
            SmemDescriptor { start_offset_bytes: 0, lbo_bytes: lbo, sbo_bytes: sbo, swizzle: sw, base_offset: 0 };
        for kk in 0..k {
            for m in 0..mn {
                let c = Coord::Tuple(vec![m.into(), kk.into()]);
                let expected = swizzle.apply(layout.call(&c).unwrap().value().unwrap()) * eb;
                assert_eq!(
                    descriptor_address(&desc, major, eb, m, kk),
                    expected,
                    "{major} {sw} {canonical} ({m},{kk})"
                );
            }
        }
    }
}

#[test]
fn encoding_follows_the_ptx_bit_layout() {
    // K-major SW128 bf16 A at smem address 1024, k-step 1: start (1024 + 32) >> 4 = 66, LBO 1, SBO 64, type 1.
    let d = SmemDescriptor {
        start_offset_bytes: 32,
        lbo_bytes: 16,
        sbo_bytes: 1024,
        swizzle: GmmaSwizzle::B128,
        base_offset: 0,
    };
    assert_eq!(d.encode(1024), 66 | 1 << 16 | 64 << 32 | 1 << 62);
    assert_eq!(d.encode(1024), d.encode(0) + (1024 >> 4));
    for (sw, ty) in [(GmmaSwizzle::None, 0u64), (GmmaSwizzle::B32, 3), (GmmaSwizzle::B64, 2), (GmmaSwizzle::B128, 1)] {
        let d =
            SmemDescriptor { start_offset_bytes: 4096, lbo_bytes: 2048, sbo_bytes: 128, swizzle: sw, base_offset: 5 };
        let bits = d.encode(0x8000);
        assert_eq!(bits >> 62, ty);
        assert_eq!((bits >> 49) & 7, 5);
        assert_eq!(SmemDescriptor::decode(bits), d.with_start(0x8000 + 4096));
    }
    // matrix-descriptor-encode keeps address bits 4..18: an address of 256 KiB wraps to 0.
    assert_eq!(d.with_start(0).encode(1 << 18) & 0x3FFF, 0);
}

#[test]
fn wrong_layouts_are_refused_with_the_first_wrong_element() {
    // Row-major 64x64 bf16 without swizzle: rows of 128 B where the core matrix needs 16 B.
    assert_eq!(
        refusal("(64,64):(64,1)", 2, 64, 16),
        "element (1, 0) is at byte 128 of the tile; an unswizzled K-major descriptor would read byte 16"
    );
    // A 128-byte swizzle on 64-byte rows (row 1 would be at 128, its chunk 0 swizzled to 1: 144).
    assert_eq!(
        refusal(&tiled("composition(Swizzle<3,3,3>, (8,32):(32,1))", "(64,64)"), 2, 64, 16),
        "element (1, 0) is at byte 64 of the tile; a 128-byte-swizzled K-major descriptor would read byte 144"
    );
    // 8-row groups 4..7 placed apart from 0..3: the descriptor's one SBO cannot reach them.
    assert_eq!(
        refusal("((8,4,2),(8,8)):((8,64,512),(1,1024))", 2, 64, 16),
        "element (32, 0) is at byte 1024 of the tile; an unswizzled K-major descriptor would read byte 512"
    );
    // CuTe's byte swizzle left on bf16 elements.
    assert!(
        refusal("composition(Swizzle<3,4,3>, (64,64):(64,1))", 2, 64, 16)
            .starts_with("the swizzle Sw<3,4,3> is not one")
    );
    assert!(refusal("composition(Swizzle<2,3,2>, (64,64):(64,1))", 2, 64, 16).contains("Sw<2,3,3> (64-byte)"));
    // An MN-major e4m3 tile: 8-bit wgmma has no transpose.
    assert!(
        refusal(&tiled("composition(Swizzle<3,4,3>, (128,8):(1,128))", "(128,128)"), 1, 64, 32)
            .contains("wgmma transposes only 16-bit operands")
    );
    // Neither mode contiguous.
    assert!(refusal("(64,64):(2,128)", 2, 64, 16).contains("neither mode"));
    // Shapes: not whole MMAs, not a wgmma K, rank 3.
    assert!(refusal(&tiled(SW128_K_BF16, "(64,64)"), 2, 128, 16).contains("not a whole number of 128x16"));
    assert!(refusal(&tiled(SW128_K_BF16, "(64,64)"), 2, 64, 32).contains("K is 32 bytes"));
    assert!(refusal(&tiled(SW128_K_BF16, "(64,64,2)"), 2, 64, 16).contains("rank-2"));
}

#[test]
fn misaligned_fields_and_dynamic_strides_are_refused() {
    // Groups of 8 rows 136 bytes apart.
    assert_eq!(
        refusal("((8,8),(8,8)):((8,68),(1,1024))", 2, 64, 16),
        "the stride dimension byte offset would be 136 bytes; the descriptor holds multiples of 16 from 0 to 262128"
    );
    // A tile starting 4 bf16 (8 bytes) into its buffer.
    let mut t = tile(&tiled(INTER_K_BF16, "(64,64)"));
    t.offset = Int::Static(4);
    let err = operand_descriptor(&t, 2, 64, 16).unwrap_err();
    assert_eq!(
        err.to_string(),
        "the start offset would be 8 bytes; the descriptor holds multiples of 16 from 0 to 262128"
    );
    let dynamic = Layout::new(
        IntTuple::ints(&[64, 64]),
        IntTuple::Tuple(vec![IntTuple::Int(Int::named("ld")), IntTuple::int(1)]),
    )
    .unwrap();
    let err = operand_descriptor(&gmma::unswizzled(dynamic), 2, 64, 16).unwrap_err();
    assert!(err.to_string().contains("has run-time shapes, strides or offset"), "{err}");
}

/// PTX §9.7.15.5.1.1.1, Figure 149 (the `m64nNk16` accumulator D, f32): warp `w` of the warpgroup holds rows
/// `16w ..`, and within a warp the fragment is `mma.m16n8`'s accumulator (§9.7.14.5.8: `row = groupID` for
/// `c0, c1`, `+ 8` for `c2, c3`; `col = threadID_in_group * 2 + (i & 1)`) repeated every 8 columns: register
/// `d_i` of lane `l` in warp `w` is row `16w + l/4 + 8*((i >> 1) & 1)`, column `8*(i >> 2) + 2*(l % 4) + (i & 1)`.
#[test]
fn accumulator_layout_is_the_ptx_fragment() {
    for n in [8, 16, 64, 128, 184, 256] {
        let layout = wgmma_accumulator_layout(n).unwrap();
        let mut seen = vec![false; 64 * n as usize];
        for thread in 0..128i64 {
            let (warp, lane) = (thread / 32, thread % 32);
            for i in 0..n / 2 {
                let row = 16 * warp + lane / 4 + 8 * ((i >> 1) & 1);
                let col = 8 * (i >> 2) + 2 * (lane % 4) + (i & 1);
                let c = Coord::Tuple(vec![thread.into(), i.into()]);
                let index = layout.call(&c).unwrap().value().unwrap();
                assert_eq!(index, row + 64 * col, "N={n}, thread {thread}, d{i}");
                seen[index as usize] = true;
            }
        }
        assert!(seen.iter().all(|&s| s), "N={n}: the layout misses part of the 64x{n} tile");
    }
    assert_eq!(wgmma_accumulator_layout(8).unwrap().to_string(), "((4,8,4),(2,2)):((128,1,16),(64,8))");
    assert_eq!(wgmma_accumulator_layout(256).unwrap().to_string(), "((4,8,4),(2,2,32)):((128,1,16),(64,8,512))");
    assert!(wgmma_accumulator_layout(12).is_err() && wgmma_accumulator_layout(264).is_err());
}

/// The A operand in registers (wgmma "RS"), written out from the two sources independently of the code:
/// * PTX §9.7.15.5.1.1.1, the A fragment of `m64nNk16` for `.f16`/`.bf16`: warp `w` holds rows `16w ..`, and
///   register `a_i` (`i` in 0..8) of lane `l` is row `16w + l/4 + 8*((i >> 1) & 1)` (`groupID` for a0, a1, a4,
///   a5; `+ 8` for a2, a3, a6, a7), column `2*(l % 4) + (i & 1) + 8*(i >> 2)`;
/// * CUTLASS `ALayout_64x16 = Layout<Shape<Shape<_4,_8,_4>,Shape<_2,_2,_2>>,
///   Stride<Stride<_128,_1,_16>,Stride<_64,_8,_512>>>` (`mma_traits_sm90_gmma.hpp`), evaluated here by hand as
///   `t0*128 + t1 + t2*16 + v0*64 + v1*8 + v2*512` with `t = t0 + 4 t1 + 32 t2`, `v = v0 + 2 v1 + 4 v2`;
///
/// For K > 16, CuTe's fragment is `((2,2,2), K/16)` (compact): k-step `s` is values `8s .. 8s+7`, at `+ 16 s`
/// columns.
#[test]
fn a_register_layout_is_the_ptx_fragment_and_cutlass_alayout() {
    for k in [16, 32, 64, 128, 256] {
        let layout = wgmma_a_register_layout(k).unwrap();
        let mut seen = vec![false; 64 * k as usize];
        for thread in 0..128i64 {
            let (warp, lane) = (thread / 32, thread % 32);
            for v in 0..k / 2 {
                let (step, i) = (v / 8, v % 8);
                let row = 16 * warp + lane / 4 + 8 * ((i >> 1) & 1);
                let col = 16 * step + 2 * (lane % 4) + (i & 1) + 8 * (i >> 2);
                let (t0, t1, t2) = (thread % 4, (thread / 4) % 8, thread / 32);
                let (v0, v1, v2) = (i % 2, (i / 2) % 2, i / 4);
                let cutlass = t0 * 128 + t1 + t2 * 16 + v0 * 64 + v1 * 8 + v2 * 512 + 1024 * step;
                assert_eq!(cutlass, row + 64 * col, "the two sources disagree at K={k}, thread {thread}, a{v}");
                let c = Coord::Tuple(vec![thread.into(), v.into()]);
                let index = layout.call(&c).unwrap().value().unwrap();
                assert_eq!(index, row + 64 * col, "K={k}, thread {thread}, a{v}");
                seen[index as usize] = true;
            }
        }
        assert!(seen.iter().all(|&s| s), "K={k}: the layout misses part of the 64x{k} tile");
    }
    assert_eq!(wgmma_a_register_layout(16).unwrap().to_string(), "((4,8,4),(2,2,2)):((128,1,16),(64,8,512))");
    for bad in [8, 24, 0, -16, 272] {
        assert!(wgmma_a_register_layout(bad).is_err(), "K={bad}");
    }
}

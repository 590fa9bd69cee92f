#!/usr/bin/env bash
# Build step of the GPU harness, run on the build machine (no GPU needed): a release cutec and the first-light
# modules (PTX + manifest + cubin), all into .gpu/, which the device call carries. Then, on the GPU machine:
#   bash scripts/gpu/first_light.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/env.sh
GPU_DIR=${GPU_DIR:-.gpu}
mkdir -p "$GPU_DIR"
# Where cargo writes (a worktree's build may set CARGO_TARGET_DIR).
out=${CARGO_TARGET_DIR:-target}/release
cargo build --release --locked -q -p cutec
cp "$out/cutec" "$GPU_DIR/cutec"
c="$GPU_DIR/cutec"
"$c" build examples/copy.cute --emit ptx,manifest,cubin -o "$GPU_DIR"
"$c" build examples/grid_copy.cute --emit ptx,manifest,cubin -o "$GPU_DIR"
"$c" build examples/gemm_simt.cute --emit ptx,manifest,cubin -o "$GPU_DIR"
# Variants that require whole tiles (a launch requirement instead of predicates): what predication costs, measured
# in the same run by bounds_check.py.
variant() { # variant NAME SOURCE ANCHOR LINE: SOURCE with LINE inserted before the line starting with ANCHOR
    awk -v anchor="$3" -v line="$4" 'index($0, anchor) == 1 && !done { print line; done = 1 } { print }' "$2" \
        > "$GPU_DIR/$1.cute"
    grep -qF "$4" "$GPU_DIR/$1.cute" || { echo "build.sh: $1: anchor not found" >&2; exit 1; }
    "$c" build "$GPU_DIR/$1.cute" --emit ptx,manifest,cubin -o "$GPU_DIR"
}
variant gemm_simt_div examples/gemm_simt.cute "    let sa = make_tensor" \
    '    static_assert(M % BM == 0 && N % BN == 0 && K % BK == 0, "whole tiles");'
variant copy_div examples/copy.cute "    let gx = local_tile" '    static_assert(N % (THREADS * VEC) == 0, "whole tiles");'
"$c" build examples/transpose.cute --emit ptx,manifest,cubin -o "$GPU_DIR"
# Hopper by hand: TMA copies and the warp-specialized wgmma GEMM (scripts/gpu/hopper_check.py).
"$c" build examples/tma_copy.cute --emit ptx,manifest,cubin -o "$GPU_DIR"
"$c" build examples/tma_copy_batched.cute --emit ptx,manifest,cubin -o "$GPU_DIR"
"$c" build examples/dsmem_exchange.cute --emit ptx,manifest,cubin -o "$GPU_DIR"
"$c" build examples/gemm_sm90_manual.cute --emit ptx,manifest,cubin -o "$GPU_DIR"
# wgmma with A from registers (hopper_check.py --only rs).
"$c" build examples/wgmma_rs.cute --emit ptx,manifest,cubin -o "$GPU_DIR"
defined() { # defined NAME EXAMPLE -D...: EXAMPLE built with the given const parameters, as NAME.{ptx,json,cubin}
    local name=$1 k=$2
    shift 2
    "$c" build "examples/$k.cute" "$@" --emit ptx,manifest,cubin -o "$GPU_DIR/$name"
    for ext in ptx json cubin; do mv "$GPU_DIR/$name/$k.$ext" "$GPU_DIR/$name.$ext"; done
    sed -i "s/\"$k.ptx\"/\"$name.ptx\"/" "$GPU_DIR/$name.json"
    rmdir "$GPU_DIR/$name"
}
# The scheduled GEMMs (scripts/gpu/schedule_check.py): the plain loops, and the same loop without `pipelined`.
"$c" build examples/gemm_sm90.cute --emit ptx,manifest,cubin -o "$GPU_DIR"
"$c" build examples/gemm_pipelined.cute --emit ptx,manifest,cubin -o "$GPU_DIR"
"$c" build examples/gemm_sm90_persistent.cute --emit ptx,manifest,cubin -o "$GPU_DIR"
"$c" build examples/gemm_epilogue.cute --emit ptx,manifest,cubin -o "$GPU_DIR"
"$c" build examples/row_sum.cute --emit ptx,manifest,cubin -o "$GPU_DIR"
"$c" build examples/gemm_batched.cute --emit ptx,manifest,cubin -o "$GPU_DIR"
"$c" build examples/gemm_fp8.cute --emit ptx,manifest,cubin -o "$GPU_DIR"
"$c" build examples/gemm_fp8_e4m3_out.cute --emit ptx,manifest,cubin -o "$GPU_DIR"
"$c" build examples/gemm_fp8_rowwise.cute --emit ptx,manifest,cubin -o "$GPU_DIR"
# The fused epilogue run by the producer's spare warps beside the next mainloop (epilogue_overlap_check.py).
"$c" build examples/gemm_epilogue_manual.cute --emit ptx,manifest,cubin -o "$GPU_DIR"
# Split-K for small M (scripts/gpu/splitk_check.py compiles and launches these from Python, and times the pair):
# 64-row tiles, direct or through the workspace, bf16 and e4m3, the reduction through distributed shared memory
# (behind gemm_pipelined's loop or a warp-specialized one), 128-row tiles; and the swapped operands for M <= 32.
"$c" build examples/gemm_splitk.cute --emit ptx,manifest,cubin -o "$GPU_DIR"
"$c" build examples/gemm_splitk_cluster.cute --emit ptx,manifest,cubin -o "$GPU_DIR"
"$c" build examples/gemm_swap_ab.cute --emit ptx,manifest,cubin -o "$GPU_DIR"
# gemm_sm90.cute without `persistent`: its grid of tiles launched as it is, one CTA per tile.
sed 's/ persistent(raster = grouped(GROUP_M))//' examples/gemm_sm90.cute > "$GPU_DIR/gemm_sm90_grid.cute"
grep -q "persistent(raster" "$GPU_DIR/gemm_sm90_grid.cute" && { echo "build.sh: gemm_sm90_grid kept persistent" >&2; exit 1; }
"$c" build "$GPU_DIR/gemm_sm90_grid.cute" --emit ptx,manifest,cubin -o "$GPU_DIR"
# gemm_epilogue.cute with a bf16 bias: a 16-bit global tensor read into the f32 epilogue (ld.global.b16, cvt.f32.bf16).
sed 's/bias: Tensor<f32, N:1, gmem>/bias: Tensor<bf16, N:1, gmem>/' examples/gemm_epilogue.cute \
    > "$GPU_DIR/gemm_epilogue_bf16bias.cute"
grep -q "bias: Tensor<bf16" "$GPU_DIR/gemm_epilogue_bf16bias.cute" || { echo "build.sh: the bias stayed f32" >&2; exit 1; }
"$c" build "$GPU_DIR/gemm_epilogue_bf16bias.cute" --emit ptx,manifest,cubin -o "$GPU_DIR"
# The epilogue's parts, timed against each other by epilogue_variants.py: the bias alone (`map` adds it), GELU
# alone (`map = gelu`, no `with`); and the example as it was before `with` (the bias added in the consumers'
# registers from a tile copied beside the loop, `map = gelu`).
sed 's/    return gelu(v + b);/    return v + b;/' examples/gemm_epilogue.cute > "$GPU_DIR/gemm_epilogue_biasonly.cute"
sed 's/map = bias_gelu, with = bias_row);/map = gelu);/' \
    examples/gemm_epilogue.cute > "$GPU_DIR/gemm_epilogue_geluonly.cute"
"$c" build scripts/gpu/gemm_epilogue_registers.cute --emit ptx,manifest,cubin -o "$GPU_DIR"
for v in biasonly geluonly; do
    cmp -s examples/gemm_epilogue.cute "$GPU_DIR/gemm_epilogue_$v.cute" && { echo "build.sh: gemm_epilogue_$v is the example" >&2; exit 1; }
    "$c" build "$GPU_DIR/gemm_epilogue_$v.cute" --emit ptx,manifest,cubin -o "$GPU_DIR"
done
sed 's/ pipelined(stages = STAGES)//' examples/gemm_pipelined.cute > "$GPU_DIR/gemm_plain.cute"
grep -q "pipelined(" "$GPU_DIR/gemm_plain.cute" && { echo "build.sh: gemm_plain kept pipelined" >&2; exit 1; }
"$c" build "$GPU_DIR/gemm_plain.cute" --emit ptx,manifest,cubin -o "$GPU_DIR"
# The epilogue from registers (any N), timed against the default one through shared memory and TMA.
sed 's/    store(acc, local_tile(c, (BM, BN), (block_idx.x, block_idx.y)));/    store(acc, mma.partition_c(local_tile(c, (BM, BN), (block_idx.x, block_idx.y))));/' \
    examples/gemm_sm90.cute > "$GPU_DIR/gemm_sm90_regs.cute"
grep -q "mma.partition_c(local_tile(c" "$GPU_DIR/gemm_sm90_regs.cute" || { echo "build.sh: gemm_sm90_regs kept its epilogue" >&2; exit 1; }
"$c" build "$GPU_DIR/gemm_sm90_regs.cute" -D STAGES=4 --emit ptx,manifest,cubin -o "$GPU_DIR"
# B stored K x N (row-major), read N-major by the wgmma.
"$c" build examples/gemm_sm90_kn.cute --emit ptx,manifest,cubin -o "$GPU_DIR"
# The same in the plain form, scheduled (scripts/gpu/kn_check.py), and its variants timed in the same run.
"$c" build examples/gemm_kn.cute --emit ptx,manifest,cubin -o "$GPU_DIR"
# The book's steps towards it (book/src/hopper.md), timed in the same run.
"$c" build book/listings/hopper_1_one_wgmma.cute --emit ptx,manifest,cubin -o "$GPU_DIR"
"$c" build book/listings/hopper_2_ring.cute --emit ptx,manifest,cubin -o "$GPU_DIR"
# Variants timed in the same run: the epilogue from registers (any N; the ring then has room for 4 stages), and
# the tiles in plain row order (no grouping for L2).
# The scheduled GEMMs with the whole tile staged (3 stages) against their default, the epilogue in pieces (a 4-stage
# ring), timed in the same rounds by stages_check.py.
defined gemm_fp8_s3 gemm_fp8 -D STAGES=3
defined gemm_sm90_s3 gemm_sm90 -D STAGES=3
# gemm_epilogue with 192-column tiles: the consumers' 128 threads do not divide a row's 24 pieces (with_run.sh).
defined gemm_epilogue_bn192 gemm_epilogue -D BN=192
defined gemm_sm90_manual_regs gemm_sm90_manual -D TMA_STORE=false -D STAGES=4
defined gemm_sm90_manual_rows gemm_sm90_manual -D GROUP_M=1
# Without clusters: every CTA loads its whole tile of B.
defined gemm_sm90_manual_c1 gemm_sm90_manual -D CLUSTER_M=1
defined gemm_sm90_persistent_c1 gemm_sm90_persistent -D CLUSTER_M=1
# Narrower tiles: twice as many for the small-M shapes, which leave most SMs idle with 128 x 256 tiles.
defined gemm_sm90_manual_bn128 gemm_sm90_manual -D BN=128 -D STAGES=4
# gemm_kn without clusters, with 128 x 128 tiles, and with clusters along N sharing A instead of B.
defined gemm_kn_c1 gemm_kn -D CLUSTER_M=1
defined gemm_kn_bn128 gemm_kn -D BN=128 -D STAGES=5
defined gemm_kn_bn128_c1 gemm_kn -D BN=128 -D STAGES=5 -D CLUSTER_M=1
sed -e 's/launch(grid = (ceil_div(M, CLUSTER_M \* BM) \* CLUSTER_M, ceil_div(N, BN)), block = (384), cluster = (CLUSTER_M, 1))/launch(grid = (ceil_div(M, BM), ceil_div(N, CLUSTER_M * BN) * CLUSTER_M), block = (384), cluster = (1, CLUSTER_M))/' \
    -e 's/tma_load(ga\[_, _, k\], sa)/tma_load(ga[_, _, k], sa, multicast = CLUSTER_M)/' \
    -e 's/tma_load(gb\[_, _, k\], sb, multicast = CLUSTER_M)/tma_load(gb[_, _, k], sb)/' examples/gemm_kn.cute > "$GPU_DIR/gemm_kn_ma.cute"
grep -q "cluster = (1, CLUSTER_M)" "$GPU_DIR/gemm_kn_ma.cute" && grep -q "sa, multicast" "$GPU_DIR/gemm_kn_ma.cute" \
    || { echo "build.sh: gemm_kn_ma kept its clusters" >&2; exit 1; }
"$c" build "$GPU_DIR/gemm_kn_ma.cute" --emit ptx,manifest,cubin -o "$GPU_DIR"
# 256 x 8192 x 8192, the table's lowest bf16 shape, where cuBLAS runs 128 x 128 tiles in clusters of 2
# (docs/perf/small-m.md): those tiles scheduled and by hand, with and without the cluster, a k-tile of 128, and
# the dispatch's 64 x 256 direct launch, timed by stages_check.py --shapes and counted by gemm_ncu.sh.
defined rows256_sm90_bn128_s6 gemm_sm90 -D BN=128 -D STAGES=6
defined rows256_sm90_bn128_bk128 gemm_sm90 -D BN=128 -D BK=128 -D STAGES=3
defined rows256_manual_bn128_s6 gemm_sm90_manual -D BN=128 -D STAGES=6
defined rows256_manual_bn128_s6_c1 gemm_sm90_manual -D BN=128 -D STAGES=6 -D CLUSTER_M=1
defined rows256_manual_bn128_s6_e64b2 gemm_sm90_manual -D BN=128 -D STAGES=6 -D EPI_N=64 -D EPI_BUFS=2
defined rows256_direct_128x128 gemm_splitk -D BM=128 -D BN=128 -D STAGES=6
defined rows256_direct_64x256 gemm_splitk -D BM=64 -D BN=256 -D STAGES=5
# A 4-stage ring beside the epilogue staged in pieces (cutec tune's lead at the large shapes, docs/perf/hopper-gemm.md):
# 128-column pieces, with other GROUP_M, and 64-column pieces double-buffered; timed by stages_check.py.
defined ring4_e128 gemm_sm90_manual -D STAGES=4 -D EPI_N=128
defined ring4_e128_g4 gemm_sm90_manual -D STAGES=4 -D EPI_N=128 -D GROUP_M=4
defined ring4_e128_g16 gemm_sm90_manual -D STAGES=4 -D EPI_N=128 -D GROUP_M=16
defined ring4_e64_b2 gemm_sm90_manual -D STAGES=4 -D EPI_N=64 -D EPI_BUFS=2
# Pingpong (scripts/gpu/pingpong_check.py): each consumer warpgroup on its own tiles; 128 x 128 tiles per consumer.
"$c" build examples/gemm_sm90_pingpong.cute --emit ptx,manifest,cubin -o "$GPU_DIR"
defined gemm_sm90_pingpong_128 gemm_sm90_pingpong -D BM=128 -D BN=128 -D STAGES=6
# fp8 (scripts/gpu/fp8_check.py): the e4m3 GEMM, its epilogue from registers (any N), and the conversions.
"$c" build examples/gemm_fp8_manual.cute --emit ptx,manifest,cubin -o "$GPU_DIR"
defined gemm_fp8_manual_regs gemm_fp8_manual -D TMA_STORE=false -D STAGES=4
"$c" build scripts/gpu/fp8_convert.cute --emit ptx,manifest,cubin -o "$GPU_DIR"
# The same transpose with a plain row-major shared-memory tile: the swizzle's effect, measured in the same run.
sed 's/composition(Swizzle<5, 0, 5>, (TILE, TILE):(TILE, 1))/(TILE, TILE):(TILE, 1)/' examples/transpose.cute \
    > "$GPU_DIR/transpose_noswizzle.cute"
grep -q "composition(Swizzle" "$GPU_DIR/transpose_noswizzle.cute" && { echo "build.sh: the no-swizzle variant kept its swizzle" >&2; exit 1; }
"$c" build "$GPU_DIR/transpose_noswizzle.cute" --emit ptx,manifest,cubin -o "$GPU_DIR"
for spec in softmax:1024 softmax:4096 softmax_warp:1024 rmsnorm:4096 rmsnorm:16384; do
    k=${spec%%:*}
    n=${spec##*:}
    "$c" build "examples/$k.cute" -D N=$n --emit ptx,manifest,cubin -o "$GPU_DIR/${k}_$n"
    for ext in ptx json cubin; do mv "$GPU_DIR/${k}_$n/$k.$ext" "$GPU_DIR/${k}_$n.$ext"; done
    # The manifest names its module file; keep it pointing at the renamed PTX.
    sed -i "s/\"$k.ptx\"/\"${k}_$n.ptx\"/" "$GPU_DIR/${k}_$n.json"
    rmdir "$GPU_DIR/${k}_$n"
done
ls -l "$GPU_DIR"
# The runtime's GPU smoke tests: its launch-argument cache, and its random fill against the host reference (run by
# first_light.sh).
cargo build --release --locked -q -p cutec-runtime --example launch_check --example fill_check --example tensor_map_check \
    --example tensor_map_param
cp "$out/examples/launch_check" "$GPU_DIR/launch_check"
cp "$out/examples/fill_check" "$GPU_DIR/fill_check"
cp "$out/examples/tensor_map_check" "$GPU_DIR/tensor_map_check"
cp "$out/examples/tensor_map_param" "$GPU_DIR/tensor_map_param"

#!/usr/bin/env bash
# Build step of entities_check.py (the schedule-entities work, issue 32), on the build machine: the release
# cutec, the new modules, and the modules the previous compiler (BASE, a cutec binary built from the commit
# before the change) makes of the same sources, all into $GPU_DIR (default .gpu), which the device call carries.
#   BASE=/tmp/cutec-base bash scripts/gpu/entities_build.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/env.sh
GPU_DIR=${GPU_DIR:-.gpu}
base=${BASE:?BASE=path to the previous compiler}
mkdir -p "$GPU_DIR"
cargo build --release --locked -q -p cutec
c="${CARGO_TARGET_DIR:-target}/release/cutec"
# Compressed, to travel (gpu_env.sh unpacks it there).
rm -f "$GPU_DIR/cutec"
gzip -c "$c" > "$GPU_DIR/cutec.gz"
"$c" build scripts/gpu/wgmma_generic_tiles.cute --emit ptx,manifest,cubin -o "$GPU_DIR"
"$c" build scripts/gpu/ws_ring_sum.cute --emit ptx,manifest,cubin -o "$GPU_DIR"
"$c" build examples/row_sum.cute --emit ptx,manifest,cubin -o "$GPU_DIR"
# NAME SOURCE -D..: SOURCE built with the given const parameters, as NAME.{ptx,json,cubin}
defined() {
    local name=$1 src=$2 stem
    shift 2
    stem=$(basename "$src" .cute)
    "$c" build "$src" "$@" --emit ptx,manifest,cubin -o "$GPU_DIR/$name"
    for ext in ptx json cubin; do mv "$GPU_DIR/$name/$stem.$ext" "$GPU_DIR/$name.$ext"; done
    sed -i "s/\"$stem.ptx\"/\"$name.ptx\"/" "$GPU_DIR/$name.json"
    rmdir "$GPU_DIR/$name"
}
# The fused epilogue with a fourth stage: the whole staging tile no longer fits beside the ring, so the consumer
# warpgroups apply `map` to their pieces (refused before, E0324); and the default, whose spare warps apply it.
"$c" build examples/gemm_epilogue.cute --emit ptx,manifest,cubin -o "$GPU_DIR"
defined gemm_epilogue_s4 examples/gemm_epilogue.cute -D STAGES=4
# Two pipelined loops in one warp-specialized kernel, a ring each.
"$c" build scripts/gpu/gemm_two_loops.cute --emit ptx,manifest,cubin -o "$GPU_DIR"
# The book's reduction across a cluster (book/listings/cluster_row_sum.cute).
"$c" build book/listings/cluster_row_sum.cute --emit ptx,manifest,cubin -o "$GPU_DIR"
# previous NAME SOURCE: SOURCE built by the previous compiler, as NAME.{ptx,json}
previous() {
    local name=$1 src=$2 stem tmp
    stem=$(basename "$src" .cute)
    tmp=$(mktemp -d)
    "$base" build "$src" --emit ptx,manifest -o "$tmp"
    mv "$tmp/$stem.ptx" "$GPU_DIR/$name.ptx"
    sed "s/\"$stem.ptx\"/\"$name.ptx\"/" "$tmp/$stem.json" > "$GPU_DIR/$name.json"
    rm -rf "$tmp"
}
# The plain warp-specialized loop, the small-M kernels whose order the raster changes, each both ways.
"$c" build scripts/gpu/gemm_ws_plain.cute --emit ptx,manifest,cubin -o "$GPU_DIR"
"$c" build examples/gemm_swap_ab.cute --emit ptx,manifest,cubin -o "$GPU_DIR"
"$c" build examples/gemm_splitk.cute --emit ptx,manifest,cubin -o "$GPU_DIR"
previous gemm_ws_plain_base scripts/gpu/gemm_ws_plain.cute
previous gemm_swap_ab_base examples/gemm_swap_ab.cute
previous gemm_splitk_base examples/gemm_splitk.cute
previous wgmma_generic_tiles_base scripts/gpu/wgmma_generic_tiles.cute
previous row_sum_base examples/row_sum.cute
# Stores every thread runs beside a warp-specialized loop (entities_check.py --placement), both ways.
"$c" build scripts/gpu/ws_every_thread.cute --emit ptx,manifest,cubin -o "$GPU_DIR"
previous ws_every_thread_base scripts/gpu/ws_every_thread.cute

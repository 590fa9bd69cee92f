#!/usr/bin/env bash
# One GPU call: the fused epilogue's parts (epilogue_variants.py, issue 16), the harness's GEMM tables with the
# split-K dispatch column and B stored K x N (gemm_table.py, issue 17), and pingpong against the cooperative
# kernel (pingpong_check.py, issue 17). Needs, in $GPU_DIR, what
# scripts/gpu/build.sh writes and the release wheel of the Python package
# (`maturin build --release -m python/Cargo.toml -o DIR`); `cutec` may be gzipped there (`cutec.gz`) to fit the
# carry. Run from scripts/gpu on the GPU machine:
#   GPU_DIR=../../.gpus bash table_run.sh [--kn]   (--kn: only the B stored K x N table, with the split-K check)
set -u
cd "$(dirname "$0")"
. ./gpu_env.sh
status=0
if [ "${1:-}" != "--kn" ]; then
    timeout 170 python3 epilogue_variants.py || status=1
    echo "== epilogue_variants.py done after ${SECONDS}s"
fi
timeout 340 python3 gemm_table.py "$@" || status=1
echo "== gemm_table.py done after ${SECONDS}s"
# The split-K kernels from the Python package: ragged shapes, the reduction's order, run-to-run bits.
timeout 200 python3 splitk_check.py --only check || status=1
echo "== splitk_check.py --only check done after ${SECONDS}s"
# Pingpong against the cooperative kernel: ragged and table shapes checked, then timed against it and cuBLAS.
if [ "${1:-}" != "--kn" ]; then
    timeout 120 python3 pingpong_check.py --variants pp,gemm_sm90_pingpong_128 || status=1
    echo "== pingpong_check.py done after ${SECONDS}s"
fi
exit $status

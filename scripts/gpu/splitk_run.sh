#!/usr/bin/env bash
# One GPU call for small M (issue 17, item 2): splitk_check.py's correctness (bf16 and e4m3: split-K, swapped
# operands, clusters sharing B, the warp-specialized cluster reduction, on ragged shapes; run-to-run bits) and
# its sweep against cuBLAS and torch._scaled_mm in interleaved rounds; with --table the harness's GEMM tables
# (gemm_table.py, whose `dispatch` columns are splitk_check's plans); then Nsight Compute's counters of the
# plans' launches at M = 16 and 256 and of their anchors. Needs in $GPU_DIR the release wheel of the Python
# package and, for --table, what scripts/gpu/build.sh writes (`cutec` may be gzipped: `cutec.gz`). Run from
# scripts/gpu on the GPU machine:
#   GPU_DIR=../../.gpus bash splitk_run.sh [--table] [--no-ncu]
set -u
cd "$(dirname "$0")"
. ./gpu_env.sh
table=0 ncu=1
for arg in "$@"; do
    case $arg in --table) table=1 ;; --no-ncu) ncu=0 ;; esac
done
status=0
timeout 90 python3 splitk_check.py || status=1
echo "== splitk_check.py done after ${SECONDS}s"
if [ $table = 1 ]; then
    timeout 100 python3 gemm_table.py || status=1
    echo "== gemm_table.py done after ${SECONDS}s"
fi
if [ $ncu = 1 ]; then
    keep='profiled:|^  [a-z_0-9]+|Duration|DRAM Throughput|Memory Throughput|L2 Cache Throughput|Compute \(SM\) Throughput|Grid Size|Block Size|Registers Per|Dynamic Shared|Cluster Size|Waves Per SM'
    timeout 40 ncu --clock-control none --profile-from-start off --section SpeedOfLight --section LaunchStats \
        python3 splitk_check.py --profile 2>&1 | grep -E "$keep" || true
    echo "== ncu done after ${SECONDS}s"
fi
exit $status

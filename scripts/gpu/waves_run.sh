#!/usr/bin/env bash
# One GPU call: waves_check.py (the large shapes against full-wave shapes of the same K, and cuBLAS's kernels), then
# Nsight Compute's warp states and source-level stall counters of gemm_fp8 (scheduled) against gemm_fp8_manual at
# 4096^3, one launch each after two warm-ups, written to $OUT (or the current folder) as ncu_<module>.txt.
# Needs gemm_sm90, gemm_sm90_manual, gemm_fp8, gemm_fp8_manual and cutec(.gz) in $GPU_DIR. From scripts/gpu:
#   GPU_DIR=../../.gpus bash waves_run.sh
set -u
cd "$(dirname "$0")"
. ./gpu_env.sh
status=0
timeout 420 python3 waves_check.py --rounds 3 || status=1
echo "== waves_check.py done after ${SECONDS}s"
out=${OUT:-.}
for mod in gemm_fp8 gemm_fp8_manual; do
    timeout 90 ncu --clock-control none --section SpeedOfLight --section WarpStateStats --section SchedulerStats \
        --section SourceCounters --kernel-name "$mod" --launch-skip 2 --launch-count 1 \
        "$GPU_DIR/cutec" run "$GPU_DIR/$mod.ptx" --kernel "$mod" --dim M=4096 --dim N=4096 --dim K=4096 \
        --scalar scale_a=1.0 --scalar scale_b=1.0 --bench --warmup 2 --iters 1 > "$out/ncu_$mod.txt" 2>&1 || status=1
    grep -E "Duration|Warp Cycles Per Issued|No Eligible|Stall" "$out/ncu_$mod.txt" | head -20
done
echo "== ncu done after ${SECONDS}s"
exit $status

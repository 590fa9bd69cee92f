#!/usr/bin/env bash
# One GPU call for the epilogues that read per-tile vectors (a bias, row and column scales) through tiles copied
# beside the pipelined loop: the scheduled examples' correctness, timing and compute-sanitizer runs
# (schedule_check.py), the fused epilogue's parts against the plain GEMM (epilogue_variants.py), and the
# row-wise fp8 kernel against torch._scaled_mm (fp8_rowwise_check.py). Extra modules in $GPU_DIR, when built,
# are timed in the same rounds: gemm_epilogue_before / gemm_epilogue_gbias (the bias read from global memory
# in the epilogue, with the textbook and the shorter GELU) and gemm_fp8_rowwise_before (scales from global).
# Needs what scripts/gpu/build.sh writes in $GPU_DIR. Run from scripts/gpu on the GPU machine:
#   GPU_DIR=../../.gpus bash epilogue_run.sh
set -u
cd "$(dirname "$0")"
. ./gpu_env.sh
status=0
timeout 300 python3 schedule_check.py --sanitize || status=1
echo "== schedule_check.py done after ${SECONDS}s"
also=()
for v in before:"global bias, textbook GELU" gbias:"global bias"; do
    [ -f "$GPU_DIR/gemm_epilogue_${v%%:*}.ptx" ] && also+=(--also "gemm_epilogue_${v%%:*}:gemm_bias_gelu:${v#*:}")
done
timeout 150 python3 epilogue_variants.py "${also[@]}" || status=1
echo "== epilogue_variants.py done after ${SECONDS}s"
also=()
[ -f "$GPU_DIR/gemm_fp8_rowwise_before.ptx" ] && also+=(--also gemm_fp8_rowwise_before.ptx)
timeout 120 python3 fp8_rowwise_check.py "${also[@]}" || status=1
echo "== fp8_rowwise_check.py done after ${SECONDS}s"
exit $status

#!/usr/bin/env bash
# One device call for the schedule-entities work (issue 32): every checker of the harness for correctness
# (all_check.sh), the statements every thread runs beside a warp-specialized loop (entities_check.py
# --placement), the plain warp-specialized loop against cuBLAS (entities_check.py --raster), and the scheduled
# GEMM against the hand-written one and cuBLAS (stages_check.py, 3 rounds). Needs $GPU_DIR filled by
# scripts/gpu/build.sh, then entities_build.sh (BASE=previous cutec), and the release wheel. From scripts/gpu:
#   GPU_DIR=../../.gpu bash entities_run.sh
set -u
cd "$(dirname "$0")"
. ./gpu_env.sh
status=0
step() { # step NAME SECONDS COMMAND...
    local name=$1 limit=$2
    shift 2
    echo "=== $name (${SECONDS}s)"
    timeout "$limit" "$@" || { echo "=== $name: exit $?"; status=1; }
}
step all_check 300 bash all_check.sh
step placement 90 python3 entities_check.py --placement
step raster 150 python3 entities_check.py --raster
step stages 150 python3 stages_check.py gemm_sm90:gemm:bf16 gemm_sm90_manual:gemm_sm90_manual:bf16 --rounds 3
echo "=== done after ${SECONDS}s, status $status"
exit $status

#!/usr/bin/env bash
# Every kernel the GPU harness checks, for correctness only, in one GPU call: what a change to code generation
# as a whole (every kernel's PTX changes) must pass before it is timed. The register-path map (map_check.py),
# the Hopper examples by hand (hopper_check.py --quick: TMA copies, distributed shared memory, the GEMMs), the
# scheduled examples (schedule_check.py --quick), the split-K, swapped and cluster kernels through the Python
# package (splitk_check.py --only check; the wheel in $GPU_DIR), fp8 (fp8_check.py), the memory-bound kernels
# (compare.py: copy, softmax, rmsnorm against torch), gemm_simt, bounds and transpose. Prints each checker's
# failures, each under the last heading before it (which module), and its count of passing lines.
# Needs what scripts/gpu/build.sh writes in $GPU_DIR and the release wheel. Run from scripts/gpu:
#   GPU_DIR=../../.gpus bash all_check.sh
set -u
cd "$(dirname "$0")"
. ./gpu_env.sh
status=0
check() { # check NAME SECONDS COMMAND...: runs it, prints its failures and its count of passing lines
    local name=$1 limit=$2
    shift 2
    local log
    log=$(mktemp)
    timeout "$limit" "$@" > "$log" 2>&1
    local rc=$?
    [ $rc -eq 0 ] || status=1
    echo "== $name: exit $rc, $(grep -c 'PASS' "$log") passing lines after ${SECONDS}s"
    # A failure under the heading that names its module: the last line before it that is not a case.
    awk '/FAIL|Error|error:|Traceback|mismatch|timed out/ { if (h != shown) { print h; shown = h } print; next }
         !/PASS|REFUSED/ { h = $0 }' "$log" | head -30
    rm -f "$log"
}
check map_check 60 python3 map_check.py
check hopper_check 240 python3 hopper_check.py --quick
check schedule_check 180 python3 schedule_check.py --quick
check splitk_check 120 python3 splitk_check.py --only check
check fp8_check 180 python3 fp8_check.py
root=$(cd "$GPU_DIR" && pwd)
check compare 180 python3 compare.py --gpu-dir "$root" --iters 20
check gemm_check 120 python3 gemm_check.py
check bounds_check 120 python3 bounds_check.py
check transpose_check 120 python3 transpose_check.py
exit $status

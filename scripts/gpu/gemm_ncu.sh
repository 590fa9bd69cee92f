#!/usr/bin/env bash
# Hardware counters (Nsight Compute) of cutec GEMMs and of cuBLAS on the same bf16 problem, one launch each (after
# two warm-ups), on the GPU machine after scripts/gpu/build.sh: what limits a GEMM, side by side with the anchor.
# Clocks are left alone (--clock-control none), as everywhere in the harness. Each report's details page also goes
# to $OUT/ncu_<name>.txt when $OUT is set.
#   bash scripts/gpu/gemm_ncu.sh [N]                          gemm_sm90_manual at N^3 (default 8192)
#   bash scripts/gpu/gemm_ncu.sh M N K MODULE:KERNEL ...      the modules (paths in $GPU_DIR without .ptx) at M x N x K
set -euo pipefail
cd "$(dirname "$0")/../.."
GPU_DIR=${GPU_DIR:-.gpu}
if [ $# -ge 3 ]; then
    m=$1 n=$2 k=$3
    shift 3
else
    m=${1:-8192} n=${1:-8192} k=${1:-8192}
    shift $(( $# > 0 ? 1 : 0 ))
fi
modules=("$@")
[ ${#modules[@]} -gt 0 ] || modules=(gemm_sm90_manual:gemm_sm90_manual)
sections=(--section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis
          --section Occupancy --section WarpStateStats --section SchedulerStats --section LaunchStats)
keep='Duration|Throughput|Hit Rate|Busy|Executed Ipc|Issue Slots|Warp Cycles|No Eligible|Registers|Dynamic Shared|Achieved|Theoretical Occ|Grid Size|Block Size|Cluster Size|Waves'
show() { # show NAME: the kept lines of the details page on stdin, all of it in $OUT/ncu_NAME.txt
    if [ -n "${OUT:-}" ]; then tee "$OUT/ncu_$1.txt"; else cat; fi | grep -E "$keep|^  [a-zA-Z_0-9]+.*\(" || true
}
for spec in "${modules[@]}"; do
    mod=${spec%%:*} kernel=${spec#*:}
    echo "== $mod ($kernel) ${m}x${n}x${k}"
    ncu --clock-control none "${sections[@]}" --kernel-name "$kernel" --launch-skip 2 --launch-count 1 \
        "$GPU_DIR/cutec" run "$GPU_DIR/$mod.ptx" --kernel "$kernel" --dim M=$m --dim N=$n --dim K=$k \
        --bench --warmup 2 --iters 1 2>&1 | show "$(basename "$mod")"
done
echo "== cuBLAS (torch.matmul, bf16) ${m}x${n}x${k}"
ncu --clock-control none "${sections[@]}" --kernel-name regex:'gemm|nvjet|xmma|cutlass' --launch-skip 2 --launch-count 1 \
    python3 -c "
import torch
a = torch.randn($m, $k, device='cuda', dtype=torch.bfloat16)
b = torch.randn($n, $k, device='cuda', dtype=torch.bfloat16)
for _ in range(4):
    c = a @ b.T
torch.cuda.synchronize()
" 2>&1 | show cublas

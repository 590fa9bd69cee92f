#!/usr/bin/env bash
# Hardware counters (Nsight Compute) of gemm_sm90_manual and of cuBLAS on the same 8192^3 bf16 problem, one launch
# each, on the GPU machine after scripts/gpu/build.sh: what limits the GEMM, side by side with the anchor.
# Clocks are left alone (--clock-control none), as everywhere in the harness.
set -euo pipefail
cd "$(dirname "$0")/../.."
GPU_DIR=${GPU_DIR:-.gpu}
n=${1:-8192}
sections=(--section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis
          --section Occupancy --section WarpStateStats --section LaunchStats)
keep='Duration|Throughput|Hit Rate|Busy|Executed Ipc|Issue Slots|Warp Cycles|Registers|Shared Memory Config|Dynamic Shared|Achieved|Theoretical Occ|Grid Size|Block Size|Waves'
echo "== gemm_sm90_manual ${n}^3"
ncu --clock-control none "${sections[@]}" --kernel-name gemm_sm90_manual --launch-skip 2 --launch-count 1 \
    "$GPU_DIR/cutec" run "$GPU_DIR/gemm_sm90_manual.ptx" --kernel gemm_sm90_manual --dim M=$n --dim N=$n --dim K=$n \
    --bench --warmup 2 --iters 1 2>&1 | grep -E "$keep" || true
echo "== cuBLAS (torch.matmul, bf16) ${n}^3"
ncu --clock-control none "${sections[@]}" --kernel-name regex:'gemm|nvjet|xmma|cutlass' --launch-skip 2 --launch-count 1 \
    python3 -c "
import torch
a = torch.randn($n, $n, device='cuda', dtype=torch.bfloat16)
b = torch.randn($n, $n, device='cuda', dtype=torch.bfloat16)
for _ in range(4):
    c = a @ b.T
torch.cuda.synchronize()
" 2>&1 | grep -E "$keep|^  [a-z_0-9]*(gemm|nvjet|xmma|cutlass)" || true

#!/usr/bin/env bash
# First light on the GPU machine: run cutec's copy and softmax kernels against PyTorch and print one table.
#
# Run from the repository root on the GPU machine, with .gpu/ carried from the build machine:
#   .gpu/cutec                          release build of the compiler
#   .gpu/copy.{ptx,json}                module + manifest per kernel; shape-specialized variants
#   .gpu/softmax[_1024|_4096].{ptx,json}  (suffix = last extent) take precedence when present
# Extra arguments go to compare.py (e.g. --only softmax --iters 200 --verbose).
set -euo pipefail
cd "$(dirname "$0")/../.."
GPU_DIR=${GPU_DIR:-.gpu}

# The build step runs on the build machine: bash scripts/gpu/build.sh (it fills $GPU_DIR).

if [[ ! -x "$GPU_DIR/cutec" ]]; then
    echo "first_light: $GPU_DIR/cutec is missing; build it (cargo build --release) and carry $GPU_DIR" >&2
    exit 2
fi
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,utilization.gpu \
    --format=csv || true
"$GPU_DIR/cutec" --version || true
ls -l "$GPU_DIR"
status=0
python3 scripts/gpu/compare.py --gpu-dir "$GPU_DIR" "$@" || status=$?
echo "== the runtime's launch-argument cache"
"$GPU_DIR/launch_check" "$GPU_DIR/copy.ptx" "$GPU_DIR/copy.json" || status=$?
echo "== cutec run's random inputs, filled on the device, against the host reference"
GPU_DIR="$GPU_DIR" bash scripts/gpu/fill_check.sh || status=$?
echo "== gemm_simt (SIMT f32 GEMM) against float64 and torch.matmul"
GPU_DIR="$GPU_DIR" python3 scripts/gpu/gemm_check.py || status=$?
echo "== TMA tensor maps: the runtime's rules against cuTensorMapEncodeTiled"
"$GPU_DIR/tensor_map_check" 400000 | tail -3 || status=$?
echo "== TMA tensor maps as kernel parameters: the bytes a kernel receives against the encoded map"
"$GPU_DIR/tensor_map_param" || status=$?
echo "== Hopper by hand: tma_copy and gemm_sm90_manual against torch, cuBLAS and Triton"
GPU_DIR="$GPU_DIR" python3 scripts/gpu/hopper_check.py --sanitize || status=$?
echo "== fp8: conversions against torch, gemm_fp8_manual against a float32 reference and torch._scaled_mm"
GPU_DIR="$GPU_DIR" python3 scripts/gpu/fp8_check.py || status=$?
echo "== bounds: ragged gemm_simt against float64, predication cost on full tiles, required divisibility refused"
GPU_DIR="$GPU_DIR" python3 scripts/gpu/bounds_check.py || status=$?
echo "== transpose (swizzled shared-memory tile) against torch, ragged shapes, and without the swizzle"
GPU_DIR="$GPU_DIR" python3 scripts/gpu/transpose_check.py --ncu || status=$?

# Memory and race checks on small shapes: a partial last tile of copy, and softmax's shared-memory reductions.
if command -v compute-sanitizer >/dev/null 2>&1; then
    c="$GPU_DIR/cutec"
    echo "== compute-sanitizer memcheck and racecheck: transpose 1000 x 777 (ragged tiles)"
    for tool in memcheck racecheck; do
        timeout 120 compute-sanitizer --tool $tool "$c" run "$GPU_DIR/transpose.ptx" --kernel transpose \
            --dim M=1000 --dim N=777 2>&1 | tail -2 || true
    done
    echo "== compute-sanitizer memcheck: copy, N = 1000003 (partial last tile)"
    timeout 120 compute-sanitizer --tool memcheck "$c" run "$GPU_DIR/copy.ptx" --kernel copy --dim N=1000003 2>&1 | tail -2 || true
    for n in 1024 4096; do
        for tool in memcheck racecheck; do
            echo "== compute-sanitizer $tool: softmax N = $n, M = 64"
            timeout 120 compute-sanitizer --tool $tool "$c" run "$GPU_DIR/softmax_$n.ptx" --manifest "$GPU_DIR/softmax_$n.json" \
                --kernel softmax --dim M=64 2>&1 | tail -2 || true
        done
    done
fi
exit $status

#!/usr/bin/env bash
# The device-side random fill of `cutec run`, on the GPU machine (run by first_light.sh, or alone):
#   1. fill_check: every element type, filled on the device, equals the host reference (cutec_runtime::fill)
#      byte for byte, at sizes around the block and grid boundaries; a 6 GiB fill is sampled and timed.
#   2. cutec run --save-input: the inputs a run gives the kernel equal the reference for the run's seed and the
#      parameter's index (the tensor's stream), for f32 (softmax) and bf16 (rmsnorm).
#   3. softmax with M = 520,000 (8.5 GB per tensor) runs, timed; the case of issue 7, M = 3,000,000 (49 GB per
#      tensor), is refused before anything is allocated: its offsets do not fit the kernel's 32-bit indices.
# Needs .gpu/ from scripts/gpu/build.sh (cutec, fill_check, softmax_4096.*, rmsnorm_4096.*).
set -euo pipefail
cd "$(dirname "$0")/../.."
GPU_DIR=${GPU_DIR:-.gpu}
c="$GPU_DIR/cutec"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0

echo "== fill_check: device fill against the host reference"
"$GPU_DIR/fill_check" || status=1

echo "== cutec run --save-input against the reference"
"$c" run "$GPU_DIR/softmax_4096.ptx" --manifest "$GPU_DIR/softmax_4096.json" --kernel softmax --dim M=1000 \
    --seed 7 --save-input "x=$tmp/x.npy" || status=1
"$GPU_DIR/fill_check" compare "$tmp/x.npy" f32 7 0 || status=1
# rmsnorm(x, w, y, eps): x is parameter 0, w parameter 1; bf16 is saved widened to float32.
"$c" run "$GPU_DIR/rmsnorm_4096.ptx" --manifest "$GPU_DIR/rmsnorm_4096.json" --kernel rmsnorm --dim M=333 \
    --scalar eps=1e-6 --seed 99 --save-input "x=$tmp/rx.npy" --save-input "w=$tmp/rw.npy" || status=1
"$GPU_DIR/fill_check" compare "$tmp/rx.npy" bf16 99 0 || status=1
"$GPU_DIR/fill_check" compare "$tmp/rw.npy" bf16 99 1 || status=1

echo "== softmax, M = 520,000 (two tensors of 8.5 GB, the most 32-bit indexing allows): filled on the device"
TIMEFORMAT='softmax M=520000: cutec run took %R s in all (module load, allocation, fill, launch)'
time "$c" run "$GPU_DIR/softmax_4096.ptx" --manifest "$GPU_DIR/softmax_4096.json" --kernel softmax --dim M=520000 \
    || status=1

echo "== softmax, M = 3,000,000 (the issue's 49 GB per tensor): refused before allocation (32-bit indexing)"
if out=$("$c" run "$GPU_DIR/softmax_4096.ptx" --manifest "$GPU_DIR/softmax_4096.json" --kernel softmax \
    --dim M=3000000 2>&1); then
    echo "fill_check.sh: M=3000000 was not refused: $out" >&2
    status=1
else
    echo "$out"
    grep -q "32-bit integers" <<<"$out" || { echo "fill_check.sh: the refusal does not name the index limit" >&2; status=1; }
fi
exit $status

#!/usr/bin/env bash
# The CPU interpreter's speed (issue 33): a 256 x 256 x 256 warp-specialized, persistent bf16 GEMM
# (examples/gemm_sm90.cute: TMA ring, mbarriers, two consumer warpgroups of wgmma, clusters of two) run by
# `cutec run --cpu` on one core, with race checking on. Prints the interpreter's own line (statements, seconds)
# and the wall time of the whole command (compilation included). A benchmark, not a test: nothing fails.
#   CUTEC  the binary (default: a release build of this checkout)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
if [ -z "${CUTEC:-}" ]; then
    cargo build --release --locked -q -p cutec
    CUTEC=${CARGO_TARGET_DIR:-target}/release/cutec
fi
pin=()
command -v taskset >/dev/null && pin=(taskset -c 0)
start=$(date +%s.%N)
"${pin[@]}" "$CUTEC" run examples/gemm_sm90.cute --cpu --kernel gemm --dim M=256 --dim N=256 --dim K=256 | grep '^ran '
end=$(date +%s.%N)
echo "bench_cpu gemm_sm90 256x256x256 bf16: $(echo "$end - $start" | bc) s wall on one core (compilation included)"

#!/usr/bin/env bash
# Build step of mutants_check.py: a sample of the scheduled mutants that the schedule mutation test
# (tests/suite/mutation_schedule.rs) builds and whose meaning is the example's (a `gemm` in both branches of a
# condition, a `barrier_sync` on an id the compiler does not take), compiled into $GPU_DIR/mutants (default
# .gpu/mutants) with the release cutec, one module per mutant. SAMPLE mutants (default 12), alternating subjects.
#   bash scripts/gpu/mutants_build.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/env.sh
GPU_DIR=${GPU_DIR:-.gpu}
sample=${SAMPLE:-12}
src=$(mktemp -d)
CUTEC_MUTANTS_DIR="$src" cargo test -q --locked -p cutec-tests mutation_schedule > /dev/null
cargo build --release --locked -q -p cutec
c=${CARGO_TARGET_DIR:-target}/release/cutec
mkdir -p "$GPU_DIR/mutants"
n=0
for f in $(ls "$src"/gemm_sm90__*.cute | head -n $((sample / 2))) $(ls "$src"/gemm_pipelined__*.cute | head -n $((sample / 2))); do
    "$c" build "$f" --emit ptx,manifest -o "$GPU_DIR/mutants" > /dev/null
    cp "$f" "$GPU_DIR/mutants/"
    n=$((n + 1))
done
rm -rf "$src"
echo "mutants_build: $n mutants in $GPU_DIR/mutants"

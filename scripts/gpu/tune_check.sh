#!/usr/bin/env bash
# `cutec tune` end to end on the GPU machine (an H200), about 2-3 minutes:
#   1. the compile phase alone over 96 configurations of examples/gemm_sm90.cute (--compile-only: the figure for
#      "100 configurations compile in <= 3 s on 16 cores");
#   2. a tuning of BN x STAGES x BK (40 configurations) for four shapes: each configuration's output checked
#      against the default's, then interleaved timing rounds; the table per shape and the tuning file;
#   3. `cutec run --tuning` at each shape, which picks the file's entry (the note on stderr says which), timed
#      with --bench beside the defaults.
# Needs the release binary at $GPU_DIR/cutec (bash scripts/gpu/build.sh on the build machine) and ptxas on PATH
# (or CUTEC_PTXAS) for cubins; without it the driver compiles the PTX when it is loaded, which is slower.
#   GPU_DIR=.gpu bash scripts/gpu/tune_check.sh [--table | --manual [SHAPE...]]
# --table: step 2 only, for the other shapes of issue 17's GEMM table (16 / 64 / 128 / 256 x 8192 x 8192 and
# 4096 x 14336 x 4096) over BN x STAGES (12 configurations, 3 rounds), then step 3 for them.
# --manual: step 2 for the hand-written examples/gemm_sm90_manual.cute at the table's five shapes above 256 rows,
# over GROUP_M x CLUSTER_M x STAGES x EPI_N (3 rounds; the file is $GPU_DIR/tune/manual.json, which
# `gemm_table.py --tuning` uses for its dispatch), then step 3 for them. Shapes given after --manual
# (M=..,N=..,K=..) replace the five: a shape of 8192 x 8192 outputs took about 2 minutes on the H200, most of it
# checking each configuration's output against the default's on one core (now on all of them), so the five did
# not fit one 10-minute call.
set -euo pipefail
cd "$(dirname "$0")/../.."
GPU_DIR=${GPU_DIR:-.gpu}
c="$GPU_DIR/cutec"
[ -x "$c" ] || { echo "tune_check.sh: no cutec binary at $c (run scripts/gpu/build.sh first)" >&2; exit 1; }
out="$GPU_DIR/tune"
mkdir -p "$out"
src=examples/gemm_sm90.cute
kernel=gemm
file=tuning.json
shapes=(M=4096,N=4096,K=4096 M=8192,N=8192,K=8192 M=8192,N=8192,K=2048 M=1024,N=8192,K=8192)
space=(--space BN=64,128,192,256 --space STAGES=2,3,4,5,6 --space BK=64,128)
rounds=5
if [ "${1:-}" = "--table" ]; then
    shapes=(M=16,N=8192,K=8192 M=64,N=8192,K=8192 M=128,N=8192,K=8192 M=256,N=8192,K=8192 M=4096,N=14336,K=4096)
    space=(--space BN=64,128,256 --space STAGES=3,4,5,6)
    rounds=3
elif [ "${1:-}" = "--manual" ]; then
    src=examples/gemm_sm90_manual.cute
    kernel=gemm_sm90_manual
    file=manual.json
    shapes=(M=4096,N=4096,K=4096 M=8192,N=8192,K=8192 M=8192,N=8192,K=2048 M=1024,N=8192,K=8192
            M=4096,N=14336,K=4096)
    [ $# -gt 1 ] && shapes=("${@:2}")
    space=(--space GROUP_M=4,8,16 --space CLUSTER_M=1,2 --space STAGES=3,4 --space EPI_N=128,256)
    rounds=3
fi
rm -f "$out/$file"
shape_args=()
for s in "${shapes[@]}"; do shape_args+=(--shape "$s"); done

if [ -z "${1:-}" ]; then
    echo "== 1. compile phase: 96 configurations on $(nproc) cores"
    "$c" tune "$src" --shape "${shapes[0]}" --space BN=32,64,96,128,160,192,224,256 --space STAGES=2,3,4,5,6,7 \
        --space BK=64,128 --compile-only | grep -v '^  skipped'
fi

echo
echo "== 2. tune ${space[*]} for ${#shapes[@]} shapes"
start=$(date +%s)
"$c" tune "$src" "${shape_args[@]}" "${space[@]}" --flops '2*M*N*K' --rounds "$rounds" --iters 20 \
    -o "$out/$file"
echo "tune took $(( $(date +%s) - start )) s"
echo
cat "$out/$file"

echo
echo "== 3. cutec run --tuning at each shape (the note says which entry is used), against the defaults"
for s in "${shapes[@]}"; do
    dims=()
    for d in ${s//,/ }; do dims+=(--dim "$d"); done
    echo "-- $s"
    tuned=$("$c" run "$src" --kernel "$kernel" "${dims[@]}" --tuning "$out/$file" --bench --warmup 10 --iters 50 \
        2>"$out/run.err" | grep '^bench')
    sed 's/^/   /' "$out/run.err"
    default=$("$c" run "$src" --kernel "$kernel" "${dims[@]}" --bench --warmup 10 --iters 50 | grep '^bench')
    echo "   tuned:   $tuned"
    echo "   default: $default"
done
# A shape the file does not have: the defaults, with a warning naming the shapes it has.
echo "-- M=2048,N=2048,K=2048 (not tuned)"
"$c" run "$src" --kernel "$kernel" --dim M=2048 --dim N=2048 --dim K=2048 --tuning "$out/$file" 2>&1 \
    | grep -E 'warning|note|launch' | sed 's/^/   /'

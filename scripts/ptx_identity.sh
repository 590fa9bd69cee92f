#!/usr/bin/env bash
# What the compiler makes of every example, saved or compared byte for byte: a refactoring that must not change
# the output (the seam issues) is checked with it.
#
#   bash scripts/ptx_identity.sh save  DIR [CUTEC]   # PTX, manifest and diagnostics of every case into DIR
#   bash scripts/ptx_identity.sh check DIR [CUTEC]   # the same into a fresh folder, then `diff -r` against DIR
#
# CUTEC defaults to target/release/cutec. A case is one `.cute` file of examples/ and book/listings/ with one set
# of `-D` values (the variants the SASS check and the GPU harness build); a case that does not compile keeps its
# diagnostics (stderr, paths made relative) and exit status instead, so a refused example is compared too.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:?usage: ptx_identity.sh save|check DIR [CUTEC]}
dir=${2:?usage: ptx_identity.sh save|check DIR [CUTEC]}
cutec=${3:-target/release/cutec}
[ -x "$cutec" ] || { echo "ptx_identity: no compiler at $cutec (cargo build --release)" >&2; exit 2; }

out=$dir
if [ "$mode" = check ]; then
    out=$(mktemp -d)
    trap 'rm -rf "$out"' EXIT
elif [ "$mode" != save ]; then
    echo "ptx_identity: mode is save or check, not $mode" >&2
    exit 2
fi
mkdir -p "$out"

# case NAME FILE [-D ...]: FILE built with the given definitions into $out/NAME.{ptx,json} or $out/NAME.err
case_() {
    local name=$1 file=$2
    shift 2
    local tmp
    tmp=$(mktemp -d)
    local status=0
    "$cutec" build "$file" "$@" --emit ptx,manifest -o "$tmp" 2> "$out/$name.err" || status=$?
    local stem
    stem=$(basename "$file" .cute)
    if [ "$status" = 0 ]; then
        mv "$tmp/$stem.ptx" "$out/$name.ptx"
        mv "$tmp/$stem.json" "$out/$name.json"
        [ -s "$out/$name.err" ] || rm "$out/$name.err"
    else
        echo "exit $status" >> "$out/$name.err"
    fi
    rm -rf "$tmp"
}

for f in examples/*.cute book/listings/*.cute; do
    stem=$(basename "$f" .cute)
    case "$stem" in
        softmax_warp) case_ "$stem" "$f" -D N=1024 ;;
        softmax | rmsnorm) case_ "$stem" "$f" -D N=4096 ;;
        *) case_ "$stem" "$f" ;;
    esac
done
case_ gemm_sm90_manual_regs examples/gemm_sm90_manual.cute -D TMA_STORE=false -D STAGES=4
case_ gemm_sm90_manual_rows examples/gemm_sm90_manual.cute -D GROUP_M=1
case_ gemm_sm90_manual_c1 examples/gemm_sm90_manual.cute -D CLUSTER_M=1
case_ gemm_sm90_manual_bn128 examples/gemm_sm90_manual.cute -D BN=128 -D STAGES=4
case_ gemm_sm90_manual_pieces examples/gemm_sm90_manual.cute -D EPI_N=64 -D EPI_BUFS=2 -D STAGES=4
case_ gemm_sm90_pingpong_128 examples/gemm_sm90_pingpong.cute -D BM=128 -D BN=128 -D STAGES=6
case_ gemm_splitk_bk128 examples/gemm_splitk.cute -D BK=128 -D BN=128 -D STAGES=4
case_ gemm_swap_ab_bm8 examples/gemm_swap_ab.cute -D BM=8
case_ softmax_1024 examples/softmax.cute -D N=1024
case_ rmsnorm_8192 examples/rmsnorm.cute -D N=8192

if [ "$mode" = check ]; then
    if diff -r "$dir" "$out"; then
        echo "ptx_identity: $(ls "$out" | wc -l) files identical to $dir"
    else
        echo "ptx_identity: the output differs from $dir (above)" >&2
        exit 1
    fi
else
    echo "ptx_identity: $(ls "$out" | wc -l) files saved in $dir"
fi

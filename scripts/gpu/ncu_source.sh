#!/usr/bin/env bash
# Where a kernel's warps wait, instruction by instruction: Nsight Compute's warp-state sampling of one launch
# (after two warm-ups), exported as the SASS source page in CSV (one row per instruction: its stall samples by
# reason), for modules of $GPU_DIR. Writes $OUT/ncu_<module>.csv (or the current folder). From scripts/gpu:
#   GPU_DIR=../../.gpus bash ncu_source.sh "MODULE KERNEL --dim M=.. --dim N=.. [--scalar ..]" ...
set -u
cd "$(dirname "$0")"
. ./gpu_env.sh
out=${OUT:-.}
status=0
for spec in "$@"; do
    read -r mod kernel args <<< "$spec"
    rep="$out/ncu_$(basename "$mod")"
    # shellcheck disable=SC2086
    timeout 240 ncu --clock-control none --section WarpStateStats --section SourceCounters --section SpeedOfLight \
        --import-source no --kernel-name "$kernel" --launch-skip 2 --launch-count 1 -f -o "$rep" \
        "$GPU_DIR/cutec" run "$GPU_DIR/$mod.ptx" --kernel "$kernel" $args --bench --warmup 2 --iters 1 \
        > "$rep.log" 2>&1 || status=1
    ncu --import "$rep.ncu-rep" --page source --csv --print-source sass > "$rep.csv" 2>&1 || status=1
    ncu --import "$rep.ncu-rep" --page details 2>&1 | grep -E "Duration|Warp Cycles Per Issued|No Eligible" || true
    echo "== $mod: $(wc -l < "$rep.csv") rows"
done
exit $status

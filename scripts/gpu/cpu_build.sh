#!/usr/bin/env bash
# Build step of the CPU-interpreter check (no GPU needed): for every launch of scripts/gpu/cpu_cases.txt, its
# PTX and manifest and its outputs computed by `cutec run --cpu`, all into .gpu/cpu/, with a cutec to run them
# on the GPU. Then, on the GPU machine: python3 scripts/gpu/cpu_check.py
#   CUTEC      the compiler that builds and interprets (default: a release build of this checkout)
#   GPU_CUTEC  the binary the GPU machine runs the modules with (default: CUTEC); its `run` path only
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/env.sh
dir=.gpu/cpu
mkdir -p "$dir"
if [ -z "${CUTEC:-}" ]; then
    cargo build --release --locked -q -p cutec
    CUTEC=${CARGO_TARGET_DIR:-target}/release/cutec
fi
cp "${GPU_CUTEC:-$CUTEC}" "$dir/cutec"
grep -v '^#' scripts/gpu/cpu_cases.txt | while read -r name file kernel output args; do
    [ -n "$name" ] || continue
    # -D values go to the build; the rest to the run.
    defines=$(echo "$args" | grep -oE -- '-D [^ ]+' | tr '\n' ' ' || true)
    run_args=$(echo "$args" | sed -E 's/-D [^ ]+//g')
    mkdir -p "$dir/$name"
    cp "$file" "$dir/$name/module.cute"
    # shellcheck disable=SC2086
    "$CUTEC" build "$dir/$name/module.cute" $defines --kernel "$kernel" --emit ptx,manifest -o "$dir/$name" >/dev/null
    # shellcheck disable=SC2086
    "$CUTEC" run "$dir/$name/module.cute" $defines --cpu --kernel "$kernel" --seed 7 $run_args \
        --output "$output=$dir/$name/cpu.npy" > "$dir/$name/cpu.log"
    echo "$name $kernel $output $run_args" >> "$dir/cases.new"
    echo "built $name"
done
mv "$dir/cases.new" "$dir/cases.txt"

#!/usr/bin/env bash
# Fills fuzz/corpus/ with seeds: the examples, the stdlib and the ui programs for front_end and compiler (with a
# leading byte choosing -D N=4096), the layout expressions of the examples for layout_eval, the IR fixtures for
# ir_text, and, when a built cutec is at hand ($CUTEC, default target/debug/cutec), the examples' manifests for
# manifest_launch and .npy files of every element type for npy. Run from anywhere; the corpus is not committed.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
mkdir -p "$root/fuzz/corpus/front_end" "$root/fuzz/corpus/layout_eval" "$root/fuzz/corpus/compiler" \
    "$root/fuzz/corpus/ir_text" "$root/fuzz/corpus/manifest_launch" "$root/fuzz/corpus/npy"
for f in "$root"/examples/*.cute "$root"/stdlib/*.cute "$root"/tests/ui/*.cute; do
    cp "$f" "$root/fuzz/corpus/front_end/$(basename "$(dirname "$f")")_$(basename "$f")"
done
# One seed per layout expression written in the examples: `(4,8):(8,1)`, `composition(...)`, `Swizzle<3,3,3>`...
n=0
for line in \
    '(4,8):(8,1)' '((2,2),3):((24,2),8)' 'composition((6,2):(8,2), (4,3):(3,1))' 'complement(4:2, 24)' \
    'logical_divide((4,8):(8,1), (2,4))' 'zipped_divide((8,8):(1,8), (2,2))' 'blocked_product((2,2):(1,2), (3,4))' \
    'raked_product((2,2):(1,2), (3,4))' 'Swizzle<3,3,3> o (8,64):(64,1)' 'right_inverse((4,8):(8,1))' \
    'left_inverse((4,8):(8,1))' 'tile_to_shape((8,8):(8,1), (32,64))' 'coalesce(((2,4),(1,6)):((1,2),(0,8)))' \
    'get<1>((4,(8,2)):(1,(4,32)))' 'crd2idx((1,2), (4,8):(8,1))' 'idx2crd(13, (4,8))' 'make_layout_tv((4,8), (2,2))' \
    'local_tile((128,64):(64,1), (32,32), (1,_))' 'upcast((8,8):(8,1), 2)' 'print_layout((4,8):(8,1))'; do
    n=$((n + 1))
    printf '%s\n' "$line" > "$root/fuzz/corpus/layout_eval/seed_$n"
done
for f in "$root"/examples/*.cute "$root"/stdlib/*.cute; do
    { printf '\001'; cat "$f"; } > "$root/fuzz/corpus/compiler/$(basename "$f")"
done
for f in $(find "$root/compiler/ir/tests" -name '*.ir'); do
    cp "$f" "$root/fuzz/corpus/ir_text/$(basename "$(dirname "$f")")_$(basename "$f")"
done
cutec=${CUTEC:-$root/target/debug/cutec}
if [[ -x "$cutec" ]]; then
    tmp=$(mktemp -d)
    for spec in copy: grid_copy: transpose: gemm_simt: softmax:4096 rmsnorm:4096 softmax_warp:1024; do
        k=${spec%%:*}
        big_n=${spec##*:}
        "$cutec" build "$root/examples/$k.cute" ${big_n:+-D N=$big_n} --emit manifest -o "$tmp" >/dev/null
        cp "$tmp/$k.json" "$root/fuzz/corpus/manifest_launch/$k.json"
    done
    rm -rf "$tmp"
fi
# .npy seeds as numpy writes them: a header dict padded to 64 bytes, then the data.
python3 - "$root/fuzz/corpus/npy" <<'PY'
import struct, sys
for name, descr, shape, nbytes in [("f32", "<f4", "(2, 3)", 24), ("f64_be", ">f8", "(3,)", 24), ("bool", "|b1", "(5,)", 5),
                                   ("bf16_bits", "<u2", "(2, 2)", 8), ("fp8_raw", "|V1", "(4,)", 4),
                                   ("scalar", "<i4", "()", 4), ("empty", "<f2", "(0, 7)", 0)]:
    text = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape)
    text += " " * (64 - (10 + len(text) + 1) % 64) + "\n"
    with open(f"{sys.argv[1]}/{name}.npy", "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(text)) + text.encode() + bytes(nbytes))
PY
echo "front_end: $(ls "$root/fuzz/corpus/front_end" | wc -l) seeds, layout_eval: $n seeds," \
    "compiler: $(ls "$root/fuzz/corpus/compiler" | wc -l), ir_text: $(ls "$root/fuzz/corpus/ir_text" | wc -l)," \
    "manifest_launch: $(ls "$root/fuzz/corpus/manifest_launch" | wc -l), npy: $(ls "$root/fuzz/corpus/npy" | wc -l)"

#!/usr/bin/env bash
# Fills fuzz/corpus/ with seeds: the examples, the stdlib and the ui programs for front_end, and the layout
# expressions of the layout test files for layout_eval. Run from anywhere; the corpus is not committed.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
mkdir -p "$root/fuzz/corpus/front_end" "$root/fuzz/corpus/layout_eval"
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
echo "front_end: $(ls "$root/fuzz/corpus/front_end" | wc -l) seeds, layout_eval: $n seeds"

#!/usr/bin/env bash
# The main job: build cutec, check every example, compile the flagship (softmax) to PTX, a cubin and its
# manifest, and show what came out.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh >/dev/null
. scripts/env.sh
cargo build --release --locked -q -p cutec
bin=target/release/cutec
out=target/demo
echo "== cutec check examples/*.cute"
ok=0
bad=0
for f in examples/*.cute; do
    if "$bin" check "$f"; then ok=$((ok + 1)); echo "  ok    $f"; else bad=$((bad + 1)); echo "  FAIL  $f"; fi
done
echo "  $ok examples check, $bad fail"
echo
echo "== cutec build examples/softmax.cute -D N=4096 --emit ptx,cubin,manifest -o $out"
"$bin" build examples/softmax.cute -D N=4096 --emit ptx,cubin,manifest -o "$out"
echo
echo "== what is in the PTX ($out/softmax.ptx): the entry, and how many of each instruction that matters"
grep -E "^\.visible \.entry|^\.reqntid" "$out/softmax.ptx"
grep -oE "ld\.global\.v4\.[a-z0-9]+|st\.global\.v4\.[a-z0-9]+|shfl\.sync\.bfly\.b32|bar\.sync|ex2\.approx\.[a-z0-9.]+" \
    "$out/softmax.ptx" | sort | uniq -c
echo
echo "Run it on a GPU: $bin run $out/softmax.ptx --kernel softmax --dim M=32768 --bench"
[ "$bad" = 0 ]

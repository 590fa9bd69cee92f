#!/usr/bin/env bash
# The main job: build cutec, check every example, compile the flagship (gemm_sm90_manual) to PTX, a cubin and its
# manifest, and the same GEMM from its plain loop (gemm_sm90: the schedule written by the compiler), and show what
# came out.
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
echo "== cutec build examples/gemm_sm90_manual.cute --emit ptx,cubin,manifest -o $out (the flagship: a Hopper GEMM by hand)"
"$bin" build examples/gemm_sm90_manual.cute --emit ptx,cubin,manifest -o "$out"
echo
echo "== what is in the PTX ($out/gemm_sm90_manual.ptx): the entry, its parameters, and the Hopper instructions"
grep -E "^\.visible \.entry|^\s+\.param|^\.maxntid|^\.minnctapersm" "$out/gemm_sm90_manual.ptx"
grep -oE "wgmma\.[a-z_]+(\.sync\.aligned\.m64n[0-9]+k16\.f32\.bf16\.bf16)?|cp\.async\.bulk\.tensor\.[0-9]d\.[a-z:_]+|mbarrier\.[a-z_.]+|setmaxnreg\.[a-z]+|bar\.sync|fence\.proxy\.async[a-z:_.]*" \
    "$out/gemm_sm90_manual.ptx" | sort | uniq -c
echo
echo "== the tensor maps the runtime encodes at launch (from $out/gemm_sm90_manual.json)"
grep -A0 -E '"(name|tensor|swizzle)": "[a-z0-9_]+(_tma[0-9]+)?"|"[0-9]+B"' "$out/gemm_sm90_manual.json" | grep -E "tma|tensor\"|swizzle" | tr -s ' '
echo
echo "== the same GEMM from its plain loop: cutec build examples/gemm_sm90.cute --emit ptx,cubin,manifest,ir-scheduled"
"$bin" build examples/gemm_sm90.cute --emit ptx,cubin,manifest,ir-scheduled -o "$out"
echo "   the schedule the passes wrote ($out/gemm_sm90.sched.ir): allocations, roles, barrier operations"
grep -E "^  shared @|warpgroup (producer|consumer)" "$out/gemm_sm90.sched.ir"
grep -oE "mbarrier\.[a-z_.]+|tma\.load|wgmma\.wait_group [0-9]|bar\.sync|barrier\.(cta|cluster)" "$out/gemm_sm90.sched.ir" | sort | uniq -c
echo
echo "Run it on a GPU: $bin run $out/gemm_sm90_manual.ptx --kernel gemm_sm90_manual --dim M=8192 --dim N=8192 --dim K=8192 --bench"
[ "$bad" = 0 ]

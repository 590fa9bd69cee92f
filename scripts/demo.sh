#!/usr/bin/env bash
# The main job: build cutec and compile the flagship example, then show what came out.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh >/dev/null
. scripts/env.sh
cargo build --release --locked -q
bin=target/release/cutec
echo "== cutec check examples/*.cute"
ok=0; bad=0
for f in examples/*.cute; do
    if "$bin" check "$f"; then ok=$((ok + 1)); echo "  ok    $f"; else bad=$((bad + 1)); echo "  FAIL  $f"; fi
done
echo "$ok examples check, $bad fail"

#!/usr/bin/env bash
# Compile-time benchmark: `.cute` -> PTX for each kernel the compiler builds today, stage by stage.
# Prints the median over RUNS builds (in-process stage times from `cutec build --timings`, and the whole
# process's wall time) and the ratio to the brief's bar of 50 ms per kernel on a 2-core CPU.
# Usage: bash scripts/bench/compile.sh [RUNS]   (default 21)
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/env.sh
RUNS=${1:-21}
cargo build --release --locked -q -p cutec
bin=target/release/cutec
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
python3 - "$bin" "$out" "$RUNS" <<'PY'
import statistics, subprocess, sys, time
bin_, out, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
cases = [("copy", ["examples/copy.cute"]), ("softmax N=4096", ["examples/softmax.cute", "-D", "N=4096"]),
         ("rmsnorm N=4096", ["examples/rmsnorm.cute", "-D", "N=4096"]), ("gemm_simt", ["examples/gemm_simt.cute"])]
BAR_MS = 50.0
print(f"{'kernel':<16} {'check':>8} {'lower':>8} {'passes':>8} {'LLVM':>8} {'in-proc':>8} {'process':>8}  vs 50 ms bar")
for name, args in cases:
    stages, walls = {}, []
    for _ in range(runs):
        t0 = time.perf_counter()
        p = subprocess.run([bin_, "build", *args, "--emit", "ptx", "-o", f"{out}/k.ptx", "--timings"],
                           capture_output=True, text=True)
        walls.append((time.perf_counter() - t0) * 1e3)
        if p.returncode != 0:
            sys.exit(f"{name}: build failed:\n{p.stderr}")
        for line in p.stderr.splitlines():
            if line.startswith("time:"):
                ms, stage = line[5:].split("ms", 1)
                stages.setdefault(stage.strip(), []).append(float(ms))
    med = {k: statistics.median(v) for k, v in stages.items()}
    wall = statistics.median(walls)
    print(f"{name:<16} {med.get('parse + check', 0):>8.2f} {med.get('lower', 0):>8.2f} {med.get('IR passes', 0):>8.2f} "
          f"{med.get('LLVM (emit, optimise, PTX)', 0):>8.2f} {med.get('total', 0):>8.2f} {wall:>8.2f}  {wall / BAR_MS:.2f}x")
print(f"(milliseconds, medians of {runs} builds; 'process' includes starting the binary and writing the PTX)")
PY

#!/usr/bin/env bash
# Compile-time benchmark: `.cute` -> PTX for each kernel the compiler builds today, stage by stage.
# Prints the median over RUNS builds (in-process stage times from `cutec build --timings`, and the whole
# process's wall time) and the ratio to the bar: the brief's 50 ms per kernel on a 2-core CPU, and issue 9's
# 100 ms for the hand-written Hopper GEMM.
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
cases = [("copy", ["examples/copy.cute"], 50.0),
         ("softmax N=4096", ["examples/softmax.cute", "-D", "N=4096"], 50.0),
         ("rmsnorm N=4096", ["examples/rmsnorm.cute", "-D", "N=4096"], 50.0),
         ("gemm_simt", ["examples/gemm_simt.cute"], 50.0),
         ("tma_copy", ["examples/tma_copy.cute"], 50.0),
         ("gemm_sm90_manual", ["examples/gemm_sm90_manual.cute"], 100.0)]
print(f"{'kernel':<18} {'check':>7} {'lower':>7} {'passes':>7} {'LLVM IR':>7} {'opt':>7} {'PTX':>7} {'in-proc':>8} "
      f"{'process':>8}  vs bar")
for name, args, bar in cases:
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
    cols = ["parse + check", "lower", "IR passes", "LLVM IR", "LLVM optimiser", "PTX emission"]
    print(f"{name:<18} " + " ".join(f"{med.get(c, 0):>7.2f}" for c in cols)
          + f" {med.get('total', 0):>8.2f} {wall:>8.2f}  {wall / bar:.2f}x of {bar:.0f} ms")
print(f"(milliseconds, medians of {runs} builds; 'process' includes starting the binary and writing the PTX)")
# The machine's speed varies from day to day and minute to minute (a VM): a fixed amount of CPU work, timed the
# same way in the same run, is the anchor to compare figures across runs by.
def anchor():
    t0 = time.perf_counter()
    s = 0
    for i in range(3_000_000):
        s += i
    return (time.perf_counter() - t0) * 1e3
loops = [anchor() for _ in range(runs)]
print(f"anchor: a fixed Python loop of 3M additions, median {statistics.median(loops):.0f} ms, "
      f"min {min(loops):.0f} ms, max {max(loops):.0f} ms over {runs} runs")
PY

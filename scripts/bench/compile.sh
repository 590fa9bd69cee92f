#!/usr/bin/env bash
# Compile-time benchmark: `.cute` -> PTX for each kernel the compiler builds today, stage by stage.
# Prints the median over RUNS rounds, each building every kernel once (in-process stage times from
# `cutec build --timings`, and the whole process's wall time) and the ratio to the bar: the brief's 50 ms per
# kernel on a 2-core CPU, and 100 ms for the Hopper GEMMs (issue 9's hand-written one, issue 16's scheduled ones).
# Usage: bash scripts/bench/compile.sh [RUNS] [PIPELINE]   (default 21 runs)
# With PIPELINE (an LLVM pass pipeline, e.g. 'default<O3>'), every build is paired with one under
# `--llvm-passes PIPELINE`, interleaved, and the last columns compare the two in-process medians.
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/env.sh
RUNS=${1:-21}
PIPELINE=${2:-}
cargo build --release --locked -q -p cutec
bin=target/release/cutec
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
python3 - "$bin" "$out" "$RUNS" "$PIPELINE" <<'PY'
import statistics, subprocess, sys, time
bin_, out, runs, other = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
cases = [("copy", ["examples/copy.cute"], 50.0),
         ("softmax N=4096", ["examples/softmax.cute", "-D", "N=4096"], 50.0),
         ("rmsnorm N=4096", ["examples/rmsnorm.cute", "-D", "N=4096"], 50.0),
         ("gemm_simt", ["examples/gemm_simt.cute"], 50.0),
         ("tma_copy", ["examples/tma_copy.cute"], 50.0),
         ("gemm_sm90_manual", ["examples/gemm_sm90_manual.cute"], 100.0),
         ("gemm_sm90", ["examples/gemm_sm90.cute"], 100.0),
         ("gemm_pipelined", ["examples/gemm_pipelined.cute"], 100.0),
         ("gemm_kn", ["examples/gemm_kn.cute"], 100.0),
         ("gemm_fp8", ["examples/gemm_fp8.cute"], 100.0),
         ("gemm_batched", ["examples/gemm_batched.cute"], 100.0),
         ("gemm_epilogue", ["examples/gemm_epilogue.cute"], 100.0)]
print(f"{'kernel':<18} {'check':>7} {'lower':>7} {'passes':>7} {'LLVM IR':>7} {'opt':>7} {'PTX':>7} {'in-proc':>8} "
      f"{'process':>8}  vs bar" + (f"      {other}: in-proc, ratio" if other else ""))


def build(args, stages, walls):
    t0 = time.perf_counter()
    p = subprocess.run([bin_, "build", *args, "--emit", "ptx", "-o", f"{out}/k.ptx", "--timings"],
                       capture_output=True, text=True)
    walls.append((time.perf_counter() - t0) * 1e3)
    if p.returncode != 0:
        sys.exit(f"{args[0]}: build failed:\n{p.stderr}")
    for line in p.stderr.splitlines():
        if line.startswith("time:"):
            ms, stage = line[5:].split("ms", 1)
            stages.setdefault(stage.strip(), []).append(float(ms))


# Rounds that build every kernel once each, so that a burst of load on this VM falls on all rows alike instead of
# on the kernel whose builds it meets.
data = {name: ({}, [], {}, []) for name, _, _ in cases}
for _ in range(runs):
    for name, args, _ in cases:
        stages, walls, other_stages, other_walls = data[name]
        build(args, stages, walls)
        if other:
            build(args + ["--llvm-passes", other], other_stages, other_walls)
for name, args, bar in cases:
    stages, walls, other_stages, other_walls = data[name]
    med = {k: statistics.median(v) for k, v in stages.items()}
    wall = statistics.median(walls)
    cols = ["parse + check", "lower", "IR passes", "LLVM IR", "LLVM optimiser", "PTX emission"]
    row = (f"{name:<18} " + " ".join(f"{med.get(c, 0):>7.2f}" for c in cols)
           + f" {med.get('total', 0):>8.2f} {wall:>8.2f}  {wall / bar:.2f}x of {bar:.0f} ms")
    if other:
        theirs = statistics.median(other_stages["total"])
        row += f"   {theirs:>8.2f} {med['total'] / theirs:.3f}"
    print(row)
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

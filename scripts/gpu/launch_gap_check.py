#!/usr/bin/env python3
"""Does the host's launch path show in the small-M timings? The dispatch's plans at 16 / 64 / 128 / 256 x 8192 x
8192 (splitk_check.plan, launched from Python) and cuBLAS (`torch.matmul`), each timed two ways in the same
interleaved rounds:
- `plain`: the harness's medians of per-launch CUDA event intervals (cuda_timing.median_ms), the host enqueueing
  each launch while the GPU runs the one before;
- `queued`: the same loop behind a 20 ms `torch.cuda._sleep` on the stream, so every launch is enqueued before
  the first one starts and the intervals hold only the GPU's time (the kernel and the gap between kernels).
Where `plain` is slower than `queued`, the GPU waited for the host between launches. Also prints the host time
per launch call (no synchronisation inside), and, with `--sustained`, the SM clock and board power that
`nvidia-smi` samples every 50 ms while each launch runs back to back for about 2 s (the time per launch too):
whether one kernel runs the GPU at lower clocks than the other.

Run from scripts/gpu on the GPU machine, with the cutec wheel importable:
    python3 launch_gap_check.py [--rounds 5] [--sustained]
"""
import argparse
import statistics
import subprocess
import sys
import time

import torch

import splitk_check as sk
from cuda_timing import median_ms

SHAPES = [(16, 8192, 8192), (64, 8192, 8192), (128, 8192, 8192), (256, 8192, 8192)]


def sustained(fn, seconds=2.0):
    """(us per launch, median SM MHz, median W, samples) over about `seconds` of back-to-back launches, sampled by
    nvidia-smi every 50 ms (the first 0.3 s dropped: the sampler's start)."""
    for _ in range(10):
        fn()
    torch.cuda.synchronize()
    smi = subprocess.Popen(["nvidia-smi", "--query-gpu=clocks.sm,power.draw", "--format=csv,noheader,nounits",
                            "-lms", "50"], stdout=subprocess.PIPE, text=True)
    t0 = time.perf_counter()
    n = 0
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    while time.perf_counter() - t0 < seconds:
        for _ in range(50):
            fn()
        n += 50
        torch.cuda.synchronize()  # keeps the host within 50 launches of the GPU
    end.record()
    torch.cuda.synchronize()
    smi.terminate()
    out, _ = smi.communicate()
    rows = [line.split(",") for line in out.strip().splitlines() if line.count(",") == 1]
    rows = rows[6:] or rows
    mhz = statistics.median(float(r[0]) for r in rows) if rows else float("nan")
    watts = statistics.median(float(r[1]) for r in rows) if rows else float("nan")
    return start.elapsed_time(end) / n * 1e3, mhz, watts, len(rows)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--sustained", action="store_true", help="clocks and power over 2 s of each launch")
    args = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    sk.prepare([sk.plan(m, n, k) for m, n, k in SHAPES])
    print("== us per launch, medians over rounds of medians of 20 (plain: enqueued while running; queued: all "
          "enqueued first); host us per launch call")
    print(f"{'M x N x K':>16} {'launch':>24} {'plain':>8} {'queued':>8} {'cuBLAS plain':>13} {'cuBLAS queued':>14}"
          f" {'host':>6} {'cuBLAS host':>12}")
    for m, n, k in SHAPES:
        a, b = sk.inputs(m, n, k, False)
        run = sk.plan(m, n, k)
        w, c = sk.buffers(run, m, n, 0.0)
        c2 = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
        ours = lambda: sk.launch(run, a, b, w, c)
        theirs = lambda: torch.matmul(a, b.T, out=c2)
        t = {key: [] for key in ("op", "oq", "cp", "cq")}
        for _ in range(args.rounds):
            t["op"].append(median_ms(ours))
            t["cp"].append(median_ms(theirs))
            t["oq"].append(median_ms(ours, queued=True))
            t["cq"].append(median_ms(theirs, queued=True))
        med = {key: sorted(v)[len(v) // 2] * 1e3 for key, v in t.items()}
        host = sk.host_us(run, a, b)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(200):
            theirs()
        host_c = (time.perf_counter() - t0) / 200 * 1e6
        torch.cuda.synchronize()
        print(f"{f'{m}x{n}x{k}':>16} {sk.name(run):>24} {med['op']:8.1f} {med['oq']:8.1f} {med['cp']:13.1f} "
              f"{med['cq']:14.1f} {host:6.1f} {host_c:12.1f}")
        if args.sustained:
            for who, fn in (("cutec", ours), ("cuBLAS", theirs), ("cutec", ours), ("cuBLAS", theirs)):
                us, mhz, watts, count = sustained(fn)
                print(f"{'':>16} sustained {who:<7} {us:7.1f} us per launch, SM {mhz:6.0f} MHz, {watts:6.1f} W "
                      f"({count} samples)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The GEMM table of issue 17: every shape of the harness, bf16 and fp8 e4m3, each kernel checked against a float32
reference of the same inputs, then timed in the same run as its anchors: cuBLAS (`torch.matmul`) and Triton's
tutorial matmul for bf16, `torch._scaled_mm` (fast accumulation) for fp8. Prints TFLOP/s (2 M N K over the median
time), the ratio to the anchor, and the geometric mean of the ratios over the shapes.

When the `cutec` Python package imports, the bf16 and fp8 tables have one more column, `dispatch`: for M <= 256 the
launch splitk_check.plan (bf16) or splitk_check.plan_fp8 (e4m3) picks from examples/gemm_splitk.cute (64-row tiles
direct, or split-K: GEMM + deterministic reduction, launched from Python and timed together; for bf16 with 129 to
256 rows, gemm_sm90_manual's 128 x 128 tiles in clusters of 2, launched from Python), for larger M
the hand-written gemm_sm90_manual or gemm_fp8_manual (its own column's time: the fastest of the columns at those
shapes in every run so far). Its correctness is splitk_check.py's. With `--tuning FILE` (a tuning file of `cutec tune`
over examples/gemm_sm90_manual.cute, e.g. from tune_check.sh --manual), the bf16 dispatch above 256 rows is instead
`cutec run examples/gemm_sm90_manual.cute --tuning FILE` (the file's configuration for the shape, checked against
float32 at the table's shapes first).

B stored K x N (gemm_kn, `torch.matmul(a, b)` with b contiguous (K, N)) has its own table, against cuBLAS on that
layout, after the others; `--kn` runs it alone.

Run from scripts/gpu on the GPU machine, after scripts/gpu/build.sh (the modules and `cutec` in $GPU_DIR):
    GPU_DIR=../../.gpu python3 gemm_table.py [--skip-check] [--kn] [--rounds R]
With --rounds R (3 by default; 1 is the single sample per column of sessions before 8) every shape is timed in R
interleaved rounds (every column once per round, the anchors after our columns in even rounds and before them in
odd ones), each column's time the median of its rounds': the GPU's clocks drift over a call (cuBLAS at
64 x 8192 x 8192 moved by 7 % between calls), and one sample per column puts that drift into the ratios.
Exit status: 0 when every case is correct, 1 otherwise.
"""
import argparse
import math
import os
import statistics
import sys
import tempfile

import torch

import fp8_check as f8
from cuda_timing import median_ms
from hopper_check import GPU, gemm_case, run, triton_matmul

SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192), (8192, 8192, 2048), (128, 8192, 8192), (256, 8192, 8192),
          (1024, 8192, 8192), (16, 8192, 8192), (64, 8192, 8192), (4096, 14336, 4096)]
BF16 = [("gemm_sm90", "gemm"), ("gemm_sm90_manual", "gemm_sm90_manual")]
FP8 = [("gemm_fp8", "gemm_fp8"), ("gemm_fp8_manual", "gemm_fp8_manual")]
KN = [("gemm_kn", "gemm_kn")]
MANUAL_SRC = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "examples", "gemm_sm90_manual.cute"))


def geomean(xs):
    xs = [x for x in xs if x == x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def fp8_case(work, module, kernel, m, n, k, seed):
    """An fp8 GEMM against float32 A * B^T of the same e4m3 inputs, scaled: gives whether it passed."""
    g = torch.Generator(device="cuda").manual_seed(seed)
    a = torch.randn(m, k, device="cuda", generator=g).to(f8.E4M3)
    b = torch.randn(n, k, device="cuda", generator=g).to(f8.E4M3)
    pa, pb, pc = (os.path.join(work, x) for x in ("a.npy", "b.npy", "c.npy"))
    f8.save_raw(pa, a, ml=False)
    f8.save_raw(pb, b, ml=False)
    rc, out, _ = f8.run(module + ".ptx", kernel, inputs=[("a", pa), ("b", pb)], outputs=[("c", pc)],
                        scalars=[("scale_a", 0.5), ("scale_b", 1.25)])
    label = f"{f'{m}x{n}x{k}':>18} {module:<18}"
    if rc != 0:
        print(f"{label} FAIL cutec run failed:\n{out}")
        return False
    c = f8.load(pc).float()
    ref = (a.float() @ b.float().T) * 0.625
    rel = float((c - ref).norm() / ref.norm().clamp_min(1e-30))
    ok = bool(torch.isfinite(c).all()) and rel <= 1e-2
    print(f"{label} {'PASS' if ok else 'FAIL'} rel err {rel:.2e}")
    return ok


def bench(module, kernel, m, n, k, fp8):
    dims = {"M": m, "N": n, "K": k}
    if fp8:
        rc, out, b = f8.run(module + ".ptx", kernel, dims, bench=True, scalars=[("scale_a", 1.0), ("scale_b", 1.0)])
    else:
        rc, out, b = run(module + ".ptx", kernel, dims, bench=True, iters=20)
    return float(b["median_ms"]) if rc == 0 else float("nan")


def tuned_ms(tuning, m, n, k):
    """gemm_sm90_manual with the tuning file's configuration for the shape: `cutec run SRC --tuning FILE`."""
    rc, out, b = run(MANUAL_SRC, "gemm_sm90_manual", {"M": m, "N": n, "K": k}, bench=True, iters=20,
                     extra=["--tuning", tuning])
    if rc != 0:
        print(f"(tuned gemm_sm90_manual failed at {m}x{n}x{k}:\n{out})")
    return float(b["median_ms"]) if rc == 0 else float("nan")


def splitk_dispatch(fp8=False, tuning=None):
    """The `dispatch` column: (name, fn(a, b, times) -> ms), or None without the cutec Python package. bf16: for
    M <= 256 the launch splitk_check.plan picks, gemm_sm90_manual above; e4m3: splitk_check.plan_fp8's launch (the
    same kernels for e4m3, the scales applied to the partials) for M <= 256, gemm_fp8_manual above."""
    try:
        import splitk_check as sk
    except ImportError as e:
        print(f"(no dispatch column: {e})")
        return None

    def ms(a, b, times):
        m, n, k = a.shape[0], b.shape[0], a.shape[1]
        if m > 256:
            if tuning and not fp8:
                return tuned_ms(tuning, m, n, k)
            return times["gemm_fp8_manual" if fp8 else "gemm_sm90_manual"]
        if fp8:
            return sk.pair_ms(sk.plan_fp8(m, n, k), a.to(f8.E4M3), b.to(f8.E4M3), iters=20)[0]
        return sk.pair_ms(sk.plan(m, n, k), a, b, iters=20)[0]
    return ("dispatch", ms)


def table(kind, kernels, anchors, fp8, extra=None, rounds=1):
    """One table: per shape, `rounds` interleaved rounds (each times every column once: our modules, the dispatch,
    then the anchors, the anchors first in every other round), each column's time the median of its rounds'."""
    how = f"medians of {rounds} interleaved rounds of 20 launches" if rounds > 1 else "medians of 20 launches"
    print(f"== {kind}: TFLOP/s (ratio to {anchors[0][0]}), {how}, CUDA events, the same run")
    names = [m for m, _ in kernels] + ([extra[0]] if extra else []) + [a for a, _ in anchors]
    print(f"{'M x N x K':>18}" + "".join(f"{n:>22}" for n in names))
    ratios = {m: [] for m, _ in kernels + ([extra] if extra else []) + [(a, None) for a, _ in anchors[1:]]}
    for m, n, k in SHAPES:
        flop = 2.0 * m * n * k
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
        samples = {name: [] for name in names}
        for r in range(rounds):
            if r % 2:
                for name, anchor in anchors:
                    samples[name].append(median_ms(anchor(a, b)))
            ours = {mod: bench(mod, ker, m, n, k, fp8) for mod, ker in kernels}
            if extra:
                ours[extra[0]] = extra[1](a, b, ours)
            for name, t in ours.items():
                samples[name].append(t)
            if r % 2 == 0:
                for name, anchor in anchors:
                    samples[name].append(median_ms(anchor(a, b)))
        times = {name: statistics.median(v) for name, v in samples.items()}
        ref = times[anchors[0][0]]
        cells = []
        for name in names:
            t = times[name]
            if name != anchors[0][0]:
                ratios[name].append(ref / t)
            cells.append(f"{flop / t / 1e9:.1f} ({ref / t:.3f})")
        print(f"{f'{m}x{n}x{k}':>18}" + "".join(f"{c:>22}" for c in cells))
        del a, b
    print(f"{'geometric mean':>18}" + "".join(f"{geomean(ratios[n]):>22.3f}" if n in ratios else f"{'1':>22}"
                                              for n in names))
    low = {n: min(r) for n, r in ratios.items() if r}
    print("lowest ratio: " + ", ".join(f"{n} {v:.3f}" for n, v in low.items()))


def kn_table(work, skip_check, rounds=1):
    """gemm_kn (B stored K x N) on every shape: checked against float32 A * B, then timed against cuBLAS on the same
    layout, torch.matmul(a, b) with b contiguous (K, N); `table` hands its anchors B as (N, K), transposed here."""
    ok = True
    if not skip_check:
        print("== B stored K x N: correctness against float32 A * B of the same inputs (relative Frobenius <= 1e-2)")
        for m, n, k in SHAPES:
            for module, kernel in KN:
                ok &= gemm_case(work, module + ".ptx", kernel, m, n, k, b_kn=True,
                                label=f"{f'{m}x{n}x{k}':>18} {module:<18}")

    def kn_anchor(a, b):
        b_kn = b.T.contiguous()
        return lambda: torch.matmul(a, b_kn)
    table("bf16, B stored K x N", KN, [("cuBLAS", kn_anchor)], fp8=False, rounds=rounds)
    return ok


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--skip-check", action="store_true", help="time only")
    ap.add_argument("--kn", action="store_true", help="only B stored K x N")
    ap.add_argument("--tuning", help="a tuning file of gemm_sm90_manual.cute: the bf16 dispatch above 256 rows")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds per shape (each column's median)")
    args = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    work = tempfile.mkdtemp(prefix="cutec-table-", dir=GPU)
    ok = True
    if args.kn:
        return 0 if kn_table(work, args.skip_check, args.rounds) else 1
    if not args.skip_check:
        print("== correctness against float32 references of the same inputs (relative Frobenius error <= 1e-2)")
        for i, (m, n, k) in enumerate(SHAPES):
            for module, kernel in BF16:
                ok &= gemm_case(work, module + ".ptx", kernel, m, n, k, label=f"{f'{m}x{n}x{k}':>18} {module:<18}")
            for module, kernel in FP8:
                ok &= fp8_case(work, module, kernel, m, n, k, seed=i)
            if args.tuning and m > 256:
                ok &= gemm_case(work, MANUAL_SRC, "gemm_sm90_manual", m, n, k, extra=["--tuning", args.tuning],
                                label=f"{f'{m}x{n}x{k}':>18} {'tuned manual':<18}")
    mm = triton_matmul()
    bf16_anchors = [("cuBLAS", lambda a, b: (lambda: torch.matmul(a, b.T)))]
    if mm is not None:
        def triton_anchor(a, b):
            c = torch.empty(a.shape[0], b.shape[0], device="cuda", dtype=torch.bfloat16)
            return lambda: mm(a, b, c)
        bf16_anchors.append(("Triton", triton_anchor))
    table("bf16", BF16, bf16_anchors, fp8=False, extra=splitk_dispatch(tuning=args.tuning), rounds=args.rounds)
    one = torch.tensor(1.0, device="cuda")

    def scaled(a, b):
        a8, b8 = a.to(f8.E4M3), b.to(f8.E4M3)
        return lambda: f8.scaled_mm(a8, b8, one, one)
    table("fp8 e4m3 -> bf16", FP8, [("_scaled_mm", scaled)], fp8=True, extra=splitk_dispatch(fp8=True),
          rounds=args.rounds)
    ok &= kn_table(work, args.skip_check, args.rounds)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""examples/gemm_epilogue_manual.cute and examples/gemm_epilogue.cute, the fused bias + GELU epilogue run by the
producer warpgroup's spare warps beside the next tile's mainloop (by hand, and by `store(.., map = gelu)`): correct
against float32 torch on the same inputs (ragged shapes, several tiles
per CTA so that the staging tile changes hands many times), clean under compute-sanitizer, then what the fused
epilogue costs over the plain GEMM of the same schedule (gemm_sm90_manual), beside the scheduled pair
(gemm_epilogue over gemm_sm90) and torch's addmm followed by gelu, in interleaved rounds.

Run from scripts/gpu on the GPU machine with the modules in $GPU_DIR (gemm_epilogue_manual, gemm_sm90_manual,
gemm_epilogue, gemm_sm90) and `cutec`:
    GPU_DIR=../../.gpus python3 epilogue_overlap_check.py [--rounds 5] [--sanitize]
Exit status: 0 when every case is correct and every sanitizer run clean.
"""
import argparse
import statistics
import sys
import tempfile

import torch

from cuda_timing import median_ms
from hopper_check import GPU, run, sanitizer_runs
from schedule_check import gelu_case

MANUAL = ("gemm_epilogue_manual", "gemm_bias_gelu_manual")
CHECK = [(128, 256, 64), (1000, 776, 336), (129, 264, 72), (300, 512, 136), (200, 304, 40), (3000, 5000, 200),
         (4096, 4096, 256), (2048, 2048, 2048)]
PAIRS = [("gemm_sm90_manual", "gemm_sm90_manual", "plain (manual)"),
         ("gemm_epilogue_manual", "gemm_bias_gelu_manual", "fused, spare warps"),
         ("gemm_sm90", "gemm", "plain (scheduled)"),
         ("gemm_epilogue", "gemm_bias_gelu", "fused (scheduled)")]
SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192), (8192, 8192, 2048)]


def correctness(work, module=MANUAL[0], kernel=MANUAL[1], shapes=CHECK):
    ok_all = True
    print(f"== {module}: gelu(A * B^T + bias) against float32 torch (relative Frobenius error <= 1e-2)")
    for m, n, k in shapes:
        ok_all &= gelu_case(work, module, kernel, m, n, k, f"{f'{m}x{n}x{k}':>18}")
    return ok_all


def timing(rounds, also):
    pairs = PAIRS + [tuple(a.split(":", 2)) for a in also]
    print(f"== ms, medians of {rounds} interleaved rounds of 20-launch medians; + = over the plain GEMM of the same "
          "schedule; torch = addmm then gelu (bf16)")
    print(f"{'M x N x K':>18}" + "".join(f"{w:>26}" for _, _, w in pairs) + f"{'torch':>10}{'torch/manual':>14}")
    ok = True
    for m, n, k in SHAPES:
        dims = {"M": m, "N": n, "K": k}
        times = {p[0]: [] for p in pairs}
        tt = []
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
        bias = torch.randn(n, device="cuda", dtype=torch.bfloat16)
        for r in range(rounds):
            order = pairs[r % len(pairs):] + pairs[:r % len(pairs)]
            for module, kernel, _ in order:
                rc, out, bb = run(module + ".ptx", kernel, dims, bench=True, iters=20)
                if rc != 0:
                    print(f"{module} failed:\n{out}")
                    ok = False
                    continue
                times[module].append(float(bb["median_ms"]))
            tt.append(median_ms(lambda: torch.nn.functional.gelu(torch.addmm(bias, a, b.T), approximate="tanh")))
        med = {mod: statistics.median(t) if t else float("nan") for mod, t in times.items()}
        tm = statistics.median(tt)
        cells = []
        for i, (mod, _, _) in enumerate(pairs):
            # Fused modules against the plain GEMM of their schedule (the extra ones, builds of the scheduled
            # example: gemm_sm90's).
            plain = med[pairs[i - i % 2][0] if i < len(PAIRS) else PAIRS[2][0]]
            extra = f" ({med[mod] / plain - 1:+.1%})" if i % 2 or i >= len(PAIRS) else ""
            cells.append(f"{med[mod]:.4f}{extra}")
        print(f"{f'{m}x{n}x{k}':>18}" + "".join(f"{c:>26}" for c in cells)
              + f"{tm:>10.4f}{tm / med['gemm_epilogue_manual']:>14.3f}")
        del a, b, bias
    return ok


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--sanitize", action="store_true")
    ap.add_argument("--also", action="append", default=[],
                    help="MODULE:KERNEL:LABEL, another build of the fused kernel, checked and timed with the others")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="cutec-epi-", dir=GPU)
    ok = correctness(work)
    ok &= correctness(work, "gemm_epilogue", "gemm_bias_gelu")
    for a in args.also:
        module, kernel, _ = a.split(":", 2)
        ok &= correctness(work, module, kernel, CHECK[:4] + CHECK[5:7])
    if not ok:
        print("== not timed: the kernel is wrong")
        return 1
    if args.sanitize:
        print("== compute-sanitizer")
        ok &= sanitizer_runs([(m + ".ptx", k, dims) for m, k in (MANUAL, ("gemm_epilogue", "gemm_bias_gelu"))
                              for dims in ({"M": 300, "N": 512, "K": 136}, {"M": 1000, "N": 776, "K": 336})],
                             width=22)
    ok &= timing(args.rounds, args.also)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

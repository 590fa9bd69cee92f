#!/usr/bin/env python3
"""Times builds of one GEMM kernel against cuBLAS in the same run, interleaved (A B C A B C ...), to tell apart
changes of a few percent. Each module is a `.ptx` with its manifest beside it (as `cutec build --emit
ptx,manifest` writes them); all take (a (M, K), b (N, K), c (M, N)) bf16 like gemm_sm90_manual.

  python3 scripts/gpu/gemm_variants.py --kernel gemm_sm90_manual .gpu/ab/gemm_old.ptx .gpu/ab/gemm_new.ptx

Prints, per shape, each module's median TFLOP/s over the rounds (each round a median of 20 launches) and its
ratio to cuBLAS (torch.matmul bf16) measured in the same rounds.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys

import torch

from cuda_timing import median_ms

GPU = os.environ.get("GPU_DIR", ".gpu")


def bench(module, kernel, dims, iters):
    cmd = [os.path.join(GPU, "cutec"), "run", module, "--kernel", kernel, "--bench", "--warmup", "5", "--iters",
           str(iters)] + [f"--dim={k}={v}" for k, v in dims.items()]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    line = next((l for l in p.stdout.splitlines() if l.startswith("bench ")), None)
    if p.returncode != 0 or line is None:
        sys.exit(f"{module}: cutec run failed:\n{p.stdout}{p.stderr}")
    return float(dict(re.findall(r"(\w+)=(\S+)", line))["median_ms"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("modules", nargs="+")
    ap.add_argument("--kernel", default="gemm_sm90_manual")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--iters", type=int, default=20)
    args = ap.parse_args()
    names = [os.path.basename(m) for m in args.modules]
    print(f"{'M x N x K':>16}" + "".join(f"{n:>24}" for n in names) + f"{'cuBLAS':>9}")
    for m, n, k in [(4096, 4096, 4096), (8192, 8192, 8192), (8192, 8192, 2048)]:
        flop = 2.0 * m * n * k
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
        c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
        times = {mod: [] for mod in args.modules}
        cublas = []
        for _ in range(args.rounds):
            cublas.append(median_ms(lambda: torch.matmul(a, b.T, out=c)))
            for mod in args.modules:
                times[mod].append(bench(mod, args.kernel, {"M": m, "N": n, "K": k}, args.iters))
        cms = statistics.median(cublas)
        cols = "".join(f"{f'{flop / statistics.median(t) / 1e9:.1f} ({cms / statistics.median(t):.3f})':>24}"
                       for t in times.values())
        print(f"{f'{m}x{n}x{k}':>16}{cols}{flop / cms / 1e9:>9.1f}")
        del a, b, c
    print(f"(TFLOP/s (ratio to cuBLAS); medians over {args.rounds} interleaved rounds of {args.iters} launches)")


if __name__ == "__main__":
    main()

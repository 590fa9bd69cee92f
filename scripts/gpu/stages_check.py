#!/usr/bin/env python3
"""Builds of the cooperative GEMMs with other const parameters (e.g. the epilogue in pieces and a deeper ring),
checked and then timed in the same rounds as their anchors: cuBLAS (`torch.matmul(a, b.T)`) for bf16 modules,
`torch._scaled_mm` for e4m3 ones.

Each module is given as PATH:KERNEL:KIND, PATH relative to $GPU_DIR without `.ptx`, KIND `bf16` or `e4m3`:
    GPU_DIR=../../.gpu python3 stages_check.py v/m_base:gemm_sm90_manual:bf16 v/f_base:gemm_fp8_manual:e4m3 ...
    [--shapes 256x8192x8192,...]   (the shapes timed; by default the five large ones)

Correctness: fresh seeded inputs per case, C poisoned by `cutec run`, against float32 A * B^T (relative Frobenius
error <= 1e-2), on ragged shapes, K < BK, and shapes with several tiles per CTA (the staging tiles reused).
Timing: ROUNDS interleaved rounds (the modules in an order rotated each round), each a median of 20 launches;
prints TFLOP/s, the ratio to the anchor and to the first module of the same kind.
Exit status: 0 when every case is correct.
"""
import argparse
import statistics
import sys
import tempfile

import torch

import fp8_check as f8
from cuda_timing import median_ms
from gemm_table import bench, fp8_case
from hopper_check import GPU, gemm_case

CHECK = [(1000, 776, 336), (129, 264, 72), (200, 304, 40), (64, 8, 8), (3000, 5000, 200), (4096, 4096, 256),
         (257, 1032, 1000)]
TIME = [(4096, 4096, 4096), (8192, 8192, 8192), (8192, 8192, 2048), (1024, 8192, 8192), (4096, 14336, 4096)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("modules", nargs="+")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--shapes", help="the shapes timed, MxNxK,... (default: the five large shapes)")
    args = ap.parse_args()
    shapes = [tuple(int(d) for d in s.split("x")) for s in args.shapes.split(",")] if args.shapes else TIME
    torch.backends.cuda.matmul.allow_tf32 = False
    mods = [tuple(m.split(":")) for m in args.modules]
    work = tempfile.mkdtemp(prefix="cutec-stages-", dir=GPU)
    ok = True
    print("== correctness against float32 (relative Frobenius error <= 1e-2)")
    for i, (m, n, k) in enumerate(CHECK):
        for path, kernel, kind in mods:
            label = f"{f'{m}x{n}x{k}':>18} {path:<34}"
            if kind == "bf16":
                ok &= gemm_case(work, path + ".ptx", kernel, m, n, k, label=label)
            else:  # TMA reads e4m3 rows in 16-byte steps: K % 16 == 0 (checked at launch)
                k16 = -(-k // 16) * 16
                ok &= fp8_case(work, path, kernel, m, n, k16, seed=90 + i)
    if not ok:
        print("== not timed: a module is wrong")
        return 1
    one = torch.tensor(1.0, device="cuda")
    times = {s: {} for s in shapes}
    for r in range(args.rounds):
        for si, (m, n, k) in enumerate(shapes):
            a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
            b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
            a8, b8 = a.to(f8.E4M3), b.to(f8.E4M3)
            t = times[(m, n, k)]
            t.setdefault("cuBLAS", []).append(median_ms(lambda: torch.matmul(a, b.T)))
            t.setdefault("_scaled_mm", []).append(median_ms(lambda: f8.scaled_mm(a8, b8, one, one)))
            rot = (r + si) % len(mods)
            for path, kernel, kind in mods[rot:] + mods[:rot]:
                t.setdefault(path, []).append(bench(path, kernel, m, n, k, kind == "e4m3"))
            del a, b, a8, b8
    print(f"== TFLOP/s (ratio to the anchor; to the first module of its kind), medians of {args.rounds} rounds")
    first = {}
    for path, _, kind in mods:
        first.setdefault(kind, path)
    for (m, n, k) in shapes:
        med = {c: statistics.median(v) for c, v in times[(m, n, k)].items()}
        flop = 2.0 * m * n * k
        print(f"{m}x{n}x{k}: cuBLAS {flop / med['cuBLAS'] / 1e9:.1f}, _scaled_mm {flop / med['_scaled_mm'] / 1e9:.1f}")
        for path, _, kind in mods:
            anchor = med["cuBLAS" if kind == "bf16" else "_scaled_mm"]
            print(f"    {path:<34} {flop / med[path] / 1e9:8.1f} ({anchor / med[path]:.3f}; "
                  f"{med[first[kind]] / med[path]:.3f})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Is the large-shape gap to cuBLAS the last wave? The persistent GEMMs run 128 x 256 tiles in clusters of two, one
cluster tile (256 x 256) per cluster slot, 66 slots on the H200's 132 SMs: 4096^3 is 256 cluster tiles, 3.88
waves, so 58 of 66 slots run a fourth tile while 8 wait. Each shape of the table is paired here with one of the
same K whose cluster tiles fill whole waves (3072 x 5632: 264 = 4 x 66); if the ratio to cuBLAS rises on the full
shapes, the gap is the tail, and stream-K (or any split of the last wave) is what closes it.

Prints, per shape: waves, TFLOP/s and the ratio to the anchor (cuBLAS `torch.matmul(a, b.T)`, `torch._scaled_mm`
for fp8) of gemm_sm90, gemm_sm90_manual, gemm_fp8, gemm_fp8_manual, medians over ROUNDS interleaved rounds of
20-launch medians; and cuBLAS's kernel name, grid and block at each shape (torch.profiler), to see whether it
tiles differently or uses stream-K. The new shapes are checked against float32 first.

Run from scripts/gpu on the GPU machine after scripts/gpu/build.sh:
    GPU_DIR=../../.gpu python3 waves_check.py [--rounds 3]
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

PAIRS = [((4096, 4096, 4096), (3072, 5632, 4096)),
         ((8192, 8192, 2048), (6144, 11264, 2048)),
         ((1024, 8192, 8192), (1024, 8448, 8192)),
         ((8192, 8192, 8192), (6144, 11264, 8192))]
BF16 = [("gemm_sm90", "gemm"), ("gemm_sm90_manual", "gemm_sm90_manual")]
FP8 = [("gemm_fp8", "gemm_fp8"), ("gemm_fp8_manual", "gemm_fp8_manual")]


def waves(m, n):
    return (-(-m // 256)) * (-(-n // 256)) / 66


def cublas_kernels(m, n, k):
    """(name, grid, block) of the kernels torch.matmul(a, b.T) and torch._scaled_mm launch at this shape."""
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
    a8, b8, one = a.to(f8.E4M3), b.to(f8.E4M3), torch.tensor(1.0, device="cuda")
    for _ in range(3):
        torch.matmul(a, b.T)
        f8.scaled_mm(a8, b8, one, one)
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        torch.matmul(a, b.T)
        f8.scaled_mm(a8, b8, one, one)
        torch.cuda.synchronize()
    out = []
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            out.append(e.name[:90])
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    work = tempfile.mkdtemp(prefix="cutec-waves-", dir=GPU)
    shapes = [s for pair in PAIRS for s in pair]
    ok = True
    print("== correctness of the full-wave shapes against float32 (relative Frobenius error <= 1e-2)")
    for i, (m, n, k) in enumerate(p[1] for p in PAIRS):
        for module, kernel in BF16:
            ok &= gemm_case(work, module + ".ptx", kernel, m, n, k, label=f"{f'{m}x{n}x{k}':>18} {module:<18}")
        for module, kernel in FP8:
            ok &= fp8_case(work, module, kernel, m, n, k, seed=50 + i)
    print("== the anchors' kernels (torch.profiler)")
    for m, n, k in shapes:
        print(f"{f'{m}x{n}x{k}':>18} " + " | ".join(cublas_kernels(m, n, k)))
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
            mods = BF16 + FP8
            rot = (r + si) % len(mods)
            for module, kernel in mods[rot:] + mods[:rot]:
                t.setdefault(module, []).append(bench(module, kernel, m, n, k, module.startswith("gemm_fp8")))
            del a, b, a8, b8
    print(f"== TFLOP/s (ratio to cuBLAS / _scaled_mm), medians of {args.rounds} interleaved rounds")
    cols = ["cuBLAS", "gemm_sm90", "gemm_sm90_manual", "_scaled_mm", "gemm_fp8", "gemm_fp8_manual"]
    print(f"{'M x N x K':>18} {'waves':>6}" + "".join(f"{c:>20}" for c in cols))
    for (m, n, k) in shapes:
        med = {c: statistics.median(v) for c, v in times[(m, n, k)].items()}
        flop = 2.0 * m * n * k
        cells = []
        for c in cols:
            ref = med["_scaled_mm" if c.startswith("gemm_fp8") or c == "_scaled_mm" else "cuBLAS"]
            cells.append(f"{flop / med[c] / 1e9:.1f} ({ref / med[c]:.3f})")
        print(f"{f'{m}x{n}x{k}':>18} {waves(m, n):>6.2f}" + "".join(f"{c:>20}" for c in cells))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

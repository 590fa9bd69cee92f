#!/usr/bin/env python3
"""B stored K x N (`torch.matmul(a, b)` with b contiguous (K, N)): examples/gemm_kn.cute, the plain loop that the
scheduling passes make warp-specialized and persistent, its B tiles loaded MN-major in 64-column TMA boxes and
read N-major by wgmma. Checked against float32 A * B of the same bf16 inputs (fresh seeded inputs per case, C
poisoned with NaN by `cutec run`) on ragged shapes (K < BK, several tiles per CTA), then timed against cuBLAS on
the same layout (torch.matmul(a, b)), the K-major scheduled kernel (gemm_sm90, against torch.matmul(a, b.T)) and
the hand-written K x N kernel (gemm_sm90_kn, one warpgroup), all in the same run, in two rounds.

Run from the repository root on the GPU machine after scripts/gpu/build.sh filled .gpu/:
    GPU_DIR=.gpu python3 scripts/gpu/kn_check.py [--quick] [--ncu] [--sanitize] [--square --rounds N --only M,..]
Exit status: 0 when every case is correct (or refused as it must be), 1 otherwise.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import torch

from cuda_timing import median_ms
from hopper_check import CUTEC, GPU, gemm_case, refused, run, sanitizer_runs

# (module, what)
VARIANTS = [
    ("gemm_kn", "gemm_kn.cute: 128 x 256 x 64, 3 stages, clusters of 2 along M sharing B by multicast"),
    ("gemm_kn_c1", "-D CLUSTER_M=1: no clusters"),
    ("gemm_kn_bn128", "-D BN=128 -D STAGES=5: 128 x 128 tiles"),
    ("gemm_kn_bn128_c1", "-D BN=128 -D STAGES=5 -D CLUSTER_M=1"),
    ("gemm_kn_ma", "clusters of 2 along N sharing A by multicast instead"),
]
# Ragged M and N, K < BK, one k-tile, trip counts around the ring, several tiles per CTA.
CORRECT = [(1000, 776, 336), (129, 264, 72), (200, 304, 40), (64, 8, 8), (1, 8, 8), (300, 512, 136),
           (4096, 4096, 256), (3000, 5000, 200)]
TIMED = [(4096, 4096, 4096), (8192, 8192, 8192), (8192, 8192, 2048), (4096, 14336, 4096)]


def correctness(work, variants):
    ok_all = True
    print("== correctness: relative error (Frobenius) against float32 A * B of the same bf16 inputs; <= 1e-2")
    for module, what in variants:
        print(f"   {module} ({what})")
        for m, n, k in CORRECT:
            ok_all &= gemm_case(work, module + ".ptx", "gemm_kn", m, n, k, b_kn=True)
        # B's rows of 2N = 1554 bytes: TMA cannot describe them (a multiple of 16 bytes); refused at launch.
        ok_all &= refused(module + ".ptx", "gemm_kn", {"M": 1000, "N": 777, "K": 336}, f"{'1000x777x336':>18}")
    return ok_all


def bench(module, kernel, m, n, k):
    rc, out, b = run(module + ".ptx", kernel, {"M": m, "N": n, "K": k}, bench=True, iters=50)
    if rc != 0:
        print(f"FAIL {module} {m}x{n}x{k}: cutec run failed:\n{out}")
        return float("nan")
    return float(b["median_ms"])


def timings(variants, rounds, shapes, refs):
    """Each round times every shape once, cuBLAS first, then the kernels in an order rotated by one per round (so
    that no kernel always runs first after cuBLAS)."""
    ok_all = True
    torch.backends.cuda.matmul.allow_tf32 = False
    names = [m for m, _ in variants] + refs
    print("== TFLOP/s (ratio to cuBLAS on the same layout), medians of 50 launches, CUDA events, the same run")
    print("   K x N kernels against torch.matmul(a, b), b (K, N) contiguous; gemm_sm90 (B K-major) against "
          "torch.matmul(a, b.T), b (N, K) contiguous")
    head = "".join(f"{n:>22}" for n in names) + f"{'cuBLAS kn':>11}{'cuBLAS nt':>11}"
    print(f"{'round':>5} {'M x N x K':>18}" + head)
    for r in range(rounds):
        for m, n, k in shapes:
            flop = 2.0 * m * n * k
            a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
            b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
            bt = b.T.contiguous()
            c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
            kn = median_ms(lambda: torch.matmul(a, b, out=c), iters=50)
            nt = median_ms(lambda: torch.matmul(a, bt.T, out=c), iters=50)
            del a, b, bt, c
            times = {}
            for name in names[r % len(names):] + names[:r % len(names)]:
                kernel = "gemm" if name == "gemm_sm90" else ("gemm_sm90_kn" if name == "gemm_sm90_kn" else "gemm_kn")
                times[name] = bench(name, kernel, m, n, k)
                ok_all &= times[name] == times[name]
            cells = []
            for name in names:
                t, ref = times[name], nt if name == "gemm_sm90" else kn
                cells.append(f"{flop / t / 1e9:.1f} ({ref / t:.3f})")
            print(f"{r:>5} {f'{m}x{n}x{k}':>18}" + "".join(f"{x:>22}" for x in cells)
                  + f"{flop / kn / 1e9:>11.1f}{flop / nt / 1e9:>11.1f}")
    return ok_all


def ncu(n):
    """Nsight Compute's speed of light and warp states of gemm_kn and gemm_sm90 (one launch each, n^3)."""
    keep = ("Duration", "Throughput", "Busy", "Executed Ipc", "Issue Slots", "Warp Cycles", "Registers",
            "Dynamic Shared", "Stall", "Hit Rate")
    for module, kernel in [("gemm_kn", "gemm_kn"), ("gemm_sm90", "gemm")]:
        cmd = ["ncu", "--clock-control", "none", "--section", "SpeedOfLight", "--section", "WarpStateStats",
               "--section", "MemoryWorkloadAnalysis", "--kernel-name", kernel, "--launch-skip", "2", "--launch-count",
               "1", CUTEC, "run", os.path.join(GPU, module + ".ptx"), "--kernel", kernel, "--dim", f"M={n}", "--dim",
               f"N={n}", "--dim", f"K={n}", "--bench", "--warmup", "2", "--iters", "1"]
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=90)
            lines = [l for l in (p.stdout + p.stderr).splitlines() if any(x in l for x in keep) or "==ERR" in l]
            print(f"== ncu {module} {n}^3 (rc {p.returncode})")
            print("\n".join(lines[:60]))
        except (subprocess.TimeoutExpired, FileNotFoundError) as e:
            print(f"== ncu {module}: {e}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="correctness only")
    ap.add_argument("--ncu", action="store_true", help="also Nsight Compute on gemm_kn and gemm_sm90 at 8192^3")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--only", help="comma-separated modules of VARIANTS")
    ap.add_argument("--square", action="store_true", help="time 4096^3 and 8192^3 only, against gemm_sm90 only")
    ap.add_argument("--sanitize", action="store_true", help="also compute-sanitizer on gemm_kn, small ragged shapes")
    args = ap.parse_args()
    variants = [v for v in VARIANTS if not args.only or v[0] in args.only.split(",")]
    work = tempfile.mkdtemp(prefix="cutec-kn-", dir=GPU)
    ok = correctness(work, variants)
    if not args.quick:
        shapes = TIMED[:2] if args.square else TIMED
        refs = ["gemm_sm90"] if args.square else ["gemm_sm90", "gemm_sm90_kn"]
        ok &= timings(variants, args.rounds, shapes, refs)
    if args.sanitize:
        print("== compute-sanitizer on gemm_kn (clusters of 2) and gemm_kn_c1, 200x304x136 (3 k-tiles, ragged)")
        dims = {"M": 200, "N": 304, "K": 136}
        ok &= sanitizer_runs([("gemm_kn.ptx", "gemm_kn", dims), ("gemm_kn_c1.ptx", "gemm_kn", dims)])
    if args.ncu:
        ncu(8192)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The scheduled Hopper GEMMs on the GPU: the plain loops of examples/gemm_sm90.cute (warp-specialized) and
examples/gemm_pipelined.cute (one warpgroup pair issuing its own copies), and the same loop without `pipelined`
(one stage, copies completed before use), against a float32 reference of the same bf16 inputs on ragged shapes,
then timed against gemm_sm90_manual (the hand-written schedule) and cuBLAS (torch.matmul) in the same run.

Run from the repository root on the GPU machine after scripts/gpu/build.sh filled .gpu/:
    GPU_DIR=.gpu python3 scripts/gpu/schedule_check.py [--quick] [--sanitize]
Exit status: 0 when every case is correct (or refused as it must be), 1 otherwise.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import torch

from cuda_timing import median_ms
from hopper_check import CUTEC, GPU, gemm_case, refused, run

# (module, kernel, what, epilogue through TMA: C's rows must be a multiple of 16 bytes)
SCHEDULED = [
    ("gemm_sm90", "gemm", "gemm_sm90.cute: pipelined(stages = 3) + warp_specialized", True),
    ("gemm_sm90_regs", "gemm", "the same, epilogue from registers (store(acc, mma.partition_c(..))), 4 stages", False),
    ("gemm_pipelined", "gemm_pipelined", "gemm_pipelined.cute: pipelined(stages = 3), thread 0 issues the copies",
     True),
    ("gemm_plain", "gemm_pipelined", "the same loop without pipelined: one stage, each copy completed before use",
     True),
]
# Ragged M and N, K < BK, K < STAGES * BK, one k-tile, trip counts 0..S+1 around the ring.
CORRECT = [(128, 256, 64), (1000, 776, 336), (1000, 777, 336), (129, 264, 72), (200, 256, 40), (300, 512, 136),
           (64, 8, 8), (1, 1, 8), (256, 512, 128), (130, 260, 320), (2048, 2048, 2048)]


def correctness(work):
    ok_all = True
    print("== correctness: relative error (Frobenius) against float32 A * B^T of the same bf16 inputs; <= 1e-2")
    for module, kernel, what, tma in SCHEDULED:
        print(f"   {module} ({what})")
        for m, n, k in CORRECT:
            if tma and n % 8 != 0:
                # C's rows of 2N bytes: the TMA store needs a multiple of 16 bytes, so the runtime refuses the
                # launch, unless C has one row (then no row stride exists) and the result must be right.
                dims = {"M": m, "N": n, "K": k}
                rc, out, _ = run(module + ".ptx", kernel, dims)
                if rc != 0 or m > 1:
                    ok_all &= refused(module + ".ptx", kernel, dims, f"{f'{m}x{n}x{k}':>18}", must="c_tma")
                    continue
            ok_all &= gemm_case(work, module + ".ptx", kernel, m, n, k)
        # A's rows of 666 bytes: TMA cannot describe them (a multiple of 16 bytes); refused at launch.
        ok_all &= refused(module + ".ptx", kernel, {"M": 1000, "N": 777, "K": 333}, f"{'1000x777x333':>18}")
    return ok_all


def timing():
    ok_all = True
    torch.backends.cuda.matmul.allow_tf32 = False
    mods = [m[:3] for m in SCHEDULED] + [("gemm_sm90_manual", "gemm_sm90_manual", "by hand")]
    print("== TFLOP/s (ratio to cuBLAS); columns: " + ", ".join(m for m, _, _ in mods))
    print(f"{'M x N x K':>18}" + "".join(f"{m[:15]:>17}" for m, _, _ in mods) + f"{'cuBLAS':>9} {'sm90/manual':>11}")
    for m, n, k in [(4096, 4096, 4096), (8192, 8192, 8192), (8192, 8192, 2048), (1024, 8192, 8192)]:
        flop = 2.0 * m * n * k
        times = []
        for module, kernel, _ in mods:
            rc, out, bench = run(module + ".ptx", kernel, {"M": m, "N": n, "K": k}, bench=True, iters=20)
            if rc != 0:
                print(f"{f'{m}x{n}x{k}':>18} FAIL {module}: cutec run failed:\n{out}")
                ok_all = False
                times.append(float("nan"))
            else:
                times.append(float(bench["median_ms"]))
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
        c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
        cms = median_ms(lambda: torch.matmul(a, b.T, out=c))
        cols = "".join(f"{f'{flop / t / 1e9:.1f} ({cms / t:.3f})':>17}" for t in times)
        print(f"{f'{m}x{n}x{k}':>18}{cols}{flop / cms / 1e9:>9.1f} {times[-1] / times[0]:>11.3f}")
        del a, b, c
    print("(medians of 20 launches with CUDA events; cuBLAS = torch.matmul bf16 in the same run)")
    return ok_all


def sanitize():
    ok_all = True
    print("== compute-sanitizer on the scheduled GEMMs, 300x512x136 (3 k-tiles: fewer than the 4 stages)")
    for module, kernel, _, _ in SCHEDULED:
        for tool in ("memcheck", "racecheck", "synccheck"):
            cmd = ["compute-sanitizer", "--tool", tool, "--error-exitcode", "9", CUTEC, "run",
                   os.path.join(GPU, module + ".ptx"), "--kernel", kernel, "--dim=M=300", "--dim=N=512", "--dim=K=136"]
            try:
                p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
                tail = (p.stdout + p.stderr).strip().splitlines()[-1:]
                ok = p.returncode == 0
            except subprocess.TimeoutExpired:
                ok, tail = False, ["timed out"]
            ok_all &= ok
            print(f"   {module:<18} {tool:<10} {'PASS' if ok else 'FAIL'} {tail[0] if tail else ''}")
    return ok_all


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="correctness only")
    ap.add_argument("--sanitize", action="store_true")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="cutec-sched-", dir=GPU)
    ok = correctness(work)
    if not args.quick:
        ok &= timing()
    if args.sanitize:
        ok &= sanitize()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""A cluster of one CTA, declared or not: the same kernels built by a compiler that declares it
(`.explicitcluster .reqnctapercluster 1, 1, 1`, launched with a cluster attribute of 1 x 1 x 1) and by one that
does not (a plain launch, PTX's implicit cluster of one CTA). Each build runs with its own `cutec` (the runtime
that matches it), is checked against float32 A * B^T of the same bf16 inputs at ragged and large shapes, then the
two are timed interleaved with cuBLAS (`torch.matmul`) in the same run; `declared/plain` is the ratio of their
times (above 1: the plain launch is faster).

Layout of $GPU_DIR: `declared/` and `plain/`, each with its `cutec` and the modules of CASES (the -D CLUSTER_M=1
variants as scripts/gpu/build.sh names them). Run from scripts/gpu on the GPU machine:
    GPU_DIR=../../.gpus-c1 python3 cluster_one_check.py
Exit status: 0 when every case is correct, 1 otherwise.
"""
import os
import statistics
import sys
import tempfile

import torch

import hopper_check as hc
from cuda_timing import median_ms

ROOT = os.environ.get("GPU_DIR", ".gpu")
BUILDS = ["declared", "plain"]
CASES = [("gemm_sm90_manual_c1.ptx", "gemm_sm90_manual")]
CORRECT = [(1000, 776, 336), (129, 264, 72), (300, 512, 40), (4096, 4096, 512)]
TIMED = [(4096, 4096, 4096), (8192, 8192, 8192), (8192, 8192, 2048), (1024, 8192, 8192)]


def use(build):
    """Points hopper_check's `cutec run` at one build's folder and compiler."""
    hc.GPU = os.path.join(ROOT, build)
    hc.CUTEC = os.path.join(hc.GPU, "cutec")


def main():
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}")
    ok = True
    work = tempfile.mkdtemp(prefix="cutec-c1-", dir=ROOT)
    for module, kernel in CASES:
        print(f"== {module}: correctness against float32 (relative Frobenius error <= 1e-2)")
        for build in BUILDS:
            use(build)
            for m, n, k in CORRECT:
                ok &= hc.gemm_case(work, module, kernel, m, n, k, label=f"{f'{m}x{n}x{k}':>18} {build:<9}")
        print(f"== {module}: TFLOP/s (ratio to cuBLAS), medians over 3 interleaved rounds of 20 launches")
        print(f"{'M x N x K':>18}" + "".join(f"{b:>18}" for b in BUILDS) + f"{'cuBLAS':>12}{'declared/plain':>16}")
        for m, n, k in TIMED:
            a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
            b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
            times = {x: [] for x in BUILDS + ["cuBLAS"]}
            for _ in range(3):
                times["cuBLAS"].append(median_ms(lambda: torch.matmul(a, b.T)))
                for build in BUILDS:
                    use(build)
                    rc, out, bench = hc.run(module, kernel, {"M": m, "N": n, "K": k}, bench=True)
                    if rc != 0:
                        print(f"{f'{m}x{n}x{k}':>18} FAIL {build}: cutec run failed:\n{out}")
                        ok = False
                    times[build].append(float(bench["median_ms"]) if rc == 0 else float("nan"))
            med = {x: statistics.median(v) for x, v in times.items()}
            flop = 2.0 * m * n * k
            cells = ""
            for x in BUILDS:
                cell = "%.1f (%.3f)" % (flop / med[x] / 1e9, med["cuBLAS"] / med[x])
                cells += f"{cell:>18}"
            label = f"{m}x{n}x{k}"
            print(f"{label:>18}{cells}{flop / med['cuBLAS'] / 1e9:>12.1f}{med['declared'] / med['plain']:>16.3f}")
            del a, b
    os.rmdir(work)
    print("cluster_one_check:", "all correct" if ok else "FAILURES")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

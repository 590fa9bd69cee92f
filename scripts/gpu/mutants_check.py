#!/usr/bin/env python3
"""Scheduled mutants on the GPU: each module scripts/gpu/mutants_build.sh compiled from a mutant of
examples/gemm_sm90.cute or examples/gemm_pipelined.cute that the schedule mutation test accepted and whose meaning
is the example's (C = A * B^T), against float32 A * B^T of the same bf16 inputs on a ragged shape and one that
gives each CTA of the persistent kernels several tiles, then compute-sanitizer on one ragged launch of three
of them.

Run from scripts/gpu on the GPU machine:  GPU_DIR=../../.gpu python3 mutants_check.py
Exit status: 0 when every mutant is correct and clean, 1 otherwise.
"""
import glob
import os
import sys
import tempfile

from hopper_check import GPU, gemm_case, sanitizer_runs


def main():
    work = tempfile.mkdtemp(prefix="cutec-mutants-", dir=GPU)
    modules = sorted(glob.glob(os.path.join(GPU, "mutants", "*.ptx")))
    ok = bool(modules)
    print(f"== {len(modules)} scheduled mutants against torch")
    cases = []
    for path in modules:
        name = os.path.basename(path)
        kernel = "gemm" if name.startswith("gemm_sm90__") else "gemm_pipelined"
        with open(path[:-4] + ".cute") as f:
            what = "barrier_sync" if "barrier_sync(" in f.read() else "gemm in both branches"
        print(f"-- {name} ({what})")
        for m, n, k in [(1000, 776, 336), (4096, 4096, 256)]:
            ok &= gemm_case(work, os.path.join("mutants", name), kernel, m, n, k)
        cases.append((os.path.join("mutants", name), kernel, {"M": 300, "N": 512, "K": 136}))
    # Three of them (one of each subject at least, in the order built): the sanitizers take ~10 s a run.
    print("== compute-sanitizer (memcheck, racecheck, synccheck) on three, 300x512x136")
    ok &= sanitizer_runs(cases[:2] + cases[-1:], width=34)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

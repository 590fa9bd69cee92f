#!/usr/bin/env python3
"""What the fused epilogue of examples/gemm_epilogue.cute costs, part by part: the plain GEMM (gemm_sm90), the
bias alone (`acc + bias[col]`), GELU alone (`gelu(acc)`), and both (the example), timed in rounds that interleave
the four so that clock and thermal drift fall on all of them alike. Prints the medians over the rounds and each
variant's cost over the plain GEMM.

Run from scripts/gpu on the GPU machine after scripts/gpu/build.sh (which builds the variants):
    GPU_DIR=../../.gpus python3 epilogue_variants.py [--rounds 3] [--also MODULE:KERNEL:LABEL ...]

`--also` times more modules of $GPU_DIR in the same rounds (another form of the epilogue, say).
"""
import argparse
import statistics
import sys

from hopper_check import run

VARIANTS = [
    ("gemm_sm90", "gemm", "plain GEMM"),
    ("gemm_epilogue_biasonly", "gemm_bias_gelu", "acc + bias"),
    ("gemm_epilogue_geluonly", "gemm_bias_gelu", "gelu(acc)"),
    ("gemm_epilogue", "gemm_bias_gelu", "gelu(acc + bias)"),
]
SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192), (8192, 8192, 2048)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--also", action="append", default=[], help="MODULE:KERNEL:LABEL, timed with the others")
    args = ap.parse_args()
    variants = VARIANTS + [tuple(a.split(":", 2)) for a in args.also]
    ok = True
    print("== the fused epilogue's cost, part by part: medians of 20 launches per round, median over rounds")
    print(f"{'M x N x K':>18}" + "".join(f"{what:>22}" for _, _, what in variants))
    for m, n, k in SHAPES:
        dims = {"M": m, "N": n, "K": k}
        times = {v[0]: [] for v in variants}
        for _ in range(args.rounds):
            for module, kernel, _ in variants:
                rc, out, b = run(module + ".ptx", kernel, dims, bench=True, iters=20)
                if rc != 0:
                    print(f"{module} failed:\n{out}")
                    ok = False
                    continue
                times[module].append(float(b["median_ms"]))
        med = {mod: statistics.median(t) if t else float("nan") for mod, t in times.items()}
        plain = med["gemm_sm90"]
        cells = [f"{med[mod]:.4f} ms ({med[mod] / plain - 1:+.1%})" for mod, _, _ in variants]
        print(f"{f'{m}x{n}x{k}':>18}" + "".join(f"{c:>22}" for c in cells))
    print("(each cell: the median time, and what it adds to the plain GEMM of the same run)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

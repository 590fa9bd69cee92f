#!/usr/bin/env python3
"""examples/gemm_sm90_pingpong.cute on the GPU (issue 17, item 4): the pingpong schedule (each consumer warpgroup
on its own tiles) against the cooperative gemm_sm90_manual (both consumers on one tile) and cuBLAS, same run.

- correctness: every module, on ragged shapes (edges in M, N and K, K < BK, one row, many tiles per CTA) and the
  table's shapes: fresh random bf16 inputs per case (torch's generator, a new seed each), C filled with NaN
  before the launch (a tile left unwritten shows), C against float32 A * B^T of the same inputs (relative
  Frobenius error <= 1e-2, every element finite); how many elements differ from gemm_sm90_manual's C is printed
  (the same k-order of the same wgmmas gives the same bits);
- timing: 4096^3, 8192^3, 8192 x 8192 x 2048, 4096 x 14336 x 4096, 1024 x 8192 x 8192, in interleaved rounds
  (each round times every shape once, cuBLAS first, then the modules in an order rotated each round): medians of
  per-launch CUDA event intervals (cuda_timing.median_ms), TFLOP/s = 2 M N K / time, the ratio to cuBLAS
  (`torch.matmul(a, b.T)`, bf16) and to gemm_sm90_manual; then the median over the rounds.

The modules are PTX + manifest built by `cutec build --emit ptx,manifest` into $GPU_DIR (scripts/gpu/build.sh
builds gemm_sm90_manual, gemm_sm90_pingpong and gemm_sm90_pingpong_128), launched from Python by the `cutec`
package on torch's current stream (`cutec._kernel.Kernel` over the built PTX, so what runs is what the `cutec`
binary built). Other variants: `cutec build examples/gemm_sm90_pingpong.cute -D ... --emit ptx,manifest -o
$GPU_DIR/VARIANT`. Then on the GPU machine, with the cutec wheel importable (`pip install --target`), from this
folder:
    GPU_DIR=../../.gpu python3 pingpong_check.py [--variants pp,VARIANT,...] [--only check|time] [--rounds 3]
    GPU_DIR=../../.gpu ncu --clock-control none --launch-skip 2 --launch-count 1 --section SpeedOfLight \
        python3 pingpong_check.py --launch pp,8192,8192,2048        (one launch's counters)
Exit status: 0 when every case is correct, 1 otherwise.
"""
import argparse
import json
import math
import os
import statistics
import sys
import time

import torch

from cutec._kernel import Kernel
from cuda_timing import median_ms

GPU = os.environ.get("GPU_DIR", "../../.gpu")
RAGGED = [(1000, 776, 336), (129, 264, 72), (200, 304, 40), (1000, 776, 8), (64, 8, 8), (1, 8, 8), (300, 512, 136),
          (3000, 5000, 200), (4096, 4096, 256), (257, 1032, 1000)]
TABLE = [(4096, 4096, 4096), (8192, 8192, 8192), (8192, 8192, 2048), (4096, 14336, 4096), (1024, 8192, 8192)]
MANUAL = "gemm_sm90_manual"


def load(variant):
    """The module `variant`: GPU_DIR/gemm_sm90_manual.* for `manual`, GPU_DIR/gemm_sm90_pingpong.* for `pp`,
    GPU_DIR/VARIANT.* (as scripts/gpu/build.sh names its variants) or GPU_DIR/VARIANT/gemm_sm90_pingpong.*
    otherwise."""
    if variant == "manual":
        base = os.path.join(GPU, MANUAL)
    elif variant == "pp":
        base = os.path.join(GPU, "gemm_sm90_pingpong")
    elif os.path.exists(os.path.join(GPU, variant + ".ptx")):
        base = os.path.join(GPU, variant)
    else:
        base = os.path.join(GPU, variant, "gemm_sm90_pingpong")
    with open(base + ".ptx") as f:
        ptx = f.read()
    with open(base + ".json") as f:
        manifest = json.load(f)
    entry = manifest["kernels"][0]
    consts = " ".join(f"{k}={v}" for k, v in sorted(entry.get("const_params", {}).items()))
    print(f"{variant:>14}: {base} ({consts})")
    return Kernel(ptx, manifest, entry["name"], [], base, False)


def inputs(m, n, k, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    a = torch.randn(m, k, device="cuda", generator=g).to(torch.bfloat16)
    b = torch.randn(n, k, device="cuda", generator=g).to(torch.bfloat16)
    return a, b


def check(kernels, shapes):
    """Every module on every shape against float32 A * B^T; gives whether all passed."""
    ok_all = True
    seed = 1000
    print(f"{'M x N x K':>18} {'module':>14} {'status':>6} {'rel err':>9} {'!= manual':>10}")
    for m, n, k in shapes:
        seed += 1
        a, b = inputs(m, n, k, seed)
        ref = a.float() @ b.float().T
        outs = {}
        for name, kern in kernels.items():
            c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
            try:
                kern(a, b, c)
                torch.cuda.synchronize()
            except Exception as e:  # a launch error is a failure of this case, not of the script
                print(f"{f'{m}x{n}x{k}':>18} {name:>14}   FAIL {type(e).__name__}: {e}")
                ok_all = False
                continue
            outs[name] = c
            cf = c.float()
            rel = float((cf - ref).norm() / ref.norm().clamp_min(1e-30))
            ok = bool(torch.isfinite(cf).all()) and rel <= 1e-2
            ok_all &= ok
            diff = "" if "manual" not in outs else str(int((c != outs["manual"]).sum()))
            print(f"{f'{m}x{n}x{k}':>18} {name:>14} {'PASS' if ok else 'FAIL':>6} {rel:>9.2e} {diff:>10}", flush=True)
        del ref, outs
    return ok_all


def timing(kernels, shapes, rounds, iters):
    names = list(kernels)
    res = {(s, x): [] for s in shapes for x in ["cublas"] + names}
    data = {}
    for m, n, k in shapes:
        a, b = inputs(m, n, k, 7)
        data[(m, n, k)] = (a, b, torch.empty(m, n, device="cuda", dtype=torch.bfloat16))
    for r in range(rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        for s in shapes:
            a, b, c = data[s]
            res[(s, "cublas")].append(median_ms(lambda: torch.matmul(a, b.T), iters=iters))
            for x in order:
                kern = kernels[x]
                res[(s, x)].append(median_ms(lambda: kern(a, b, c), iters=iters))
        line = " ".join(f"{'x'.join(map(str, s))}: " + " ".join(
            f"{x}={2 * math.prod(s) / res[(s, x)][-1] / 1e9:.1f}" for x in ["cublas"] + names) for s in shapes)
        print(f"round {r}: {line}", flush=True)
    print(f"\nTFLOP/s (ratio to cuBLAS), median of {rounds} rounds of {iters}-launch medians; last column: "
          f"pingpong / manual time ratio inverted (> 1: pingpong faster)")
    head = " | ".join(["M x N x K", "cuBLAS"] + names + [f"{x} / manual" for x in names if x != "manual"])
    print(f"| {head} |")
    print("|" + " --- |" * (2 + len(names) + len([x for x in names if x != "manual"])))
    for s in shapes:
        flop = 2.0 * math.prod(s)
        med = {x: statistics.median(res[(s, x)]) for x in ["cublas"] + names}
        cells = [f"{flop / med['cublas'] / 1e9:.1f}"]
        cells += [f"{flop / med[x] / 1e9:.1f} ({med['cublas'] / med[x]:.3f})" for x in names]
        if "manual" in med:
            cells += [f"{med['manual'] / med[x]:.3f}" for x in names if x != "manual"]
        print(f"| {'x'.join(map(str, s))} | " + " | ".join(cells) + " |")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--variants", default="pp", help="comma-separated pingpong modules (pp = the default build)")
    p.add_argument("--only", choices=["check", "time"])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--shapes", help="timing shapes M,N,K;M,N,K (default: the table's)")
    p.add_argument("--launch", metavar="VARIANT,M,N,K", help="only launch VARIANT (or `cublas`) 3 times on M x N x K, "
                   "for a profiler: `ncu --launch-skip 2 --launch-count 1 python3 pingpong_check.py --launch ...`")
    args = p.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    if args.launch:
        v, m, n, k = args.launch.split(",")
        a, b = inputs(int(m), int(n), int(k), 7)
        c = torch.empty(int(m), int(n), device="cuda", dtype=torch.bfloat16)
        run = (lambda: torch.matmul(a, b.T)) if v == "cublas" else (lambda kern=load(v): kern(a, b, c))
        for _ in range(3):
            run()
        torch.cuda.synchronize()
        return 0
    print(torch.cuda.get_device_name(), torch.__version__, flush=True)
    kernels = {"manual": load("manual")}
    for v in args.variants.split(","):
        kernels[v] = load(v)
    ok = True
    t0 = time.time()
    if args.only != "time":
        ok = check(kernels, RAGGED + TABLE)
        print(f"== correctness: {'all PASS' if ok else 'FAILURES'} ({time.time() - t0:.0f} s)", flush=True)
    if args.only != "check":
        shapes = TABLE if not args.shapes else [tuple(map(int, s.split(","))) for s in args.shapes.split(";")]
        timing(kernels, shapes, args.rounds, args.iters)
        print(f"== timing done ({time.time() - t0:.0f} s)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

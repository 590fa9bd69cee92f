#!/usr/bin/env python3
"""examples/gemm_splitk.cute on the GPU, from Python (the `cutec` package launches the kernels on torch's current
stream, so CUDA events around both launches of a split time what a caller waits for):

- correctness: fresh random bf16 inputs per case (torch's generator, a new seed each), the workspace W and C filled
  with NaN before the launch (a partial left unwritten poisons C), C against float32 A * B^T (relative Frobenius
  error <= 1e-2, every element finite) and, exactly, against bf16(W[0] + W[1] + ...) summed in that order by torch;
  ragged shapes: M = 1 .. 256, N not a multiple of the tile, K not a multiple of the split, splits with no k-tile;
  gemm_direct (S = 1, no workspace) and gemm_splitk_cluster (the reduction through distributed shared memory, whose
  C must equal the workspace pair's of the same split bit for bit) on the same shapes;
- determinism: each launch three times on the same inputs into freshly poisoned buffers gives the same bits;
- timings at M = 16, 64, 128, 256 and N = K = 8192: every tile shape direct and split of the sweep (a split timed
  as the pair GEMM + reduction), the launch `plan()` picks, gemm_sm90 and cuBLAS (`torch.matmul`), all in the
  same run: medians of per-iteration CUDA event intervals.

Run on the GPU machine with the cutec wheel importable, from a folder holding cuda_timing.py and, under
examples/, gemm_splitk.cute, gemm_splitk_cluster.cute and gemm_sm90.cute (or from scripts/gpu of a checkout):
    python3 splitk_check.py [--only check|time] [--examples DIR] [--case KIND,M,N,K,S]
Exit status: 0 when every case is correct and deterministic, 1 otherwise.
"""
import argparse
import math
import os
import sys
import traceback

import torch

import cutec
from cuda_timing import median_ms

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = next((d for d in (os.path.join(HERE, "examples"), os.path.join(HERE, "..", "..", "examples"))
                 if os.path.isdir(d)), "examples")
SMS = 132
# (BM, BN, STAGES) of the sweep. 64-row tiles (one consumer warpgroup) waste less on decode batches and give twice
# the tiles of 128-row ones; narrower tiles give more tiles and leave room for more stages.
DIRECT = [(64, 64, 8), (64, 64, 12), (64, 128, 6), (64, 128, 8), (64, 256, 4), (64, 256, 5), (128, 128, 6)]
SPLIT = [(64, 64, 12), (64, 128, 8), (64, 256, 4), (64, 256, 5), (128, 256, 4)]
# gemm_splitk_cluster.cute: (BM, BN, STAGES), S (its cluster along z).
CLUSTER = [((64, 64, 10), 2), ((64, 64, 10), 4), ((64, 128, 6), 2), ((64, 128, 8), 2), ((64, 128, 6), 4),
           ((64, 256, 4), 2), ((64, 256, 4), 4)]
_KERNELS = {}


def kernel(name, cfg, s=None, examples=None):
    """Kernel `name` built for cfg = (BM, BN, STAGES) (and S, for gemm_splitk_cluster), compiled once."""
    key = (name, cfg, s)
    if key not in _KERNELS:
        file = "gemm_splitk_cluster.cute" if name == "gemm_splitk_cluster" else "gemm_splitk.cute"
        src = os.path.join(examples or EXAMPLES, file)
        defines = {"BM": cfg[0], "BN": cfg[1], "STAGES": cfg[2]} if cfg else None
        if s is not None:
            defines["S"] = s
        _KERNELS[key] = cutec.compile(src, defines, kernel=name)
    return _KERNELS[key]


def plan(m, n, k):
    """The launch for a shape: (kind, cfg, S), from the two runs' sweeps in docs/perf-notes.md. A 64-row tile at
    most half full (M <= 32) streams B too slowly with one tile per column block: 256-column tiles `split` K S
    ways (gemm_splitk + splitk_reduce) so that tiles * S fills the SMs once, each split keeping >= 8 k-tiles.
    Otherwise 64-row tiles of the widest of 256, 128, 64 columns that give at least SMS / 2 tiles run `direct`
    (gemm_direct: no workspace, one launch); with fewer tiles even at 64 columns, the split again."""
    kt = math.ceil(k / 64)
    if m > 32:
        for bn, stages in ((256, 5), (128, 8), (64, 12)):
            if math.ceil(m / 64) * math.ceil(n / bn) * 2 >= SMS:
                return "direct", (64, bn, stages), 1
    tiles = math.ceil(m / 64) * math.ceil(n / 256)
    return "split", (64, 256, 4), max(1, min(SMS // tiles, kt // 8))


def launch(run, a, b, w, c):
    """C = A * B^T by `run` = (kind, cfg, S): `direct`, `split` (the pair, through the workspace `w`) or
    `cluster` (gemm_splitk_cluster)."""
    kind, cfg, s = run
    if kind == "direct":
        kernel("gemm_direct", cfg)(a, b, c)
    elif kind == "cluster":
        kernel("gemm_splitk_cluster", cfg, s)(a, b, c)
    else:
        kernel("gemm_splitk", cfg)(a, b, w)
        kernel("splitk_reduce", None)(w, c)


def buffers(run, m, n, fill):
    w = torch.full((run[2], m, n), fill, device="cuda") if run[0] == "split" else None
    return w, torch.full((m, n), fill, device="cuda", dtype=torch.bfloat16)


def name(run):
    kind, cfg, s = run
    return f"{kind} {cfg[0]}x{cfg[1]}/{cfg[2]}" + ("" if kind == "direct" else f" S={s}")


def check_case(run, m, n, k, seed):
    gen = torch.Generator(device="cuda").manual_seed(seed)
    a = torch.randn(m, k, device="cuda", generator=gen).to(torch.bfloat16)
    b = torch.randn(n, k, device="cuda", generator=gen).to(torch.bfloat16)
    w, c = buffers(run, m, n, float("nan"))
    label = f"{f'{m}x{n}x{k}':>16} {name(run):<26}"
    try:
        launch(run, a, b, w, c)
        torch.cuda.synchronize()
    except Exception as e:  # one broken case must not hide the others
        print(f"{label} FAIL {type(e).__name__}: {e}")
        return False
    ref = a.float() @ b.float().T
    got = c.float()
    rel = float((got - ref).norm() / ref.norm().clamp_min(1e-30))
    ok = bool(torch.isfinite(got).all()) and rel <= 1e-2
    note = ""
    if w is not None:
        total = torch.zeros(m, n, device="cuda")
        for i in range(run[2]):  # the reduction's order: W[0] first
            total = total + w[i]
        exact = bool(torch.equal(c, total.to(torch.bfloat16)))
        ok = ok and exact and bool(torch.isfinite(w).all())
        note = f", C {'=' if exact else '!='} bf16(sum of W in order)"
    if run[0] == "cluster":
        # The same partials in the same order through the workspace: the same bits.
        split = ("split", run[1], run[2])
        w2, c2 = buffers(split, m, n, float("nan"))
        launch(split, a, b, w2, c2)
        same = bool(torch.equal(c, c2))
        ok = ok and same
        note = f", C {'=' if same else '!='} C of {name(split)}"
    print(f"{label} {'PASS' if ok else 'FAIL'} rel err {rel:.2e}{note}")
    return ok


def correctness():
    print("== correctness: fresh random inputs, W and C poisoned with NaN, against float32 A * B^T")
    ok = True
    seed = 1000
    cases = [(1, 1000, 1000), (16, 8200, 1000), (50, 1000, 4104), (64, 776, 8192), (100, 1000, 1000),
             (128, 8192, 1000), (256, 1000, 2056), (16, 8192, 8192), (64, 8192, 8192), (256, 8192, 8192)]
    for m, n, k in cases:
        # The plan's launch; splits that do not divide the k-tiles, and (where there are few k-tiles) more splits
        # than k-tiles: empty splits write zeros; three tile shapes direct; the cluster's reduction.
        kt = math.ceil(k / 64)
        runs = {plan(m, n, k)} | {("split", (64, 128, 8), sp) for sp in [3, 5] + ([kt + 2] if kt <= 20 else [])}
        runs |= {("split", (64, 256, 4), 2), ("split", (128, 256, 4), 3)}
        runs |= {("direct", cfg, 1) for cfg in ((64, 64, 12), (64, 256, 5), (128, 128, 6))}
        runs |= {("cluster", (64, 128, 6), 2), ("cluster", (64, 64, 10), 4), ("cluster", (64, 256, 4), 4)}
        for run in sorted(runs):
            seed += 1
            ok &= check_case(run, m, n, k, seed)
    print("== determinism: each launch three times on the same inputs, fresh NaN-poisoned W and C each time")
    for m, n, k, runs in [(16, 8192, 8192, [("split", (64, 256, 4), 4), plan(16, 8192, 8192),
                                            ("cluster", (64, 128, 6), 2)]),
                          (100, 1000, 4104, [("split", (64, 128, 8), 8), ("cluster", (64, 64, 10), 4)]),
                          (256, 8192, 8192, [plan(256, 8192, 8192), ("split", (128, 256, 4), 2)])]:
        gen = torch.Generator(device="cuda").manual_seed(7 + m)
        a = torch.randn(m, k, device="cuda", generator=gen).to(torch.bfloat16)
        b = torch.randn(n, k, device="cuda", generator=gen).to(torch.bfloat16)
        for run in runs:
            outs = []
            for _ in range(3):
                w, c = buffers(run, m, n, float("nan"))
                launch(run, a, b, w, c)
                torch.cuda.synchronize()
                outs.append((c.clone(), None if w is None else w.clone()))
            same = all(torch.equal(outs[0][0], o[0]) and (w is None or torch.equal(outs[0][1], o[1]))
                       for o in outs[1:])
            ok &= same
            print(f"{f'{m}x{n}x{k}':>16} {name(run):<26} {'PASS' if same else 'FAIL'} "
                  f"{'bit-identical' if same else 'differs'} over 3 runs (C{'' if w is None else ' and W'})")
    return ok


def pair_ms(run, a, b, iters=50):
    """Median ms of the launch (both kernels of a split), and of gemm_splitk alone (None unless split)."""
    m, n = a.shape[0], b.shape[0]
    w, c = buffers(run, m, n, 0.0)
    both = median_ms(lambda: launch(run, a, b, w, c), iters=iters)
    alone = None if w is None else median_ms(lambda: kernel("gemm_splitk", run[1])(a, b, w), iters=iters)
    return both, alone


def timings(shapes):
    """The sweep and the table; gives the plan's ratios to cuBLAS."""
    torch.backends.cuda.matmul.allow_tf32 = False
    sm90 = cutec.compile(os.path.join(EXAMPLES, "gemm_sm90.cute"), kernel="gemm")
    print("== sweep: us, TFLOP/s, ratio to cuBLAS (same run); split: the pair (GEMM + reduction) [GEMM alone]")
    ratios = []
    rows = []
    for m, n, k in shapes:
        flop = 2.0 * m * n * k
        a = torch.randn(m, k, device="cuda").to(torch.bfloat16)
        b = torch.randn(n, k, device="cuda").to(torch.bfloat16)
        c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
        cub = median_ms(lambda: torch.matmul(a, b.T, out=c), iters=50)
        base = median_ms(lambda: sm90(a, b, c), iters=50)
        print(f"-- {m}x{n}x{k}: cuBLAS {cub * 1e3:.1f} us ({flop / cub / 1e9:.1f} TFLOP/s); gemm_sm90 "
              f"{base * 1e3:.1f} us ({cub / base:.3f})")
        tiles = lambda cfg: math.ceil(m / cfg[0]) * math.ceil(n / cfg[1])
        runs = [("direct", cfg, 1) for cfg in DIRECT]
        runs += [("split", cfg, s) for cfg in SPLIT for s in (2, 3, 4) if tiles(cfg) * s <= 2 * SMS]
        runs += [("cluster", cfg, s) for cfg, s in CLUSTER if tiles(cfg) * s <= 2 * SMS]
        best = None
        for run in runs:
            try:
                t, alone = pair_ms(run, a, b)
            except Exception as e:  # one launch refused must not hide the others
                print(f"   {name(run):<26} FAIL {type(e).__name__}: {e}")
                continue
            extra = "" if alone is None else f" [{alone * 1e3:.1f}]"
            print(f"   {name(run):<26} {t * 1e3:6.1f} us {flop / t / 1e9:6.1f} ({cub / t:.3f}){extra}")
            if best is None or t < best[0]:
                best = (t, run, cub)
        run = plan(m, n, k)
        # The plan and cuBLAS once more, interleaved: the table's figures.
        both, cub2 = [], []
        for _ in range(3):
            both.append(pair_ms(run, a, b, iters=100)[0])
            cub2.append(median_ms(lambda: torch.matmul(a, b.T, out=c), iters=100))
        both, cub2 = sorted(both)[1], sorted(cub2)[1]
        ratios.append(cub2 / both)
        rows.append((m, n, k, run, both, cub2, base, cub, best))
        del a, b, c
    print("== table: the plan and cuBLAS in 3 interleaved rounds of 100 (median of the rounds' medians); "
          "TFLOP/s (ratio to cuBLAS)")
    print(f"{'M x N x K':>18} {'plan':>24} {'cutec':>16} {'cuBLAS':>8} {'gemm_sm90':>16} {'best of sweep':>40}")
    for m, n, k, run, both, cub2, base, cub, best in rows:
        flop = 2.0 * m * n * k
        tf = lambda t: flop / t / 1e9
        bt, brun, bcub = best
        print(f"{f'{m}x{n}x{k}':>18} {name(run):>24} {f'{tf(both):.1f} ({cub2 / both:.3f})':>16} "
              f"{tf(cub2):>8.1f} {f'{tf(base):.1f} ({cub / base:.3f})':>16} "
              f"{f'{name(brun)} {tf(bt):.1f} ({bcub / bt:.3f})':>40}")
    gm = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
    print(f"geometric mean of the plan's ratios {gm:.3f}, lowest {min(ratios):.3f}")
    return ratios


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", choices=["check", "time"])
    ap.add_argument("--examples", help="the folder holding gemm_splitk.cute and gemm_sm90.cute")
    ap.add_argument("--case", metavar="KIND,M,N,K,S", help="one correctness case (KIND: direct, split or cluster; "
                    "64 x 128 tiles), for compute-sanitizer")
    args = ap.parse_args()
    global EXAMPLES
    EXAMPLES = args.examples or EXAMPLES
    if args.case:
        kind, *dims = args.case.split(",")
        m, n, k, s = (int(x) for x in dims)
        return 0 if check_case((kind, (64, 128, 6), s), m, n, k, seed=5) else 1
    ok = True
    parts = {"check": correctness,
             "time": lambda: timings([(16, 8192, 8192), (64, 8192, 8192), (128, 8192, 8192), (256, 8192, 8192)])}
    for part, fn in parts.items():
        if args.only in (None, part):
            try:  # a broken part must not hide the other's figures
                r = fn()
                ok &= r if part == "check" else True
            except Exception:
                traceback.print_exc()
                ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

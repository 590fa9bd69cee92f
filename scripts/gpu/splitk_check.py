#!/usr/bin/env python3
"""The small-M GEMMs on the GPU, from Python (the `cutec` package launches the kernels on torch's current stream, so
CUDA events around both launches of a split time what a caller waits for): examples/gemm_splitk.cute (split-K
through a workspace and `splitk_reduce`, 64-row tiles direct, in clusters of 2 row tiles sharing B, and the same
for e4m3 operands with per-tensor scales), gemm_splitk_cluster.cute (the reduction through distributed shared
memory, behind gemm_pipelined's loop or a warp-specialized one), gemm_swap_ab.cute (C^T = B * A^T, bf16 and e4m3)
and gemm_sm90_manual.cute's 128 x 128 tiles in clusters of 2 (`coop`, the plan for 129 to 256 rows; `coop8`, the
same schedule in gemm_fp8_manual.cute for e4m3).

- correctness: fresh random inputs per case (torch's generator, a new seed each; e4m3: rounded from the same
  normal values, scales 0.5 and 1.25), the workspace W and C filled with NaN before the launch (a partial left
  unwritten poisons C), C against float32 A * B^T (times the scales; relative Frobenius error <= 1e-2, every
  element finite) and, exactly, against bf16(W[0] + W[1] + ...) summed in that order by torch; the cluster
  reductions' C equal bit for bit to the workspace pair's of the same split; ragged shapes: M = 1 .. 256, N not a
  multiple of the tile, K not a multiple of the split or shorter than a k-tile, splits with no k-tile; e4m3 rows
  of K % 16 != 0 bytes must be refused at launch (TMA);
- determinism: each launch three times on the same inputs into freshly poisoned buffers gives the same bits;
- timings at M = 16, 64, 128, 256 and N = K = 8192, bf16 against cuBLAS (`torch.matmul`) and e4m3 against
  `torch._scaled_mm` (fast accumulation): every launch of the sweep (a split timed as the pair GEMM + reduction)
  and the plan's, in 3 interleaved rounds with the anchor: medians of per-iteration CUDA event intervals.

Run on the GPU machine with the cutec wheel importable, from a folder holding cuda_timing.py and, under
examples/, the four examples (or from scripts/gpu of a checkout):
    python3 splitk_check.py [--only check|time] [--examples DIR] [--case KIND,M,N,K,S] [--launch ...] [--profile]
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
E4M3 = torch.float8_e4m3fn
# (BM, BN, STAGES, BK) of the sweep, for both types (BK counts 16-bit elements: an e4m3 k-tile is 2 * BK). 64-row
# tiles (one consumer warpgroup) waste less on decode batches and give twice the tiles of 128-row ones; narrower
# tiles give more tiles and leave room for more stages; a deeper k-tile (BK = 128: two 128-byte boxes per row and
# stage) reads more of each row of B at once.
DIRECT = [(64, 64, 12, 64), (64, 128, 8, 64), (64, 256, 5, 64), (128, 128, 6, 64), (64, 128, 4, 128),
          (64, 64, 6, 128)]
SPLIT = [(64, 128, 8, 64), (64, 256, 4, 64), (64, 256, 5, 64), (64, 128, 4, 128), (128, 256, 4, 64)]
# gemm_splitk_cluster.cute (the loop of gemm_pipelined.cute): (BM, BN, STAGES, BK), S (its cluster along z).
CLUSTER = [((64, 64, 10, 64), 2), ((64, 64, 10, 64), 4), ((64, 128, 6, 64), 2), ((64, 128, 8, 64), 2),
           ((64, 128, 6, 64), 4), ((64, 256, 4, 64), 2), ((64, 256, 4, 64), 4)]
# gemm_splitk_cluster_ws (the warp-specialized loop; BM is 64): (BM, BN, STAGES, BK), S.
CWS = [((64, 128, 8, 64), 2), ((64, 128, 4, 128), 2), ((64, 256, 4, 64), 4), ((64, 256, 4, 64), 2),
       ((64, 128, 6, 64), 2), ((64, 256, 2, 128), 4)]
# gemm_swap_ab.cute (C^T = B * A^T: 64 rows of B by BM rows of A per tile): (BM, 64, STAGES, BK).
SWAP = [(16, 64, 8, 64), (16, 64, 12, 64), (16, 64, 16, 64), (16, 64, 20, 64), (16, 64, 10, 128), (32, 64, 16, 64),
        (64, 64, 12, 64)]
# kind: (file, kernel of the GEMM, fp8 operands)
KINDS = {"direct": ("gemm_splitk.cute", "gemm_direct", False), "split": ("gemm_splitk.cute", "gemm_splitk", False),
         "cluster": ("gemm_splitk_cluster.cute", "gemm_splitk_cluster", False),
         "cws": ("gemm_splitk_cluster.cute", "gemm_splitk_cluster_ws", False),
         "swap": ("gemm_swap_ab.cute", "gemm_swap_ab", False),
         "direct8": ("gemm_splitk.cute", "gemm_direct_fp8", True), "split8": ("gemm_splitk.cute", "gemm_splitk_fp8", True),
         "swap8": ("gemm_swap_ab.cute", "gemm_swap_ab_fp8", True),
         "coop": ("gemm_sm90_manual.cute", "gemm_sm90_manual", False),
         "coop8": ("gemm_fp8_manual.cute", "gemm_fp8_manual", True)}
_KERNELS = {}


def _compile(key, examples=None):
    name, cfg, s = key
    file = next(f for f, k, _ in KINDS.values() if k == name) if name != "splitk_reduce" else "gemm_splitk.cute"
    defines = {}
    if cfg:
        # gemm_fp8_manual counts BK in its own (8-bit) elements.
        defines = {"STAGES": cfg[2], "BK": 2 * cfg[3] if name == "gemm_fp8_manual" else cfg[3]}
        if not name.startswith("gemm_swap_ab"):  # its tile of B is 64 rows
            defines["BN"] = cfg[1]
        if name not in ("gemm_splitk_cluster_ws", "gemm_sm90_manual", "gemm_fp8_manual"):  # 64 rows; 128 rows
            defines["BM"] = cfg[0]
    if s is not None:
        defines["S"] = s
    return cutec.compile(os.path.join(examples or EXAMPLES, file), defines or None, kernel=name)


def kernel(name, cfg=None, s=None, examples=None):
    """Kernel `name` built for cfg = (BM, BN, STAGES, BK) (and S, for the cluster kernels), compiled once."""
    key = (name, cfg, s)
    if key not in _KERNELS:
        _KERNELS[key] = _compile(key, examples)
    return _KERNELS[key]


def kernels_of(run):
    """The (name, cfg, S) of each kernel a launch uses."""
    kind, cfg, s = run
    name = KINDS[kind][1]
    own = (name, cfg, s if kind in ("cluster", "cws") else None)
    return [own, ("splitk_reduce", None, None)] if kind in ("split", "split8") else [own]


def prepare(runs, threads=16):
    """Compiles every kernel of `runs` at once, on threads (the native compiler releases the GIL)."""
    from concurrent.futures import ThreadPoolExecutor
    todo = sorted({k for run in runs for k in kernels_of(run)} - set(_KERNELS), key=str)
    with ThreadPoolExecutor(threads) as pool:
        _KERNELS.update(zip(todo, pool.map(_compile, todo)))


def _plan(m, n, k, fp8):
    """The launch for a shape (M <= 256): (kind, cfg, S), from the sweeps in docs/perf/small-m.md.
    - M <= 32: `swap` (gemm_swap_ab: C^T = B * A^T, 64 rows of B by BM = M rounded up to 8 rows of A per tile,
      as deep a ring as 200 KiB holds, at most 20 stages), when its N / 64 tiles give SMS / 2 CTAs or more. For
      bf16 the k-tiles are 128 deep (two 128-byte boxes per row and stage, at most 10 stages): 1.5-2 % faster than
      20 stages of 64 at 16 x 8192 x 8192 in two sweeps (docs/perf/small-m.md).
    - Otherwise 64-row tiles of the widest of 256, 128, 64 columns that give at least SMS / 2 tiles run `direct`
      (gemm_direct: one launch, no workspace).
    - bf16, 128 < M <= 256 and N % 8 == 0 (the TMA-store epilogue), when 128 x 128 tiles give 3/4 of the SMs a
      tile or more: `coop` (gemm_sm90_manual with 128 x 128 tiles, 6 stages, clusters of 2 row tiles sharing B by
      multicast: cuBLAS's tiles at 256 x 8192 x 8192, where 64-row tiles read B from L2 once per row tile). e4m3
      likewise: `coop8` (gemm_fp8_manual with the same tiles and ring, `torch._scaled_mm`'s
      nvjet_sm90_qqtst_128x128_128x6_2x1 there).
    - With fewer tiles even at 64 columns: `split` (gemm_splitk + splitk_reduce), 256-column tiles cutting K S
      ways so that tiles * S fills the SMs once, each split keeping >= 8 k-tiles.
    e4m3 takes the same launches of the e4m3 kernels (`swap8`, `direct8`, `split8`: 128-element k-tiles, BK = 64
    in the 16-bit units of the examples' -D)."""
    kt = math.ceil(k / (128 if fp8 else 64))
    if m <= 32:
        bm = 8 * math.ceil(m / 8)
        if math.ceil(n / 64) * 2 >= SMS:
            if fp8:
                return "swap8", (bm, 64, min(20, 200 * 1024 // ((64 + bm) * 128)), 64), 1
            return "swap", (bm, 64, min(10, 200 * 1024 // ((64 + bm) * 256)), 128), 1
    else:
        if 128 < m <= 256 and n % 8 == 0 and 2 * math.ceil(n / 128) * 4 >= SMS * 3:
            return ("coop8" if fp8 else "coop"), (128, 128, 6, 64), 1
        for bn, stages in ((256, 5), (128, 8), (64, 12)):
            if math.ceil(m / 64) * math.ceil(n / bn) * 2 >= SMS:
                return ("direct8" if fp8 else "direct"), (64, bn, stages, 64), 1
    tiles = math.ceil(m / 64) * math.ceil(n / 256)
    return ("split8" if fp8 else "split"), (64, 256, 4, 64), max(1, min(SMS // tiles, kt // 8))


def plan(m, n, k):
    """The bf16 launch for a shape (see `_plan`)."""
    return _plan(m, n, k, fp8=False)


def plan_fp8(m, n, k):
    """The e4m3 launch for a shape (M <= 256; gemm_fp8 above; see `_plan`)."""
    return _plan(m, n, k, fp8=True)


def launch(run, a, b, w, c, scale=(1.0, 1.0)):
    """C = A * B^T by `run` = (kind, cfg, S): `direct`, `split` (the pair, through the workspace `w`), `cluster`
    (gemm_splitk_cluster), `cws` (gemm_splitk_cluster_ws); `direct8` and `split8` take e4m3 A and B and the two
    per-tensor scales."""
    kind, cfg, s = run
    if kind == "swap":
        kernel("gemm_swap_ab", cfg)(a, b, c.T)  # the kernel's output is C^T: (N, M) with strides (1, N)
    elif kind == "swap8":
        kernel("gemm_swap_ab_fp8", cfg)(a, b, c.T, scale[0], scale[1])
    elif kind == "direct":
        kernel("gemm_direct", cfg)(a, b, c)
    elif kind == "direct8":
        kernel("gemm_direct_fp8", cfg)(a, b, c, scale[0], scale[1])
    elif kind == "coop":
        kernel("gemm_sm90_manual", cfg)(a, b, c)
    elif kind == "coop8":
        kernel("gemm_fp8_manual", cfg)(a, b, c, scale[0], scale[1])
    elif kind == "cluster":
        kernel("gemm_splitk_cluster", cfg, s)(a, b, c)
    elif kind == "cws":
        kernel("gemm_splitk_cluster_ws", cfg, s)(a, b, c)
    elif kind == "split8":
        kernel("gemm_splitk_fp8", cfg)(a, b, w, scale[0], scale[1])
        kernel("splitk_reduce", None)(w, c)
    else:
        kernel("gemm_splitk", cfg)(a, b, w)
        kernel("splitk_reduce", None)(w, c)


def buffers(run, m, n, fill):
    w = torch.full((run[2], m, n), fill, device="cuda") if run[0] in ("split", "split8") else None
    return w, torch.full((m, n), fill, device="cuda", dtype=torch.bfloat16)


def name(run):
    kind, cfg, s = run
    return (f"{kind} {cfg[0]}x{cfg[1]}/{cfg[2]}" + ("" if cfg[3] == 64 else f" k{cfg[3] * (2 if KINDS[kind][2] else 1)}")
            + ("" if kind in ("direct", "direct8", "swap", "swap8", "coop", "coop8") else f" S={s}"))


def inputs(m, n, k, fp8, gen=None):
    a = torch.randn(m, k, device="cuda", generator=gen)
    b = torch.randn(n, k, device="cuda", generator=gen)
    t = E4M3 if fp8 else torch.bfloat16
    return a.to(t), b.to(t)


def check_case(run, m, n, k, seed):
    fp8 = KINDS[run[0]][2]
    gen = torch.Generator(device="cuda").manual_seed(seed)
    a, b = inputs(m, n, k, fp8, gen)
    scale = (0.5, 1.25) if fp8 else (1.0, 1.0)
    w, c = buffers(run, m, n, float("nan"))
    label = f"{f'{m}x{n}x{k}':>16} {name(run):<28}"
    try:
        launch(run, a, b, w, c, scale)
        torch.cuda.synchronize()
    except cutec.LaunchError as e:
        # e4m3 rows of K bytes: TMA's row stride must be a multiple of 16 bytes, checked at launch.
        ok = fp8 and k % 16 != 0
        print(f"{label} {'PASS refused at launch, as expected (K % 16 != 0)' if ok else 'FAIL'}: {e}")
        return ok
    except Exception as e:  # one broken case must not hide the others
        print(f"{label} FAIL {type(e).__name__}: {e}")
        return False
    if fp8 and k % 16 != 0:
        print(f"{label} FAIL launched although K % 16 != 0")
        return False
    ref = (a.float() @ b.float().T) * (scale[0] * scale[1])
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
    if run[0] in ("cluster", "cws"):
        # The same partials in the same order through the workspace: the same bits.
        split = ("split", run[1], run[2])
        w2, c2 = buffers(split, m, n, float("nan"))
        launch(split, a, b, w2, c2)
        same = bool(torch.equal(c, c2))
        ok = ok and same
        note = f", C {'=' if same else '!='} C of {name(split)}"
    print(f"{label} {'PASS' if ok else 'FAIL'} rel err {rel:.2e}{note}")
    return ok


BF16_CASES = [(1, 1000, 1000), (16, 8200, 1000), (50, 1000, 4104), (64, 776, 8192), (100, 1000, 1000),
              (128, 8192, 1000), (256, 1000, 2056), (129, 264, 72), (16, 776, 336), (16, 8192, 8192),
              (64, 8192, 8192), (256, 8192, 8192)]
# K = 72 is 72 bytes of e4m3 per row: refused at launch; K = 80 and 96 are shorter than one k-tile.
FP8_CASES = [(1, 1000, 1008), (16, 776, 336), (129, 264, 72), (129, 264, 80), (16, 8200, 96), (100, 1000, 4112),
             (256, 1000, 2064), (16, 8192, 8192), (64, 8192, 8192), (128, 8192, 8192), (256, 8192, 8192)]


def correctness():
    print("== correctness: fresh random inputs, W and C poisoned with NaN, against float32 A * B^T "
          "(e4m3: times scale_a * scale_b = 0.5 * 1.25)")
    ok = True
    seed = 1000
    cases = []
    for m, n, k in BF16_CASES:
        # The plan's launch; splits that do not divide the k-tiles, and (where there are few k-tiles) more splits
        # than k-tiles: empty splits write zeros; three tile shapes direct; the cluster reductions.
        kt = math.ceil(k / 64)
        runs = {plan(m, n, k)} | {("split", (64, 128, 8, 64), sp) for sp in [3, 5] + ([kt + 2] if kt <= 20 else [])}
        runs |= {("split", (64, 256, 4, 64), 2), ("split", (128, 256, 4, 64), 3), ("split", (64, 128, 4, 128), 2)}
        runs |= {("direct", cfg, 1) for cfg in ((64, 64, 12, 64), (64, 256, 5, 64), (128, 128, 6, 64))}
        runs |= {("coop", (128, 128, 6, 64), 1)} if n % 8 == 0 else set()
        runs |= {("cluster", (64, 128, 6, 64), 2), ("cluster", (64, 64, 10, 64), 4), ("cluster", (64, 256, 4, 64), 4)}
        runs |= {("cws", cfg, sp) for cfg, sp in CWS[:4]}
        # Swapped operands: A's rows in tiles of 8, 16, 32 and 64 (M = 1 fills one row of 8), a deep and a
        # shallow ring, 128-column k-tiles.
        runs |= {("swap", cfg, 1) for cfg in ((8, 64, 20, 64), (16, 64, 20, 64), (32, 64, 16, 64), (64, 64, 12, 64),
                                              (16, 64, 10, 128), (16, 64, 4, 64))}
        cases += [(run, m, n, k) for run in sorted(runs)]
    for m, n, k in FP8_CASES:
        kt = math.ceil(k / 128)
        runs = {plan_fp8(m, n, k), ("split8", (64, 256, 4, 64), 3), ("split8", (64, 128, 8, 64), 2),
                ("split8", (64, 256, 2, 128), 4), ("direct8", (64, 128, 8, 64), 1), ("direct8", (64, 64, 12, 64), 1),
                ("direct8", (64, 256, 5, 64), 1), ("direct8", (128, 128, 6, 64), 1),
                ("swap8", (8, 64, 20, 64), 1), ("swap8", (16, 64, 20, 64), 1),
                ("swap8", (32, 64, 16, 64), 1), ("swap8", (16, 64, 10, 128), 1)}
        runs |= {("coop8", (128, 128, 6, 64), 1)} if n % 8 == 0 else set()
        runs |= {("split8", (64, 128, 8, 64), kt + 2)} if kt <= 20 else set()
        cases += [(run, m, n, k) for run in sorted(runs)]
    prepare([c[0] for c in cases])
    for run, m, n, k in cases:
        seed += 1
        ok &= check_case(run, m, n, k, seed)
    print("== determinism: each launch three times on the same inputs, fresh NaN-poisoned W and C each time")
    for m, n, k, runs in [(16, 8192, 8192, [("split", (64, 256, 4, 64), 4), plan(16, 8192, 8192),
                                            ("cluster", (64, 128, 6, 64), 2), ("cws", (64, 128, 8, 64), 2),
                                            ("split8", (64, 256, 4, 64), 4), plan_fp8(16, 8192, 8192)]),
                          (5, 1000, 4104, [("swap", (8, 64, 20, 64), 1), ("swap", (16, 64, 10, 128), 1)]),
                          (100, 1000, 4104, [("split", (64, 128, 8, 64), 8), ("cluster", (64, 64, 10, 64), 4),
                                             ("cws", (64, 128, 4, 128), 2)]),
                          (100, 1000, 4112, [("split8", (64, 128, 8, 64), 5), ("split8", (64, 256, 2, 128), 4)]),
                          (64, 8192, 8192, [plan_fp8(64, 8192, 8192), ("split8", (64, 256, 4, 64), 4)]),
                          (256, 8192, 8192, [plan(256, 8192, 8192), ("split", (128, 256, 4, 64), 2),
                                             plan_fp8(256, 8192, 8192)])]:
        prepare(runs)
        gen = torch.Generator(device="cuda").manual_seed(7 + m)
        a, b = torch.randn(m, k, device="cuda", generator=gen), torch.randn(n, k, device="cuda", generator=gen)
        for run in runs:
            fp8 = KINDS[run[0]][2]
            t = E4M3 if fp8 else torch.bfloat16
            outs = []
            for _ in range(3):
                w, c = buffers(run, m, n, float("nan"))
                launch(run, a.to(t), b.to(t), w, c, (0.5, 1.25))
                torch.cuda.synchronize()
                outs.append((c.clone(), None if w is None else w.clone()))
            same = all(torch.equal(outs[0][0], o[0]) and (w is None or torch.equal(outs[0][1], o[1]))
                       for o in outs[1:])
            ok &= same
            print(f"{f'{m}x{n}x{k}':>16} {name(run):<28} {'PASS' if same else 'FAIL'} "
                  f"{'bit-identical' if same else 'differs'} over 3 runs (C{'' if w is None else ' and W'})")
    return ok


def pair_ms(run, a, b, iters=50):
    """Median ms of the launch (both kernels of a split), and of the GEMM alone (None unless split)."""
    m, n = a.shape[0], b.shape[0]
    w, c = buffers(run, m, n, 0.0)
    both = median_ms(lambda: launch(run, a, b, w, c), iters=iters)
    alone = None
    if w is not None:
        g = kernel(*kernels_of(run)[0])
        args = (a, b, w, 1.0, 1.0) if run[0] == "split8" else (a, b, w)
        alone = median_ms(lambda: g(*args), iters=iters)
    return both, alone


def host_us(run, a, b, n=200):
    """Host time per launch call (both kernels of a split), no synchronisation inside: what Python costs."""
    import time
    w, c = buffers(run, a.shape[0], b.shape[0], 0.0)
    launch(run, a, b, w, c)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(n):
        launch(run, a, b, w, c)
    t1 = time.perf_counter()
    torch.cuda.synchronize()
    return (t1 - t0) / n * 1e6


def sweep_runs(m, n, k, fp8):
    """The launches timed at a shape: every direct tile shape, every swapped tile that fills the SMs once at most, the splits and warp-specialized cluster reductions that
    give between half and one CTA per SM, and the plan's."""
    d, sp, sw = ("direct8", "split8", "swap8") if fp8 else ("direct", "split", "swap")
    tiles = lambda cfg: math.ceil(m / cfg[0]) * math.ceil(n / cfg[1])
    runs = [(d, cfg, 1) for cfg in DIRECT]
    runs += [(sw, cfg, 1) for cfg in SWAP if tiles(cfg) <= SMS + 8]
    runs += [(sp, cfg, s) for cfg in SPLIT for s in (2, 3, 4) if SMS // 2 < tiles(cfg) * s <= SMS + 8]
    if not fp8:
        runs += [("cws", cfg, s) for cfg, s in CWS[:1] + CWS[4:5] if tiles(cfg) * s <= SMS]
        runs += [("coop", (128, 128, 6, 64), 1)] if m > 64 and n % 8 == 0 else []
    elif m > 64 and n % 8 == 0:
        runs += [("coop8", (128, 128, 6, 64), 1)]
    return runs + [_plan(m, n, k, fp8)]


def timings(shapes, rounds=3):
    """The sweep and the table, bf16 against cuBLAS and e4m3 against torch._scaled_mm (fast accumulation), each
    launch timed in `rounds` interleaved rounds (the median of their medians); gives the plans' ratios."""
    torch.backends.cuda.matmul.allow_tf32 = False
    one = torch.tensor(1.0, device="cuda")
    todo = [(m, n, k, fp8) for fp8 in (False, True) for m, n, k in shapes]
    prepare([r for m, n, k, fp8 in todo for r in sweep_runs(m, n, k, fp8)])
    print("== sweep: us (ratio to the anchor of the same rounds); split: the pair (GEMM + reduction) [GEMM alone]")
    ratios = {False: [], True: []}
    rows = []
    for m, n, k, fp8 in todo:
        flop = 2.0 * m * n * k
        a, b = inputs(m, n, k, fp8)
        c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
        if fp8:
            anchor = lambda: torch._scaled_mm(a, b.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16,
                                              use_fast_accum=True)
        else:
            anchor = lambda: torch.matmul(a, b.T, out=c)
        runs = list(dict.fromkeys(sweep_runs(m, n, k, fp8)))
        times = {run: [] for run in runs}
        alone = {run: [] for run in runs}
        anchors = []
        for _ in range(rounds):
            anchors.append(median_ms(anchor, iters=50))
            for run in runs:
                try:
                    t, g = pair_ms(run, a, b)
                except Exception as e:  # one launch refused must not hide the others
                    times[run].append(float("nan"))
                    print(f"   {name(run):<28} FAIL {type(e).__name__}: {e}")
                    continue
                times[run].append(t)
                alone[run].append(g)
            anchors.append(median_ms(anchor, iters=50))
        ref = sorted(anchors)[len(anchors) // 2]
        tag = "_scaled_mm" if fp8 else "cuBLAS"
        print(f"-- {m}x{n}x{k} {'e4m3' if fp8 else 'bf16'}: {tag} {ref * 1e3:.1f} us ({flop / ref / 1e9:.1f} "
              f"TFLOP/s; rounds {', '.join(f'{x * 1e3:.1f}' for x in anchors)})")
        best = None
        for run in runs:
            ts = [t for t in times[run] if t == t]
            if not ts:
                continue
            t = sorted(ts)[len(ts) // 2]
            gs = [g for g in alone[run] if g is not None]
            extra = f" [{sorted(gs)[len(gs) // 2] * 1e3:.1f}]" if gs else ""
            print(f"   {name(run):<28} {t * 1e3:6.1f} us {flop / t / 1e9:7.1f} ({ref / t:.3f}){extra}")
            if best is None or t < best[0]:
                best = (t, run)
        p = plan_fp8(m, n, k) if fp8 else plan(m, n, k)
        tp = sorted(times[p])[len(times[p]) // 2]
        ratios[fp8].append(ref / tp)
        rows.append((m, n, k, fp8, p, tp, ref, best, host_us(p, a, b)))
        del a, b, c
    print("== table: the plan against its anchor, same rounds; TFLOP/s (ratio); host us per launch call of the plan")
    print(f"{'M x N x K':>18} {'type':>5} {'plan':>28} {'cutec':>16} {'anchor':>8} {'best of sweep':>44} {'host us':>8}")
    for m, n, k, fp8, p, tp, ref, best, host in rows:
        tf = lambda t: 2.0 * m * n * k / t / 1e9
        print(f"{f'{m}x{n}x{k}':>18} {'e4m3' if fp8 else 'bf16':>5} {name(p):>28} "
              f"{f'{tf(tp):.1f} ({ref / tp:.3f})':>16} {tf(ref):>8.1f} "
              f"{f'{name(best[1])} {tf(best[0]):.1f} ({ref / best[0]:.3f})':>44} {host:>8.1f}")
    for fp8 in (False, True):
        r = ratios[fp8]
        if r:
            gm = math.exp(sum(math.log(x) for x in r) / len(r))
            print(f"{'e4m3' if fp8 else 'bf16'}: geometric mean of the plan's ratios {gm:.3f}, lowest {min(r):.3f}")
    return ratios


def launch_only(spec):
    """One launch for a profiler: KIND,BM,BN,STAGES,BK,S,M,N,K (or cublas,M,N,K / scaled_mm,M,N,K), after two."""
    kind, *rest = spec.split(",")
    if kind in ("cublas", "scaled_mm"):
        m, n, k = (int(x) for x in rest)
        a, b = inputs(m, n, k, kind == "scaled_mm")
        one = torch.tensor(1.0, device="cuda")
        fn = ((lambda: torch.matmul(a, b.T)) if kind == "cublas" else
              (lambda: torch._scaled_mm(a, b.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16,
                                        use_fast_accum=True)))
    else:
        bm, bn, st, bk, s, m, n, k = (int(x) for x in rest)
        run = (kind, (bm, bn, st, bk), s)
        a, b = inputs(m, n, k, KINDS[kind][2])
        w, c = buffers(run, m, n, 0.0)
        fn = lambda: launch(run, a, b, w, c)
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    return 0


def profile_range():
    """For `ncu --profile-from-start off`: the plans' launches at M = 16 and 256 (N = K = 8192), bf16 and e4m3,
    128 x 128 tiles at M = 256, and their anchors, each warmed up twice outside the profiled range, then once
    each inside it."""
    one = torch.tensor(1.0, device="cuda")
    todo = []
    for m, fp8 in ((16, False), (256, False), (16, True), (256, True)):
        a, b = inputs(m, 8192, 8192, fp8)
        runs = [_plan(m, 8192, 8192, fp8)] + ([(("direct8" if fp8 else "direct"), (128, 128, 6, 64), 1)]
                                               if m == 256 else [])
        prepare(runs)
        for run in runs:
            w, c = buffers(run, m, 8192, 0.0)
            todo.append((f"{m} {name(run)}", lambda run=run, a=a, b=b, w=w, c=c: launch(run, a, b, w, c)))
        if fp8:
            todo.append((f"{m} _scaled_mm", lambda a=a, b=b: torch._scaled_mm(
                a, b.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16, use_fast_accum=True)))
        else:
            todo.append((f"{m} cuBLAS", lambda a=a, b=b: torch.matmul(a, b.T)))
    for _, fn in todo:
        fn()
        fn()
    torch.cuda.synchronize()
    torch.cuda.profiler.start()
    for label, fn in todo:
        print(f"profiled: {label}")
        fn()
        torch.cuda.synchronize()
    torch.cuda.profiler.stop()
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", choices=["check", "time"])
    ap.add_argument("--examples", help="the folder holding gemm_splitk.cute, gemm_splitk_cluster.cute, "
                    "gemm_swap_ab.cute and gemm_sm90_manual.cute")
    ap.add_argument("--case", metavar="KIND,M,N,K,S", help="one correctness case (KIND: direct, split, cluster, cws, "
                    "direct8 or split8; 64 x 128 tiles), for compute-sanitizer")
    ap.add_argument("--launch", metavar="KIND,BM,BN,STAGES,BK,S,M,N,K", help="three launches, for a profiler")
    ap.add_argument("--profile", action="store_true", help="the small-M launches and their anchors inside a "
                    "profiler range (ncu --profile-from-start off)")
    args = ap.parse_args()
    global EXAMPLES
    EXAMPLES = args.examples or EXAMPLES
    if args.launch:
        return launch_only(args.launch)
    if args.profile:
        return profile_range()
    if args.case:
        kind, *dims = args.case.split(",")
        m, n, k, s = (int(x) for x in dims)
        return 0 if check_case((kind, (16, 64, 8, 64) if kind.startswith("swap") else (64, 128, 6, 64), s), m, n, k,
                               seed=5) else 1
    ok = True
    shapes = [(16, 8192, 8192), (64, 8192, 8192), (128, 8192, 8192), (256, 8192, 8192)]
    parts = {"check": correctness, "time": lambda: timings(shapes)}
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

#!/usr/bin/env python3
"""transpose on the GPU: exact against torch on ragged shapes, bandwidth against `x.T.contiguous()`, same run.

Run from the repository root on the GPU machine after scripts/gpu/build.sh filled .gpu/ (first_light.sh calls it).
Two modules of examples/transpose.cute: `transpose` (shared-memory tile swizzled with Swizzle<5,0,5>) and
`transpose_noswizzle` (the same kernel with a plain row-major tile, built by build.sh), so the swizzle's effect is
measured in the same run. Fresh random inputs per shape; `cutec run` poisons the output before the first launch.
With --ncu, each variant is profiled once on 4096 x 4096 for shared-memory wavefronts and bank conflicts.
Exit status: 0 when every shape matched, 1 otherwise.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import torch

from cuda_timing import median_ms

RAGGED = [(1, 1), (33, 31), (1000, 777), (777, 1000), (4097, 2049)]
TIMED = [(8192, 8192), (16384, 8192), (8192, 16384)]
VARIANTS = ["transpose", "transpose_noswizzle"]
NCU_METRICS = [
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "smsp__inst_executed_op_shared_ld.sum",
    "smsp__inst_executed_op_shared_st.sum",
]


def run(gpu, variant, px, py, iters):
    cmd = [os.path.join(gpu, "cutec"), "run", os.path.join(gpu, f"{variant}.ptx"), "--kernel", "transpose",
           "--input", f"x={px}", "--output", f"y={py}"]
    if iters:
        cmd += ["--bench", "--warmup", "5", "--iters", str(iters)]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{p.stdout}{p.stderr}")
    if not iters:
        return None
    bench = dict(re.findall(r"(\w+)=(\S+)", next(l for l in p.stdout.splitlines() if l.startswith("bench "))))
    return float(bench["median_ms"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ncu", action="store_true", help="profile shared-memory wavefronts with ncu")
    args = ap.parse_args()
    gpu = os.environ.get("GPU_DIR", ".gpu")
    work = tempfile.mkdtemp(prefix="cutec-transpose-", dir=gpu)
    ok_all = True
    px, py = os.path.join(work, "x.npy"), os.path.join(work, "y.npy")
    print("== correctness (exact equality with x.T, output poisoned first)")
    for seed, (m, n) in enumerate(RAGGED + TIMED):
        g = torch.Generator(device="cuda").manual_seed(100 + seed)
        x = torch.empty(m, n, device="cuda").uniform_(-1, 1, generator=g)
        np.save(px, x.cpu().numpy())
        ref = x.T.contiguous().cpu().numpy()
        for v in VARIANTS:
            try:
                run(gpu, v, px, py, 0)
                y = np.load(py)
                ok = y.shape == ref.shape and bool(np.array_equal(y, ref))
            except Exception as e:  # a failed run is a failed case, reported
                print(e)
                ok = False
            ok_all &= ok
            print(f"{v:>20} {m:>6} x {n:<6} {'PASS' if ok else 'FAIL'}")
    print("== bandwidth (GB/s counts one read and one write of x; medians of CUDA-event intervals)")
    print(f"{'M x N':>14} {'variant':>20} {'ms':>8} {'GB/s':>8} {'torch ms':>9} {'GB/s':>8} {'torch/cutec':>11} "
          f"{'copy GB/s':>9} {'of copy':>7}")
    for seed, (m, n) in enumerate(TIMED):
        g = torch.Generator(device="cuda").manual_seed(seed)
        x = torch.empty(m, n, device="cuda").uniform_(-1, 1, generator=g)
        np.save(px, x.cpu().numpy())
        nbytes = 2 * m * n * 4
        tms = median_ms(lambda: x.T.contiguous(), iters=50)
        buf = torch.empty_like(x)
        cms = median_ms(lambda: buf.copy_(x), iters=50)
        for v in VARIANTS:
            ms = run(gpu, v, px, py, 50)
            print(f"{f'{m}x{n}':>14} {v:>20} {ms:>8.4f} {nbytes / ms / 1e6:>8.1f} {tms:>9.4f} "
                  f"{nbytes / tms / 1e6:>8.1f} {tms / ms:>11.3f} {nbytes / cms / 1e6:>9.1f} {cms / ms:>7.1%}")
    if args.ncu and shutil.which("ncu"):
        print("== ncu: shared-memory wavefronts and bank conflicts, 4096 x 4096, one launch")
        x = torch.empty(4096, 4096).uniform_(-1, 1)
        np.save(px, x.numpy())
        for v in VARIANTS:
            cmd = ["ncu", "--metrics", ",".join(NCU_METRICS), "--csv", os.path.join(gpu, "cutec"), "run",
                   os.path.join(gpu, f"{v}.ptx"), "--kernel", "transpose", "--input", f"x={px}"]
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
            rows = [l for l in p.stdout.splitlines() if any(mt in l for mt in NCU_METRICS)]
            print(f"-- {v}")
            for r in rows:
                cols = [c.strip('"') for c in r.split('","')]
                print(f"   {cols[-3]:<62} {cols[-1]:>14}")
            if not rows:
                print(p.stdout[-2000:], p.stderr[-2000:])
    shutil.rmtree(work, ignore_errors=True)
    return 0 if ok_all else 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""gemm_simt on the GPU: correctness against float64 and time against torch.matmul (fp32, TF32 off), same run.

Run from the repository root on the GPU machine after scripts/gpu/build.sh filled .gpu/ (first_light.sh calls it).
C = A * B^T with A (M, K) and B (N, K) K-major, f32, on whole tiles (bounds_check.py runs ragged shapes). Fresh
random inputs per shape; the output is poisoned by `cutec run` before the launch.
Exit status: 0 when every shape matched, 1 otherwise.
"""
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import torch

from cuda_timing import median_ms

SHAPES = [(256, 384, 64), (2048, 2048, 2048), (4096, 4096, 1024)]


def main():
    gpu = os.environ.get("GPU_DIR", ".gpu")
    torch.backends.cuda.matmul.allow_tf32 = False
    work = tempfile.mkdtemp(prefix="cutec-gemm-", dir=gpu)
    ok_all = True
    print(f"{'M x N x K':>18} {'status':>6} {'rel err':>9} {'cutec ms':>9} {'TFLOP/s':>8} {'torch ms':>9} {'TFLOP/s':>8} {'cutec/torch':>11}")
    for seed, (m, n, k) in enumerate(SHAPES):
        g = torch.Generator(device="cuda").manual_seed(seed)
        a = torch.empty(m, k, device="cuda").uniform_(-1, 1, generator=g)
        b = torch.empty(n, k, device="cuda").uniform_(-1, 1, generator=g)
        pa, pb, pc = (os.path.join(work, f) for f in ("a.npy", "b.npy", "c.npy"))
        np.save(pa, a.cpu().numpy())
        np.save(pb, b.cpu().numpy())
        cmd = [os.path.join(gpu, "cutec"), "run", os.path.join(gpu, "gemm_simt.ptx"), "--kernel", "gemm_simt",
               "--input", f"a={pa}", "--input", f"b={pb}", "--output", f"c={pc}", "--bench", "--warmup", "3",
               "--iters", "20"]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        if p.returncode != 0:
            print(f"{m}x{n}x{k}: cutec run failed:\n{p.stdout}{p.stderr}")
            ok_all = False
            continue
        bench = dict(re.findall(r"(\w+)=(\S+)", next(l for l in p.stdout.splitlines() if l.startswith("bench "))))
        c = torch.from_numpy(np.load(pc)).to("cuda").double()
        ref = a.double() @ b.double().T
        rel = float((c - ref).norm() / ref.norm())
        ok = bool(torch.isfinite(c).all()) and rel < 1e-5
        ok_all &= ok
        ms = float(bench["median_ms"])
        tms = median_ms(lambda: a @ b.T)
        flop = 2.0 * m * n * k
        print(f"{f'{m}x{n}x{k}':>18} {'PASS' if ok else 'FAIL':>6} {rel:>9.2e} {ms:>9.4f} {flop / ms / 1e9:>8.2f} "
              f"{tms:>9.4f} {flop / tms / 1e9:>8.2f} {tms / ms:>11.3f}")
        for f in (pa, pb, pc):
            os.remove(f)
    os.rmdir(work)
    print("(medians of 20 launches, CUDA events; torch.matmul in fp32 with TF32 off, timed in the same run)")
    return 0 if ok_all else 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""`cutec run` with a tensor laid out column-major: gemm_swap_ab writes C transposed, `ct` (N, M):(1, N). The run
stores `ct` in that order and writes the row-major (N, M) array to its `.npy`; A and B come from fresh torch inputs
through `--input` files, so the check is ct == (A @ B^T)^T against float32 of the same bf16 values (relative
Frobenius error <= 1e-2, every element finite, shape (N, M)). The same for gemm_swap_ab_fp8 would need e4m3 files;
bf16 covers the layout path. Then gemm_sm90 (row-major everywhere) the same way, so the usual path is checked in the
same build.

Run from scripts/gpu on the GPU machine with `cutec` and the modules in $GPU_DIR:
    GPU_DIR=../../.gpus-st python3 strided_run_check.py
Exit status: 0 when every case is correct, 1 otherwise.
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch

GPU = os.environ.get("GPU_DIR", ".gpu")
CUTEC = os.path.join(GPU, "cutec")


def case(work, module, kernel, m, n, k, transposed):
    g = torch.Generator(device="cuda").manual_seed(m * 7 + n * 3 + k)
    a = torch.randn(m, k, device="cuda", generator=g).to(torch.bfloat16)
    b = torch.randn(n, k, device="cuda", generator=g).to(torch.bfloat16)
    pa, pb, pc = (os.path.join(work, f) for f in ("a.npy", "b.npy", "c.npy"))
    np.save(pa, a.float().cpu().numpy())
    np.save(pb, b.float().cpu().numpy())
    out = "ct" if transposed else "c"
    cmd = [CUTEC, "run", os.path.join(GPU, module + ".ptx"), "--kernel", kernel, "--input", f"a={pa}",
           "--input", f"b={pb}", "--output", f"{out}={pc}"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    label = f"{kernel:>14} {f'{m}x{n}x{k}':>16}"
    if p.returncode != 0:
        print(f"{label} FAIL cutec run failed:\n{p.stdout}{p.stderr}")
        return False
    c = torch.from_numpy(np.load(pc)).cuda().float()
    ref = a.float() @ b.float().T
    if transposed:
        ref = ref.T
    rel = float((c - ref).norm() / ref.norm().clamp_min(1e-30))
    ok = tuple(c.shape) == tuple(ref.shape) and bool(torch.isfinite(c).all()) and rel <= 1e-2
    print(f"{label} {'PASS' if ok else 'FAIL'} {out} shape {tuple(c.shape)}, rel err {rel:.2e}")
    return ok


def main():
    work = tempfile.mkdtemp(prefix="cutec-strided-", dir=GPU)
    ok = True
    for m, n, k in [(16, 776, 336), (8, 1024, 512), (32, 8192, 1024), (1, 64, 64)]:
        ok &= case(work, "gemm_swap_ab", "gemm_swap_ab", m, n, k, transposed=True)
    for m, n, k in [(1000, 776, 336), (129, 264, 72)]:
        ok &= case(work, "gemm_sm90", "gemm", m, n, k, transposed=False)
    print("strided_run_check:", "all correct" if ok else "FAILURES")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

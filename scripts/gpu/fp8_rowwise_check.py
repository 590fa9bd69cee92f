#!/usr/bin/env python3
"""examples/gemm_fp8_rowwise.cute on the GPU: C = scale_a[i] * scale_b[j] * (A * B^T)[i, j] with A and B e4m3 and a
scale per row of A and per column of B, checked against a float32 reference of the same inputs (fresh random
e4m3 matrices and positive scales, C poisoned by `cutec run`), on ragged shapes; then timed against
torch._scaled_mm with the same row-wise scales (fast accumulation, bf16 out) in the same run, and against
gemm_fp8 (one scale per tensor) to show what the per-element scales cost.

Run from scripts/gpu on the GPU machine after scripts/gpu/build.sh:
    GPU_DIR=../../.gpus python3 fp8_rowwise_check.py
Exit status: 0 when every case is correct, 1 otherwise.
"""
import argparse
import os
import statistics
import sys
import tempfile

import numpy as np
import torch

import fp8_check as f8
from cuda_timing import median_ms

MODULE, KERNEL = "gemm_fp8_rowwise.ptx", "gemm_fp8_rowwise"


def case(work, m, n, k, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    a = torch.randn(m, k, device="cuda", generator=g).to(f8.E4M3)
    b = torch.randn(n, k, device="cuda", generator=g).to(f8.E4M3)
    sa = torch.rand(m, device="cuda", generator=g) + 0.25
    sb = torch.rand(n, device="cuda", generator=g) + 0.25
    pa, pb, psa, psb, pc = (os.path.join(work, f"{x}.npy") for x in ("a", "b", "sa", "sb", "c"))
    f8.save_raw(pa, a, ml=False)
    f8.save_raw(pb, b, ml=False)
    np.save(psa, sa.cpu().numpy())
    np.save(psb, sb.cpu().numpy())
    rc, out, _ = f8.run(MODULE, KERNEL, inputs=[("a", pa), ("b", pb), ("scale_a", psa), ("scale_b", psb)],
                        outputs=[("c", pc)])
    label = f"{f'{m}x{n}x{k}':>18}"
    if rc != 0:
        print(f"{label} FAIL cutec run failed:\n{out}")
        return False
    c = f8.load(pc).float()
    ref = (a.float() @ b.float().T) * sa[:, None] * sb[None, :]
    rel = float((c - ref).norm() / ref.norm().clamp_min(1e-30))
    ok = bool(torch.isfinite(c).all()) and rel <= 1e-2 and tuple(c.shape) == (m, n)
    note = ""
    if m % 16 == 0 and n % 16 == 0 and k % 16 == 0:
        try:
            t = torch._scaled_mm(a, b.t(), scale_a=sa[:, None].contiguous(), scale_b=sb[None, :].contiguous(),
                                 out_dtype=torch.bfloat16, use_fast_accum=True)
            note = f", _scaled_mm row-wise {float((t.float() - ref).norm() / ref.norm()):.2e}"
        except RuntimeError as e:
            note = f" (_scaled_mm row-wise unavailable: {str(e).splitlines()[0]})"
    print(f"{label} {'PASS' if ok else 'FAIL'} rel err {rel:.2e}{note}")
    for p in (pa, pb, psa, psb, pc):
        if os.path.exists(p):
            os.remove(p)
    return ok


def timing(also):
    print("== TFLOP/s (ratio to torch._scaled_mm row-wise, fast accumulation); medians over 3 interleaved rounds")
    print(f"{'M x N x K':>18} {'rowwise':>16} {'gemm_fp8':>16} {'_scaled_mm':>11}")
    for m, n, k in [(4096, 4096, 4096), (8192, 8192, 8192), (8192, 8192, 2048)]:
        dims = {"M": m, "N": n, "K": k}
        a = torch.randn(m, k, device="cuda").to(f8.E4M3)
        b = torch.randn(n, k, device="cuda").to(f8.E4M3)
        sa = (torch.rand(m, 1, device="cuda") + 0.25).contiguous()
        sb = (torch.rand(1, n, device="cuda") + 0.25).contiguous()
        times = {"rowwise": [], "gemm_fp8": [], "torch": []} | {m: [] for m in also}
        for _ in range(3):
            rc, out, bench = f8.run(MODULE, KERNEL, dims, bench=True)
            times["rowwise"].append(float(bench["median_ms"]) if rc == 0 else float("nan"))
            for module in also:
                rc, out, bench = f8.run(module, KERNEL, dims, bench=True)
                times[module].append(float(bench["median_ms"]) if rc == 0 else float("nan"))
            rc, out, bench = f8.run("gemm_fp8.ptx", "gemm_fp8", dims, bench=True,
                                    scalars=[("scale_a", 1.0), ("scale_b", 1.0)])
            times["gemm_fp8"].append(float(bench["median_ms"]) if rc == 0 else float("nan"))
            try:
                times["torch"].append(median_ms(lambda: torch._scaled_mm(
                    a, b.t(), scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16, use_fast_accum=True)))
            except RuntimeError:
                times["torch"].append(float("nan"))
        med = {x: statistics.median(t) for x, t in times.items()}
        flop = 2.0 * m * n * k
        cell = lambda t: f"{flop / t / 1e9:.1f} ({med['torch'] / t:.3f})"
        print(f"{f'{m}x{n}x{k}':>18} {cell(med['rowwise']):>16} {cell(med['gemm_fp8']):>16} "
              f"{flop / med['torch'] / 1e9:>11.1f}" + "".join(f"  {x}: {cell(med[x])}" for x in also))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--also", action="append", default=[], help="another module of the kernel, timed with it")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="cutec-rowwise-", dir=f8.GPU)
    print("== gemm_fp8_rowwise.cute: per-row and per-column scales against float32 of the same e4m3 inputs")
    ok = True
    for i, (m, n, k) in enumerate([(128, 256, 128), (1000, 776, 336), (129, 264, 96), (300, 512, 144),
                                   (2048, 2048, 2048), (4096, 4096, 512)]):
        ok &= case(work, m, n, k, seed=i)
    # Rows of A of 136 bytes: TMA cannot describe them (a multiple of 16 bytes); refused at launch, not run.
    rc, out, _ = f8.run(MODULE, KERNEL, {"M": 300, "N": 512, "K": 136})
    refused = rc != 0 and ("E0422" in out or "E0424" in out)
    ok &= refused
    print(f"{'300x512x136':>18} {'REFUSED' if refused else 'FAIL'} {out.splitlines()[0] if out else ''}")
    timing(args.also)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

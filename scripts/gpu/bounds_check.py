#!/usr/bin/env python3
"""Bounds on the GPU: ragged shapes are correct, what predication costs on full tiles, and required
divisibility is refused at launch.

Run from the repository root on the GPU machine after scripts/gpu/build.sh filled .gpu/ with gemm_simt,
gemm_simt_div (the same kernel with `static_assert(M % BM == 0 && N % BN == 0 && K % BK == 0)`: no predicates,
a launch requirement instead), copy and copy_div (`static_assert(N % (THREADS * VEC) == 0)`).

1. gemm_simt on ragged shapes against float64 (fresh random inputs; `cutec run` poisons the output first).
2. The cost of predication on full tiles: gemm_simt against gemm_simt_div, and copy against copy_div, on the same
   inputs in the same run (medians of CUDA-event intervals), with torch as the anchor.
3. gemm_simt_div and copy_div on ragged shapes: the runtime must refuse the launch, naming the dimension.
4. compute-sanitizer memcheck on the ragged gemm_simt and copy.
Exit status: 0 when every check passed, 1 otherwise.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import torch

from cuda_timing import median_ms

GPU = os.environ.get("GPU_DIR", ".gpu")
CUTEC = os.path.join(GPU, "cutec")
RAGGED = [(1000, 777, 333), (1, 1, 1), (129, 130, 9), (127, 1, 17), (256, 384, 64)]
FULL = [(2048, 2048, 2048), (4096, 4096, 1024), (4096, 4096, 4096)]


def run(args, timeout=600):
    return subprocess.run([CUTEC, "run", *args], capture_output=True, text=True, timeout=timeout)


def bench_ms(stdout):
    line = next(l for l in stdout.splitlines() if l.startswith("bench "))
    return float(dict(re.findall(r"(\w+)=(\S+)", line))["median_ms"])


def gemm(module, a, b, work, iters=20):
    """C = A B^T by `module` (gemm_simt or gemm_simt_div): (C, median ms) or (None, the error text)."""
    pa, pb, pc = (os.path.join(work, f) for f in ("a.npy", "b.npy", "c.npy"))
    np.save(pa, a.cpu().numpy())
    np.save(pb, b.cpu().numpy())
    if os.path.exists(pc):
        os.remove(pc)
    p = run([os.path.join(GPU, module + ".ptx"), "--kernel", "gemm_simt", "--input", f"a={pa}", "--input",
             f"b={pb}", "--output", f"c={pc}", "--bench", "--warmup", "3", "--iters", str(iters)])
    if p.returncode != 0:
        return None, p.returncode, p.stdout + p.stderr
    return torch.from_numpy(np.load(pc)).to("cuda"), bench_ms(p.stdout), ""


def main():
    torch.backends.cuda.matmul.allow_tf32 = False
    work = tempfile.mkdtemp(prefix="cutec-bounds-", dir=GPU)
    ok_all = True

    print("== 1. gemm_simt on ragged shapes, against float64")
    print(f"{'M x N x K':>16} {'status':>6} {'rel err':>9}")
    for seed, (m, n, k) in enumerate(RAGGED):
        g = torch.Generator(device="cuda").manual_seed(100 + seed)
        a = torch.empty(m, k, device="cuda").uniform_(-1, 1, generator=g)
        b = torch.empty(n, k, device="cuda").uniform_(-1, 1, generator=g)
        c, _, err = gemm("gemm_simt", a, b, work, iters=1)
        if c is None:
            print(f"{f'{m}x{n}x{k}':>16} {'FAIL':>6} cutec run failed: {err.strip()}")
            ok_all = False
            continue
        ref = a.double() @ b.double().T
        rel = float((c.double() - ref).norm() / ref.norm())
        ok = bool(torch.isfinite(c).all()) and rel < 1e-5
        ok_all &= ok
        print(f"{f'{m}x{n}x{k}':>16} {'PASS' if ok else 'FAIL':>6} {rel:>9.2e}")

    print("\n== 2. predication on full tiles: gemm_simt (predicated) vs gemm_simt_div (required divisibility)")
    print(f"{'M x N x K':>16} {'pred ms':>9} {'div ms':>9} {'pred/div':>9} {'torch ms':>9} {'pred TFLOP/s':>12}"
          f" {'torch/pred':>10}")
    for seed, (m, n, k) in enumerate(FULL):
        g = torch.Generator(device="cuda").manual_seed(200 + seed)
        a = torch.empty(m, k, device="cuda").uniform_(-1, 1, generator=g)
        b = torch.empty(n, k, device="cuda").uniform_(-1, 1, generator=g)
        ref = a.double() @ b.double().T
        times = {}
        for module in ("gemm_simt", "gemm_simt_div"):
            c, ms, err = gemm(module, a, b, work)
            if c is None:
                print(f"{module} {m}x{n}x{k}: cutec run failed: {err.strip()}")
                ok_all = False
                break
            rel = float((c.double() - ref).norm() / ref.norm())
            if not rel < 1e-5:
                print(f"{module} {m}x{n}x{k}: FAIL, relative error {rel:.2e}")
                ok_all = False
            times[module] = ms
        if len(times) < 2:
            continue
        tms = median_ms(lambda: a @ b.T)
        p, d = times["gemm_simt"], times["gemm_simt_div"]
        print(f"{f'{m}x{n}x{k}':>16} {p:>9.4f} {d:>9.4f} {p / d:>9.3f} {tms:>9.4f} {2.0 * m * n * k / p / 1e9:>12.2f}"
              f" {tms / p:>10.3f}")

    print("\n== 2b. copy (predicated, versioned) vs copy_div (required divisibility), N = 2^28 f32")
    n = 1 << 28
    times = {}
    for module in ("copy", "copy_div"):
        p = run([os.path.join(GPU, module + ".ptx"), "--kernel", "copy", "--dim", f"N={n}", "--bench", "--warmup",
                 "5", "--iters", "50"])
        if p.returncode != 0:
            print(f"{module}: cutec run failed: {(p.stdout + p.stderr).strip()}")
            ok_all = False
            continue
        times[module] = bench_ms(p.stdout)
    if len(times) == 2:
        x = torch.empty(n, device="cuda")
        y = torch.empty_like(x)
        tms = median_ms(lambda: y.copy_(x))
        pc, dc = times["copy"], times["copy_div"]
        print(f"copy {pc:.4f} ms ({8 * n / pc / 1e6:.0f} GB/s), copy_div {dc:.4f} ms, copy/copy_div {pc / dc:.3f}, "
              f"torch copy_ {tms:.4f} ms, torch/copy {tms / pc:.3f}")

    print("\n== 3. required divisibility is refused at launch")
    refusals = [
        ("gemm_simt_div", "gemm_simt", ["--dim", "M=1000", "--dim", "N=777", "--dim", "K=333"], "`M` = 1000"),
        ("copy_div", "copy", ["--dim", "N=1000003"], "`N` = 1000003"),
    ]
    for module, kernel, dims, expect in refusals:
        p = run([os.path.join(GPU, module + ".ptx"), "--kernel", kernel, *dims])
        text = (p.stdout + p.stderr).strip()
        ok = p.returncode != 0 and expect in text and "not a multiple of" in text
        ok_all &= ok
        print(f"{module} {' '.join(dims)}: exit {p.returncode}, {'PASS' if ok else 'FAIL'}: {text.splitlines()[-1] if text else ''}")

    print("\n== 4. compute-sanitizer memcheck on ragged shapes")
    if shutil.which("compute-sanitizer"):
        checks = [
            ("gemm_simt", "gemm_simt", ["--dim", "M=1000", "--dim", "N=777", "--dim", "K=333"]),
            ("copy", "copy", ["--dim", "N=1000003"]),
            ("grid_copy", "grid_copy", ["--dim", "N=1000003"]),
        ]
        for module, kernel, dims in checks:
            p = subprocess.run(["compute-sanitizer", "--tool", "memcheck", "--error-exitcode", "3", CUTEC, "run",
                                os.path.join(GPU, module + ".ptx"), "--kernel", kernel, *dims],
                               capture_output=True, text=True, timeout=600)
            summary = [l for l in (p.stdout + p.stderr).splitlines() if "ERROR SUMMARY" in l]
            ok = p.returncode == 0 and bool(summary) and "0 errors" in summary[-1]
            ok_all &= ok
            print(f"memcheck {module} {' '.join(dims)}: {'PASS' if ok else 'FAIL'} {summary[-1] if summary else p.returncode}")
    else:
        print("compute-sanitizer not found: memcheck NOT RUN")
        ok_all = False

    shutil.rmtree(work, ignore_errors=True)
    print("\n(medians of CUDA-event intervals; torch.matmul in fp32 with TF32 off, timed in the same run)")
    return 0 if ok_all else 1


if __name__ == "__main__":
    sys.exit(main())

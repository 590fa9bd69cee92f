#!/usr/bin/env python3
"""The Hopper examples on the GPU: tma_copy against torch's copy, gemm_sm90_manual against a float32 reference,
cuBLAS (torch.matmul in bf16) and Triton, timed in the same run.

Run from the repository root on the GPU machine after scripts/gpu/build.sh filled .gpu/.
Inputs are `cutec run`'s seeded random data (filled on the device, a fresh seed per case), read back with
--save-input; outputs are poisoned by `cutec run` before the launch. Timings: medians of CUDA events.
Exit status: 0 when every case is correct (or refused where it must be), 1 otherwise.
  --only copy|gemm|steps|kn|rs   one part
  --quick            correctness only (no large shapes)
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import torch

from cuda_timing import median_ms

GPU = os.environ.get("GPU_DIR", ".gpu")
CUTEC = os.path.join(GPU, "cutec")
SEED = [100]


def run(module, kernel, dims, saves=(), outputs=(), bench=False, iters=20, extra=()):
    """`cutec run` with seeded inputs (and the options `extra`); gives (returncode, stdout+stderr, bench dict)."""
    SEED[0] += 1
    cmd = [CUTEC, "run", os.path.join(GPU, module), "--kernel", kernel, "--seed", str(SEED[0]), *extra]
    for k, v in dims.items():
        cmd += ["--dim", f"{k}={v}"]
    for name, path in saves:
        cmd += ["--save-input", f"{name}={path}"]
    for name, path in outputs:
        cmd += ["--output", f"{name}={path}"]
    if bench:
        cmd += ["--bench", "--warmup", "5", "--iters", str(iters)]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        return 124, f"timed out after 120 s (a hang): {' '.join(cmd)}", {}
    lines = [l for l in p.stdout.splitlines() if l.startswith("bench ")]
    b = dict(re.findall(r"(\w+)=(\S+)", lines[0])) if lines else {}
    return p.returncode, p.stdout + p.stderr, b


def load(path):
    return torch.from_numpy(np.load(path)).to("cuda")


def run_read(work, module, kernel, dims, inputs, output, bench=False, extra=()):
    """`cutec run` with the tensors `inputs` saved and `output` read back: (rc, output text, bench dict,
    {name: tensor}, empty when the run failed); the files are removed."""
    paths = {n: os.path.join(work, f"{n}.npy") for n in (*inputs, output)}
    rc, out, b = run(module, kernel, dims, saves=[(n, paths[n]) for n in inputs], outputs=[(output, paths[output])],
                     bench=bench, extra=extra)
    tensors = {n: load(p) for n, p in paths.items()} if rc == 0 else {}
    for p in paths.values():
        if os.path.exists(p):
            os.remove(p)
    return rc, out, b, tensors


def gemm_case(work, module, kernel, m, n, k, b_kn=False, label=None, note="", extra=()):
    """One GEMM against float32 A * B^T of the same bf16 inputs (A * B when B is stored K x N): prints its line,
    gives whether it passed (relative Frobenius error <= 1e-2, every element finite). `extra`: more options of
    `cutec run` (a `.cute` module's `--tuning FILE`)."""
    label = label or f"{f'{m}x{n}x{k}':>18}"
    rc, out, _, t = run_read(work, module, kernel, {"M": m, "N": n, "K": k}, ("a", "b"), "c", extra=extra)
    if rc != 0:
        print(f"{label} FAIL cutec run failed:\n{out}")
        return False
    a, b, c = (t[x].float() for x in "abc")
    ref = a @ b if b_kn else a @ b.T
    rel = float((c - ref).norm() / ref.norm().clamp_min(1e-30))
    ok = bool(torch.isfinite(c).all()) and rel <= 1e-2 and (not b_kn or tuple(b.shape) == (k, n))
    print(f"{label} {'PASS' if ok else 'FAIL'} rel err {rel:.2e}{note}")
    return ok


def refused(module, kernel, dims, label, must=""):
    """A launch the runtime must refuse before any GPU work. The shapes come from `--dim` values, so the refusal is
    a usage error about them: E0422, exit status 2, the option named in the message, and `must` in it."""
    rc, out, _ = run(module, kernel, dims)
    ok = rc == 2 and "E0422" in out and "--dim" in out and must in out
    print(f"{label} {'REFUSED' if ok else 'FAIL'} {out.strip().splitlines()[0] if out.strip() else ''}")
    return ok


def copy_part(work, quick):
    ok_all = True
    print("== tma_copy: y = x through shared memory with TMA (f32, tiles of 32 x 256)")
    print(f"{'M x N':>14} {'status':>7} {'cutec ms':>9} {'GB/s':>7} {'torch ms':>9} {'GB/s':>7} {'cutec/torch':>11}")
    shapes = [(1, 4), (33, 260), (1000, 1004), (4096, 4096)] + ([] if quick else [(16384, 16384), (8192, 32768)])
    for m, n in shapes:
        big = m * n >= 1 << 26
        rc, out, b, t = run_read(work, "tma_copy.ptx", "tma_copy", {"M": m, "N": n}, ("x",), "y", bench=big)
        if rc != 0:
            print(f"{f'{m}x{n}':>14} {'FAIL':>7} cutec run failed:\n{out}")
            ok_all = False
            continue
        ok = bool(torch.equal(t["x"], t["y"]))
        ok_all &= ok
        if big:
            ms = float(b["median_ms"])
            xt, yt = torch.empty(m, n, device="cuda"), torch.empty(m, n, device="cuda")
            tms = median_ms(lambda: yt.copy_(xt))
            gb = 2 * 4 * m * n / 1e6
            print(f"{f'{m}x{n}':>14} {'PASS' if ok else 'FAIL':>7} {ms:>9.4f} {gb / ms:>7.0f} {tms:>9.4f} {gb / tms:>7.0f} "
                  f"{tms / ms:>11.3f}")
            del xt, yt
        else:
            print(f"{f'{m}x{n}':>14} {'PASS' if ok else 'FAIL':>7}")
    # Three-dimensional maps: a batch of matrices, one box of (1, 32, 128) per CTA.
    print("   tma_copy_batched: y[b] = x[b] through a 3-D tensor map")
    for bt, m, n in [(5, 1, 4), (3, 33, 260), (2, 1000, 1004), (7, 128, 128)]:
        rc, out, _, t = run_read(work, "tma_copy_batched.ptx", "tma_copy_batched", {"B": bt, "M": m, "N": n},
                                 ("x",), "y")
        if rc != 0:
            print(f"{f'{bt}x{m}x{n}':>14} {'FAIL':>7} cutec run failed:\n{out}")
            ok_all = False
            continue
        ok = tuple(t["x"].shape) == (bt, m, n) and bool(torch.equal(t["x"], t["y"]))
        ok_all &= ok
        print(f"{f'{bt}x{m}x{n}':>14} {'PASS' if ok else 'FAIL':>7}")
    # Distributed shared memory: each CTA of a pair writes its row into the other's shared memory.
    print("   dsmem_exchange: y[r] = x[r] + x[r ^ 1] through the peer CTA's shared memory (clusters of 2)")
    for m, n in [(2, 4), (6, 1000), (1000, 777), (4096, 4096)]:
        rc, out, _, t = run_read(work, "dsmem_exchange.ptx", "dsmem_exchange", {"M": m, "N": n}, ("x",), "y")
        if rc != 0:
            print(f"{f'{m}x{n}':>14} {'FAIL':>7} cutec run failed:\n{out}")
            ok_all = False
            continue
        x = t["x"]
        ok = bool(torch.equal(t["y"], x + x.view(m // 2, 2, n).flip(1).reshape(m, n)))
        ok_all &= ok
        print(f"{f'{m}x{n}':>14} {'PASS' if ok else 'FAIL':>7}")
    ok_all &= refused("dsmem_exchange.ptx", "dsmem_exchange", {"M": 7, "N": 64}, f"{'7x64':>14}       ")
    # A row stride that is not a multiple of 16 bytes: TMA cannot describe the tensor; the runtime refuses.
    ok_all &= refused("tma_copy.ptx", "tma_copy", {"M": 1000, "N": 777}, f"{'1000x777':>14}       ", "multiple of 16")
    return ok_all


def triton_matmul():
    """Triton's tutorial matmul (bf16 in, f32 accumulate) as a second anchor; None if Triton is missing."""
    try:
        import triton
        import triton.language as tl
    except ImportError:
        return None

    @triton.jit
    def kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
               GROUP: tl.constexpr):
        pid = tl.program_id(0)
        num_m = tl.cdiv(M, BM)
        num_n = tl.cdiv(N, BN)
        group = GROUP * num_n
        first_m = (pid // group) * GROUP
        size_m = min(num_m - first_m, GROUP)
        pid_m = first_m + (pid % group) % size_m
        pid_n = (pid % group) // size_m
        rm = pid_m * BM + tl.arange(0, BM)
        rn = pid_n * BN + tl.arange(0, BN)
        rk = tl.arange(0, BK)
        a = a_ptr + rm[:, None] * K + rk[None, :]
        b = b_ptr + rn[:, None] * K + rk[None, :]
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, tl.cdiv(K, BK)):
            ka = tl.load(a, mask=(rm[:, None] < M) & (rk[None, :] < K - k * BK), other=0.0)
            kb = tl.load(b, mask=(rn[:, None] < N) & (rk[None, :] < K - k * BK), other=0.0)
            acc = tl.dot(ka, tl.trans(kb), acc)
            a += BK
            b += BK
        c = c_ptr + rm[:, None] * N + rn[None, :]
        tl.store(c, acc.to(tl.bfloat16), mask=(rm[:, None] < M) & (rn[None, :] < N))

    def mm(a, b, c):
        m, k = a.shape
        n = b.shape[0]
        grid = (triton.cdiv(m, 128) * triton.cdiv(n, 256),)
        kernel[grid](a, b, c, m, n, k, BM=128, BN=256, BK=64, GROUP=8, num_warps=8, num_stages=3)

    return mm


VARIANTS = [
    ("gemm_sm90_manual", "default: persistent, clusters of 2 sharing B by multicast, TMA-store epilogue, 3 stages"),
    ("gemm_sm90_manual_regs", "-D TMA_STORE=false -D STAGES=4: epilogue from registers"),
    ("gemm_sm90_manual_rows", "-D GROUP_M=1: tiles in row order"),
    ("gemm_sm90_manual_bn128", "-D BN=128 -D STAGES=4: 128 x 128 tiles"),
    ("gemm_sm90_manual_c1", "-D CLUSTER_M=1: no clusters, no multicast"),
]


def gemm_part(work, quick):
    ok_all = True
    torch.backends.cuda.matmul.allow_tf32 = False
    print("== gemm_sm90_manual: C = A * B^T, bf16 in, f32 accumulation, bf16 out (tile 128 x 256 x 64)")
    print("   correctness: relative error (Frobenius) against float32 A * B^T of the same bf16 inputs; <= 1e-2")
    correct = [(128, 256, 64), (256, 512, 128), (1000, 777, 336), (1000, 776, 336), (129, 257, 72), (64, 8, 8),
               (1, 1, 8), (2048, 2048, 2048)]
    for module, what in [v for v in VARIANTS if v[0] != "gemm_sm90_manual_rows"]:
        print(f"   {module} ({what})")
        for m, n, k in correct:
            # The TMA-store epilogue needs C's rows to be a multiple of 16 bytes: refused at launch otherwise.
            if module != "gemm_sm90_manual_regs" and n % 8 != 0 and m > 1:
                dims = {"M": m, "N": n, "K": k}
                ok_all &= refused(module + ".ptx", "gemm_sm90_manual", dims, f"{f'{m}x{n}x{k}':>18}")
                continue
            ok_all &= gemm_case(work, module + ".ptx", "gemm_sm90_manual", m, n, k)
    # K = 333: A's row stride is 666 bytes, which TMA cannot describe (a multiple of 16 bytes); refused at launch.
    dims = {"M": 1000, "N": 777, "K": 333}
    ok_all &= refused("gemm_sm90_manual_regs.ptx", "gemm_sm90_manual", dims, f"{'1000x777x333':>18}")
    if quick:
        return ok_all
    tri = triton_matmul()
    print("   TFLOP/s (ratio to cuBLAS); " + "; ".join(f"v{i}: {what}" for i, (_, what) in enumerate(VARIANTS)))
    head = "".join(f"{f'v{i}':>15}" for i in range(len(VARIANTS)))
    print(f"{'M x N x K':>18}{head} {'cuBLAS':>8} {'Triton':>8} {'v0/Triton':>9}")
    for m, n, k in [(4096, 4096, 4096), (8192, 8192, 8192), (8192, 8192, 2048), (128, 8192, 8192),
                    (256, 8192, 8192), (1024, 8192, 8192)]:
        flop = 2.0 * m * n * k
        tf = lambda t: flop / t / 1e9
        times = []
        for module, _ in VARIANTS:
            rc, out, bench = run(module + ".ptx", "gemm_sm90_manual", {"M": m, "N": n, "K": k}, bench=True, iters=20)
            if rc != 0:
                print(f"{f'{m}x{n}x{k}':>18} FAIL {module}: cutec run failed:\n{out}")
                ok_all = False
                times.append(float("nan"))
            else:
                times.append(float(bench["median_ms"]))
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
        c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
        cms = median_ms(lambda: torch.matmul(a, b.T, out=c))
        tms = median_ms(lambda: tri(a, b, c)) if tri else float("nan")
        cols = "".join(f"{f'{tf(t):.1f} ({cms / t:.3f})':>15}" for t in times)
        print(f"{f'{m}x{n}x{k}':>18}{cols} {tf(cms):>8.1f} {tf(tms):>8.1f} {tms / times[0]:>9.3f}")
        del a, b, c
    print("(medians of 20 launches with CUDA events; cuBLAS = torch.matmul bf16, Triton = its tutorial matmul at "
          "128x256x64, both in the same run)")
    return ok_all


STEPS = [("hopper_1_one_wgmma", "gemm_one_stage", "step 2: one wgmma group per k-tile, one stage"),
         ("hopper_2_ring", "gemm_ring", "step 3: a 4-stage mbarrier ring, one warpgroup"),
         ("gemm_sm90_manual", "gemm_sm90_manual", "step 4: producer and consumer warpgroups, persistent")]


def steps_part(work):
    """The book's steps (book/src/hopper.md): correctness on a ragged shape, TFLOP/s against cuBLAS."""
    ok_all = True
    torch.backends.cuda.matmul.allow_tf32 = False
    print("== the book's steps towards gemm_sm90_manual (book/src/hopper.md)")
    for module, kernel, what in STEPS:
        label = f"   {module:<22} 1000x776x200"
        ok_all &= gemm_case(work, module + ".ptx", kernel, 1000, 776, 200, label=label, note=f"  ({what})")
    print(f"{'M x N x K':>18}" + "".join(f"{m:>22}" for m, _, _ in STEPS) + f"{'cuBLAS':>9}")
    for m, n, k in [(4096, 4096, 4096), (8192, 8192, 8192)]:
        flop = 2.0 * m * n * k
        cols = []
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
        c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
        cms = median_ms(lambda: torch.matmul(a, b.T, out=c))
        for module, kernel, _ in STEPS:
            rc, out, bench = run(module + ".ptx", kernel, {"M": m, "N": n, "K": k}, bench=True, iters=10)
            if rc != 0:
                ok_all = False
                cols.append("FAIL")
                continue
            ms = float(bench["median_ms"])
            cols.append(f"{flop / ms / 1e9:.1f} ({cms / ms:.3f})")
        print(f"{f'{m}x{n}x{k}':>18}" + "".join(f"{col:>22}" for col in cols) + f"{flop / cms / 1e9:>9.1f}")
        del a, b, c
    print("(TFLOP/s (ratio to cuBLAS = torch.matmul bf16, same run); medians of 10 launches)")
    return ok_all


def kn_part(work, quick):
    """gemm_sm90_kn: C = A * B with B stored K x N row-major, read N-major by the wgmma (MN-major descriptor)."""
    ok_all = True
    torch.backends.cuda.matmul.allow_tf32 = False
    print("== gemm_sm90_kn: C = A * B, B (K, N) row-major read N-major by wgmma; rel err against float32 A * B")
    for m, n, k in [(64, 64, 64), (128, 192, 256), (1000, 776, 200), (1, 8, 8), (333, 1000, 1024)]:
        ok_all &= gemm_case(work, "gemm_sm90_kn.ptx", "gemm_sm90_kn", m, n, k, b_kn=True)
    if not quick:
        m = n = k = 4096
        rc, out, bench = run("gemm_sm90_kn.ptx", "gemm_sm90_kn", {"M": m, "N": n, "K": k}, bench=True, iters=10)
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
        cms = median_ms(lambda: torch.matmul(a, b))
        if rc == 0:
            ms = float(bench["median_ms"])
            print(f"{'4096^3':>18} {2.0 * m * n * k / ms / 1e9:.1f} TFLOP/s, cuBLAS (torch.matmul(a, b)) "
                  f"{2.0 * m * n * k / cms / 1e9:.1f}: {cms / ms:.3f} (one warpgroup, 64 x 256 tiles, 4 stages: the book's ring step)")
        else:
            ok_all = False
            print(f"{'4096^3':>18} FAIL cutec run failed:\n{out}")
    return ok_all


def rs_part(work):
    """wgmma_rs: A from registers (wgmma RS), B through TMA; correctness only, fresh seeded inputs per shape."""
    ok_all = True
    torch.backends.cuda.matmul.allow_tf32 = False
    print("== wgmma_rs: C = A * B^T with A in registers, bf16 in, f32 accumulation, bf16 out (tile 64 x 128 x 64)")
    print("   correctness: relative error (Frobenius) against float32 A * B^T of the same bf16 inputs; <= 1e-2")
    # K = 200 and 72 are not multiples of 16 (nor of the 64-deep tile): both sides read zeros past K.
    for m, n, k in [(64, 128, 64), (128, 256, 256), (1000, 776, 200), (129, 257, 72), (64, 8, 8), (1, 1, 8),
                    (512, 384, 1024)]:
        ok_all &= gemm_case(work, "wgmma_rs.ptx", "wgmma_rs", m, n, k)
    # K = 333: B's row stride is 666 bytes, which TMA cannot describe (a multiple of 16 bytes); refused at launch.
    ok_all &= refused("wgmma_rs.ptx", "wgmma_rs", {"M": 100, "N": 100, "K": 333}, f"{'100x100x333':>18}")
    return ok_all


def sanitizer_runs(cases, width=28):
    """compute-sanitizer's memcheck, racecheck and synccheck on `cutec run` of each (module, kernel, dims) or
    (module, kernel, dims, scalars) case; prints a line per run, gives whether all were clean."""
    ok_all = True
    for case in cases:
        module, kernel, dims = case[:3]
        scalars = case[3] if len(case) > 3 else {}
        for tool in ("memcheck", "racecheck", "synccheck"):
            cmd = ["compute-sanitizer", "--tool", tool, "--error-exitcode", "9", CUTEC, "run", os.path.join(GPU, module),
                   "--kernel", kernel] + [f"--dim={k}={v}" for k, v in dims.items()]
            cmd += [f"--scalar={k}={v}" for k, v in scalars.items()]
            try:
                p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
                tail = (p.stdout + p.stderr).strip().splitlines()[-1:]
                ok = p.returncode == 0
            except subprocess.TimeoutExpired:
                ok, tail = False, ["timed out"]
            ok_all &= ok
            print(f"   {module:<{width}} {tool:<10} {'PASS' if ok else 'FAIL'} {tail[0] if tail else ''}")
    return ok_all


def sanitize():
    """compute-sanitizer's memcheck, racecheck and synccheck on a small GEMM and a ragged TMA copy."""
    print("== compute-sanitizer on gemm_sm90_manual 256x512x456 (8 k-tiles round a 4-stage ring, a ragged last "
          "one) and 4096x4096x128 (several tiles per CTA: the epilogue's pieces reuse the staging tile), the other "
          "Hopper examples on ragged shapes, and tma_copy 1000x1004")
    cases = [("gemm_sm90_manual.ptx", "gemm_sm90_manual", {"M": 256, "N": 512, "K": 456}),
             ("gemm_sm90_manual.ptx", "gemm_sm90_manual", {"M": 4096, "N": 4096, "K": 128}),
             ("gemm_sm90_manual_regs.ptx", "gemm_sm90_manual", {"M": 200, "N": 300, "K": 136}),
             ("tma_copy.ptx", "tma_copy", {"M": 1000, "N": 1004}),
             ("tma_copy_batched.ptx", "tma_copy_batched", {"B": 3, "M": 33, "N": 260}),
             ("gemm_sm90_kn.ptx", "gemm_sm90_kn", {"M": 200, "N": 304, "K": 136}),
             ("wgmma_rs.ptx", "wgmma_rs", {"M": 200, "N": 300, "K": 136}),
             ("dsmem_exchange.ptx", "dsmem_exchange", {"M": 6, "N": 1000})]
    return sanitizer_runs(cases)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", choices=["copy", "gemm", "steps", "kn", "rs"])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--sanitize", action="store_true", help="also run compute-sanitizer on small cases")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="cutec-hopper-", dir=GPU)
    ok = True
    if args.only in (None, "copy"):
        ok &= copy_part(work, args.quick)
    if args.only in (None, "gemm"):
        ok &= gemm_part(work, args.quick)
    if args.only in (None, "steps"):
        ok &= steps_part(work)
    if args.only in (None, "kn"):
        ok &= kn_part(work, args.quick)
    if args.only in (None, "rs"):
        ok &= rs_part(work)
    if args.sanitize:
        ok &= sanitize()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The scheduled Hopper GEMMs on the GPU: the plain loops of examples/gemm_sm90.cute (warp-specialized,
persistent, clusters of 2) and examples/gemm_pipelined.cute (one warpgroup pair issuing its own copies,
persistent), variants of them (the grid launched as it is, the epilogue from registers, no `pipelined`), and the
loop over tiles written by hand (gemm_sm90_persistent.cute), against a float32 reference of the same bf16 inputs
on ragged shapes (some with several tiles per CTA), then timed against gemm_sm90_manual (the hand-written
schedule) and cuBLAS (torch.matmul) in the same run.

Run from the repository root on the GPU machine after scripts/gpu/build.sh filled .gpu/:
    GPU_DIR=.gpu python3 scripts/gpu/schedule_check.py [--quick] [--sanitize]
Exit status: 0 when every case is correct (or refused as it must be), 1 otherwise.
"""
import argparse
import os
import sys
import tempfile

import torch

from cuda_timing import median_ms
from hopper_check import GPU, gemm_case, refused, run, run_read, sanitizer_runs

# (module, kernel, what, epilogue through TMA: C's rows must be a multiple of 16 bytes)
SCHEDULED = [
    ("gemm_sm90", "gemm", "gemm_sm90.cute: pipelined(stages = 3) + warp_specialized + persistent(raster = "
     "grouped(8)), clusters of 2 sharing B by multicast", True),
    ("gemm_sm90_grid", "gemm", "the same without persistent: one CTA per tile", True),
    ("gemm_sm90_regs", "gemm", "gemm_sm90, epilogue from registers (store(acc, mma.partition_c(..))), 4 stages",
     False),
    ("gemm_sm90_persistent", "gemm_persistent", "gemm_sm90_persistent.cute: the loop over tiles written by hand",
     True),
    ("gemm_sm90_persistent_c1", "gemm_persistent", "the same, -D CLUSTER_M=1", True),
    ("gemm_pipelined", "gemm_pipelined", "gemm_pipelined.cute: pipelined(stages = 3), thread 0 issues the copies, "
     "persistent", True),
    ("gemm_plain", "gemm_pipelined", "the same loop without pipelined: one stage, each copy completed before use",
     True),
]
# Ragged M and N, K < BK, K < STAGES * BK, one k-tile, trip counts 0..S+1 around the ring; the last three give
# each CTA of a persistent kernel several tiles (the ring's phases carried across them, ragged edges included).
CORRECT = [(128, 256, 64), (1000, 776, 336), (1000, 777, 336), (129, 264, 72), (200, 256, 40), (300, 512, 136),
           (64, 8, 8), (1, 1, 8), (256, 512, 128), (130, 260, 320), (2048, 2048, 2048), (4096, 4096, 256),
           (3000, 5000, 200), (8192, 2048, 72)]


def correctness(work):
    ok_all = True
    print("== correctness: relative error (Frobenius) against float32 A * B^T of the same bf16 inputs; <= 1e-2")
    for module, kernel, what, tma in SCHEDULED:
        print(f"   {module} ({what})")
        for m, n, k in CORRECT:
            if tma and n % 8 != 0:
                # C's rows of 2N bytes: the TMA store needs a multiple of 16 bytes, so the runtime refuses the
                # launch, unless C has one row (then no row stride exists) and the result must be right.
                dims = {"M": m, "N": n, "K": k}
                rc, out, _ = run(module + ".ptx", kernel, dims)
                if rc != 0 or m > 1:
                    ok_all &= refused(module + ".ptx", kernel, dims, f"{f'{m}x{n}x{k}':>18}", must="c_tma")
                    continue
            ok_all &= gemm_case(work, module + ".ptx", kernel, m, n, k)
        # A's rows of 666 bytes: TMA cannot describe them (a multiple of 16 bytes); refused at launch.
        ok_all &= refused(module + ".ptx", kernel, {"M": 1000, "N": 777, "K": 333}, f"{'1000x777x333':>18}")
    return ok_all


def gelu_case(work, module, kernel, m, n, k, label):
    """C = gelu(A * B^T + bias) of `module` against float32 torch on the same (seeded) inputs, C poisoned by
    `cutec run`; prints a line, gives whether it passed (relative Frobenius error <= 1e-2)."""
    rc, out, _, t = run_read(work, module + ".ptx", kernel, {"M": m, "N": n, "K": k}, ("a", "b", "bias"), "c")
    if rc != 0:
        print(f"{label} FAIL cutec run failed:\n{out}")
        return False
    a, b, bias, c = t["a"].float(), t["b"].float(), t["bias"].float(), t["c"].float()
    ref = torch.nn.functional.gelu(a @ b.T + bias, approximate="tanh")
    rel = float((c - ref).norm() / ref.norm().clamp_min(1e-30))
    ok = bool(torch.isfinite(c).all()) and rel <= 1e-2
    print(f"{label} {'PASS' if ok else 'FAIL'} rel err {rel:.2e}")
    return ok


def epilogue(work, quick):
    """examples/gemm_epilogue.cute: C = gelu(A * B^T + bias) against float32 torch on the same inputs, then
    timed against torch's addmm followed by gelu (bf16, the same run) and against gemm_sm90 (the plain GEMM)."""
    ok_all = True
    print("== gemm_epilogue.cute: bias + GELU (tanh) fused into the scheduled GEMM's epilogue")
    # The example (f32 bias), and the same with a bf16 bias read into the f32 epilogue.
    shapes = [(128, 256, 64), (1000, 776, 336), (129, 264, 72), (300, 512, 136), (2048, 2048, 2048)]
    for module, m, n, k in [(mod, *s) for mod in ("gemm_epilogue", "gemm_epilogue_bf16bias") for s in shapes]:
        ok_all &= gelu_case(work, module, "gemm_bias_gelu", m, n, k, f"{f'{m}x{n}x{k}':>18} {module:<24}")
    if quick:
        return ok_all
    print(f"{'M x N x K':>18} {'fused ms':>9} {'plain ms':>9} {'fused/plain':>11} {'torch ms':>9} {'torch/fused':>11}")
    for m, n, k in [(4096, 4096, 4096), (8192, 8192, 8192), (8192, 8192, 2048)]:
        dims = {"M": m, "N": n, "K": k}
        rc1, out1, b1 = run("gemm_epilogue.ptx", "gemm_bias_gelu", dims, bench=True, iters=20)
        rc2, out2, b2 = run("gemm_sm90.ptx", "gemm", dims, bench=True, iters=20)
        if rc1 != 0 or rc2 != 0:
            print(f"{f'{m}x{n}x{k}':>18} FAIL cutec run failed:\n{out1}{out2}")
            ok_all = False
            continue
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
        bias = torch.randn(n, device="cuda", dtype=torch.bfloat16)
        tms = median_ms(lambda: torch.nn.functional.gelu(torch.addmm(bias, a, b.T), approximate="tanh"))
        f, p = float(b1["median_ms"]), float(b2["median_ms"])
        print(f"{f'{m}x{n}x{k}':>18} {f:>9.4f} {p:>9.4f} {f / p:>11.3f} {tms:>9.4f} {tms / f:>11.3f}")
        del a, b, bias
    print("(medians of 20 launches, CUDA events; torch = addmm then gelu in bf16, the same run)")
    return ok_all


def reduction(work, quick):
    """examples/row_sum.cute, a pipelined loop that is not a GEMM: against float64 sums of the same inputs, then
    its read bandwidth against the device's copy bandwidth (torch's clone: read + write bytes over time) and
    torch's x.sum(1), the same run."""
    ok_all = True
    print("== row_sum.cute: y = x.sum(1), its tiles brought by a 4-stage TMA ring")
    for m, n in [(32, 256), (1000, 1000), (77, 5000), (4096, 40), (3, 260)]:
        rc, out, _, t = run_read(work, "row_sum.ptx", "row_sum", {"M": m, "N": n}, ("x",), "y")
        if rc != 0:
            print(f"{f'{m}x{n}':>14} FAIL cutec run failed:\n{out}")
            ok_all = False
            continue
        ref = t["x"].double().sum(1)
        err = float((t["y"].double() - ref).abs().max() / ref.abs().max().clamp_min(1e-30))
        ok = bool(torch.isfinite(t["y"]).all()) and err <= 1e-5
        ok_all &= ok
        print(f"{f'{m}x{n}':>14} {'PASS' if ok else 'FAIL'} max rel err {err:.2e}")
    if quick:
        return ok_all
    print(f"{'M x N':>14} {'ms':>8} {'GB/s':>8} {'copy GB/s':>10} {'of copy':>8} {'torch ms':>9} {'torch/ours':>10}")
    for m, n in [(16384, 16384), (8192, 65536), (131072, 1024)]:
        rc, out, b = run("row_sum.ptx", "row_sum", {"M": m, "N": n}, bench=True, iters=20)
        if rc != 0:
            print(f"{f'{m}x{n}':>14} FAIL cutec run failed:\n{out}")
            ok_all = False
            continue
        x = torch.randn(m, n, device="cuda")
        copy_ms = median_ms(lambda: x.clone())
        torch_ms = median_ms(lambda: x.sum(1))
        ms = float(b["median_ms"])
        gbs, copy_gbs = m * n * 4 / ms / 1e6, 2 * m * n * 4 / copy_ms / 1e6
        print(f"{f'{m}x{n}':>14} {ms:>8.4f} {gbs:>8.0f} {copy_gbs:>10.0f} {gbs / copy_gbs:>8.3f} {torch_ms:>9.4f} "
              f"{torch_ms / ms:>10.3f}")
        del x
    print("(medians of 20 launches, CUDA events; copy = torch clone, read + write bytes; the same run)")
    return ok_all


def batched(work, quick):
    """examples/gemm_batched.cute: C[i] = A[i] * B[i]^T with 3-D TMA boxes, against float32 torch.bmm of the same
    inputs, then timed against torch.bmm (cuBLAS) in the same run."""
    ok_all = True
    print("== gemm_batched.cute: the scheduled GEMM over a batch (block_idx.z), 3-D tensor maps")
    # The last: 256 tiles over 132 CTAs, so a CTA's tiles span matrices.
    for l, m, n, k in [(3, 1000, 776, 336), (2, 129, 264, 72), (4, 256, 512, 128), (1, 64, 8, 8),
                       (4, 1000, 2048, 200)]:
        rc, out, _, t = run_read(work, "gemm_batched.ptx", "gemm_batched", {"L": l, "M": m, "N": n, "K": k},
                                 ("a", "b"), "c")
        label = f"{f'{l}x{m}x{n}x{k}':>18}"
        if rc != 0:
            print(f"{label} FAIL cutec run failed:\n{out}")
            ok_all = False
            continue
        a, b, c = (t[x].float() for x in "abc")
        ref = torch.bmm(a, b.transpose(1, 2))
        rel = float((c - ref).norm() / ref.norm().clamp_min(1e-30))
        ok = bool(torch.isfinite(c).all()) and rel <= 1e-2 and tuple(c.shape) == (l, m, n)
        ok_all &= ok
        print(f"{label} {'PASS' if ok else 'FAIL'} rel err {rel:.2e}")
    if quick:
        return ok_all
    for l, m, n, k in [(8, 4096, 4096, 1024), (16, 2048, 2048, 2048)]:
        rc, out, b = run("gemm_batched.ptx", "gemm_batched", {"L": l, "M": m, "N": n, "K": k}, bench=True, iters=20)
        if rc != 0:
            print(f"FAIL cutec run failed:\n{out}")
            ok_all = False
            continue
        x = torch.randn(l, m, k, device="cuda", dtype=torch.bfloat16)
        y = torch.randn(l, n, k, device="cuda", dtype=torch.bfloat16)
        tms = median_ms(lambda: torch.bmm(x, y.transpose(1, 2)))
        ms, flop = float(b["median_ms"]), 2.0 * l * m * n * k
        print(f"{f'{l}x{m}x{n}x{k}':>18} {flop / ms / 1e9:.1f} TFLOP/s, torch.bmm {flop / tms / 1e9:.1f}: "
              f"{tms / ms:.3f} of it")
        del x, y
    return ok_all


def clusters(work, quick):
    """fp8: examples/gemm_fp8.cute (e4m3, persistent, clusters of 2 sharing B by multicast), against float32
    references of the same inputs; then timed in the same run as torch._scaled_mm and the hand-written kernel,
    beside the bf16 kernels (gemm_sm90 persistent and not, gemm_sm90_manual) and cuBLAS."""
    import fp8_check as f8
    ok_all = True
    print("== clusters of 2 CTAs sharing B by TMA multicast, scheduled")
    shapes = [(1000, 776, 336), (256, 512, 128), (129, 264, 96), (2048, 2048, 2048), (4096, 4096, 512)]
    print("   gemm_fp8 (e4m3, scales in the epilogue)")
    scale_a, scale_b = 0.5, 1.25
    for seed, (m, n, k) in enumerate(shapes):
        g = torch.Generator(device="cuda").manual_seed(seed)
        a = torch.randn(m, k, device="cuda", generator=g).to(f8.E4M3)
        b = torch.randn(n, k, device="cuda", generator=g).to(f8.E4M3)
        pa, pb, pc = (os.path.join(work, x) for x in ("a.npy", "b.npy", "c.npy"))
        f8.save_raw(pa, a, ml=False)
        f8.save_raw(pb, b, ml=False)
        rc, out, _ = f8.run("gemm_fp8.ptx", "gemm_fp8", inputs=[("a", pa), ("b", pb)], outputs=[("c", pc)],
                            scalars=[("scale_a", scale_a), ("scale_b", scale_b)])
        label = f"{f'{m}x{n}x{k}':>18}"
        if rc != 0:
            print(f"{label} FAIL cutec run failed:\n{out}")
            ok_all = False
            continue
        c = f8.load(pc).float()
        ref = (a.float() @ b.float().T) * (scale_a * scale_b)
        rel = float((c - ref).norm() / ref.norm().clamp_min(1e-30))
        ok = bool(torch.isfinite(c).all()) and rel <= 1e-2
        ok_all &= ok
        print(f"{label} {'PASS' if ok else 'FAIL'} rel err {rel:.2e}")
    if quick:
        return ok_all
    print(f"{'M x N x K':>18} {'sm90':>15} {'sm90_grid':>15} {'manual':>15} {'cuBLAS':>8} | {'fp8':>16} {'fp8_manual':>16} "
          f"{'_scaled_mm':>10}")
    for m, n, k in [(4096, 4096, 4096), (8192, 8192, 8192), (8192, 8192, 2048)]:
        flop = 2.0 * m * n * k
        t = {}
        for module, kernel in [("gemm_sm90", "gemm"), ("gemm_sm90_grid", "gemm"), ("gemm_sm90_manual", "gemm_sm90_manual")]:
            rc, out, b = run(module + ".ptx", kernel, {"M": m, "N": n, "K": k}, bench=True, iters=20)
            t[module] = float(b["median_ms"]) if rc == 0 else float("nan")
            ok_all &= rc == 0
        for module, kernel in [("gemm_fp8", "gemm_fp8"), ("gemm_fp8_manual", "gemm_fp8_manual")]:
            rc, out, b = f8.run(module + ".ptx", kernel, {"M": m, "N": n, "K": k}, bench=True,
                                scalars=[("scale_a", 1.0), ("scale_b", 1.0)])
            t[module] = float(b["median_ms"]) if rc == 0 else float("nan")
            ok_all &= rc == 0
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        bb = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
        cms = median_ms(lambda: torch.matmul(a, bb.T))
        a8, b8 = a.to(f8.E4M3), bb.to(f8.E4M3)
        one = torch.tensor(1.0, device="cuda")
        sms = median_ms(lambda: f8.scaled_mm(a8, b8, one, one))
        cell = lambda ms, ref: f"{flop / ms / 1e9:.1f} ({ref / ms:.3f})"
        print(f"{f'{m}x{n}x{k}':>18} {cell(t['gemm_sm90'], cms):>15} {cell(t['gemm_sm90_grid'], cms):>15} "
              f"{cell(t['gemm_sm90_manual'], cms):>15} {flop / cms / 1e9:>8.1f} | {cell(t['gemm_fp8'], sms):>16} "
              f"{cell(t['gemm_fp8_manual'], sms):>16} {flop / sms / 1e9:>10.1f}")
        del a, bb, a8, b8
    print("(TFLOP/s and the ratio to cuBLAS (bf16) or torch._scaled_mm with fast accumulation (fp8), same run)")
    return ok_all


def timing():
    ok_all = True
    torch.backends.cuda.matmul.allow_tf32 = False
    mods = [m[:3] for m in SCHEDULED] + [("gemm_sm90_manual", "gemm_sm90_manual", "by hand")]
    print("== TFLOP/s (ratio to cuBLAS); columns: " + ", ".join(m for m, _, _ in mods))
    print(f"{'M x N x K':>18}" + "".join(f"{m[:15]:>17}" for m, _, _ in mods) + f"{'cuBLAS':>9} {'sm90/manual':>11}")
    for m, n, k in [(4096, 4096, 4096), (8192, 8192, 8192), (8192, 8192, 2048), (1024, 8192, 8192)]:
        flop = 2.0 * m * n * k
        times = []
        for module, kernel, _ in mods:
            rc, out, bench = run(module + ".ptx", kernel, {"M": m, "N": n, "K": k}, bench=True, iters=20)
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
        cols = "".join(f"{f'{flop / t / 1e9:.1f} ({cms / t:.3f})':>17}" for t in times)
        print(f"{f'{m}x{n}x{k}':>18}{cols}{flop / cms / 1e9:>9.1f} {times[-1] / times[0]:>11.3f}")
        del a, b, c
    print("(medians of 20 launches with CUDA events; cuBLAS = torch.matmul bf16 in the same run)")
    return ok_all


def sanitize():
    print("== compute-sanitizer on the scheduled GEMMs, 300x512x136 (3 k-tiles: fewer than the 4 stages)")
    gemm = {"M": 300, "N": 512, "K": 136}
    cases = [(m + ".ptx", k, gemm) for m, k, _, _ in SCHEDULED]
    cases += [("gemm_epilogue.ptx", "gemm_bias_gelu", gemm), ("gemm_epilogue_bf16bias.ptx", "gemm_bias_gelu", gemm),
              ("row_sum.ptx", "row_sum", {"M": 77, "N": 2000}),
              # Two tiles of scales copied beside the pipelined loop (rows of e4m3 A: K a multiple of 16).
              ("gemm_fp8_rowwise.ptx", "gemm_fp8_rowwise", {"M": 300, "N": 512, "K": 144}),
              # The epilogue in pieces (a 4-stage ring): one staging tile per warpgroup written twice per output
              # tile; at 4096 x 4096, two tiles per CTA.
              ("gemm_fp8.ptx", "gemm_fp8", {"M": 300, "N": 512, "K": 144}, {"scale_a": 0.5, "scale_b": 2.0}),
              ("gemm_fp8.ptx", "gemm_fp8", {"M": 4096, "N": 4096, "K": 128}, {"scale_a": 0.5, "scale_b": 2.0}),
              # gemm_sm90's pieces with several tiles per CTA, and the whole tile staged once per output tile
              # (3 stages).
              ("gemm_sm90.ptx", "gemm", {"M": 4096, "N": 4096, "K": 128}),
              ("gemm_sm90_s3.ptx", "gemm", gemm)]
    return sanitizer_runs(cases, width=22)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="correctness only")
    ap.add_argument("--sanitize", action="store_true")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="cutec-sched-", dir=GPU)
    ok = correctness(work)
    ok &= epilogue(work, args.quick)
    ok &= reduction(work, args.quick)
    ok &= batched(work, args.quick)
    ok &= clusters(work, args.quick)
    if not args.quick:
        ok &= timing()
    if args.sanitize:
        ok &= sanitize()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

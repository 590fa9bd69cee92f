#!/usr/bin/env python3
"""What the schedule-entities work changed on the GPU (issue 32), in one run:

1. wgmma_generic_tiles.cute: a GEMM whose threads write its tiles with generic stores, fenced, read by wgmma;
   `complete-wgmma` now waits for the group before the next k-tile's stores into the tiles it reads. Checked
   against float32 A * B^T of the same bf16 inputs, with the module the previous compiler made of the same source
   (`wgmma_generic_tiles_base`, which waits only after the loop) beside it, several launches each: the previous
   one may race, the new one must not.
2. ws_ring_sum.cute: a warp-specialized ring without wgmma (the previous compiler refused it with E0341 about its
   own barriers): y[r, c] = sum over k of x[r, 64 k + c], against float64 sums, then compute-sanitizer.
3. gemm_epilogue.cute with a fourth stage (`gemm_epilogue_s4`): the whole staging tile does not fit beside the
   ring, so the consumer warpgroups apply `map` to their pieces (the previous compiler refused it, E0324):
   against torch, then timed against the 3-stage default (the spare warps apply `map`) and torch's addmm + gelu.
4. gemm_ws_plain.cute, the plain warp-specialized loop without `persistent` or clusters, whose CTAs the
   compiler now rasterizes in groups of 8 rows: against torch, then timed against the previous compiler's
   module and cuBLAS; and the small-M kernels the raster touches (gemm_swap_ab, gemm_direct) against theirs.
5. book/listings/cluster_row_sum.cute, the book's sum of a row by the 4 CTAs of a cluster, against float64.
6. gemm_two_loops.cute: two pipelined loops in one warp-specialized kernel, C = 2 A B^T, against float32.
8. `--placement`: ws_every_thread.cute, the plain warp-specialized loop with stores every thread runs before and
   after it (e = 1, d = 2 x + 1, one row of 384 per tile): every element of d and e written (they are poisoned
   with NaN before the launch) and C right, with the previous compiler's module (`ws_every_thread_base`, whose
   producer warpgroup skipped them) beside it, which must leave threads 0..127's elements unwritten.
7. row_sum.cute, whose stages are now released through `elect.sync`: its read bandwidth against the module the
   previous compiler made (`row_sum_base`, lane 0 releasing) and the device's copy bandwidth, in interleaved
   rounds of the same run.

Run from scripts/gpu on the GPU machine after scripts/gpu/entities_build.sh filled $GPU_DIR:
    GPU_DIR=../../.gpu python3 entities_check.py
Exit status: 0 when every new module is correct and clean, 1 otherwise.
"""
import os
import statistics
import sys
import tempfile

import torch

from cuda_timing import median_ms
from hopper_check import GPU, gemm_case, load, run, run_read, sanitizer_runs
from schedule_check import gelu_case


def generic_tiles(work):
    ok_all = True
    print("== wgmma_generic_tiles.cute: tiles written by the threads, fenced, read by wgmma")
    shapes = [(64, 64, 64), (128, 192, 256), (1000, 776, 336), (129, 264, 72), (4096, 4096, 512)]
    for m, n, k in shapes:
        for module, label in (("wgmma_generic_tiles.ptx", "new"), ("wgmma_generic_tiles_base.ptx", "previous")):
            passed = 0
            for _ in range(3):
                passed += gemm_case(work, module, "gemm", m, n, k, label=f"{f'{m}x{n}x{k}':>18} {label:>8}")
            if label == "new":
                ok_all &= passed == 3
            print(f"{f'{m}x{n}x{k}':>18} {label:>8} {passed}/3 launches correct")
    return ok_all


def case(work, module, kernel, dims, inputs, output, got_and_ref, label, gemm=False):
    """One `cutec run` of `module` against a reference: `got_and_ref(tensors)` gives the output and the reference,
    compared by relative Frobenius error (<= 1e-2, bf16 GEMMs: `gemm`) or maximum relative error (<= 1e-5, f32
    sums); prints a line, gives whether it passed."""
    rc, out, _, t = run_read(work, module, kernel, dims, inputs, output)
    if rc != 0:
        print(f"{label} FAIL cutec run failed:\n{out}")
        return False
    got, ref = got_and_ref(t)
    if gemm:
        err, what, tol = float((got - ref).norm() / ref.norm().clamp_min(1e-30)), "rel err", 1e-2
    else:
        err, what, tol = float((got - ref).abs().max() / ref.abs().max().clamp_min(1e-30)), "max rel err", 1e-5
    ok = bool(torch.isfinite(got).all()) and err <= tol
    print(f"{label} {'PASS' if ok else 'FAIL'} {what} {err:.2e}")
    return ok


def ring_sum(work):
    ok_all = True
    print("== ws_ring_sum.cute: a warp-specialized ring without wgmma, y[r, c] = sum_k x[r, 64 k + c]")
    for m, k in [(64, 64), (64, 192), (1000, 1000), (77, 5000), (4096, 4096)]:
        def sums(t, m=m, k=k):
            ref = torch.nn.functional.pad(t["x"].double(), (0, (-k) % 64)).reshape(m, -1, 64).sum(1)
            return t["y"].double(), ref
        ok_all &= case(work, "ws_ring_sum.ptx", "ring_sum", {"M": m, "K": k}, ("x",), "y", sums, f"{f'{m}x{k}':>12}")
    return ok_all


def epilogue_s4(work, rounds=3):
    ok_all = True
    print("== gemm_epilogue.cute -D STAGES=4: bias + GELU applied by the consumers to their pieces")
    for m, n, k in [(128, 256, 64), (1000, 776, 336), (129, 264, 72), (300, 512, 136), (2048, 2048, 2048)]:
        ok_all &= gelu_case(work, "gemm_epilogue_s4", "gemm_bias_gelu", m, n, k, f"{f'{m}x{n}x{k}':>18} 4 stages")
    print(f"{'M x N x K':>18} {'4 st. ms':>9} {'3 st. ms':>9} {'4/3':>7} {'torch ms':>9} {'torch/4':>8}")
    for m, n, k in [(4096, 4096, 4096), (8192, 8192, 2048)]:
        dims = {"M": m, "N": n, "K": k}
        times = {"gemm_epilogue_s4.ptx": [], "gemm_epilogue.ptx": []}
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
        bias = torch.randn(n, device="cuda", dtype=torch.bfloat16)
        torch_ms = []
        for r in range(rounds):
            for module in (list(times) if r % 2 == 0 else list(reversed(times))):
                rc, out, bench = run(module, "gemm_bias_gelu", dims, bench=True, iters=20)
                if rc != 0:
                    print(f"{f'{m}x{n}x{k}':>18} FAIL {module}:\n{out}")
                    ok_all = False
                    break
                times[module].append(float(bench["median_ms"]))
            torch_ms.append(median_ms(lambda: torch.nn.functional.gelu(torch.addmm(bias, a, b.T), approximate="tanh")))
        del a, b, bias
        if not all(times.values()):
            continue
        s4, s3 = (statistics.median(times[x]) for x in ("gemm_epilogue_s4.ptx", "gemm_epilogue.ptx"))
        t = statistics.median(torch_ms)
        print(f"{f'{m}x{n}x{k}':>18} {s4:>9.4f} {s3:>9.4f} {s4 / s3:>7.3f} {t:>9.4f} {t / s4:>8.3f}")
    print(f"(medians over {rounds} interleaved rounds of medians of 20 launches; torch = addmm then gelu, bf16)")
    return ok_all


def interleaved(cases, dims, rounds, anchor=None):
    """Medians over `rounds` interleaved rounds of each (module, kernel)'s `cutec run --bench` median, and of
    `anchor` (a torch callable) if given; None for a module that failed."""
    times = {c: [] for c in cases}
    anchor_ms = []
    for r in range(rounds):
        for case in (cases if r % 2 == 0 else list(reversed(cases))):
            rc, out, b = run(case[0], case[1], dims, bench=True, iters=20)
            if rc != 0:
                print(f"FAIL {case[0]} {dims}:\n{out}")
                times[case] = None
            elif times[case] is not None:
                times[case].append(float(b["median_ms"]))
        if anchor is not None:
            anchor_ms.append(median_ms(anchor))
    med = {c: (statistics.median(t) if t else None) for c, t in times.items()}
    return med, (statistics.median(anchor_ms) if anchor_ms else None)


def swap_ab_case(work, module, m, n, k):
    """gemm_swap_ab's C^T (N x M, column-major: C's memory) against float32 A * B^T."""
    def product(t):
        ct = t["ct"].float()
        c = ct.T if tuple(ct.shape) == (n, m) else ct.reshape(m, n)
        return c, t["a"].float() @ t["b"].float().T
    label = f"{'gemm_swap_ab':>14} {f'{m}x{n}x{k}':>16}"
    return case(work, module, "gemm_swap_ab", {"M": m, "N": n, "K": k}, ("a", "b"), "ct", product, label, gemm=True)


def raster(work, rounds=3):
    ok_all = True
    print("== gemm_ws_plain.cute: the plain warp-specialized loop (128 x 128, 4 stages), as the compiler schedules it")
    for m, n, k in [(128, 128, 64), (1000, 776, 336), (129, 264, 72), (3000, 5000, 200), (4096, 4096, 512)]:
        ok_all &= gemm_case(work, "gemm_ws_plain.ptx", "gemm", m, n, k)
    print(f"{'M x N x K':>20} {'new TF/s':>13} {'previous':>9} {'cuBLAS':>8} {'new/cuBLAS':>15} "
          f"{'previous/cuBLAS':>16}")
    for m, n, k in [(16384, 4096, 4096), (4096, 4096, 4096), (8192, 8192, 8192), (8192, 8192, 2048)]:
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
        cases = [("gemm_ws_plain.ptx", "gemm"), ("gemm_ws_plain_base.ptx", "gemm")]
        med, cublas = interleaved(cases, {"M": m, "N": n, "K": k}, rounds, lambda: a @ b.T)
        del a, b
        if None in med.values():
            ok_all = False
            continue
        flop = 2 * m * n * k
        new, prev = (med[c] for c in cases)
        tf = lambda ms: flop / ms / 1e9
        print(f"{f'{m}x{n}x{k}':>20} {tf(new):>13.1f} {tf(prev):>9.1f} {tf(cublas):>8.1f} {cublas / new:>15.3f} "
              f"{cublas / prev:>16.3f}")
    print("== small M: the kernels whose CTAs take the grouped order, correctness, then against the previous modules")
    for m, n, k in [(16, 8192, 1024), (1, 264, 72), (33, 1000, 336), (32, 4096, 512)]:
        ok_all &= swap_ab_case(work, "gemm_swap_ab.ptx", m, n, k)
    for m, n, k in [(128, 8192, 1024), (1000, 776, 336), (129, 264, 72), (256, 4096, 512)]:
        ok_all &= gemm_case(work, "gemm_splitk.ptx", "gemm_direct", m, n, k)
    print(f"{'kernel':>14} {'M x N x K':>16} {'new ms':>8} {'prev ms':>8} {'new/prev':>9}")
    for module, kernel, (m, n, k) in [("gemm_swap_ab", "gemm_swap_ab", (16, 8192, 8192)),
                                      ("gemm_swap_ab", "gemm_swap_ab", (32, 4096, 8192)),
                                      ("gemm_splitk", "gemm_direct", (128, 8192, 8192)),
                                      ("gemm_splitk", "gemm_direct", (256, 4096, 4096))]:
        cases = [(module + ".ptx", kernel), (module + "_base.ptx", kernel)]
        med, _ = interleaved(cases, {"M": m, "N": n, "K": k}, rounds)
        if None in med.values():
            ok_all = False
            continue
        new, prev = (med[c] for c in cases)
        print(f"{kernel:>14} {f'{m}x{n}x{k}':>16} {new:>8.4f} {prev:>8.4f} {new / prev:>9.3f}")
    print(f"(medians over {rounds} interleaved rounds of medians of 20 launches, CUDA events; cuBLAS = torch "
          "a @ b.T, bf16, the same rounds)")
    return ok_all


def cluster_row_sum(work):
    ok_all = True
    print("== cluster_row_sum.cute (the book): y = x.sum(1), each row by the 4 CTAs of a cluster")
    for m in [1, 2, 77, 1000]:
        def sums(t):
            return t["y"].double(), t["x"].double().sum(1)
        ok_all &= case(work, "cluster_row_sum.ptx", "cluster_row_sum", {"M": m}, ("x",), "y", sums, f"{m:>6}")
    return ok_all


def two_loops(work):
    ok_all = True
    print("== gemm_two_loops.cute: two pipelined loops, a ring each, C = 2 A B^T")
    for m, n, k in [(128, 128, 64), (1000, 776, 336), (129, 264, 72), (4096, 4096, 512)]:
        def twice(t):
            return t["c"].float(), 2 * (t["a"].float() @ t["b"].float().T)
        dims = {"M": m, "N": n, "K": k}
        ok_all &= case(work, "gemm_two_loops.ptx", "gemm", dims, ("a", "b"), "c", twice, f"{f'{m}x{n}x{k}':>18}", True)
    return ok_all


def row_sum_timing(rounds=3):
    print("== row_sum.cute: stages released through elect.sync (new) or by lane 0 (previous), interleaved rounds")
    print(f"{'M x N':>14} {'new ms':>8} {'prev ms':>8} {'new/prev':>9} {'new GB/s':>9} {'copy GB/s':>10} {'of copy':>8}")
    ok_all = True
    for m, n in [(16384, 16384), (8192, 65536), (131072, 1024)]:
        times = {"row_sum.ptx": [], "row_sum_base.ptx": []}
        copies = []
        x = torch.randn(m, n, device="cuda")
        for r in range(rounds):
            order = list(times) if r % 2 == 0 else list(reversed(times))
            for module in order:
                rc, out, b = run(module, "row_sum", {"M": m, "N": n}, bench=True, iters=20)
                if rc != 0:
                    print(f"{f'{m}x{n}':>14} FAIL {module}: cutec run failed:\n{out}")
                    ok_all = False
                    break
                times[module].append(float(b["median_ms"]))
            copies.append(median_ms(lambda: x.clone()))
        del x
        if not all(times.values()):
            continue
        new, prev = (statistics.median(times[k]) for k in ("row_sum.ptx", "row_sum_base.ptx"))
        copy_ms = statistics.median(copies)
        gbs, copy_gbs = m * n * 4 / new / 1e6, 2 * m * n * 4 / copy_ms / 1e6
        print(f"{f'{m}x{n}':>14} {new:>8.4f} {prev:>8.4f} {new / prev:>9.3f} {gbs:>9.0f} {copy_gbs:>10.0f} "
              f"{gbs / copy_gbs:>8.3f}")
    print(f"(medians over {rounds} rounds of medians of 20 launches, CUDA events; copy = torch clone, read + write)")
    return ok_all


def persistent_against_grouped(rounds=3):
    """`--persistent`: the plain loop in grouped order against the same loop with `persistent(raster =
    grouped(8))` (gemm_ws_plain_persistent, built from it by adding the attribute) and cuBLAS."""
    print("== gemm_ws_plain: grouped order (not persistent) against persistent(raster = grouped(8)), H100/H200")
    print(f"{'M x N x K':>20} {'grouped/cuBLAS':>15} {'persistent/cuBLAS':>18}")
    for m, n, k in [(16384, 4096, 4096), (4096, 4096, 4096), (8192, 8192, 8192), (8192, 8192, 2048)]:
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
        cases = [("gemm_ws_plain.ptx", "gemm"), ("gemm_ws_plain_persistent.ptx", "gemm")]
        med, cublas = interleaved(cases, {"M": m, "N": n, "K": k}, rounds, lambda: a @ b.T)
        del a, b
        if None in med.values():
            continue
        g, p = (med[c] for c in cases)
        print(f"{f'{m}x{n}x{k}':>20} {cublas / g:>15.3f} {cublas / p:>18.3f}")
    return True


def placement(work):
    """`--placement` (8 above): gives whether the new module is right on every shape (the previous one is only
    reported)."""
    ok_all = True
    print("== ws_every_thread.cute: stores every thread runs beside a warp-specialized loop (threads 0..127 too)")
    for m, n, k in [(128, 128, 64), (1000, 776, 336), (129, 264, 72), (4096, 4096, 512)]:
        tiles = -(-m // 128) * -(-n // 128)
        for module, label in (("ws_every_thread.ptx", "new"), ("ws_every_thread_base.ptx", "previous")):
            paths = {x: os.path.join(work, f"{x}.npy") for x in "abcxde"}
            rc, out, _ = run(module, "gemm", {"M": m, "N": n, "K": k, "T": tiles},
                             saves=[(x, paths[x]) for x in "abx"], outputs=[(x, paths[x]) for x in "cde"])
            line = f"{f'{m}x{n}x{k}':>16} {label:>8}"
            if rc != 0:
                print(f"{line} FAIL cutec run failed:\n{out}")
                ok_all &= label != "new"
                continue
            t = {x: load(paths[x]) for x in "abcxde"}
            ref = t["a"].float() @ t["b"].float().T
            rel = float((t["c"].float() - ref).norm() / ref.norm().clamp_min(1e-30))
            want_d = (2 * t["x"] + 1).expand(tiles, 384)
            d_ok = bool(torch.equal(t["d"], want_d))
            e_ok = bool(torch.equal(t["e"], torch.ones_like(t["e"])))
            unwritten = int(torch.isnan(t["d"]).sum()) + int(torch.isnan(t["e"]).sum())
            ok = rel <= 1e-2 and d_ok and e_ok
            if label == "new":
                ok_all &= ok
            print(f"{line} {'PASS' if ok else 'WRONG'} C rel err {rel:.2e}, d {'right' if d_ok else 'wrong'}, "
                  f"e {'right' if e_ok else 'wrong'}, {unwritten} of {2 * tiles * 384} elements unwritten")
            for p in paths.values():
                if os.path.exists(p):
                    os.remove(p)
    return ok_all


def main():
    if "--placement" in sys.argv:
        work = tempfile.mkdtemp(prefix="cutec-entities-", dir=GPU)
        return 0 if placement(work) else 1
    if "--persistent" in sys.argv:
        return 0 if persistent_against_grouped() else 1
    if "--raster" in sys.argv:
        # The schedules the compiler chooses for plain warp-specialized loops, alone.
        work = tempfile.mkdtemp(prefix="cutec-entities-", dir=GPU)
        return 0 if raster(work, rounds=2) & two_loops(work) else 1
    work = tempfile.mkdtemp(prefix="cutec-entities-", dir=GPU)
    ok = generic_tiles(work)
    ok &= ring_sum(work)
    print("== compute-sanitizer on the new modules")
    ok &= sanitizer_runs([("ws_ring_sum.ptx", "ring_sum", {"M": 200, "K": 1000}),
                          ("wgmma_generic_tiles.ptx", "gemm", {"M": 129, "N": 264, "K": 200}),
                          ("row_sum.ptx", "row_sum", {"M": 77, "N": 2000})], width=24)
    ok &= cluster_row_sum(work)
    ok &= two_loops(work)
    ok &= epilogue_s4(work)
    ok &= raster(work)
    ok &= row_sum_timing()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

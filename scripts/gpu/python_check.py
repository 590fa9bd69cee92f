#!/usr/bin/env python3
"""cutec from Python on the GPU: every example launched on torch tensors against a torch reference, refusals on
real tensors, the torch custom op (eager and under torch.compile(fullgraph=True)), host overhead per call against
a Triton kernel launch in the same process, and import + compile + first launch (compile-cache miss and hit, each
in a fresh process) against Triton's first call of a softmax.

Run on the GPU machine with the cutec wheel installed (or on PYTHONPATH):
  python3 scripts/gpu/python_check.py [--only examples|refusals|op|overhead|startup]
Prints one line per check; exits 1 if a check failed.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import traceback

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EX = os.path.join(ROOT, "examples")
FAILED = []


def report(name, ok, detail=""):
    print(f"{'PASS' if ok else 'FAIL'}  {name:<44} {detail}", flush=True)
    if not ok:
        FAILED.append(name)


def close(got, want, tol):
    err = (got.float() - want.float()).abs().max().item()
    scale = want.float().abs().max().item() or 1.0
    return err / scale <= tol, f"max rel err {err / scale:.2e}"


def ex(name):
    return os.path.join(EX, name + ".cute")


def examples():
    import cutec

    dev = "cuda"
    torch.manual_seed(0)

    def case(name, fn):
        try:
            ok, detail = fn()
            report(f"example {name}", ok, detail)
        except Exception as e:  # one broken case must not hide the others
            report(f"example {name}", False, f"{type(e).__name__}: {e}")
            traceback.print_exc()

    def copy_like(file, n):
        k = cutec.compile(ex(file))
        x = torch.randn(n, device=dev)
        y = torch.full_like(x, float("nan"))
        k(x, y)
        return close(y, x, 0)

    case("copy", lambda: copy_like("copy", 1 << 24))
    case("grid_copy", lambda: copy_like("grid_copy", (1 << 24) + 7))

    def softmax(file):
        k = cutec.compile(ex(file), defines={"N": 4096})
        x = torch.randn(8192, 4096, device=dev)
        outs = k.empty_outputs(x)
        k(x, **outs)
        return close(outs["y"], torch.softmax(x, -1), 1e-5)

    case("softmax", lambda: softmax("softmax"))
    case("softmax_warp", lambda: softmax("softmax_warp"))

    def rmsnorm():
        k = cutec.compile(ex("rmsnorm"), defines={"N": 4096})
        x = torch.randn(4096, 4096, device=dev, dtype=torch.bfloat16)
        w = torch.randn(4096, device=dev, dtype=torch.bfloat16)
        y = torch.empty_like(x)
        k(x, w, y, eps=1e-6)  # the scalar by name
        xf = x.float()
        ref = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6) * w.float()
        return close(y, ref, 2e-2)

    case("rmsnorm", rmsnorm)

    def gemm_simt():
        k = cutec.compile(ex("gemm_simt"))
        a = torch.randn(1000, 333, device=dev)
        b = torch.randn(777, 333, device=dev)
        c = torch.empty(1000, 777, device=dev)
        k(a, b, c)
        return close(c, a @ b.T, 1e-4)

    case("gemm_simt", gemm_simt)

    def transpose():
        k = cutec.compile(ex("transpose"))
        x = torch.randn(3000, 1000, device=dev)
        y = k.empty_outputs(x)["y"]
        k(x, y)
        return close(y, x.T, 0)

    case("transpose", transpose)

    def tma_copy():
        k = cutec.compile(ex("tma_copy"))
        x = torch.randn(4096, 4100, device=dev)[:, :4096]  # a row stride that is not the width: TMA's strides
        y = torch.empty(4096, 4096, device=dev)
        try:
            k(x, y)
            return False, "a row stride of 4100 was accepted for layout (M,N):(N,1)"
        except cutec.LaunchError as e:
            if e.param != "y" and e.param != "x":
                return False, f"refusal named {e.param}: {e}"
        x = x.contiguous()
        k(x, y)
        return close(y, x, 0)

    case("tma_copy", tma_copy)

    def tma_copy_batched():
        k = cutec.compile(ex("tma_copy_batched"))
        x = torch.randn(3, 1000, 1024, device=dev)
        y = torch.empty_like(x)
        k(x, y)
        return close(y, x, 0)

    case("tma_copy_batched", tma_copy_batched)

    def dsmem():
        k = cutec.compile(ex("dsmem_exchange"))
        x = torch.randn(64, 1024, device=dev)
        y = torch.empty_like(x)
        k(x, y)
        idx = torch.arange(64, device=dev) ^ 1
        return close(y, x + x[idx], 1e-6)

    case("dsmem_exchange", dsmem)

    def wgmma(file, kn):
        k = cutec.compile(ex(file))
        m, n, kk = 2048, 1024, 512
        a = torch.randn(m, kk, device=dev, dtype=torch.bfloat16)
        b = torch.randn(kk, n, device=dev, dtype=torch.bfloat16) if kn else torch.randn(n, kk, device=dev, dtype=torch.bfloat16)
        c = torch.empty(m, n, device=dev, dtype=torch.bfloat16)
        k(a, b, c)
        ref = a.float() @ (b.float() if kn else b.float().T)
        return close(c, ref, 1e-2)

    case("gemm_sm90_kn", lambda: wgmma("gemm_sm90_kn", True))
    case("wgmma_rs", lambda: wgmma("wgmma_rs", False))

    def gemm_manual():
        k = cutec.compile(ex("gemm_sm90_manual"))
        m = n = kk = 4096
        a = torch.randn(m, kk, device=dev, dtype=torch.bfloat16)
        b = torch.randn(n, kk, device=dev, dtype=torch.bfloat16)
        c = k.empty_outputs(a, b)["c"]
        k(a, b, c)
        ok, detail = close(c, a.float() @ b.float().T, 1e-2)
        # Time against cuBLAS (torch) in the same process: CUDA events around 20 launches each, after warm-up.
        def t(fn):
            for _ in range(3):
                fn()
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            for _ in range(20):
                fn()
            e.record()
            torch.cuda.synchronize()
            return s.elapsed_time(e) / 20
        ours, cublas = t(lambda: k(a, b, c)), t(lambda: a @ b.T)
        tflops = 2 * m * n * kk / ours / 1e9
        return ok, f"{detail}; 4096^3 {ours * 1e3:.0f} us ({tflops:.0f} TFLOP/s), {cublas / ours:.3f} of cuBLAS"

    case("gemm_sm90_manual", gemm_manual)

    # The persistent scheduled GEMMs: the runtime sizes the grid from the SM count at launch, from Python too.
    # Outputs poisoned with NaN; a ragged shape and one with several tiles per CTA.
    def scheduled(file, m, n, kk):
        k = cutec.compile(ex(file))
        a = torch.randn(m, kk, device=dev, dtype=torch.bfloat16)
        b = torch.randn(n, kk, device=dev, dtype=torch.bfloat16)
        c = torch.full((m, n), float("nan"), device=dev, dtype=torch.bfloat16)
        k(a, b, c)
        return close(c, a.float() @ b.float().T, 1e-2)

    for file in ("gemm_sm90", "gemm_pipelined"):
        for m, n, kk in ((1000, 776, 336), (4096, 4096, 256)):
            case(f"{file} {m}x{n}x{kk}", lambda f=file, m=m, n=n, kk=kk: scheduled(f, m, n, kk))
    torch.cuda.synchronize()


def refusals():
    import cutec

    k = cutec.compile(ex("softmax"), defines={"N": 4096})
    x = torch.randn(64, 4096, device="cuda")
    y = torch.empty_like(x)
    cases = [
        ("cpu tensor", (x.cpu(), y), "x"),
        ("dtype", (x.half(), y), "x"),
        ("width", (x[:, :2048], y[:, :2048]), "x"),
        ("rows disagree", (x, y[:32]), "y"),
        ("transposed", (x, torch.empty(4096, 64, device="cuda").T), "y"),
        ("misaligned", (x.view(-1)[1 : 1 + 63 * 4096].view(63, 4096), y[:63]), "x"),
        ("scalar for tensor", (x, 1.0), "y"),
    ]
    for what, args, param in cases:
        try:
            k(*args)
            torch.cuda.synchronize()
            report(f"refusal {what}", False, "launched")
        except cutec.LaunchError as e:
            report(f"refusal {what}", e.param == param, f"param={e.param}: {e}")
    # The same kernel still launches after refusals.
    k(x, y)
    ok, d = close(y, torch.softmax(x, -1), 1e-5)
    report("launch after refusals", ok, d)
    # A side stream: the kernel runs on torch's current stream.
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        y2 = torch.empty_like(x)
        k(x, y2)
    s.synchronize()
    ok, d = close(y2, torch.softmax(x, -1), 1e-5)
    report("launch on a side stream", ok, d)


def op():
    import cutec

    k = cutec.compile(ex("softmax"), defines={"N": 4096})
    sm = k.torch_op()
    x = torch.randn(1024, 4096, device="cuda")
    ok, d = close(sm(x), torch.softmax(x, -1), 1e-5)
    report("torch op eager", ok, d)

    rms = cutec.compile(ex("rmsnorm"), defines={"N": 4096}).torch_op()

    def f(x, w):
        return rms(sm(x * 2.0).to(torch.bfloat16), w, 1e-6).float() + 1.0

    w = torch.randn(4096, device="cuda", dtype=torch.bfloat16)
    try:
        cf = torch.compile(f, fullgraph=True)
        got = cf(x, w)
        ok, d = close(got, f(x, w), 1e-2)
        report("torch op under torch.compile(fullgraph)", ok, d)
    except Exception as e:
        report("torch op under torch.compile(fullgraph)", False, f"{type(e).__name__}: {str(e)[:400]}")
        traceback.print_exc()

    def attempt(name, fn):
        try:
            ok, d = fn()
            report(name, ok, d)
        except Exception as e:
            report(name, False, f"{type(e).__name__}: {str(e)[:400]}")
            traceback.print_exc()

    # A one-mode output, a dimension no input binds (by keyword), names the schema cannot take, under torch.compile.
    copy = cutec.compile(ex("copy")).torch_op("cutec_check::copy")
    v = torch.randn(100003, device="cuda")
    attempt("torch op: one-mode output", lambda: (bool(torch.equal(copy(v), v)), ""))
    fill = cutec.compile(
        """kernel fill(y: Tensor<f32, N:1, gmem>, v: f32) launch(grid = (ceil_div(N, 256)), block = (256)) {
            let i = block_idx.x * 256 + thread_idx.x;
            if i < N { y[i] = v; }
        }"""
    ).torch_op("cutec_check::fill")
    attempt("torch op: dims by keyword", lambda: (bool(torch.equal(fill(2.5, N=777), torch.full((777,), 2.5, device="cuda"))), ""))
    names = cutec.compile(
        """kernel names(from: Tensor<f32, N:1, gmem>, lambda: Tensor<f32, N:1, gmem>, None: f32, _result: i32,
            outs: Tensor<f32, N:1, gmem>) launch(grid = (ceil_div(N, 256)), block = (256)) {
            let i = block_idx.x * 256 + thread_idx.x;
            if i < N && _result > 0 { outs[i] = from[i] * None; lambda[i] = lambda[i] + 1.0; }
        }"""
    ).torch_op("cutec_check::names")

    def odd_names():
        a, b = torch.randn(4096, device="cuda"), torch.zeros(4096, device="cuda")
        got = torch.compile(lambda a, b: names(a, b, 3.0, 1) + 1.0, fullgraph=True)(a, b)
        return bool(torch.allclose(got, a * 3.0 + 1.0) and torch.equal(b, torch.ones_like(b))), "mutated input written"

    attempt("torch op: odd names under torch.compile", odd_names)

    def refuses_in_trace():
        try:
            torch.compile(lambda x: sm(x.half()), fullgraph=True)(x)
        except Exception as e:
            return "expected dtype f32, got f16" in str(e), type(e).__name__
        return False, "traced a call the kernel refuses"

    attempt("torch op: the trace refuses a wrong dtype", refuses_in_trace)
    attempt("torch op: two names, two operators", lambda: (k.torch_op("cutec_check::a") is not k.torch_op("cutec_check::b"), ""))

    def fake_mode():
        from torch._subclasses.fake_tensor import FakeTensorMode

        with FakeTensorMode():
            y = sm(torch.empty(64, 4096, device="cuda"))
            return (tuple(y.shape), y.dtype, y.device.type) == ((64, 4096), torch.float32, "cuda"), "FakeTensorMode"

    attempt("torch op: fake tensors", fake_mode)


def host_us(fn, rounds=50, per_round=200):
    """Median host time of one call, in microseconds: rounds of back-to-back calls, the stream drained between
    rounds so that a full launch queue never makes the host wait."""
    samples = []
    for _ in range(rounds):
        torch.cuda.synchronize()
        t = time.perf_counter()
        for _ in range(per_round):
            fn()
        samples.append((time.perf_counter() - t) * 1e6 / per_round)
    torch.cuda.synchronize()
    samples.sort()
    return samples[len(samples) // 2]


def overhead():
    import cutec
    import triton
    import triton.language as tl

    @triton.jit
    def tcopy(x, y, n, BLOCK: tl.constexpr):
        i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(y + i, tl.load(x + i, mask=i < n), mask=i < n)

    n = 4096
    x = torch.randn(n, device="cuda")
    y = torch.empty_like(x)
    k = cutec.compile(ex("copy"))
    k(x, y)
    tcopy[(n // 1024,)](x, y, n, BLOCK=1024)
    torch.cuda.synchronize()
    native = k._native.launch
    args = (x, y)
    figures = {}
    # Interleaved rounds, so that drifts of the machine hit every path alike.
    for _ in range(3):
        figures.setdefault("triton", []).append(host_us(lambda: tcopy[(4,)](x, y, n, BLOCK=1024)))
        figures.setdefault("cutec", []).append(host_us(lambda: k(x, y)))
        figures.setdefault("cutec_kw", []).append(host_us(lambda: k(x=x, y=y)))
        figures.setdefault("cutec_native", []).append(host_us(lambda: native(args)))
        figures.setdefault("torch_copy_", []).append(host_us(lambda: y.copy_(x)))
    med = {key: sorted(v)[1] for key, v in figures.items()}
    t = med["triton"]
    for key, v in med.items():
        print(f"host overhead per call  {key:<14} {v:6.2f} us  ({v / t:.2f}x Triton's launch)")
    report("host overhead <= 1.0x Triton and <= 10 us", med["cutec"] <= t and med["cutec"] <= 10.0,
           f"cutec {med['cutec']:.2f} us, Triton {t:.2f} us, ratio {med['cutec'] / t:.2f}")
    # Correctness of the last launches.
    k(x, y)
    ok, d = close(y, x, 0)
    report("copy after the overhead loops", ok, d)
    return med


STARTUP = r"""
import json, os, sys, time
import torch
torch.cuda.init()
x = torch.randn(32, 4096, device="cuda"); y = torch.empty_like(x); torch.cuda.synchronize()
t0 = time.perf_counter()
import cutec
t1 = time.perf_counter()
k = cutec.compile(sys.argv[1], defines={"N": 4096})
t2 = time.perf_counter()
k(x, y); torch.cuda.synchronize()
t3 = time.perf_counter()
ok = bool(torch.allclose(y, torch.softmax(x, -1), atol=1e-6))
print(json.dumps({"import": t1 - t0, "compile": t2 - t1, "first_launch": t3 - t2, "total": t3 - t0, "hit": k.cache_hit, "ok": ok}))
"""

TRITON_STARTUP = r"""
import json, time
import torch
import triton, triton.language as tl
torch.cuda.init()
x = torch.randn(32, 4096, device="cuda"); y = torch.empty_like(x); torch.cuda.synchronize()
@triton.jit
def softmax(x, y, N: tl.constexpr):
    r = tl.program_id(0); i = tl.arange(0, N)
    v = tl.load(x + r * N + i); v = v - tl.max(v, 0); e = tl.exp(v)
    tl.store(y + r * N + i, e / tl.sum(e, 0))
t0 = time.perf_counter()
softmax[(32,)](x, y, N=4096); torch.cuda.synchronize()
t1 = time.perf_counter()
print(json.dumps({"first_call": t1 - t0, "ok": bool(torch.allclose(y, torch.softmax(x, -1), atol=1e-6))}))
"""


def startup():
    src = ex("softmax")
    with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as tcache:
        env = dict(os.environ, CUTEC_CACHE_DIR=cache, TRITON_CACHE_DIR=tcache, PYTHONUNBUFFERED="1")
        rows = []
        for label in ["miss", "hit", "hit"]:
            out = subprocess.run([sys.executable, "-c", STARTUP, src], env=env, capture_output=True, text=True)
            if out.returncode != 0:
                report(f"startup {label}", False, out.stderr[-2000:])
                return
            r = json.loads(out.stdout.strip().splitlines()[-1])
            rows.append((label, r))
            print(f"import+compile+first launch, cache {label}: total {r['total'] * 1e3:7.1f} ms "
                  f"(import {r['import'] * 1e3:.1f}, compile {r['compile'] * 1e3:.1f}, first launch "
                  f"{r['first_launch'] * 1e3:.1f}; from cache: {r['hit']}; correct: {r['ok']})", flush=True)
        tri = []
        for label in ["cold", "warm"]:
            # @triton.jit reads its function's source: the script must be a file.
            script = os.path.join(tcache, "triton_startup.py")
            with open(script, "w") as f:
                f.write(TRITON_STARTUP)
            out = subprocess.run([sys.executable, script], env=env, capture_output=True, text=True)
            if out.returncode != 0:
                print(f"triton {label}: failed: {out.stderr[-1500:]}")
                continue
            r = json.loads(out.stdout.strip().splitlines()[-1])
            tri.append(r["first_call"])
            print(f"Triton softmax first call, cache {label}: {r['first_call'] * 1e3:7.1f} ms (correct: {r['ok']})")
        miss, hit = rows[0][1], rows[1][1]
        report("startup miss <= 0.3 s", miss["total"] <= 0.3 and miss["ok"] and not miss["hit"], f"{miss['total'] * 1e3:.1f} ms")
        report("startup hit <= 50 ms", hit["total"] <= 0.05 and hit["ok"] and hit["hit"], f"{hit['total'] * 1e3:.1f} ms")
        if tri:
            print(f"ratios to Triton's first call (cold {tri[0] * 1e3:.0f} ms): miss {miss['total'] / tri[0]:.3f}, "
                  f"hit {hit['total'] / tri[0]:.3f}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", choices=["examples", "refusals", "op", "overhead", "startup"])
    a = ap.parse_args()
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}", flush=True)
    steps = {"startup": startup, "examples": examples, "refusals": refusals, "op": op, "overhead": overhead}
    for name, fn in steps.items():
        if a.only in (None, name):
            print(f"== {name}", flush=True)
            try:
                fn()
            except Exception as e:
                report(name, False, f"{type(e).__name__}: {e}")
                traceback.print_exc()
    print(f"{len(FAILED)} failed: {', '.join(FAILED)}" if FAILED else "all passed")
    sys.exit(1 if FAILED else 0)


if __name__ == "__main__":
    main()

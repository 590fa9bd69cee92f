#!/usr/bin/env python3
"""First-light comparison of cutec kernels against PyTorch on the GPU machine.

Run from the repository root (scripts/gpu/first_light.sh does) with:
  .gpu/cutec                      a release build of the compiler (its `run` subcommand)
  .gpu/<kernel>.ptx + .json       the module and manifest of each kernel; a shape-specialized pair
  .gpu/<kernel>_<N>.ptx + .json   (N = the last extent) is used instead when present, e.g. softmax_1024.

For every case it generates fresh random inputs (torch, seeded), runs `cutec run ... --bench` (which poisons
the output with NaN bytes before its first launch), checks the output against torch (max abs / max relative
error, NaN count), times the torch equivalent with CUDA events in the same run, and prints one table.
Timings are medians of per-launch CUDA event intervals; GB/s counts every tensor argument once (read + write).
Exit status: 0 when every case ran and matched, 1 otherwise.
"""

import argparse
import json
import math
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import List, Optional

import numpy as np
import torch


def cutec_command(cutec, module, manifest, kernel, x_name, x_path, y_name, y_path, seed, warmup, iters):
    """The `cutec run` command line. Keep in sync with the clap definition in compiler/driver/src/main.rs."""
    return [
        cutec, "run", module,
        "--manifest", manifest,
        "--kernel", kernel,
        "--input", f"{x_name}={x_path}",
        "--output", f"{y_name}={y_path}",
        "--seed", str(seed),
        "--bench", "--warmup", str(warmup), "--iters", str(iters),
    ]


@dataclass
class Case:
    kind: str  # "copy" or "softmax": what the kernel computes
    shape: tuple
    dtype: torch.dtype = torch.float32
    # Filled in while running.
    status: str = "not run"
    note: str = ""
    cutec_ms: float = math.nan
    cutec_gbps: float = math.nan
    torch_ms: float = math.nan
    torch_gbps: float = math.nan
    max_abs: float = math.nan
    max_rel: float = math.nan
    nan_count: int = -1
    load_ms: float = math.nan
    log: List[str] = field(default_factory=list)


FULL_CASES = [
    Case("copy", (1 << 28,)),
    Case("grid_copy", (1 << 28,)),
    Case("softmax", (32768, 4096)),
    Case("softmax", (65536, 1024)),
    Case("softmax_warp", (65536, 1024)),
    Case("rmsnorm", (32768, 4096), torch.bfloat16),
    Case("rmsnorm", (16384, 16384), torch.bfloat16),
]
RMSNORM_EPS = 1e-6
SMOKE_CASES = [
    Case("copy", (1 << 20,)),
    Case("copy", (1_000_003,)),  # a partial last tile: the bounds-checked tail path
    Case("grid_copy", (1_000_003,)),  # a `while` grid-stride loop: each thread makes 3 or 4 trips
    Case("softmax", (256, 4096)),
    Case("softmax", (256, 1024)),
    Case("softmax_warp", (1003, 1024)),  # M not a multiple of the 8 rows of a CTA: the `row < M` guard
    Case("rmsnorm", (256, 4096), torch.bfloat16),
]
DTYPE_NAMES = {torch.float32: "f32", torch.float16: "f16", torch.bfloat16: "bf16"}


def module_paths(gpu_dir, case):
    """(ptx, manifest) for a case: the shape-specialized pair if present, else the generic one."""
    for stem in (f"{case.kind}_{case.shape[-1]}", case.kind):
        ptx, manifest = os.path.join(gpu_dir, stem + ".ptx"), os.path.join(gpu_dir, stem + ".json")
        cubin = os.path.join(gpu_dir, stem + ".cubin")
        if os.path.exists(manifest) and (os.path.exists(ptx) or os.path.exists(cubin)):
            return (ptx if os.path.exists(ptx) else cubin), manifest
    return None, None


def kernel_and_params(manifest_path):
    """The kernel name and its input/output tensor parameter names, from the manifest.

    The first kernel of the module is used. The output is the tensor whose access is "write" (else the last
    tensor); the input is the first other tensor.
    """
    with open(manifest_path) as f:
        manifest = json.load(f)
    kernel = manifest["kernels"][0]
    tensors = [p for p in kernel["params"] if p.get("kind") == "tensor"]
    if len(tensors) < 2:
        raise ValueError(f"{manifest_path}: kernel {kernel['name']} has {len(tensors)} tensor parameters, expected 2")
    writes = [p for p in tensors if p.get("access") == "write"]
    out = writes[0] if writes else tensors[-1]
    inp = next(p for p in tensors if p is not out)
    return kernel["name"], inp["name"], out["name"]


def reference(case, x, w=None):
    if case.kind in ("copy", "grid_copy"):
        return x.clone()
    if case.kind in ("softmax", "softmax_warp"):
        return torch.softmax(x.double(), dim=-1).to(x.dtype)
    if case.kind == "rmsnorm":
        # float64 from the bf16 inputs; compared before rounding to bf16, so the tolerance is bf16's rounding.
        xd = x.double()
        return xd * torch.rsqrt(xd.pow(2).mean(dim=-1, keepdim=True) + RMSNORM_EPS) * w.double()
    raise ValueError(case.kind)


def torch_op(case, x, y, w=None):
    """The torch anchor: a closure that performs the operation once."""
    if case.kind in ("copy", "grid_copy"):
        return lambda: y.copy_(x)
    if case.kind in ("softmax", "softmax_warp"):
        return lambda: torch.softmax(x, dim=-1)
    if case.kind == "rmsnorm":
        return lambda: torch.nn.functional.rms_norm(x, (x.shape[-1],), w, RMSNORM_EPS)
    raise ValueError(case.kind)


def save_npy(path, t):
    """bf16 has no numpy type: save its raw bits as <u2, which `cutec run` reads as bf16."""
    if t.dtype == torch.bfloat16:
        np.save(path, t.cpu().view(torch.int16).numpy().view(np.uint16))
    else:
        np.save(path, t.cpu().numpy())


def time_cuda(fn, warmup, iters):
    """Median milliseconds of `fn` over `iters` launches, each between two CUDA events (like cutec's bench)."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    events = [torch.cuda.Event(enable_timing=True) for _ in range(iters + 1)]
    events[0].record()
    for i in range(iters):
        fn()
        events[i + 1].record()
    torch.cuda.synchronize()
    times = sorted(events[i].elapsed_time(events[i + 1]) for i in range(iters))
    mid = len(times) // 2
    return times[mid] if len(times) % 2 else (times[mid - 1] + times[mid]) / 2


def parse_cutec_output(text):
    """The `bench`, `nan` and `module` lines of `cutec run` (see compiler/driver/src/run.rs)."""
    out = {"nan": {}}
    for line in text.splitlines():
        if line.startswith("bench "):
            for key, value in re.findall(r"(\w+)=(\S+)", line):
                out[key] = value
        m = re.match(r"nan (\w+) (\d+)$", line.strip())
        if m:
            out["nan"][m.group(1)] = int(m.group(2))
        m = re.match(r"module .* loaded in ([0-9.]+) ms", line)
        if m:
            out["load_ms"] = float(m.group(1))
    return out


def run_case(case, args, workdir):
    ptx, manifest = module_paths(args.gpu_dir, case)
    if ptx is None:
        case.status, case.note = "SKIP", f"no {case.kind}[_{case.shape[-1]}].ptx/.json in {args.gpu_dir}"
        return
    kernel, x_name, y_name = kernel_and_params(manifest)
    tag = f"{case.kind}_{'x'.join(map(str, case.shape))}"
    x_path, y_path = os.path.join(workdir, tag + "_x.npy"), os.path.join(workdir, tag + "_y.npy")

    gen = torch.Generator(device="cuda").manual_seed(args.seed)
    x = torch.empty(case.shape, dtype=case.dtype, device="cuda").uniform_(-1.0, 1.0, generator=gen)
    save_npy(x_path, x)
    if os.path.exists(y_path):
        os.remove(y_path)

    cmd = cutec_command(args.cutec, ptx, manifest, kernel, x_name, x_path, y_name, y_path, args.seed,
                        args.warmup, args.iters)
    w = None
    if case.kind == "rmsnorm":
        # The weight vector and eps: a second input file and a scalar argument.
        w = torch.empty(case.shape[-1], dtype=case.dtype, device="cuda").uniform_(0.5, 1.5, generator=gen)
        w_path = os.path.join(workdir, tag + "_w.npy")
        save_npy(w_path, w)
        cmd += ["--input", f"w={w_path}", "--scalar", f"eps={RMSNORM_EPS}"]
    case.log.append("$ " + " ".join(shlex.quote(c) for c in cmd))
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        case.status, case.note = "ERROR", f"cutec run timed out after {args.timeout} s"
        return
    case.log.extend(proc.stdout.splitlines() + proc.stderr.splitlines())
    if proc.returncode != 0:
        last = (proc.stderr.strip() or proc.stdout.strip()).splitlines()
        case.status, case.note = "ERROR", f"cutec exit {proc.returncode}: {last[-1] if last else ''}"
        return
    parsed = parse_cutec_output(proc.stdout)
    case.cutec_ms = float(parsed.get("median_ms", "nan"))
    case.cutec_gbps = float(parsed.get("gbps", "nan"))
    case.load_ms = parsed.get("load_ms", math.nan)
    case.nan_count = parsed["nan"].get(y_name, -1)
    if not os.path.exists(y_path):
        case.status, case.note = "ERROR", "cutec wrote no output file"
        return

    y = torch.from_numpy(np.load(y_path)).to("cuda")
    if tuple(y.shape) != tuple(case.shape):
        case.status, case.note = "FAIL", f"output shape {tuple(y.shape)} != {case.shape}"
        return
    ref = reference(case, x, w)
    finite = torch.isfinite(y)
    case.nan_count = int((~finite).sum().item())
    diff = (y.double() - ref.double()).abs()
    case.max_abs = float(diff.max().item())
    case.max_rel = float((diff / ref.double().abs().clamp_min(1e-30)).max().item())
    if case.kind == "copy":
        ok = case.nan_count == 0 and case.max_abs == 0.0
        tolerance = "bit-exact"
    elif case.dtype == torch.bfloat16:
        # A correctly rounded bf16 result is within half an ulp (2^-8 relative); f32 arithmetic before the
        # rounding can push it across: allow one ulp (2^-7 relative).
        ok = case.nan_count == 0 and bool(torch.all(diff <= 1e-6 + 2.0 ** -7 * ref.double().abs()).item())
        tolerance = "|err| <= 1e-6 + 2^-7 |ref|"
    else:
        ok = case.nan_count == 0 and bool(torch.all(diff <= 1e-7 + 1e-5 * ref.double().abs()).item())
        tolerance = "|err| <= 1e-7 + 1e-5 |ref|"
    case.status = "PASS" if ok else "FAIL"
    case.note = "" if ok else f"tolerance {tolerance}; {case.nan_count} non-finite outputs"
    del ref, diff, finite

    y_torch = torch.empty_like(x)
    case.torch_ms = time_cuda(torch_op(case, x, y_torch, w), args.warmup, args.iters)
    nbytes = 2 * x.numel() * x.element_size()
    case.torch_gbps = nbytes / (case.torch_ms * 1e-3) / 1e9
    del x, y, y_torch
    torch.cuda.empty_cache()


def fmt(v, spec):
    return "-" if v is None or (isinstance(v, float) and math.isnan(v)) else format(v, spec)


def print_table(cases, copy_gbps):
    header = ["kernel", "shape", "dtype", "status", "cutec ms", "cutec GB/s", "torch ms", "torch GB/s",
              "torch/cutec", "% of copy", "max abs", "max rel", "jit ms"]
    rows = []
    for c in cases:
        speedup = c.torch_ms / c.cutec_ms if c.cutec_ms and not math.isnan(c.cutec_ms) else math.nan
        of_copy = 100.0 * c.cutec_gbps / copy_gbps if copy_gbps else math.nan
        rows.append([c.kind, "x".join(map(str, c.shape)), DTYPE_NAMES.get(c.dtype, str(c.dtype)), c.status,
                     fmt(c.cutec_ms, ".4f"), fmt(c.cutec_gbps, ".0f"), fmt(c.torch_ms, ".4f"),
                     fmt(c.torch_gbps, ".0f"), fmt(speedup, ".3f"), fmt(of_copy, ".1f"),
                     fmt(c.max_abs, ".2e"), fmt(c.max_rel, ".2e"), fmt(c.load_ms, ".1f")])
    widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(len(header))]
    line = lambda r: "  ".join(str(v).rjust(w) for v, w in zip(r, widths))
    print(line(header))
    print("  ".join("-" * w for w in widths))
    for r in rows:
        print(line(r))
    print(f"('% of copy' is cutec GB/s over torch's device copy GB/s in this run: {fmt(copy_gbps, '.0f')})")
    for c in cases:
        if c.note:
            print(f"  {c.kind} {c.shape}: {c.status}: {c.note}")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--gpu-dir", default=".gpu")
    p.add_argument("--cutec", default=None, help="the cutec binary (default: GPU_DIR/cutec)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--iters", type=int, default=100)
    p.add_argument("--timeout", type=int, default=300, help="seconds per cutec run")
    p.add_argument("--only", default="", help="comma-separated kinds to run (copy,softmax)")
    p.add_argument("--no-smoke", action="store_true", help="skip the small shapes run first")
    p.add_argument("--json", default=None, help="write the results here (default: GPU_DIR/results.json)")
    p.add_argument("--verbose", action="store_true", help="print every cutec command and its output")
    args = p.parse_args()
    args.cutec = args.cutec or os.path.join(args.gpu_dir, "cutec")

    if not torch.cuda.is_available():
        print("torch sees no CUDA device", file=sys.stderr)
        return 1
    if not os.access(args.cutec, os.X_OK):
        print(f"{args.cutec} is missing or not executable", file=sys.stderr)
        return 1
    print(f"device: {torch.cuda.get_device_name(0)}; torch {torch.__version__}; seed {args.seed}; "
          f"{args.warmup} warmup + {args.iters} timed launches")

    cases = ([] if args.no_smoke else SMOKE_CASES) + FULL_CASES
    if args.only:
        kinds = set(args.only.split(","))
        cases = [c for c in cases if c.kind in kinds]

    workdir = tempfile.mkdtemp(prefix="cutec-first-light-", dir=args.gpu_dir if os.path.isdir(args.gpu_dir) else None)
    started = time.time()
    for case in cases:
        print(f"-- {case.kind} {case.shape} ...", flush=True)
        try:
            run_case(case, args, workdir)
        except Exception as e:  # keep going: one broken case must not hide the others
            case.status, case.note = "ERROR", f"{type(e).__name__}: {e}"
        if args.verbose or case.status in ("ERROR", "FAIL"):
            for line in case.log:
                print("   " + line)
        print(f"   {case.status} {case.note}", flush=True)
        for f in os.listdir(workdir):  # inputs and outputs are large; keep the disk free
            os.remove(os.path.join(workdir, f))
    os.rmdir(workdir)

    # The copy-bandwidth anchor for '% of copy': torch's device copy of the largest copy case, in this run.
    copy_gbps = max((c.torch_gbps for c in cases if c.kind == "copy" and not math.isnan(c.torch_gbps)), default=None)
    if copy_gbps is None:
        n = 1 << 28
        x, y = torch.empty(n, device="cuda").uniform_(), torch.empty(n, device="cuda")
        copy_gbps = 2 * n * 4 / (time_cuda(lambda: y.copy_(x), args.warmup, args.iters) * 1e-3) / 1e9
        del x, y
    print()
    print_table(cases, copy_gbps)
    print(f"(total {time.time() - started:.0f} s)")

    results = [{k: (str(v) if isinstance(v, torch.dtype) else v) for k, v in vars(c).items()} for c in cases]
    json_path = args.json or os.path.join(args.gpu_dir, "results.json")
    try:
        with open(json_path, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(0), "copy_gbps": copy_gbps, "cases": results}, f,
                      indent=2, default=str)
        print(f"results: {json_path}")
    except OSError as e:
        print(f"could not write {json_path}: {e}", file=sys.stderr)
    return 0 if all(c.status == "PASS" for c in cases) else 1


if __name__ == "__main__":
    sys.exit(main())

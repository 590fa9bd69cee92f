#!/usr/bin/env python3
"""The CPU interpreter against the GPU: every launch scripts/gpu/cpu_build.sh prepared in .gpu/cpu/ runs on the
GPU (`cutec run module.ptx`, same seed, so the same random inputs), and its output is compared with the one
`cutec run --cpu` wrote. Prints per launch the elements that agree bit for bit and the largest difference
(absolute, and relative to the largest |value|). Exit status 1 when any launch differs by more than
`--rel` (default 2^-7: one bf16 rounding) or failed to run.
"""

import argparse
import glob
import os
import shlex
import subprocess
import sys

import numpy as np


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", default=".gpu/cpu")
    ap.add_argument("--rel", type=float, default=2.0**-7)
    args = ap.parse_args()
    cutec = os.path.join(args.dir, "cutec")
    failed = False
    with open(os.path.join(args.dir, "cases.txt")) as f:
        cases = [line.split(maxsplit=3) for line in f if line.strip()]
    print(f"{'launch':22} {'elements':>9} {'bitwise':>8} {'max_abs':>10} {'max_rel':>10}")
    for case in cases:
        name, kernel, output = case[:3]
        run_args = shlex.split(case[3]) if len(case) > 3 else []
        d = os.path.join(args.dir, name)
        ptx = glob.glob(os.path.join(d, "*.ptx"))
        if not ptx:
            print(f"{name:22} no module")
            failed = True
            continue
        manifest = ptx[0][:-4] + ".json"
        gpu_out = os.path.join(d, "gpu.npy")
        cmd = [cutec, "run", ptx[0], "--manifest", manifest, "--kernel", kernel, "--seed", "7", *run_args,
               "--output", f"{output}={gpu_out}"]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            print(f"{name:22} GPU run failed: {r.stderr.strip()[-400:]}")
            failed = True
            continue
        cpu = np.load(os.path.join(d, "cpu.npy")).astype(np.float64).ravel()
        gpu = np.load(gpu_out).astype(np.float64).ravel()
        same = np.sum((cpu == gpu) | (np.isnan(cpu) & np.isnan(gpu)))
        diff = np.abs(cpu - gpu)
        scale = max(np.max(np.abs(gpu)), 1e-30)
        max_abs = float(np.nanmax(diff)) if diff.size else 0.0
        rel = max_abs / scale
        bad = rel > args.rel or np.isnan(cpu).sum() != np.isnan(gpu).sum()
        failed |= bool(bad)
        flag = "  MISMATCH" if bad else ""
        print(f"{name:22} {cpu.size:9} {same / max(cpu.size, 1):8.4f} {max_abs:10.3g} {rel:10.3g}{flag}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""`store(src, dst, map = f)` from registers on the GPU: a kernel stores twice(x) of an f32 tensor into a bf16 one
through `map`, and the result must be bf16(2 * f32(bf16(x))) bit for bit (fresh random inputs, the output
poisoned by `cutec run`); the source, copied into `xo` after the `store`, must still hold x (`cutec run` poisons
a tensor named as an output, so the copy goes to a tensor of its own). A second kernel stores
add(x, z) through `map = add, with = z`: bf16(f32(bf16(x)) + z), bit for bit, each value with z's element at its
coordinate.

Run from scripts/gpu on the GPU machine with `cutec` in $GPU_DIR:
    GPU_DIR=../../.gpus python3 map_check.py
"""
import os
import sys
import tempfile

import numpy as np
import torch

from hopper_check import GPU, run

SRC = """fn twice(v: f32) -> f32 {
    return 2.0 * v;
}

kernel k(x: Tensor<f32, (M, 64):(64, 1), gmem>, y: Tensor<bf16, (M, 64):(64, 1), gmem>,
         xo: Tensor<f32, (M, 64):(64, 1), gmem>)
launch(grid = (ceil_div(M, 128)), block = (128)) {
    let row = block_idx.x * 128 + thread_idx.x;
    if row < M {
        let r = make_fragment_like(x[row, _]);
        copy(x[row, _], r);
        store(r, y[row, _], map = twice);
        copy(r, xo[row, _]);
    }
}

fn add(v: f32, b: f32) -> f32 {
    return v + b;
}

kernel kw(x: Tensor<f32, (M, 64):(64, 1), gmem>, z: Tensor<f32, (M, 64):(64, 1), gmem>,
          y: Tensor<bf16, (M, 64):(64, 1), gmem>)
launch(grid = (ceil_div(M, 128)), block = (128)) {
    let row = block_idx.x * 128 + thread_idx.x;
    if row < M {
        let r = make_fragment_like(x[row, _]);
        copy(x[row, _], r);
        store(r, y[row, _], map = add, with = z[row, _]);
    }
}
"""


def main():
    work = tempfile.mkdtemp(prefix="cutec-map-", dir=GPU)
    path = os.path.join(work, "map_registers.cute")
    with open(path, "w") as f:
        f.write(SRC)
    ok = True

    def launch(kernel, m, saves, outputs):
        """`cutec run` of `kernel` at M = m: {name: tensor} of the saved inputs and the outputs, or None."""
        paths = {n: os.path.join(work, f"{n}.npy") for n in (*saves, *outputs)}
        rc, out, _ = run(os.path.abspath(path), kernel, {"M": m}, saves=[(n, paths[n]) for n in saves],
                         outputs=[(n, paths[n]) for n in outputs])
        if rc != 0:
            print(f"{kernel} M={m} FAIL cutec run failed:\n{out}")
            return None
        # `cutec run` writes bf16 outputs widened to f32 (exactly).
        return {n: torch.from_numpy(np.load(p)) for n, p in paths.items()}

    for m in (128, 1000, 5):
        t = launch("k", m, ("x",), ("y", "xo"))
        if t is None:
            ok = False
            continue
        want = (2.0 * t["x"].to(torch.bfloat16).float()).to(torch.bfloat16)
        same = bool(torch.equal(t["y"], want.float()))
        kept = bool(torch.equal(t["xo"], t["x"]))
        ok &= same and kept
        print(f"M={m:>5} {'PASS' if same and kept else 'FAIL'} y bitwise equal: {same}, x unchanged: {kept}")
    for m in (128, 1000, 5):
        t = launch("kw", m, ("x", "z"), ("y",))
        if t is None:
            ok = False
            continue
        want = (t["x"].to(torch.bfloat16).float() + t["z"]).to(torch.bfloat16)
        same = bool(torch.equal(t["y"], want.float()))
        ok &= same
        print(f"with M={m:>5} {'PASS' if same else 'FAIL'} y = bf16(bf16(x) + z) bitwise: {same}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

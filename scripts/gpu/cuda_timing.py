"""The one timing helper of the GPU harness scripts: medians of per-launch CUDA event intervals."""
import torch


def median_ms(fn, warmup=5, iters=20):
    """The median time of `fn` in milliseconds over `iters` launches, after `warmup` untimed ones."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    ev = [torch.cuda.Event(enable_timing=True) for _ in range(iters + 1)]
    ev[0].record()
    for i in range(iters):
        fn()
        ev[i + 1].record()
    torch.cuda.synchronize()
    t = sorted(ev[i].elapsed_time(ev[i + 1]) for i in range(iters))
    return t[len(t) // 2]

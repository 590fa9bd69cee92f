"""The one timing helper of the GPU harness scripts: medians of per-launch CUDA event intervals."""
import torch


def median_ms(fn, warmup=5, iters=20, queued=False):
    """The median time of `fn` in milliseconds over `iters` launches, after `warmup` untimed ones. With `queued`,
    a 20 ms sleep on the stream goes ahead of them, so every launch is enqueued before the first one runs: the
    intervals then hold only the GPU's time, not the host's between launches."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    ev = [torch.cuda.Event(enable_timing=True) for _ in range(iters + 1)]
    if queued:
        torch.cuda._sleep(40_000_000)  # about 20 ms at 1.98 GHz, longer than enqueueing the loop takes
    ev[0].record()
    for i in range(iters):
        fn()
        ev[i + 1].record()
    torch.cuda.synchronize()
    t = sorted(ev[i].elapsed_time(ev[i + 1]) for i in range(iters))
    return t[len(t) // 2]

#!/usr/bin/env python3
"""Where the LM head op's time goes: each CUDA kernel's time per call of
powershape.torch.linear_cross_entropy (forward and backward, bf16, random-init logits), from
PyTorch's profiler over calls run back to back after a warm-up, so that the card is as hot and as
power-capped as in training. Also the call's time between two events: what the kernels' sum leaves
out is launch gaps and the Python around the op. Compare a kernel across chunk counts to see what
a chunk costs (the logits product with the exponent in it is logits_exp_kernel; the products
cuBLASLt runs are nvjet_*).

  python3 bench/lmhead_kernels.py [--shapes 16384,896,151936;4096,4096,128256] [--chunks 1,8]
                                  [--calls 10] [--top 12]
"""
import argparse
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
from powershape.torch import linear_cross_entropy  # noqa: E402


def shapes_of(text):
    try:
        shapes = [tuple(int(v) for v in s.split(",")) for s in text.split(";")]
    except ValueError:
        shapes = []
    if not shapes or any(len(s) != 3 or min(s) < 1 or s[1] % 8 for s in shapes):
        sys.exit(f"lmhead_kernels: --shapes takes N,D,V;N,D,V... (D a multiple of 8), not {text!r}")
    return shapes


def count_of(text, name, most):
    if not text.isdigit() or not 1 <= int(text) <= most:
        sys.exit(f"lmhead_kernels: {name} takes a count in [1, {most}], not {text!r}")
    return int(text)


def run(n, d, v, chunk_counts, calls, top):
    """One shape at each chunk count: the call's time, then each kernel's."""
    from torch.profiler import ProfilerActivity, profile

    torch.manual_seed(0)
    x = torch.randn(n, d, device="cuda", dtype=torch.bfloat16).requires_grad_()
    w = (torch.randn(v, d, device="cuda", dtype=torch.bfloat16) / d**0.5).requires_grad_()
    t = torch.randint(0, v, (n,), device="cuda")
    for chunks in chunk_counts:

        def call():
            x.grad = w.grad = None
            linear_cross_entropy(x, w, t, chunks=chunks).backward()

        for _ in range(3 * calls):  # warm-up: the products' timing, the card's heat
            call()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(calls):
            call()
        end.record()
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(calls):
                call()
            torch.cuda.synchronize()
        rows = []
        for k in prof.key_averages():
            total = getattr(k, "device_time_total", None) or getattr(k, "cuda_time_total", 0)
            if total > 0:
                rows.append((total / calls / 1e3, k.count // calls, k.key))
        rows.sort(reverse=True)
        print(f"{n}x{d}x{v}, {chunks} chunks: {start.elapsed_time(end) / calls:.3f} ms a call")
        for ms, count, name in rows[:top]:
            print(f"  {ms:8.3f} ms  x{count:<3d} {name[:100]}")
        print(f"  {sum(r[0] for r in rows):8.3f} ms  the kernels' sum")
        sys.stdout.flush()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shapes", default="16384,896,151936;4096,4096,128256")
    ap.add_argument("--chunks", default="1,8")
    ap.add_argument("--calls", default="10")
    ap.add_argument("--top", default="12")
    a = ap.parse_args()
    chunk_counts = [count_of(c, "--chunks", 1 << 20) for c in a.chunks.split(",")]
    calls, top = count_of(a.calls, "--calls", 1000), count_of(a.top, "--top", 100)
    shapes = shapes_of(a.shapes)
    if not torch.cuda.is_available():
        sys.exit("lmhead_kernels: no CUDA GPU here (the op's kernels run on one)")
    try:
        for n, d, v in shapes:
            run(n, d, v, chunk_counts, calls, top)
    except (RuntimeError, ValueError) as e:  # out of memory, or a shape the op refuses
        sys.exit(f"lmhead_kernels: {str(e).splitlines()[0]}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""A training loop's LM head on the GPU with powershape's op: either a fixed chunk count (what
`powershape tune -L chunks 1,2,4 -- python3 bench/chunker_loop.py --chunks {chunks}` measures), or
the online AdaptiveChunker choosing the count step by step (--adaptive): it prints the count it
settled on, the step it settled at, and the loop's ms per step against each fixed count's.
Run under `powershape tune`/`compare`/`monitor` (POWERSHAPE_CONTROL set), each step after the
first 5 is marked as a region named "step", so that they measure steps, not Python's start-up.

  python3 bench/chunker_loop.py [--shape N,D,V] [--steps 300] (--chunks C | --adaptive)
"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from powershape import AdaptiveChunker, Monitor  # noqa: E402
from powershape.torch import linear_cross_entropy  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shape", default="16384,4096,128256")
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--chunks", type=int)
    ap.add_argument("--adaptive", action="store_true")
    a = ap.parse_args()
    if (a.chunks is None) == (not a.adaptive):
        ap.error("give --chunks C or --adaptive")
    n, d, v = map(int, a.shape.split(","))
    x = torch.randn(n, d, device="cuda", dtype=torch.bfloat16).requires_grad_()
    w = (torch.randn(v, d, device="cuda", dtype=torch.bfloat16) * d**-0.5).requires_grad_()
    t = torch.randint(0, v, (n,), device="cuda")
    chunker = AdaptiveChunker() if a.adaptive else None
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    used, times, settled_at = [], [], None
    # Under powershape, the steps are the regions it measures (the first few warm the op up).
    marks = Monitor(interval_ms=100) if os.environ.get("POWERSHAPE_CONTROL") else None
    for step in range(a.steps):
        k = chunker.next() if chunker else a.chunks
        x.grad = w.grad = None
        if marks and step >= 5:
            marks.begin_window("step")
        start.record()
        linear_cross_entropy(x, w, t, chunks=k).backward()
        end.record()
        end.synchronize()
        if marks and step >= 5:
            marks.end_window("step")
        ms = start.elapsed_time(end)
        if chunker:
            chunker.report(k, ms)
            if chunker.settled and settled_at is None:
                settled_at = step + 1
            if not chunker.settled:
                settled_at = None
        used.append(k)
        times.append(ms)
    if chunker:
        print(
            f"settled on {chunker.best} chunks after {settled_at} steps; "
            f"{sum(times) / len(times):.2f} ms per step over {a.steps} steps; "
            f"the last 100 steps used {max(set(used[-100:]), key=used[-100:].count)} chunks"
        )


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""LM head + cross-entropy, forward and backward: powershape against the peers a user would pick,
in one GPU run. PyTorch eager always; PyTorch's own compiled loss and linear_cross_entropy where the
installed torch has them (bench/torch_peers.py; a line says which it lacks); Liger-Kernel's fused
linear cross-entropy and Apple's Cut Cross-Entropy when their source is placed in bench/peers/
(git-ignored, never committed):
bench/peers/Liger-Kernel/src and bench/peers/ml-cross-entropy. Each runs steps back to back, as a
training loop does (no synchronisation between steps, so host overhead shows only where it stalls
the GPU): ms per step, the median over batches of ~0.2 s in the last half of a >= 3 s window; and
the device memory each needs beyond inputs and outputs (peak allocated minus x, W, targets and
their gradients); then the ratio of each time to powershape's C++ benchmark. --ours passes options
to build/bench/lmhead_speed (the chunk counts to try); the fastest chunk count in its JSON output is
the C++ figure, and the Python rows use that count: "powershape op" calls the C API from Python
without autograd, "powershape py" is powershape.torch.linear_cross_entropy with autograd.

  python3 bench/peers.py [--shapes 4096,4096,128256;16384,896,151936;16384,4096,128256] [--window 3]
                         [--ours "--chunks 1,2"]
"""
import argparse
import os
import json
import subprocess
import sys
import tempfile
import time

import torch

from torch_peers import torch_peers

HERE = os.path.dirname(os.path.abspath(__file__))
for extra in ("peers/Liger-Kernel/src", "peers/ml-cross-entropy"):
    path = os.path.join(HERE, extra)
    if os.path.isdir(path):
        sys.path.insert(0, path)


def eager(x, w, t):
    logits = (x @ w.t()).float()
    return torch.nn.functional.cross_entropy(logits, t)


class _Raw:
    """The op through the C API alone, its gradients made; backward() does nothing."""

    def __init__(self, run, x, w, t, chunks):
        self.run, self.args = run, (x.detach(), w.detach(), t, None, None, -100, 0, 0.0, 0.0, 0.0, chunks, False, True)

    def backward(self):
        self.run(*self.args)


def peers(chunks):
    out = {"torch eager": eager}
    theirs, notes = torch_peers()
    out.update(theirs)
    for note in notes:
        print(f"({note}: left out)", file=sys.stderr)
    try:  # powershape's op through the Python package (python/), as a PyTorch user calls it
        sys.path.insert(0, os.path.join(HERE, "..", "python"))
        from powershape.torch import _run, linear_cross_entropy as ps_lce

        out["powershape op"] = lambda x, w, t: _Raw(_run, x, w, t, chunks)
        out["powershape py"] = lambda x, w, t: ps_lce(x, w, t, chunks=chunks)
    except ImportError:
        pass
    try:
        from liger_kernel.transformers.functional import liger_fused_linear_cross_entropy

        out["Liger FLCE"] = lambda x, w, t: liger_fused_linear_cross_entropy(x, w, t)
    except ImportError:
        pass
    try:
        from cut_cross_entropy import linear_cross_entropy

        out["CCE"] = lambda x, w, t: linear_cross_entropy(x, w, t)
    except ImportError:
        pass
    return out


def sustained_ms(fn, x, w, t, window):
    def step():
        x.grad = w.grad = None
        fn(x, w, t).backward()

    for _ in range(3):
        step()
    torch.cuda.synchronize()
    t0 = time.time()
    step()
    torch.cuda.synchronize()
    batch = min(max(int(0.2 / max(time.time() - t0, 1e-6)), 2), 50)  # batches of ~0.2 s
    io_bytes = torch.cuda.memory_allocated()  # inputs and, after a step, their gradients
    torch.cuda.reset_peak_memory_stats()
    times = []
    end = time.time() + window
    while time.time() < end:
        # The batch's first step refills the queue the last synchronisation drained; the clock
        # starts after it, so only back-to-back steps are timed.
        step()
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(batch):
            step()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) / batch)
    late = sorted(times[len(times) // 2 :])
    return late[len(late) // 2], (torch.cuda.max_memory_allocated() - io_bytes) / 2**30


def ours(shape, window, options):
    exe = os.path.join(HERE, "..", "build", "bench", "lmhead_speed")
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        opts = options.split()
        if "--window" not in opts:  # --ours may set its own
            opts += ["--window", str(window)]
        subprocess.run([exe, "--shapes", shape, "--json", f.name] + opts, check=True, stdout=subprocess.DEVNULL)
        with open(f.name) as out:  # the benchmark replaces the file: read it anew by its name
            rows = [r for r in json.load(out)["shapes"][0]["rows"] if not r["ceiling"]]
    best = min(rows, key=lambda r: r["ms"])
    return best["ms"], best["extra_gib"], best["chunks"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shapes", default="4096,4096,128256;16384,896,151936;16384,4096,128256")
    ap.add_argument("--window", type=float, default=3)
    ap.add_argument("--ours", default="--chunks 1", help="options for build/bench/lmhead_speed")
    a = ap.parse_args()
    print(f"{'N x D x V':22} {'implementation':14} {'ms':>9} {'GiB':>7} {'/ powershape':>13}")
    for shape in a.shapes.split(";"):
        n, d, v = map(int, shape.split(","))
        base, gib, config = ours(shape, a.window, a.ours)
        print(f"{shape:22} {'powershape':14} {base:9.2f} {gib:7.1f} {1:13.3f}  ({config} chunks)")
        x = (torch.randn(n, d, device="cuda", dtype=torch.bfloat16)).requires_grad_()
        w = (torch.randn(v, d, device="cuda", dtype=torch.bfloat16) * d**-0.5).requires_grad_()
        t = torch.randint(0, v, (n,), device="cuda")
        for name, fn in peers(config).items():
            try:
                ms, gib = sustained_ms(fn, x, w, t, a.window)
                # The C API row keeps no gradients in x.grad and w.grad: its memory is not comparable.
                mem = f"{'-':>7}" if name == "powershape op" else f"{gib:7.1f}"
                print(f"{'':22} {name:14} {ms:9.2f} {mem} {ms / base:13.3f}")
            except torch.OutOfMemoryError:
                print(f"{'':22} {name:14} {'out of memory':>9}")
            except (TypeError, RuntimeError) as e:  # a peer whose API is not the one written to
                print(f"{'':22} {name:14} not run: {str(e).splitlines()[0][:120]}")
        del x, w, t
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()

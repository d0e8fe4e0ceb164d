#!/usr/bin/env python3
"""A user's own training job, as `powershape advise --trace` meets it: a Qwen2-0.5B-config model
(Hugging Face transformers, random init, bf16) trained with AdamW on random tokens for --seconds,
each step after the first 5 marked as a region named "step" when run under `powershape monitor`
(POWERSHAPE_CONTROL set), so that the advisor sees steps. Prints its ms per step. --gap-ms waits
on the host after each backward pass, as an exposed all-reduce leaves the GPU idle; --floor fills
that gap with powershape's filler in process (powershape.floor); --mark-gap marks it as a region
named "gap", for `powershape smooth --gap gap` to fill from outside; --no-step-sync leaves out
the synchronisation that closes each step (it times steps by CUDA events). --chunks runs the LM
head and loss as powershape's op in that many chunks (powershape.hf.patch_causal_lm); without, as
HF does.

  powershape monitor -o T.csv -- python3 bench/finetune_loop.py [--batch 16] [--seq 1024] [--seconds 60]
      [--gap-ms 200 [--floor 0.5 | --mark-gap]] [--chunks N] [--no-step-sync]
  powershape advise --trace T.csv
"""
import argparse
import contextlib
import os
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from powershape import step as mark_step  # noqa: E402
from powershape.floor import smooth  # noqa: E402
from qwen2_model import qwen2_0_5b  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--seq", type=int, default=1024)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument(
        "--gap-ms",
        type=float,
        default=0,
        help="a host wait after backward a step: a stand-in for an exposed all-reduce",
    )
    ap.add_argument(
        "--floor", type=float, default=None, help="fill the gap with powershape's filler at this intensity (0-1)"
    )
    ap.add_argument("--mark-gap", action="store_true", help='mark each gap as a region named "gap"')
    ap.add_argument("--chunks", type=int, default=None, help="the LM head as powershape's op, in N chunks")
    ap.add_argument(
        "--no-step-sync",
        action="store_true",
        help="time each step by CUDA events instead of synchronising the device at its end, so the "
        "next step's launches queue behind it as in a training loop (the gap still synchronises)",
    )
    a = ap.parse_args()
    if a.chunks is not None and not 1 <= a.chunks <= 1024:
        sys.exit("finetune_loop.py: --chunks: expected 1 to 1024")
    if not 0 <= a.gap_ms <= 10000:
        sys.exit("finetune_loop.py: --gap-ms: expected 0 to 10000")
    floor = smooth(intensity=a.floor) if a.floor is not None else None
    model = qwen2_0_5b(a.seq)
    if a.chunks is not None:
        from powershape.hf import patch_causal_lm

        model = patch_causal_lm(model, chunks=a.chunks)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-5)
    ids = torch.randint(0, model.config.vocab_size, (a.batch, a.seq), device="cuda")
    marked = bool(os.environ.get("POWERSHAPE_CONTROL"))
    step, times, end = 0, [], time.monotonic() + a.seconds
    while time.monotonic() < end:
        # A mark is a line to the monitor's FIFO (powershape.step): no recorder of its own here,
        # whose window summaries would put idle time between the steps.
        with mark_step() if marked and step >= 5 else contextlib.nullcontext():
            t0 = time.perf_counter()
            if a.no_step_sync:
                begin = torch.cuda.Event(enable_timing=True)
                begin.record()
            loss = model(input_ids=ids, labels=ids).loss
            loss.backward()
            if a.gap_ms > 0:
                torch.cuda.synchronize()
                gap = floor.gap(a.gap_ms * 1e-3) if floor else contextlib.nullcontext()
                mark = mark_step("gap") if marked and a.mark_gap else contextlib.nullcontext()
                with gap, mark:
                    time.sleep(a.gap_ms * 1e-3)
            opt.step()
            opt.zero_grad(set_to_none=True)
            if a.no_step_sync:
                done = torch.cuda.Event(enable_timing=True)
                done.record()
                times.append((begin, done))
            else:
                torch.cuda.synchronize()
                times.append(time.perf_counter() - t0)
        step += 1
    if a.no_step_sync:  # the events are read once the queue has run out
        torch.cuda.synchronize()
        times = [b.elapsed_time(e) * 1e-3 for b, e in times]
    steady = times[5:] or times
    print(f"{step} steps, {sum(steady) / len(steady) * 1e3:.1f} ms per step after the first 5")


if __name__ == "__main__":
    main()

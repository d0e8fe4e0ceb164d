#!/usr/bin/env python3
"""Causal self-attention at long context, forward (a prefill), the way users run it against the
unfused form whose power shape the chunking paper points at, in one GPU run:
- "flash": torch.nn.functional.scaled_dot_product_attention with is_causal=True on the
  FlashAttention backend (what users run: fused, no scores in memory);
- "unfused c=N": the same arithmetic as powershape's `attention` workload
  (src/powershape/workload/kinds/attention): for each of N blocks of queries, S = Q K^T over the
  keys up to the block's last query, every head at once, a masked softmax of S / sqrt(d), O = P V.
  At N = 1 the products are SEQ x SEQ and S holds every head's SEQ^2 scores.
The ways take turns round by round, so that the GPU's heat is shared. Prints ms a call (median of
the rounds' means), the memory each call needs beyond Q, K, V (its output included), the mean power (NVML energy over
each round, powershape.Monitor, where the library is found: POWERSHAPE_LIB) and J a call, each
against flash. Random bf16 inputs (attention's arithmetic does not depend on the data).

  python3 bench/attention_peers.py [--shape 32768,32,128] [--chunks 4,8,16,32] [--rounds 5]
                                   [--window 1]
"""
import argparse
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))


def unfused(chunks):
    def run(q, k, v):  # [1, H, S, d]
        s = q.shape[2]
        per = (s + chunks - 1) // chunks
        out = torch.empty_like(q)
        scale = q.shape[3] ** -0.5
        for row0 in range(0, s, per):
            r = min(per, s - row0)
            keys = row0 + r
            scores = q[:, :, row0:keys] @ k[:, :, :keys].transpose(2, 3)
            mask = torch.ones(r, keys, device=q.device, dtype=torch.bool).tril(row0)
            scores = scores.masked_fill(~mask, float("-inf"))
            out[:, :, row0:keys] = torch.softmax(scores.float() * scale, dim=-1).to(q.dtype) @ v[:, :, :keys]
        return out

    return run


def flash(q, k, v):
    from torch.nn.attention import SDPBackend, sdpa_kernel

    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def monitor():
    try:
        from powershape import Monitor

        return Monitor(interval_ms=10)
    except Exception as e:  # no library, no NVML: times and memory alone
        print(f"(no power: {e})", file=sys.stderr)
        return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shape", default="32768,32,128", help="SEQ,HEADS,HEAD_DIM")
    ap.add_argument("--chunks", default="4,8,16,32")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--window", type=float, default=1.0, help="seconds a way runs each round")
    a = ap.parse_args()
    seq, heads, d = map(int, a.shape.split(","))
    if not (0 < a.rounds <= 100 and 0 < a.window <= 60):
        sys.exit("attention_peers: --rounds from 1 to 100, --window from 0 to 60 s")
    q, k, v = (torch.randn(1, heads, seq, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    ways = {"flash": flash}
    for c in map(int, a.chunks.split(",")):
        ways[f"unfused c={c}"] = unfused(c)
    ref = flash(q, k, v).float()
    io = torch.cuda.memory_allocated()
    mem = {}
    for name, fn in ways.items():  # checked and warmed up; memory each needs
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        try:
            out = fn(q, k, v)
        except torch.OutOfMemoryError:
            print(f"{name}: does not fit the GPU", file=sys.stderr)
            ways[name] = None
            continue
        torch.cuda.synchronize()  # the peak of the call alone, before the check's own copies
        mem[name] = (torch.cuda.max_memory_allocated() - io) / 2**30
        err = (out.float() - ref).abs().max().item()
        del out
        if err > 5e-2:
            sys.exit(f"attention_peers: {name} differs from flash by {err:.3g}")
    ways = {n: f for n, f in ways.items() if f is not None}
    mon = monitor()
    ms, watts, joules = ({n: [] for n in ways} for _ in range(3))
    for r in range(a.rounds):
        order = list(ways)
        order = order[r % len(order) :] + order[: r % len(order)]
        for name in order:
            fn = ways[name]
            torch.cuda.synchronize()
            if mon:
                mon.begin_window(name, sync_execution=True)
            t0, calls = time.time(), 0
            while time.time() - t0 < a.window:
                fn(q, k, v)
                calls += 1
                if calls % 4 == 0:
                    torch.cuda.synchronize()
            torch.cuda.synchronize()
            seconds = time.time() - t0
            ms[name].append(seconds * 1e3 / calls)
            if mon:
                w = mon.end_window(name, sync_execution=True)
                if w.energy_j is not None:
                    watts[name].append(w.energy_j / w.time)
                    joules[name].append(w.energy_j / calls)
    print(
        f"causal attention, forward: seq {seq}, {heads} heads of {d}; {torch.cuda.get_device_name()}, "
        f"torch {torch.__version__}; median of {a.rounds} rounds"
    )
    print(f"{'way':14} {'ms':>9} {'GiB':>7} {'W':>6} {'J':>8} {'ms / flash':>11} {'J / flash':>10}")
    base_ms = statistics.median(ms["flash"])
    base_j = statistics.median(joules["flash"]) if joules["flash"] else None
    for name in ways:
        t = statistics.median(ms[name])
        w = f"{statistics.median(watts[name]):6.0f}" if watts[name] else f"{'-':>6}"
        j = statistics.median(joules[name]) if joules[name] else None
        js = f"{j:8.3f}" if j is not None else f"{'-':>8}"
        jr = f"{j / base_j:10.3f}" if j is not None and base_j else f"{'-':>10}"
        print(f"{name:14} {t:9.2f} {mem[name]:7.2f} {w} {js} {t / base_ms:11.3f} {jr}")
    if mon:
        mon.close()


if __name__ == "__main__":
    main()

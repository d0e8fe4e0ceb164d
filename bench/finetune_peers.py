#!/usr/bin/env python3
"""Training as users run it, several ways in one run: a Qwen2-0.5B-config model (transformers,
random weights, bf16, tied embeddings), 16 x 1024 tokens a step, AdamW, its LM head and loss done by
powershape's op (through patch_causal_lm), by Cut Cross-Entropy (its source placed in
bench/peers/ml-cross-entropy, git-ignored), by PyTorch eager (the model's own forward: full
logits, HF's loss), and by PyTorch's own compiled loss and linear_cross_entropy where the installed
torch has them (bench/torch_peers.py). Each with one micro-step a step and with 4 micro-steps of 4 x 1024 tokens
(gradient accumulation to the same step). The ways take turns round by round (shuffled), so that
the GPU's heat and power state is shared.

Two logit regimes, since CCE's speed depends on the data (it skips gradient blocks of near-zero
softmax): "random" (random init, lr 1e-5) and "trained" (the LM head scaled to a logit std of 6,
targets drawn from the model's own softmax, entropy printed, lr 0 so that the regime holds).

Prints tokens/s, J a step (NVML energy over each round, powershape.Monitor), peak memory (the most
allocated during a round: weights, gradients, optimizer state and activations) and each against CCE.

  python3 bench/finetune_peers.py [--rounds 4] [--steps 4] [--chunks N] [--regimes random,trained]
                                  [--json out.json]
"""
import argparse
import json
import os
import random
import statistics
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
sys.path.insert(0, os.path.join(HERE, "peers", "ml-cross-entropy"))
from powershape import Monitor  # noqa: E402
from powershape.hf import patch_causal_lm  # noqa: E402
from qwen2_model import qwen2_0_5b  # noqa: E402
from torch_peers import torch_peers  # noqa: E402

BATCH, SEQ, MICRO = 16, 1024, 4


def build(seed):
    torch.manual_seed(seed)
    return qwen2_0_5b(SEQ).train()


@torch.no_grad()
def make_trained_like(model, ids, std=6.0):
    """Scales the LM head to a logit std of `std` and draws each position's next token from the
    model's own softmax; returns the labels (HF's unshifted convention) and the mean entropy."""
    hidden = model.model(input_ids=ids[:1]).last_hidden_state[0]
    w = model.lm_head.weight
    w.mul_(std / (hidden @ w.t()).float().std().item())
    labels = torch.full_like(ids, -100)
    entropy = []
    for b in range(ids.shape[0]):
        h = model.model(input_ids=ids[b : b + 1]).last_hidden_state[0]
        logits = (h @ w.t()).float()
        p = torch.softmax(logits, dim=-1)
        entropy.append(-(p * torch.log(p.clamp_min(1e-30))).sum(-1).mean().item())
        labels[b, 1:] = torch.multinomial(p, 1)[:-1, 0]  # position t's target is label t + 1
    return labels, statistics.mean(entropy), (hidden @ w.t()).float().std().item()


def ways(model, chunks):
    eager_forward = type(model).forward  # the class's own: the patch replaces the instance's
    out = {"torch eager": lambda ids, labels: eager_forward(model, input_ids=ids, labels=labels).loss}
    ours = patch_causal_lm(model, chunks=chunks)
    out["powershape"] = lambda ids, labels: ours(input_ids=ids, labels=labels).loss
    try:
        from cut_cross_entropy import linear_cross_entropy as cce

        def cce_loss(ids, labels):
            hidden = model.model(input_ids=ids).last_hidden_state
            return cce(hidden, model.lm_head.weight, labels, shift=1)

        out["CCE"] = cce_loss
    except ImportError:
        print("(Cut Cross-Entropy not found in bench/peers/ml-cross-entropy: left out)", file=sys.stderr)
    theirs, notes = torch_peers()
    for note in notes:
        print(f"({note}: left out)", file=sys.stderr)
    for name, fn in theirs.items():

        def loss(ids, labels, fn=fn):  # the next token's loss, as HF's shifts it
            hidden = model.model(input_ids=ids).last_hidden_state[:, :-1]
            return fn(hidden.reshape(-1, hidden.shape[-1]), model.lm_head.weight, labels[:, 1:].reshape(-1))

        out[name] = loss
    return out


def round_of(loss_fn, ids, labels, opt, steps, micro, monitor):
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    monitor.begin_window("round")
    t0 = time.perf_counter()
    for _ in range(steps):
        for m in range(micro):
            part = slice(m * BATCH // micro, (m + 1) * BATCH // micro)
            loss = loss_fn(ids[part], labels[part])
            (loss / micro).backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    torch.cuda.synchronize()
    seconds = time.perf_counter() - t0
    w = monitor.end_window("round")
    return {
        "ms": seconds / steps * 1e3,
        "j": (w.energy_j or float("nan")) / steps,
        "peak_gib": torch.cuda.max_memory_allocated() / 2**30,
        "mhz": w.sm_clock_mhz or float("nan"),
        "capped": float("nan") if w.power_capped is None else w.power_capped,
        "loss": loss.item(),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--steps", type=int, default=4, help="steps a round (each 16 x 1024 tokens)")
    ap.add_argument("--chunks", type=int, default=None, help="powershape's chunk count (default: the op's)")
    ap.add_argument("--regimes", default="random,trained")
    ap.add_argument("--json")
    a = ap.parse_args()
    if not 1 <= a.rounds <= 100 or not 1 <= a.steps <= 100:
        sys.exit("finetune_peers: --rounds and --steps must be in [1, 100]")
    results = []
    monitor = Monitor(interval_ms=10)
    print(
        f"{'regime':8} {'micro':>5} {'way':12} {'tokens/s':>9} {'J/step':>8} {'peak GiB':>9} {'MHz':>6} "
        f"{'capped':>6}  {'tok/s vs CCE':>12} {'J vs CCE':>8} {'GiB - CCE':>9}"
    )
    for regime in a.regimes.split(","):
        model = build(0)
        ids = torch.randint(0, model.config.vocab_size, (BATCH, SEQ), device="cuda")
        labels, note = ids.clone(), ""
        if regime == "trained":
            labels, entropy, std = make_trained_like(model, ids)
            note = f" (logit std {std:.1f}, entropy {entropy:.2f} nats)"
        elif regime != "random":
            sys.exit(f"finetune_peers: unknown regime {regime!r} (random, trained)")
        opt = torch.optim.AdamW(model.parameters(), lr=0.0 if regime == "trained" else 1e-5)
        fns = ways(model, a.chunks)
        print(f"{regime}{note}")
        for micro in (1, MICRO):
            rows = {name: [] for name in fns}
            for name, fn in fns.items():  # warm-up: compile, autotune, allocate
                round_of(fn, ids, labels, opt, 1, micro, monitor)
            for _ in range(a.rounds):
                order = list(fns.items())
                random.shuffle(order)
                for name, fn in order:
                    rows[name].append(round_of(fn, ids, labels, opt, a.steps, micro, monitor))
            summary = {}
            for name, rs in rows.items():
                summary[name] = {
                    "tokens_per_s": BATCH * SEQ / (statistics.median(r["ms"] for r in rs) / 1e3),
                    "j_per_step": statistics.median(r["j"] for r in rs),
                    "peak_gib": max(r["peak_gib"] for r in rs),
                    "mhz": statistics.median(r["mhz"] for r in rs),
                    "capped": statistics.median(r["capped"] for r in rs),
                    "loss": rs[-1]["loss"],
                }
            ref = summary.get("CCE")
            for name, s in summary.items():
                vs = (
                    (
                        f"{s['tokens_per_s'] / ref['tokens_per_s']:12.3f} {s['j_per_step'] / ref['j_per_step']:8.3f} "
                        f"{s['peak_gib'] - ref['peak_gib']:+9.2f}"
                    )
                    if ref
                    else ""
                )
                print(
                    f"{regime:8} {micro:5d} {name:12} {s['tokens_per_s']:9.0f} {s['j_per_step']:8.1f} "
                    f"{s['peak_gib']:9.2f} {s['mhz']:6.0f} {s['capped']:6.2f}  {vs}"
                )
                results.append(dict(regime=regime, micro_steps=micro, way=name, **s))
            sys.stdout.flush()
        del model, opt, fns
        torch.cuda.empty_cache()
    monitor.close()
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()

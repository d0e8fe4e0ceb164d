#!/usr/bin/env python3
"""Fine-tuning a small LLM, as you would run it, ready for `powershape optimize`: a Qwen2-0.5B-config
model (transformers, random init: nothing is downloaded) trained with AdamW on random tokens, its
LM head and loss through powershape's fused op (patch_causal_lm), each step marked with
powershape.step() so that a surrounding `powershape optimize` or `monitor` measures steps, not
start-up. The op takes its chunk count from POWERSHAPE_CHUNKS, which optimize sets per run.

    powershape optimize --chunks 4,16 --tokens-per-step 16384 -- python3 examples/finetune.py --seconds 6
    python3 examples/finetune.py --tiny --steps 3          # a tiny config, on the CPU too

Prints its steps' median time and tokens/s.
"""
import argparse
import statistics
import time

import torch
from transformers import Qwen2Config, Qwen2ForCausalLM

import powershape
from powershape.hf import patch_causal_lm


def config(tiny):
    if tiny:  # the same architecture, small enough for a CPU
        return Qwen2Config(
            vocab_size=4096, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
            num_key_value_heads=2, tie_word_embeddings=True,
        )  # fmt: skip
    return Qwen2Config(  # Qwen2-0.5B's published shape
        vocab_size=151936, hidden_size=896, intermediate_size=4864, num_hidden_layers=24, num_attention_heads=14,
        num_key_value_heads=2, tie_word_embeddings=True,
    )  # fmt: skip


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--seq", type=int, default=1024)
    ap.add_argument("--seconds", type=float, default=60, help="train this long (after 3 warm-up steps)")
    ap.add_argument("--steps", type=int, default=0, help="or this many steps")
    ap.add_argument("--tiny", action="store_true", help="a tiny config (CPU, fp32)")
    a = ap.parse_args()
    if a.batch < 1 or a.seq < 2 or not 0 < a.seconds <= 86400 or a.steps < 0:
        ap.error("--batch >= 1, --seq >= 2, --seconds in (0, 86400], --steps >= 0")
    cuda = torch.cuda.is_available() and not a.tiny
    device, dtype = ("cuda", torch.bfloat16) if cuda else ("cpu", torch.float32)
    if a.tiny:
        a.batch, a.seq = min(a.batch, 2), min(a.seq, 64)
    if cuda:
        with torch.device("cuda"):  # built on the GPU: seconds less start-up than on the CPU
            model = Qwen2ForCausalLM(config(a.tiny)).to(dtype)
    else:
        model = Qwen2ForCausalLM(config(a.tiny)).to(dtype)
    model = patch_causal_lm(model)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-5)
    ids = torch.randint(0, model.config.vocab_size, (a.batch, a.seq), device=device)

    def step():
        loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss

    for _ in range(3):  # warm-up: allocator, kernels chosen, the clock settled into the load
        step()
    times, start = [], time.monotonic()
    while (a.steps and len(times) < a.steps) or (not a.steps and time.monotonic() - start < a.seconds):
        t0 = time.monotonic()
        with powershape.step():
            step()
        times.append(time.monotonic() - t0)
    ms = statistics.median(times) * 1e3
    print(f"{len(times)} steps, {ms:.1f} ms a step, {a.batch * a.seq / ms * 1e3:.0f} tokens/s")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Fine-tunes a small LLM (Qwen2-0.5B's shape, or --tiny) on random tokens, its steps marked for powershape.

Fine-tuning as you would run it, ready for `powershape optimize`: a Qwen2-0.5B-config
model (transformers, random init: nothing is downloaded) trained with AdamW on random tokens, its
LM head and loss through powershape's fused op (patch_causal_lm), each step marked with
powershape.step() so that a surrounding `powershape optimize` or `monitor` measures steps, not
start-up. The op takes its chunk count from POWERSHAPE_CHUNKS, which optimize sets per run.

    pip install --no-build-isolation '.[hf]'              # what it needs: torch and transformers
    powershape optimize --chunks 4,16 --tokens-per-step 16384 -- python3 examples/finetune.py --seconds 6
    python3 examples/finetune.py --tiny --steps 3          # torch alone (Debian's python3-torch), on a CPU

--tiny trains a small model of plain torch layers (no transformers) through the same op. Prints its
steps' median time and tokens/s.
"""
import argparse
import statistics
import sys
import time


def qwen2(dtype, cuda):
    try:
        from transformers import Qwen2Config, Qwen2ForCausalLM
    except ImportError:
        sys.exit(
            "finetune.py: the Qwen2 model needs transformers (pip install --no-build-isolation '.[hf]'); "
            "--tiny runs with torch alone"
        )
    import torch
    from powershape.hf import patch_causal_lm

    config = Qwen2Config(  # Qwen2-0.5B's published shape
        vocab_size=151936, hidden_size=896, intermediate_size=4864, num_hidden_layers=24, num_attention_heads=14,
        num_key_value_heads=2, tie_word_embeddings=True,
    )  # fmt: skip
    if cuda:
        with torch.device("cuda"):  # built on the GPU: seconds less start-up than on the CPU
            model = Qwen2ForCausalLM(config).to(dtype)
    else:
        model = Qwen2ForCausalLM(config).to(dtype)
    model = patch_causal_lm(model)
    return model, config.vocab_size, lambda ids: model(input_ids=ids, labels=ids).loss


def tiny(dtype, device):
    """Two pre-norm MLP blocks over a tied embedding, the LM head and loss through the fused op."""
    import torch
    from powershape.torch import linear_cross_entropy

    vocab, width = 4096, 64
    emb = torch.nn.Embedding(vocab, width)
    blocks = torch.nn.ModuleList(
        torch.nn.Sequential(
            torch.nn.LayerNorm(width),
            torch.nn.Linear(width, 4 * width),
            torch.nn.GELU(),
            torch.nn.Linear(4 * width, width),
        )
        for _ in range(2)
    )
    model = torch.nn.ModuleDict({"emb": emb, "blocks": blocks, "norm": torch.nn.LayerNorm(width)}).to(device, dtype)

    def loss(ids):
        h = model["emb"](ids)
        for b in model["blocks"]:
            h = h + b(h)
        h = model["norm"](h)[:, :-1].reshape(-1, width)
        return linear_cross_entropy(h, model["emb"].weight, ids[:, 1:].reshape(-1))

    return model, vocab, loss


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=16, help="sequences a step (default 16; --tiny: at most 2)")
    ap.add_argument("--seq", type=int, default=1024, help="tokens a sequence (default 1024; --tiny: at most 64)")
    ap.add_argument("--seconds", type=float, default=60, help="train this long (after 3 warm-up steps)")
    ap.add_argument("--steps", type=int, default=0, help="or this many steps")
    ap.add_argument("--tiny", action="store_true", help="a tiny config (CPU, fp32)")
    a = ap.parse_args()
    if a.batch < 1 or a.seq < 2 or not 0 < a.seconds <= 86400 or a.steps < 0:
        ap.error("--batch >= 1, --seq >= 2, --seconds in (0, 86400], --steps >= 0")
    import torch

    import powershape

    cuda = torch.cuda.is_available() and not a.tiny
    device, dtype = ("cuda", torch.bfloat16) if cuda else ("cpu", torch.float32)
    if a.tiny:
        a.batch, a.seq = min(a.batch, 2), min(a.seq, 64)
        model, vocab, loss_of = tiny(dtype, device)
    else:
        model, vocab, loss_of = qwen2(dtype, cuda)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-5)
    ids = torch.randint(0, vocab, (a.batch, a.seq), device=device)

    def step():
        loss = loss_of(ids)
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

"""The model the training benchmarks run: Qwen2-0.5B's published config (tied embeddings), random
weights, bf16 on the GPU."""
import torch
from transformers import Qwen2Config, Qwen2ForCausalLM


def qwen2_0_5b(seq):
    cfg = Qwen2Config(
        vocab_size=151936,
        hidden_size=896,
        intermediate_size=4864,
        num_hidden_layers=24,
        num_attention_heads=14,
        num_key_value_heads=2,
        max_position_embeddings=seq,
        tie_word_embeddings=True,
    )
    return Qwen2ForCausalLM(cfg).to("cuda", torch.bfloat16)

import copy

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
from powershape.hf import patch_causal_lm  # noqa: E402

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
DTYPE = torch.bfloat16 if DEVICE == "cuda" else torch.float32


def tiny(kind):
    """A few-layer randomly initialised model from a config: nothing is downloaded."""
    common = dict(
        vocab_size=1000,
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=128,
    )
    torch.manual_seed(0)
    if kind == "qwen2":
        model = transformers.Qwen2ForCausalLM(transformers.Qwen2Config(**common))
    else:
        model = transformers.LlamaForCausalLM(transformers.LlamaConfig(**common))
    return model.to(DEVICE, DTYPE)


def batch(seed=1):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, 1000, (4, 33), generator=g)
    labels = ids.clone()
    labels[:, :5] = -100  # a prompt that is not learned
    return ids.to(DEVICE), labels.to(DEVICE)


@pytest.mark.parametrize("kind", ["qwen2", "llama"])
def test_the_patched_loss_and_gradients_equal_the_models_own(kind):
    ref = tiny(kind).train()
    ours = patch_causal_lm(copy.deepcopy(ref), chunks=3).train()
    ids, labels = batch()
    for kw in ({}, {"num_items_in_batch": 100}):
        a = ref(input_ids=ids, labels=labels, **kw)
        b = ours(input_ids=ids, labels=labels, **kw)
        assert b.logits is None  # the full logits were never made
        assert abs(a.loss.item() - b.loss.item()) <= 1e-2 * abs(a.loss.item()), kw
        ga = torch.autograd.grad(a.loss, [ref.lm_head.weight, ref.model.embed_tokens.weight])
        gb = torch.autograd.grad(b.loss, [ours.lm_head.weight, ours.model.embed_tokens.weight])
        for x, y in zip(ga, gb):
            assert torch.allclose(x.float(), y.float(), rtol=0, atol=3e-2 * x.abs().max().item()), kw


def test_eval_and_no_labels_run_the_models_own_forward():
    model = patch_causal_lm(tiny("qwen2"))
    ids, labels = batch()
    assert model.eval()(input_ids=ids, labels=labels).logits is not None
    assert model.train()(input_ids=ids).logits is not None


@pytest.mark.skipif(DEVICE != "cuda", reason="50 steps are for the GPU")
def test_fifty_training_steps_follow_the_same_loss_curve():
    curves = []
    for patched in (False, True):
        model = tiny("qwen2").train()
        if patched:
            patch_causal_lm(model, chunks=2)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
        curve = []
        for step in range(50):
            ids, labels = batch(seed=100 + step % 5)
            loss = model(input_ids=ids, labels=labels).loss
            loss.backward()
            opt.step()
            opt.zero_grad()
            curve.append(loss.item())
        curves.append(curve)
    unpatched, patched = curves
    assert patched[-1] < patched[0] * 0.9  # it learns
    for a, b in zip(unpatched, patched):
        assert abs(a - b) <= 0.05 * abs(a), (a, b)

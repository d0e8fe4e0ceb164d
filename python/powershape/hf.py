"""Hugging Face causal LMs without the full logits in training, the way Liger-Kernel's
apply_liger_kernel_to_qwen2 and Cut Cross-Entropy's cce_patch do it:

    from powershape.hf import patch_causal_lm
    model = patch_causal_lm(AutoModelForCausalLM.from_config(config))

While the model trains with labels, its head and the loss run as powershape's fused op; logits are
not returned then. Without labels, or in eval mode, the model's own forward runs. Works on any
*ForCausalLM whose body is `model.model` and head `model.lm_head` (Qwen2, Llama, Mistral, ...).
HF's `num_items_in_batch` (gradient accumulation) makes the loss a sum over that count.
"""
import types

import torch

from .torch import linear_cross_entropy

IGNORE_INDEX = -100


def patch_causal_lm(model, chunks=None):
    """Patches this model instance (not its class) and returns it. chunks: as linear_cross_entropy
    takes them (None: the op's default count)."""
    for part in ("model", "lm_head"):
        if not hasattr(model, part):
            raise TypeError(f"{type(model).__name__} has no .{part}: not a *ForCausalLM this patch knows")
    from transformers.modeling_outputs import CausalLMOutputWithPast

    original = model.forward
    softcap = getattr(model.config, "final_logit_softcapping", None)

    def forward(
        self,
        input_ids=None,
        attention_mask=None,
        position_ids=None,
        past_key_values=None,
        inputs_embeds=None,
        labels=None,
        use_cache=None,
        num_items_in_batch=None,
        shift_labels=None,
        **kwargs,
    ):
        if labels is None and shift_labels is None or not self.training:
            return original(
                input_ids=input_ids,
                attention_mask=attention_mask,
                position_ids=position_ids,
                past_key_values=past_key_values,
                inputs_embeds=inputs_embeds,
                labels=labels,
                use_cache=use_cache,
                **kwargs,
            )
        outputs = self.model(
            input_ids=input_ids,
            attention_mask=attention_mask,
            position_ids=position_ids,
            past_key_values=past_key_values,
            inputs_embeds=inputs_embeds,
            use_cache=use_cache,
            **kwargs,
        )
        hidden = outputs[0]
        if shift_labels is None:  # HF's causal shift: token i predicts label i + 1
            shift_labels = torch.nn.functional.pad(labels, (0, 1), value=IGNORE_INDEX)[..., 1:]
        weight, bias = self.lm_head.weight, getattr(self.lm_head, "bias", None)
        hidden = hidden.to(weight.dtype)
        if num_items_in_batch is None:
            loss = linear_cross_entropy(
                hidden, weight, shift_labels.to(hidden.device), bias, softcap=softcap, chunks=chunks
            )
        else:
            loss = linear_cross_entropy(
                hidden, weight, shift_labels.to(hidden.device), bias, reduction="sum", softcap=softcap, chunks=chunks
            )
            loss = loss / torch.as_tensor(num_items_in_batch, device=loss.device, dtype=loss.dtype)
        return CausalLMOutputWithPast(
            loss=loss,
            logits=None,
            past_key_values=getattr(outputs, "past_key_values", None),
            hidden_states=getattr(outputs, "hidden_states", None),
            attentions=getattr(outputs, "attentions", None),
        )

    model.forward = types.MethodType(forward, model)
    return model

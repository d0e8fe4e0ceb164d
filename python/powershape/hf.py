"""Hugging Face causal LMs without the full logits in training, the way Liger-Kernel's
apply_liger_kernel_to_qwen2 and Cut Cross-Entropy's cce_patch do it:

    from powershape.hf import patch_causal_lm
    model = patch_causal_lm(AutoModelForCausalLM.from_config(config))

While the model trains with labels, its head and the loss run as powershape's fused op; logits are
not returned then. Without labels, or in eval mode, the model's own forward runs. Works on any
*ForCausalLM whose body is `model.model` and head `model.lm_head` (Qwen2, Llama, Mistral, ...).
HF's `num_items_in_batch` (gradient accumulation) makes the loss a sum over that count.
"""
import os
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


try:  # the Trainer's callback protocol; without transformers, the same no-op events
    from transformers import TrainerCallback as _CallbackBase
except ImportError:  # pragma: no cover - exercised where transformers is absent

    class _CallbackBase:
        def __getattr__(self, event):
            if event.startswith("on_"):
                return lambda *args, **kwargs: None
            raise AttributeError(event)


class PowershapeCallback(_CallbackBase):
    """A transformers TrainerCallback, as Zeus' and CodeCarbon's are: each training step is a
    window of a powershape Monitor (and a region for a surrounding `powershape monitor` or
    `optimize`), and at each logging step the Trainer's logs (so TensorBoard, W&B, ...) get, over
    the steps since the last log: powershape/energy_j, avg_power_w, sm_clock_mhz, power_capped,
    step_s and, where tokens are known, j_per_token.

        trainer = Trainer(model=model, args=args, train_dataset=data)
        PowershapeCallback().attach(trainer)   # first in line, so the loggers see its keys
        trainer.train()

    monitor: a Monitor to use (default: one opened at train begin on `source`, closed at its end).
    tokens_per_step: tokens a step (default: the Trainer's num_input_tokens_seen where it counts
    them). chunker: an AdaptiveChunker that picks the next step's chunk count from each step's
    time and energy, through POWERSHAPE_CHUNKS (what the fused op reads when not given a count).
    """

    def __init__(self, monitor=None, source="nvml", interval_ms=10, tokens_per_step=None, chunker=None, name="step"):
        self.monitor, self._own = monitor, monitor is None
        self.source, self.interval_ms, self.name = source, interval_ms, name
        self.tokens_per_step, self.chunker = tokens_per_step, chunker
        self._chunks = None
        self._reset()

    def attach(self, trainer):
        """Adds this callback to `trainer` ahead of the others (the loggers read the logs after it)."""
        trainer.callback_handler.callbacks.insert(0, self)
        return self

    def _reset(self):
        self._steps, self._seconds, self._energy, self._clock_s, self._capped_s = 0, 0.0, 0.0, 0.0, 0.0
        self._tokens, self._energy_known = 0, True

    def on_train_begin(self, args, state, control, **kwargs):
        if self.monitor is None:
            from .monitor import Monitor

            self.monitor = Monitor(self.source, interval_ms=self.interval_ms)
        self._tokens_seen = getattr(state, "num_input_tokens_seen", 0) or 0

    def on_step_begin(self, args, state, control, **kwargs):
        if self.chunker is not None:
            self._chunks = self.chunker.next()
            os.environ["POWERSHAPE_CHUNKS"] = str(self._chunks)
        self.monitor.begin_window(self.name)

    def on_step_end(self, args, state, control, **kwargs):
        w = self.monitor.end_window(self.name)
        energy = w.total_energy
        self._steps += 1
        self._seconds += w.time
        if energy is None:
            self._energy_known = False
        else:
            self._energy += energy
        clock, capped = w.sm_clock_mhz, w.power_capped
        if clock is not None:
            self._clock_s += clock * w.time
        if capped is not None:
            self._capped_s += capped * w.time
        seen = getattr(state, "num_input_tokens_seen", 0) or 0
        self._tokens += self.tokens_per_step if self.tokens_per_step else max(0, seen - self._tokens_seen)
        self._tokens_seen = seen
        if self.chunker is not None:
            self.chunker.report(self._chunks, w.time * 1e3, energy or 0.0)

    def metrics(self):
        """What the steps since the last log did: the keys on_log adds."""
        if self._steps == 0 or self._seconds <= 0:
            return {}
        out = {
            "powershape/step_s": self._seconds / self._steps,
            "powershape/sm_clock_mhz": self._clock_s / self._seconds,
            "powershape/power_capped": self._capped_s / self._seconds,
        }
        if self._energy_known:
            out["powershape/energy_j"] = self._energy
            out["powershape/avg_power_w"] = self._energy / self._seconds
            if self._tokens > 0:
                out["powershape/j_per_token"] = self._energy / self._tokens
        if self._chunks is not None:
            out["powershape/chunks"] = self._chunks
        return out

    def on_log(self, args, state, control, logs=None, **kwargs):
        m = self.metrics()
        if logs is not None:
            logs.update(m)
        history = getattr(state, "log_history", None)
        if history and m:
            history[-1].update(m)
        self._reset()

    def on_train_end(self, args, state, control, **kwargs):
        if self._own and self.monitor is not None:
            self.monitor.close()
            self.monitor = None
        if self.chunker is not None:
            os.environ.pop("POWERSHAPE_CHUNKS", None)

"""The chunked LM head + cross-entropy for PyTorch, shaped like Cut Cross-Entropy's
`linear_cross_entropy`:

    from powershape.torch import linear_cross_entropy
    loss = linear_cross_entropy(hidden, lm_head.weight, labels, chunks=4)

CUDA tensors run powershape's op (libpowershape_c) on torch's current stream, with its workspace
from torch's allocator: the logits are never materialised beyond one chunk, and dX and dW are made
in the forward pass (as Liger-Kernel does), then scaled by the incoming gradient. CPU tensors run a
reference written in torch ops, so the whole Python path runs where there is no GPU. Leading batch
dimensions are flattened; targets may be int32 or int64. `chunks` is the power knob: more chunks
smooth the GPU's power at some cost in speed (`powershape repro` says which count pays).
"""
import ctypes
from typing import Optional

import torch

from ._lib import LmHeadArgs, LmHeadOptions, check, lib

_REDUCTIONS = {"mean": 0, "sum": 1, "none": 2}


def _reference(x, weight, targets, bias, ignore_index, reduction, label_smoothing, z_loss, softcap):
    """The loss in float32 torch ops (what the op computes), differentiable by autograd."""
    logits = x.float() @ weight.float().t()
    if bias is not None:
        logits = logits + bias.float()
    if softcap:
        logits = softcap * torch.tanh(logits / softcap)
    lse = torch.logsumexp(logits, dim=-1)
    valid = targets != ignore_index
    safe = torch.where(valid, targets, torch.zeros_like(targets)).long()
    token = lse - logits.gather(1, safe[:, None]).squeeze(1)
    if label_smoothing:
        token = (1 - label_smoothing) * token + label_smoothing * (lse - logits.mean(dim=-1))
    if z_loss:
        token = token + z_loss * lse * lse
    token = token * valid
    if reduction == "none":
        return token
    if reduction == "sum":
        return token.sum()
    return token.sum() / valid.sum().clamp(min=1)


def _dw_fp32(chunks, weight):
    # One chunk writes dW once: straight into the weight's bf16 saves a cast of V x D floats.
    # More chunks accumulate dW across chunks, in fp32.
    return not (int(chunks) == 1 and weight.dtype == torch.bfloat16)


def _run(x, weight, targets, ignore_index, reduction, label_smoothing, z_loss, softcap, chunks, backward):
    """Runs the op; returns (loss or token losses, dX, dW), dX and dW empty without backward."""
    n, d = x.shape
    v = weight.shape[0]
    o = LmHeadOptions()
    lib().ps_lmhead_options_default(ctypes.byref(o))
    o.chunks = int(chunks)
    o.ignore_index = int(ignore_index)
    o.reduction = int(reduction)
    o.label_smoothing = float(label_smoothing)
    o.z_loss = float(z_loss)
    o.softcap = float(softcap or 0)
    o.backward = 1 if backward else 0
    o.dw_fp32 = 1 if _dw_fp32(chunks, weight) else 0
    ws_bytes = lib().ps_lmhead_workspace_bytes(n, d, v, ctypes.byref(o))
    check(ws_bytes > 0)
    dev = x.device
    workspace = torch.empty(ws_bytes, dtype=torch.uint8, device=dev)
    none = reduction == _REDUCTIONS["none"]
    out = torch.empty(n if none else (), dtype=torch.float32, device=dev)
    scratch = torch.empty((), dtype=torch.float32, device=dev)  # the reduced loss, when tokens are asked for
    dx = torch.empty_like(x) if backward else x.new_empty(0)
    dw = (torch.empty(v, d, dtype=torch.float32 if o.dw_fp32 else weight.dtype, device=dev) if backward
          else weight.new_empty(0))
    a = LmHeadArgs()
    a.x, a.w, a.targets = x.data_ptr(), weight.data_ptr(), targets.data_ptr()
    a.targets_int64 = 1 if targets.dtype == torch.int64 else 0
    a.n, a.d, a.v = n, d, v
    a.loss = scratch.data_ptr() if none else out.data_ptr()
    a.token_loss = out.data_ptr() if none else None
    a.dx = dx.data_ptr() if backward else None
    a.dw = dw.data_ptr() if backward else None
    a.workspace, a.workspace_bytes = workspace.data_ptr(), ws_bytes
    stream = torch.cuda.current_stream(dev).cuda_stream
    check(lib().ps_lmhead_run(ctypes.byref(a), ctypes.byref(o), ctypes.c_void_p(stream)) == 0)
    return out, dx, dw


def _check_backward(reduction, backward):
    if backward and reduction == _REDUCTIONS["none"]:
        raise NotImplementedError("linear_cross_entropy on CUDA: reduction='none' has no backward here; "
                                  "use 'mean' or 'sum'")


class _LinearCrossEntropy(torch.autograd.Function):
    """Eager CUDA path (any torch): gradients made in the forward pass, scaled in the backward."""

    @staticmethod
    def forward(ctx, x, weight, targets, ignore_index, reduction, label_smoothing, z_loss, softcap, chunks):
        backward = ctx.needs_input_grad[0] or ctx.needs_input_grad[1]
        _check_backward(reduction, backward)
        out, dx, dw = _run(x, weight, targets, ignore_index, reduction, label_smoothing, z_loss, softcap,
                           chunks, backward)
        ctx.save_for_backward(dx, dw)
        ctx.w_dtype = weight.dtype
        return out

    @staticmethod
    def backward(ctx, grad):
        dx, dw = ctx.saved_tensors
        # The gradients were made for an incoming gradient of 1, what loss.backward() passes;
        # only another one costs a pass over dX and dW (the test is one scalar read, as in
        # Liger-Kernel).
        if not torch.equal(grad, torch.ones_like(grad)):
            dx = dx * grad.to(dx.dtype)
            dw = dw * grad
        gx = dx if ctx.needs_input_grad[0] else None
        gw = dw.to(ctx.w_dtype) if ctx.needs_input_grad[1] else None
        return gx, gw, None, None, None, None, None, None, None


# torch.compile: the same op as a torch.library custom op (torch >= 2.4) with a fake-tensor rule
# and an autograd rule, so a compiled model traces it without a graph break. Eager calls keep the
# autograd.Function above, whose backward skips the scaling pass when it can.
_custom_op = None
if hasattr(torch, "library") and hasattr(torch.library, "custom_op"):

    @torch.library.custom_op("powershape::linear_cross_entropy", mutates_args=())
    def _custom_op(x: torch.Tensor, weight: torch.Tensor, targets: torch.Tensor, ignore_index: int,
                   reduction: int, label_smoothing: float, z_loss: float, softcap: float, chunks: int,
                   backward: bool) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        _check_backward(reduction, backward)
        return _run(x, weight, targets, ignore_index, reduction, label_smoothing, z_loss, softcap, chunks,
                    backward)

    @_custom_op.register_fake
    def _(x, weight, targets, ignore_index, reduction, label_smoothing, z_loss, softcap, chunks, backward):
        none = reduction == _REDUCTIONS["none"]
        out = x.new_empty(x.shape[0] if none else (), dtype=torch.float32)
        dx = x.new_empty(x.shape) if backward else x.new_empty(0)
        dw_dtype = torch.float32 if _dw_fp32(chunks, weight) else weight.dtype
        dw = weight.new_empty(weight.shape, dtype=dw_dtype) if backward else weight.new_empty(0)
        return out, dx, dw

    def _setup_context(ctx, inputs, output):
        ctx.save_for_backward(output[1], output[2])
        ctx.w_dtype = inputs[1].dtype

    def _custom_backward(ctx, grad, _grad_dx, _grad_dw):
        dx, dw = ctx.saved_tensors
        return (dx * grad.to(dx.dtype), (dw * grad).to(ctx.w_dtype), None, None, None, None, None, None, None,
                None)

    _custom_op.register_autograd(_custom_backward, setup_context=_setup_context)


def _compiling():
    compiler = getattr(torch, "compiler", None)
    return compiler is not None and hasattr(compiler, "is_compiling") and compiler.is_compiling()


def linear_cross_entropy(x: torch.Tensor, weight: torch.Tensor, targets: torch.Tensor,
                         bias: Optional[torch.Tensor] = None, ignore_index: int = -100,
                         reduction: str = "mean", label_smoothing: float = 0.0, z_loss: float = 0.0,
                         softcap: Optional[float] = None, chunks: int = 1) -> torch.Tensor:
    """Cross-entropy of softmax(x @ weight.T (+ bias)) against targets, without the full logits.

    x [..., D] and weight [V, D] (bf16 on CUDA), targets [...] int32 or int64; z_loss adds
    z_loss * logsumexp^2 per token; softcap maps logits to softcap * tanh(logits / softcap).
    """
    if reduction not in _REDUCTIONS:
        raise ValueError(f"reduction must be 'mean', 'sum' or 'none', not {reduction!r}")
    if x.shape[:-1] != targets.shape:
        raise ValueError(f"targets {tuple(targets.shape)} must match x {tuple(x.shape)} without its last dimension")
    if weight.dim() != 2 or weight.shape[1] != x.shape[-1]:
        raise ValueError(f"weight {tuple(weight.shape)} must be [V, {x.shape[-1]}]")
    if targets.dtype not in (torch.int32, torch.int64):
        raise ValueError(f"targets must be int32 or int64, not {targets.dtype}")
    if int(chunks) < 1:
        raise ValueError(f"chunks must be at least 1, not {chunks}")
    lead = x.shape[:-1]
    x2 = x.reshape(-1, x.shape[-1])
    t2 = targets.reshape(-1)
    if not x.is_cuda:
        out = _reference(x2, weight, t2, bias, ignore_index, reduction, label_smoothing, z_loss, softcap)
        return out.reshape(lead) if reduction == "none" else out
    if bias is not None:
        raise NotImplementedError("linear_cross_entropy on CUDA: a bias is not supported by the fused op")
    if x.dtype != torch.bfloat16 or weight.dtype != torch.bfloat16:
        raise ValueError(f"on CUDA x and weight must be bfloat16, not {x.dtype} and {weight.dtype}")
    args = (x2.contiguous(), weight.contiguous(), t2.contiguous(), int(ignore_index), _REDUCTIONS[reduction],
            float(label_smoothing), float(z_loss), float(softcap or 0), int(chunks))
    if _custom_op is not None and _compiling():
        backward = torch.is_grad_enabled() and (x.requires_grad or weight.requires_grad)
        out = _custom_op(*args, backward)[0]
    else:
        out = _LinearCrossEntropy.apply(*args)
    return out.reshape(lead) if reduction == "none" else out


class LinearCrossEntropyLoss(torch.nn.Module):
    """linear_cross_entropy as a module: loss = LinearCrossEntropyLoss(chunks=4)(x, weight, targets)."""

    def __init__(self, ignore_index: int = -100, reduction: str = "mean", label_smoothing: float = 0.0,
                 z_loss: float = 0.0, softcap: Optional[float] = None, chunks: int = 1):
        super().__init__()
        self.ignore_index, self.reduction, self.label_smoothing = ignore_index, reduction, label_smoothing
        self.z_loss, self.softcap, self.chunks = z_loss, softcap, chunks

    def forward(self, x, weight, targets, bias=None):
        return linear_cross_entropy(x, weight, targets, bias, self.ignore_index, self.reduction,
                                    self.label_smoothing, self.z_loss, self.softcap, self.chunks)


from .hf import patch_causal_lm  # noqa: E402  (needs linear_cross_entropy above)

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
import os
import subprocess
import sys
from typing import Optional, Union

import torch

from ._args import INT32_MAX, integer, real
from ._lib import DeviceError, check, cli, lib, struct
from .floor import PowerFloor, smooth  # noqa: F401  (the power floor: powershape.torch.smooth)

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


def _options(ignore_index, reduction, label_smoothing, z_loss, softcap, chunks, backward, dw_fp32):
    """The op's options for C, each checked against its C width and the op's ranges
    (ps_lmhead_options_check). Runs in the op's own call too, which torch.compile does not trace,
    so that a compiled graph's arguments are checked as an eager call's are."""
    o = struct("ps_lmhead_options")()
    lib().ps_lmhead_options_default(ctypes.byref(o))  # chunks 0: the op's own default count
    o.chunks = integer("chunks", chunks, 0, INT32_MAX)
    o.ignore_index = integer("ignore_index", ignore_index)
    o.reduction = int(reduction)
    o.label_smoothing = real("label_smoothing", label_smoothing)
    o.z_loss = real("z_loss", z_loss)
    o.softcap = 0.0 if softcap is None else real("softcap", softcap)
    o.backward = 1 if backward else 0
    o.dw_fp32 = 1 if dw_fp32 else 0
    o.fuse_exp = 1 if _fuse_exp() else 0
    check(lib().ps_lmhead_options_check(ctypes.byref(o)) == 0)
    return o


def _fuse_exp():
    """Whether the op may take the exponent in the logits product (an sm_90 GPU). It sets each row's
    offset from whichever tile finishes first, so its gradients differ from run to run in bf16's
    last bit: a caller who asks PyTorch for deterministic algorithms gets the pass of its own."""
    return not torch.are_deterministic_algorithms_enabled()


def _ptr(t):
    return t.data_ptr() if t is not None and t.numel() > 0 else None


def _run(
    x,
    weight,
    targets,
    bias,
    token_grad,
    ignore_index,
    reduction,
    label_smoothing,
    z_loss,
    softcap,
    chunks,
    dw_fp32,
    backward,
):
    """Runs the op; returns (loss or token losses, dX, dW, dbias), the gradients empty when not made.
    token_grad: each token's incoming gradient (reduction 'none''s backward), or None. dW is made in
    the weight's dtype, or in float32 with dw_fp32."""
    n, d = x.shape
    v = weight.shape[0]
    if token_grad is not None:
        token_grad = token_grad.to(torch.float32).contiguous()
    if bias is not None and bias.data_ptr() % 16:  # the product's bias epilogue reads 16-byte vectors
        bias = bias.clone()
    if chunks == 0:  # a compiled call reads the count optimize races here (under CUDA graphs,
        chunks = _env_chunks() or 0  # when the graph is captured)
    o = _options(ignore_index, reduction, label_smoothing, z_loss, softcap, chunks, backward, dw_fp32)
    ws_bytes = lib().ps_lmhead_workspace_bytes(n, d, v, ctypes.byref(o))
    check(ws_bytes > 0)
    dev = x.device
    workspace = torch.empty(ws_bytes, dtype=torch.uint8, device=dev)
    none = reduction == _REDUCTIONS["none"]
    out = torch.empty(n if none else (), dtype=torch.float32, device=dev)
    scratch = torch.empty((), dtype=torch.float32, device=dev)  # the reduced loss, when tokens are asked for
    dx = torch.empty_like(x) if backward else x.new_empty(0)
    dw = (
        torch.empty(v, d, dtype=torch.float32 if o.dw_fp32 else weight.dtype, device=dev)
        if backward
        else weight.new_empty(0)
    )
    db = (
        torch.empty(v, dtype=torch.float32, device=dev)
        if backward and bias is not None
        else x.new_empty(0, dtype=torch.float32)
    )
    a = struct("ps_lmhead_args")()
    a.x, a.w, a.targets = x.data_ptr(), weight.data_ptr(), targets.data_ptr()
    a.targets_int64 = 1 if targets.dtype == torch.int64 else 0
    a.n, a.d, a.v = n, d, v
    a.loss = scratch.data_ptr() if none else out.data_ptr()
    a.token_loss = out.data_ptr() if none else None
    a.dx, a.dw, a.dbias = _ptr(dx), _ptr(dw), _ptr(db)
    a.bias, a.token_grad = _ptr(bias), _ptr(token_grad)
    a.workspace, a.workspace_bytes = workspace.data_ptr(), ws_bytes
    stream = torch.cuda.current_stream(dev).cuda_stream
    check(lib().ps_lmhead_run(ctypes.byref(a), ctypes.byref(o), ctypes.c_void_p(stream)) == 0)
    return out, dx, dw, db


def _scale_in_place(dx, dw, db, grad):
    """dX, dW and dbias times the incoming gradient, read on the device: no host synchronisation
    (torch.equal(grad, 1) would wait for the whole op), and no pass when it is 1."""
    o = struct("ps_lmhead_options")()
    lib().ps_lmhead_options_default(ctypes.byref(o))
    o.dw_fp32 = 1 if dw.dtype == torch.float32 else 0
    a = struct("ps_lmhead_args")()
    (a.n, a.d), a.v = dx.shape, dw.shape[0]
    a.dx, a.dw, a.dbias = _ptr(dx), _ptr(dw), _ptr(db)
    factor = grad.detach().to(torch.float32).contiguous()
    stream = torch.cuda.current_stream(factor.device).cuda_stream
    check(
        lib().ps_lmhead_scale_gradients(
            ctypes.byref(a), ctypes.byref(o), ctypes.c_void_p(factor.data_ptr()), ctypes.c_void_p(stream)
        )
        == 0
    )


class _LinearCrossEntropy(torch.autograd.Function):
    """Eager CUDA path (any torch). Reduced losses: gradients made in the forward pass, scaled in
    the backward. Reduction 'none': the forward pass makes the losses alone and the backward runs
    the op again with each token's incoming gradient (the logits are never kept)."""

    @staticmethod
    def forward(
        ctx, x, weight, targets, bias, ignore_index, reduction, label_smoothing, z_loss, softcap, chunks, dw_fp32
    ):
        wanted = ctx.needs_input_grad[0] or ctx.needs_input_grad[1] or ctx.needs_input_grad[3]
        ctx.recompute = wanted and reduction == _REDUCTIONS["none"]
        ctx.params = (ignore_index, reduction, label_smoothing, z_loss, softcap, chunks, dw_fp32)
        ctx.used = False
        out, dx, dw, db = _run(x, weight, targets, bias, None, *ctx.params, wanted and not ctx.recompute)
        if ctx.recompute:
            ctx.save_for_backward(x, weight, targets, bias)
        else:
            ctx.save_for_backward(dx, dw, db)
        ctx.dtypes = (weight.dtype, bias.dtype if bias is not None else None)
        return out

    @staticmethod
    def backward(ctx, grad):
        if ctx.used:
            raise RuntimeError(
                "linear_cross_entropy: its backward ran twice through one graph (retain_graph); "
                "call the op again for a second backward"
            )
        ctx.used = True
        if ctx.recompute:
            x, weight, targets, bias = ctx.saved_tensors
            _, dx, dw, db = _run(x, weight, targets, bias, grad, *ctx.params, True)
        else:
            dx, dw, db = ctx.saved_tensors
            _scale_in_place(dx, dw, db, grad)
        w_dtype, b_dtype = ctx.dtypes
        gx = dx if ctx.needs_input_grad[0] else None
        gw = dw.to(w_dtype) if ctx.needs_input_grad[1] else None
        gb = db.to(b_dtype) if ctx.needs_input_grad[3] else None
        return gx, gw, None, gb, None, None, None, None, None, None, None


# torch.compile: the same op as a torch.library custom op (torch >= 2.4) with a fake-tensor rule
# and an autograd rule, so a compiled model traces it without a graph break. Eager calls keep the
# autograd.Function above, whose backward scales in place without a host synchronisation.
_custom_op = None
if hasattr(torch, "library") and hasattr(torch.library, "custom_op"):

    @torch.library.custom_op("powershape::linear_cross_entropy", mutates_args=())
    def _custom_op(
        x: torch.Tensor,
        weight: torch.Tensor,
        targets: torch.Tensor,
        bias: Optional[torch.Tensor],
        token_grad: Optional[torch.Tensor],
        ignore_index: int,
        reduction: int,
        label_smoothing: float,
        z_loss: float,
        softcap: float,
        chunks: int,
        dw_fp32: bool,
        backward: bool,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        return _run(
            x,
            weight,
            targets,
            bias,
            token_grad,
            ignore_index,
            reduction,
            label_smoothing,
            z_loss,
            softcap,
            chunks,
            dw_fp32,
            backward,
        )

    @_custom_op.register_fake
    def _(
        x,
        weight,
        targets,
        bias,
        token_grad,
        ignore_index,
        reduction,
        label_smoothing,
        z_loss,
        softcap,
        chunks,
        dw_fp32,
        backward,
    ):
        none = reduction == _REDUCTIONS["none"]
        out = x.new_empty(x.shape[0] if none else (), dtype=torch.float32)
        dx = x.new_empty(x.shape) if backward else x.new_empty(0)
        dw_dtype = torch.float32 if dw_fp32 else weight.dtype
        dw = weight.new_empty(weight.shape, dtype=dw_dtype) if backward else weight.new_empty(0)
        db = x.new_empty(weight.shape[0] if backward and bias is not None else 0, dtype=torch.float32)
        return out, dx, dw, db

    def _setup_context(ctx, inputs, output):
        x, weight, targets, bias = inputs[:4]
        ctx.params = inputs[5:12]
        ctx.recompute = inputs[6] == _REDUCTIONS["none"]
        ctx.save_for_backward(x, weight, targets, bias, *output[1:])
        ctx.dtypes = (weight.dtype, bias.dtype if bias is not None else None)

    def _custom_backward(ctx, grad, _grad_dx, _grad_dw, _grad_db):
        x, weight, targets, bias, dx, dw, db = ctx.saved_tensors
        if ctx.recompute:
            _, dx, dw, db = _custom_op(x, weight, targets, bias, grad.to(torch.float32), *ctx.params, True)
        else:
            dx, dw, db = dx * grad.to(dx.dtype), dw * grad, db * grad
        w_dtype, b_dtype = ctx.dtypes
        gb = db.to(b_dtype) if bias is not None else None
        return (dx, dw.to(w_dtype), None, gb) + (None,) * 9

    _custom_op.register_autograd(_custom_backward, setup_context=_setup_context)


_tuned = {}


def _sharded(t) -> bool:
    """A DTensor (FSDP2, tensor parallelism): its data is spread over ranks, and the op would read
    only this rank's shard as if it were the whole."""
    dtensor = getattr(sys.modules.get("torch.distributed.tensor"), "DTensor", None)
    return dtensor is not None and isinstance(t, dtensor)


def _env_chunks() -> Optional[int]:
    """POWERSHAPE_CHUNKS, the count `powershape optimize` races through the job's environment;
    None when unset or empty."""
    value = os.environ.get("POWERSHAPE_CHUNKS", "").strip()
    if not value:
        return None
    if not value.isdigit() or not 1 <= int(value) <= INT32_MAX:
        raise ValueError(f"POWERSHAPE_CHUNKS must be a count from 1, not {value!r}")
    return int(value)


def _check_targets(t, ignore_index, v):
    """A target outside [0, V) that is not ignore_index: a ValueError naming it on the CPU; on a GPU
    an asynchronous device assert, as torch's own cross_entropy does (no sync in the step)."""
    bad = (t != ignore_index) & ((t < 0) | (t >= v))
    if t.is_cuda:
        torch._assert_async(~bad.any())
    elif bool(bad.any()):
        raise ValueError(f"targets: {int(t[bad][0])} is outside [0, {v}) and not ignore_index ({ignore_index})")


def _auto_chunks(n, d, v, forward_only, label_smoothing, device_index):
    """chunks="auto": the count `powershape tune` cached for this GPU (as it is now: name, driver,
    power limit) and shape, for the op as it will run (ps_lmhead_will_fuse: on an sm_90 GPU the
    exponent in the logits product, unless deterministic algorithms are asked for or label
    smoothing takes the two-read pass); when there is none, the shape is tuned once (a minute or
    two) and cached. Remembered per process."""
    o = struct("ps_lmhead_options")()
    lib().ps_lmhead_options_default(ctypes.byref(o))
    o.label_smoothing, o.fuse_exp = label_smoothing, 1 if _fuse_exp() else 0
    with torch.cuda.device(device_index):  # the op's own rule, on the GPU it runs on
        exp = lib().ps_lmhead_will_fuse(ctypes.byref(o))
    check(exp >= 0)
    exp = exp == 1
    key = (n, d, v, forward_only, exp, device_index)
    if key in _tuned:
        return _tuned[key]

    def ask():
        return lib().ps_lmhead_tuned_chunks(n, d, v, int(forward_only), int(exp), b"time", device_index)

    chunks = ask()
    check(chunks >= 0)
    if chunks == 0:
        print(
            f"powershape: tuning the LM head's chunk count for {n}x{d}x{v} on this GPU once (the result is cached)",
            file=sys.stderr,
        )
        cmd = [cli(), "tune", "--workload", "lmhead", "--shape", f"{n},{d},{v}", "--device", "gpu"]
        cmd += ["--forward-only"] if forward_only else []
        cmd += ["--exp-in-product"] if exp else []
        done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if done.returncode != 0:
            raise DeviceError(f"chunks='auto': {' '.join(cmd)} failed: {done.stderr.strip()}")
        chunks = ask()
        check(chunks > 0)
    _tuned[key] = chunks
    return chunks


def _compiling():
    compiler = getattr(torch, "compiler", None)
    return compiler is not None and hasattr(compiler, "is_compiling") and compiler.is_compiling()


def linear_cross_entropy(
    x: torch.Tensor,
    weight: torch.Tensor,
    targets: torch.Tensor,
    bias: Optional[torch.Tensor] = None,
    ignore_index: int = -100,
    reduction: str = "mean",
    label_smoothing: float = 0.0,
    z_loss: float = 0.0,
    softcap: Optional[float] = None,
    chunks: Union[int, str, None] = None,
    accum_dtype: Optional[torch.dtype] = None,
    process_group=None,
) -> torch.Tensor:
    """Cross-entropy of softmax(x @ weight.T (+ bias)) against targets, without the full logits.

    Returns the loss as torch.nn.functional.cross_entropy(x @ weight.T + bias, targets, ...) would:
    reduction "mean" (the default) averages over the tokens whose target is not ignore_index (0
    where every one is ignored, where torch gives NaN), "sum" adds them, "none" gives one loss
    per token, shaped as targets, 0 at ignored ones; in float32 (gradients in x's and weight's
    dtypes). Tokens whose target equals ignore_index (-100 by default) add nothing to the loss or
    the gradients; any other target outside 0..V-1 is refused (a ValueError, or a device assert
    on CUDA). bias [V] is added to every row's logits. label_smoothing eps mixes the target's
    loss with the mean over the vocabulary, (1 - eps) * (lse - z_target) + eps * (lse - mean(z)),
    as torch's does. On CUDA the fused chunked op runs (bf16 x and weight); on the CPU the same
    loss runs in float32 torch ops, chunks ignored: a CPU reference for tests and small runs,
    not a fast path.

    chunks: a count; None (the default): $POWERSHAPE_CHUNKS where set (what `powershape optimize`
    races), else as many as keep the op's memory near Cut Cross-Entropy's
    (one chunk of logits, about 0.5 GiB) at full speed; or "auto": the count `powershape tune` chose
    for this GPU and shape (tuned once, then cached per GPU, driver, power limit and shape).
    accum_dtype: the dtype dW accumulates in across chunks, as Liger-Kernel's: None, the weight's
    own (bf16: half the bytes each chunk reads and writes), or torch.float32.

    process_group: the vocabulary split across its ranks (Megatron's vocab-parallel
    cross-entropy): weight (and bias) are this rank's contiguous slice of the rows, in rank order;
    x and targets (global indices) the same on every rank; the loss and dX are the whole
    vocabulary's, dW this slice's (powershape.vocab_parallel says how). No label smoothing, z-loss
    or softcap there.
    x [..., D] and weight [V, D] (bf16 on CUDA), targets [...] int32 or int64; z_loss adds
    z_loss * logsumexp^2 per token; softcap maps logits to softcap * tanh(logits / softcap).
    """
    if reduction not in _REDUCTIONS:
        raise ValueError(f"reduction must be 'mean', 'sum' or 'none', not {reduction!r}")
    for name, t in (("x", x), ("weight", weight)):
        if _sharded(t):
            raise ValueError(
                f"{name} is a sharded DTensor: under FSDP2, fully_shard the model (not lm_head alone) so "
                "that its weight is gathered while the model runs; tensor parallelism: pass the local shards"
            )
    if x.shape[:-1] != targets.shape:
        raise ValueError(f"targets {tuple(targets.shape)} must match x {tuple(x.shape)} without its last dimension")
    if weight.dim() != 2 or weight.shape[1] != x.shape[-1]:
        raise ValueError(f"weight {tuple(weight.shape)} must be [V, {x.shape[-1]}]")
    if targets.dtype not in (torch.int32, torch.int64):
        raise ValueError(f"targets must be int32 or int64, not {targets.dtype}")
    for name, t in (("x", x), ("weight", weight)):
        if not t.dtype.is_floating_point:
            raise ValueError(f"{name} must be a floating-point tensor, not {t.dtype}")
    if weight.shape[0] == 0 or x.shape[-1] == 0:
        raise ValueError(f"weight {tuple(weight.shape)}: V and D must be at least 1")
    if bias is not None and tuple(bias.shape) != (weight.shape[0],):
        raise ValueError(f"bias {tuple(bias.shape)} must be [{weight.shape[0]}]")
    if process_group is not None:
        if label_smoothing or z_loss or softcap:
            raise ValueError("process_group: no label_smoothing, z_loss or softcap with a split vocabulary")
        if x.shape[:-1] != targets.shape or weight.dim() != 2 or weight.shape[1] != x.shape[-1]:
            raise ValueError(f"weight {tuple(weight.shape)} must be [V_rank, {x.shape[-1]}], targets match x")
        if reduction not in _REDUCTIONS:
            raise ValueError(f"reduction must be 'mean', 'sum' or 'none', not {reduction!r}")
        from .vocab_parallel import vocab_parallel_cross_entropy

        def one_slice(xs, ws, ts, bs, reduction, chunks):
            return linear_cross_entropy(xs, ws, ts, bs, ignore_index, reduction, chunks=chunks, accum_dtype=accum_dtype)

        lead = x.shape[:-1]
        out = vocab_parallel_cross_entropy(
            x.reshape(-1, x.shape[-1]), weight, targets.reshape(-1), bias, ignore_index, reduction, chunks,
            process_group, one_slice,
        )  # fmt: skip
        return out.reshape(lead) if reduction == "none" else out
    if isinstance(chunks, str) and chunks != "auto":
        raise ValueError(f"chunks must be a count, None or 'auto', not {chunks!r}")
    # Types, C widths and signs here, traced or not; the op's own ranges are the library's
    # (_options), which torch.compile cannot trace (ctypes): a compiled call checks them when the
    # op runs (_run), and reads POWERSHAPE_CHUNKS there.
    if chunks is not None and chunks != "auto":
        chunks = integer("chunks", chunks, 1, INT32_MAX)
    ignore_index = integer("ignore_index", ignore_index)
    label_smoothing, z_loss = real("label_smoothing", label_smoothing, 0), real("z_loss", z_loss, 0)
    softcap = None if softcap is None else real("softcap", softcap, 0)
    if not _compiling():
        if chunks is None:
            chunks = _env_chunks()
        count = chunks if isinstance(chunks, int) else 0  # None and "auto": the op's own rule
        _options(ignore_index, 0, label_smoothing, z_loss, softcap, count, True, False)  # ranges, on CPU too
    if accum_dtype not in (None, torch.float32, weight.dtype):
        raise ValueError(f"accum_dtype must be None, torch.float32 or the weight's {weight.dtype}, not {accum_dtype}")
    lead = x.shape[:-1]
    x2 = x.reshape(-1, x.shape[-1])
    t2 = targets.reshape(-1)
    if process_group is None and not _compiling():
        _check_targets(t2, ignore_index, weight.shape[0])
    if not x.is_cuda:
        out = _reference(x2, weight, t2, bias, ignore_index, reduction, label_smoothing, z_loss, softcap)
        return out.reshape(lead) if reduction == "none" else out
    if x.dtype != torch.bfloat16 or weight.dtype != torch.bfloat16:
        raise ValueError(f"on CUDA x and weight must be bfloat16, not {x.dtype} and {weight.dtype}")
    if bias is not None:
        if bias.dtype != torch.bfloat16:
            raise ValueError(f"on CUDA the bias must be bfloat16, not {bias.dtype}")
        bias = bias.contiguous()
    if chunks == "auto":
        forward_only = not (torch.is_grad_enabled() and (x.requires_grad or weight.requires_grad))
        chunks = _auto_chunks(
            x2.shape[0], x2.shape[1], weight.shape[0], forward_only, label_smoothing, x.device.index or 0
        )
    params = (  # checked above; the op's ranges by _run when compiling
        ignore_index,
        _REDUCTIONS[reduction],
        label_smoothing,
        z_loss,
        0.0 if softcap is None else softcap,
        0 if chunks is None else chunks,
        accum_dtype == torch.float32 and weight.dtype != torch.float32,
    )
    x2, weight, t2 = x2.contiguous(), weight.contiguous(), t2.contiguous()
    if _custom_op is not None and _compiling():
        wanted = torch.is_grad_enabled() and any(t is not None and t.requires_grad for t in (x, weight, bias))
        backward = wanted and reduction != "none"
        out = _custom_op(x2, weight, t2, bias, None, *params, backward)[0]
    else:
        out = _LinearCrossEntropy.apply(x2, weight, t2, bias, *params)
    return out.reshape(lead) if reduction == "none" else out


class LinearCrossEntropyLoss(torch.nn.Module):
    """linear_cross_entropy as a module: loss = LinearCrossEntropyLoss(chunks=4)(x, weight, targets)."""

    def __init__(
        self,
        ignore_index: int = -100,
        reduction: str = "mean",
        label_smoothing: float = 0.0,
        z_loss: float = 0.0,
        softcap: Optional[float] = None,
        chunks: Union[int, str, None] = None,
        accum_dtype: Optional[torch.dtype] = None,
    ):
        super().__init__()
        self.ignore_index, self.reduction, self.label_smoothing = ignore_index, reduction, label_smoothing
        self.z_loss, self.softcap, self.chunks, self.accum_dtype = z_loss, softcap, chunks, accum_dtype

    def forward(self, x, weight, targets, bias=None):
        return linear_cross_entropy(
            x,
            weight,
            targets,
            bias,
            self.ignore_index,
            self.reduction,
            self.label_smoothing,
            self.z_loss,
            self.softcap,
            self.chunks,
            self.accum_dtype,
        )

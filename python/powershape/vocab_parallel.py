"""The LM head with its vocabulary split across ranks (Megatron's vocab-parallel cross-entropy),
chunked: each rank holds a contiguous slice of the weight's rows and the same hidden states, and
the loss, dX and each rank's dW slice equal one process's over the whole vocabulary.

The fused op runs unchanged on each slice. Its per-token loss against one row of the slice (the
anchor, row 0) is lse_local - z_anchor, so lse_local comes back with one dot product a token; an all-reduce of the
slices' maxima and sums of exponentials gives the global log-sum-exp, another the target logits
(only the rank holding a target has it). Backward runs the op again on the slice with each token's
gradient scaled by exp(lse_local - lse): its softmax becomes the global one restricted to the
slice; what the anchor and the true targets add is corrected with a row of W or X a token, and dX is
all-reduced (the hidden states are replicated). Traffic: three all-reduces of N floats forward,
one of N x D backward; never the logits.
"""
from typing import Optional

import torch
import torch.distributed as dist

_SUM, _MAX = dist.ReduceOp.SUM, dist.ReduceOp.MAX


def _slice_start(rows: int, pg, device):
    """This rank's first row and the whole vocabulary's size, by an all-reduce of each rank's row
    count (what every backend offers for CUDA tensors too)."""
    sizes = torch.zeros(dist.get_world_size(pg), dtype=torch.int64, device=device)
    rank = dist.get_rank(pg)
    sizes[rank] = rows
    dist.all_reduce(sizes, _SUM, group=pg)
    return int(sizes[:rank].sum()), int(sizes.sum())


def _check_targets(targets, valid, vocab):
    """A target no rank holds (outside the whole vocabulary, or a group that holds only part of it:
    each rank given a group of its own) is refused, not scored as a finite loss: a ValueError on
    the CPU, an asynchronous device assert on a GPU."""
    bad = valid & ((targets < 0) | (targets >= vocab))
    if targets.is_cuda:
        torch._assert_async(~bad.any())
    elif bool(bad.any()):
        raise ValueError(
            f"targets: {int(targets[bad][0])} is outside the {vocab} rows the process group's ranks hold "
            "(is every rank of the vocabulary in the group?)"
        )


def _row_dot(x, weight, bias, rows):
    """x_i . weight[rows_i] (+ bias[rows_i]) in fp32."""
    z = (x.float() * weight[rows].float()).sum(-1)
    return z + bias[rows].float() if bias is not None else z


class _VocabParallel(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, targets, bias, ignore_index, reduction, chunks, pg, op):
        n, device = x.shape[0], x.device
        start, vocab = _slice_start(weight.shape[0], pg, device)
        local = targets - start
        valid = targets != ignore_index
        _check_targets(targets, valid, vocab)
        mine = valid & (local >= 0) & (local < weight.shape[0])
        # The slice's row every token is scored against (any but the ignored index will do).
        anchor = 1 if ignore_index == 0 else 0
        zero = torch.full((n,), anchor, dtype=targets.dtype, device=device)
        with torch.no_grad():
            loss0 = op(x, weight, zero, bias, reduction="none", chunks=chunks).float()
        lse_local = loss0 + _row_dot(x, weight, bias, zero)
        m = lse_local.clone()
        dist.all_reduce(m, _MAX, group=pg)
        s = torch.exp(lse_local - m)
        dist.all_reduce(s, _SUM, group=pg)
        lse = m + torch.log(s)
        zt = torch.zeros(n, dtype=torch.float32, device=device)
        zt[mine] = _row_dot(x[mine], weight, bias, local[mine])
        dist.all_reduce(zt, _SUM, group=pg)
        losses = torch.where(valid, lse - zt, torch.zeros_like(lse))
        count = valid.sum().clamp(min=1)
        ctx.save_for_backward(x, weight, bias, local, valid, mine, lse_local - lse)
        ctx.reduction, ctx.chunks, ctx.pg, ctx.op, ctx.count = reduction, chunks, pg, op, count
        ctx.anchor = anchor
        if reduction == "none":
            return losses
        return losses.sum() / count if reduction == "mean" else losses.sum()

    @staticmethod
    def backward(ctx, grad):
        x, weight, bias, local, valid, mine, log_scale = ctx.saved_tensors
        n = x.shape[0]
        g = grad.float().expand(n) if ctx.reduction != "none" else grad.float()
        if ctx.reduction == "mean":
            g = g / ctx.count
        g = torch.where(valid, g, torch.zeros_like(g))
        token = g * torch.exp(log_scale)  # the slice's share of the global softmax, per token
        zero = torch.full((n,), ctx.anchor, dtype=local.dtype, device=x.device)
        with torch.enable_grad():
            xr, wr = x.detach().requires_grad_(), weight.detach().requires_grad_()
            br = bias.detach().requires_grad_() if bias is not None else None
            part = ctx.op(xr, wr, zero, br, reduction="none", chunks=ctx.chunks)
            torch.autograd.backward(part, token.to(part.dtype))
        dx, dw = xr.grad.float(), wr.grad.float()
        db = br.grad.float() if br is not None else None
        # The anchor's one-hot, which the slice's pass subtracted, back; the true targets' off.
        a = ctx.anchor
        dx += token[:, None] * weight[a].float()
        dw[a] += token @ x.float()
        dx[mine] -= g[mine, None] * weight[local[mine]].float()
        dw.index_add_(0, local[mine], -g[mine, None] * x[mine].float())
        if db is not None:
            db[a] += token.sum()
            db.index_add_(0, local[mine], -g[mine])
        dist.all_reduce(dx, _SUM, group=ctx.pg)
        return (
            dx.to(x.dtype),
            dw.to(weight.dtype),
            None,
            db.to(bias.dtype) if db is not None else None,
            None,
            None,
            None,
            None,
            None,
        )


def vocab_parallel_cross_entropy(
    x, weight, targets, bias: Optional[torch.Tensor], ignore_index, reduction, chunks, pg, op
):
    """x [N, D] (the same on every rank), weight [V_rank, D] this rank's contiguous slice, targets [N]
    global vocabulary indices; op: linear_cross_entropy on one slice."""
    if not dist.is_available() or not dist.is_initialized():
        raise ValueError("process_group: torch.distributed is not initialised")
    # A group of one rank in a larger world holds the whole vocabulary only if this rank does: a
    # rank given a group of its own by mistake would score each token against its slice alone, a
    # finite and wrong loss. With one tensor-parallel rank, the plain op is the same thing.
    if dist.get_world_size(pg) == 1 and dist.get_world_size() > 1:
        raise ValueError(
            f"process_group: a group of one rank in a world of {dist.get_world_size()}; pass the group whose "
            "ranks hold the whole vocabulary, or process_group=None when this rank holds all of it"
        )
    return _VocabParallel.apply(x, weight, targets, bias, ignore_index, reduction, chunks, pg, op)

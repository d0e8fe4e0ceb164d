"""The vocabulary split across 2 and 4 gloo ranks on CPU (the reference path; on CUDA the same code
runs the fused op on each slice): the loss, dX and each rank's dW and bias slice equal one process's
over the whole vocabulary, for each reduction, with ignored tokens and slices of unequal size."""
import os
import socket
import tempfile

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from powershape.torch import linear_cross_entropy

N, D, V = 24, 8, 64


def _port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])  # CUDA: every rank on GPU 0


def _data(ignore_index, device="cpu"):
    g = torch.Generator().manual_seed(1)
    x, w, b = torch.randn(N, D, generator=g), torch.randn(V, D, generator=g), torch.randn(V, generator=g)
    t = torch.randint(0, V, (N,), generator=g)
    t[::5] = ignore_index  # ignored tokens
    dtype = torch.bfloat16 if device == "cuda" else torch.float32  # the CUDA op takes bf16
    return x.to(device, dtype), w.to(device, dtype), b.to(device, dtype), t.to(device)


def _close(a, b, device):
    a, b = a.float().cpu(), b.float().cpu()
    if device == "cuda":  # bf16: the CUDA op tests' bound, 2% of the largest element (its rounding)
        return torch.allclose(a, b, rtol=0, atol=2e-2 * b.abs().max().item())
    return torch.allclose(a, b, rtol=1e-4, atol=1e-6)


def _bounds(world):  # unequal contiguous slices, in rank order (multiples of 8, as bf16 rows align)
    return {2: [0, 24, 64], 4: [0, 24, 32, 48, 64]}[world]


def _worker(rank, world, port, reduction, ignore_index, device, out):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world)
    try:
        x, w, b, t = _data(ignore_index, device)
        cuts = _bounds(world)
        xs = x.clone().requires_grad_()
        ws = w[cuts[rank] : cuts[rank + 1]].clone().requires_grad_()
        bs = b[cuts[rank] : cuts[rank + 1]].clone().requires_grad_()
        loss = linear_cross_entropy(
            xs, ws, t, bs, ignore_index=ignore_index, reduction=reduction, chunks=3, process_group=dist.group.WORLD
        )
        (loss.sum() if reduction == "none" else loss).backward()
        got = {"loss": loss.detach(), "dx": xs.grad, "dw": ws.grad, "db": bs.grad}
        torch.save({k: v.float().cpu() for k, v in got.items()}, f"{out}.{rank}")
    finally:
        dist.destroy_process_group()


@pytest.mark.skipif(not dist.is_available(), reason="torch without torch.distributed")
@pytest.mark.parametrize("world,reduction,ignore_index", [(2, "mean", -100), (4, "sum", -100), (2, "none", 0)])
@pytest.mark.parametrize("device", DEVICES)
def test_a_split_vocabulary_gives_the_whole_vocabularys_loss_and_gradients(world, reduction, ignore_index, device):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "r")
        mp.spawn(_worker, args=(world, _port(), reduction, ignore_index, device, out), nprocs=world)
        ranks = [torch.load(f"{out}.{r}") for r in range(world)]
    x, w, b, t = _data(ignore_index, device)
    x, w, b = x.requires_grad_(), w.requires_grad_(), b.requires_grad_()
    ref = linear_cross_entropy(x, w, t, b, ignore_index=ignore_index, reduction=reduction)
    (ref.sum() if reduction == "none" else ref).backward()
    cuts = _bounds(world)
    for r, got in enumerate(ranks):
        assert _close(got["loss"], ref.detach(), device)
        assert _close(got["dx"], x.grad, device)
        assert _close(got["dw"], w.grad[cuts[r] : cuts[r + 1]], device)
        assert _close(got["db"], b.grad[cuts[r] : cuts[r + 1]], device)


def test_a_split_vocabulary_refuses_what_it_cannot_do():
    x, w, _, t = _data(-100)
    with pytest.raises(ValueError, match="process_group"):
        linear_cross_entropy(x, w, t, label_smoothing=0.1, process_group=object())
    with pytest.raises(ValueError, match="not initialised"):
        linear_cross_entropy(x, w, t, process_group=object())


@pytest.mark.skipif(not dist.is_available(), reason="torch without torch.distributed")
def test_targets_no_rank_holds_are_refused():
    # A group that holds half the vocabulary (each rank given a group of its own, by mistake):
    # the targets in the other half once gave that half's loss, finite and wrong.
    dist.init_process_group("gloo", rank=0, world_size=1, init_method=f"tcp://127.0.0.1:{_port()}")
    try:
        x, w, _, t = _data(-100)
        t[1] = V - 1  # in the half this group lacks
        with pytest.raises(ValueError, match=f"outside the {V // 2} rows"):
            linear_cross_entropy(x, w[: V // 2], t, process_group=dist.group.WORLD)
        with pytest.raises(ValueError, match="outside"):
            linear_cross_entropy(x, w, torch.full_like(t, V), process_group=dist.group.WORLD)
    finally:
        dist.destroy_process_group()


def _own_group_worker(rank, port, out):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=2)
    try:
        mine = [dist.new_group([r]) for r in range(2)][rank]  # every rank must create every group
        x, w, _, t = _data(-100)
        t = t.clamp(0, V // 2 - 1)  # every target in this rank's half: nothing else would tell
        try:
            linear_cross_entropy(x, w[rank * V // 2 : (rank + 1) * V // 2], t, process_group=mine)
            said = "accepted"
        except ValueError as e:
            said = str(e)
        with open(f"{out}.{rank}", "w") as f:
            f.write(said)
    finally:
        dist.destroy_process_group()


@pytest.mark.skipif(not dist.is_available(), reason="torch without torch.distributed")
def test_a_rank_given_a_group_of_its_own_is_refused():
    # Each of two ranks holds half the vocabulary and was handed a one-rank group: the loss over its
    # half alone would be finite and wrong, with every target inside that half.
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "r")
        mp.spawn(_own_group_worker, args=(_port(), out), nprocs=2)
        for r in range(2):
            with open(f"{out}.{r}") as f:
                assert "a group of one rank in a world of 2" in f.read()

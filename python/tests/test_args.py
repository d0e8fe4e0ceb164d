"""Arguments checked before they reach ctypes: each bad value raises, naming the argument."""
import os

import pytest
import torch

import powershape
from powershape.torch import linear_cross_entropy

DATA = os.path.join(os.path.dirname(__file__), "..", "..", "data", "h200", "gemm_sustained_trace.csv")


def small():
    torch.manual_seed(0)
    return torch.randn(4, 8), torch.randn(16, 8), torch.randint(0, 16, (4,))


@pytest.mark.parametrize(
    "kwargs, error, name",
    [
        ({"label_smoothing": 2.0}, ValueError, "label_smoothing"),
        ({"label_smoothing": -1}, ValueError, "label_smoothing"),
        ({"label_smoothing": float("nan")}, ValueError, "label_smoothing"),
        ({"z_loss": -1}, ValueError, "z_loss"),
        ({"z_loss": float("inf")}, ValueError, "z_loss"),
        ({"softcap": -1}, ValueError, "softcap"),
        ({"chunks": 1.5}, TypeError, "chunks"),
        ({"chunks": True}, TypeError, "chunks"),
        ({"chunks": 10**30}, ValueError, "chunks"),
        ({"chunks": 2**32 + 1}, ValueError, "chunks"),
        ({"chunks": 2**31}, ValueError, "chunks"),
        ({"chunks": 65537}, ValueError, "chunks"),
        ({"chunks": 0}, ValueError, "chunks"),
        ({"chunks": float("nan")}, TypeError, "chunks"),
        ({"chunks": float("inf")}, TypeError, "chunks"),
        ({"chunks": "four"}, ValueError, "chunks"),
        ({"ignore_index": 2**63}, ValueError, "ignore_index"),
        ({"ignore_index": 0.5}, TypeError, "ignore_index"),
    ],
)
def test_op_arguments_are_checked_and_named(kwargs, error, name):
    x, w, t = small()
    with pytest.raises(error, match=name):
        linear_cross_entropy(x, w, t, **kwargs)


def test_good_arguments_still_run():
    x, w, t = small()
    a = linear_cross_entropy(x, w, t, chunks=2, label_smoothing=0.1, z_loss=1e-4, softcap=30.0)
    assert torch.isfinite(a)


@pytest.mark.parametrize(
    "kwargs, error, name",
    [
        ({"interval_ms": float("nan")}, ValueError, "interval_ms"),
        ({"interval_ms": 1e-9}, ValueError, "interval_ms"),
        ({"interval_ms": True}, TypeError, "interval_ms"),
        ({"gpus": [2**32]}, ValueError, "gpus"),
        ({"gpus": [True]}, TypeError, "gpus"),
    ],
)
def test_monitor_arguments_are_checked_and_named(kwargs, error, name):
    with pytest.raises(error, match=name):
        powershape.Monitor("fake:" + DATA, **kwargs)


@pytest.mark.parametrize(
    "t_ns, error",
    [(-1, ValueError), (2**63, ValueError), (1, ValueError), (powershape.now_ns() + 3600 * 10**9, ValueError)],
)
def test_window_times_outside_the_recording_are_refused(t_ns, error):
    with powershape.Monitor("fake:" + DATA) as m:
        with pytest.raises(error, match="t_ns"):
            m.begin_window("w", t_ns)


def test_window_names_keep_every_character():
    with powershape.Monitor("fake:" + DATA) as m:
        with pytest.raises(ValueError, match="NUL"):
            m.begin_window("a\0b")
        with pytest.raises(TypeError, match="name"):
            m.begin_window(b"bytes")

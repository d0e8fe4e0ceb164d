import pytest

torch = pytest.importorskip("torch")
from powershape.torch import LinearCrossEntropyLoss, linear_cross_entropy  # noqa: E402

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


def inputs(device, n=96, d=64, v=1003, dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = (torch.randn(n, d, generator=g) * 2).to(device=device, dtype=dtype).requires_grad_()
    w = (torch.randn(v, d, generator=g) * d**-0.5).to(device=device, dtype=dtype).requires_grad_()
    t = torch.randint(0, v, (n,), generator=g).to(device)
    t[::7] = -100
    return x, w, t


def eager(x, w, t, **kw):
    logits = x.float() @ w.float().t()
    return torch.nn.functional.cross_entropy(logits, t, ignore_index=-100, **kw)


def test_cpu_matches_torch_cross_entropy_and_its_gradients():
    x, w, t = inputs("cpu")
    for kw in ({}, {"reduction": "sum"}, {"label_smoothing": 0.1}):
        ours = linear_cross_entropy(x, w, t, **kw)
        ref = eager(x, w, t, **kw)
        assert torch.allclose(ours, ref, rtol=1e-5, atol=1e-5), kw
        gx, gw = torch.autograd.grad(ours, (x, w))
        rx, rw = torch.autograd.grad(ref, (x, w))
        assert torch.allclose(gx, rx, rtol=1e-4, atol=1e-6) and torch.allclose(gw, rw, rtol=1e-4, atol=1e-6)


def test_what_the_docstring_says_of_ignored_tokens_and_reductions():
    x, w, t = inputs("cpu")
    none = linear_cross_entropy(x, w, t, reduction="none")
    assert none.shape == t.shape and bool((none[t == -100] == 0).all())
    assert torch.allclose(none, eager(x, w, t, reduction="none"), rtol=1e-5, atol=1e-5)
    assert torch.allclose(none.sum() / (t != -100).sum(), linear_cross_entropy(x, w, t), rtol=1e-6)
    every = torch.full_like(t, -100)
    assert linear_cross_entropy(x, w, every).item() == 0  # torch's own gives NaN
    assert torch.isnan(eager(x, w, every))


def test_deterministic_algorithms_take_the_pass_not_the_exponent_in_the_product():
    from powershape.torch import _options

    def fuse():
        return _options(-100, 0, 0.0, 0.0, None, 0, True, False).fuse_exp

    assert fuse() == 1  # the op's default: the exponent in the product where the GPU takes it
    was = torch.are_deterministic_algorithms_enabled()
    torch.use_deterministic_algorithms(True)
    try:
        assert fuse() == 0
    finally:
        torch.use_deterministic_algorithms(was)


def test_z_loss_softcap_and_no_reduction():
    x, w, t = inputs("cpu")
    token = linear_cross_entropy(x, w, t, reduction="none", z_loss=1e-3, softcap=30.0)
    logits = 30.0 * torch.tanh((x @ w.t()) / 30.0)
    lse = torch.logsumexp(logits, -1)
    ce = torch.nn.functional.cross_entropy(logits, t, ignore_index=-100, reduction="none")
    expected = (ce + 1e-3 * lse**2) * (t != -100)
    assert torch.allclose(token, expected, rtol=1e-5, atol=1e-5)


def test_leading_dimensions_int32_targets_chunks_and_the_module():
    x, w, t = inputs("cpu")
    flat = linear_cross_entropy(x, w, t)
    batched = linear_cross_entropy(x.reshape(4, 24, -1), w, t.reshape(4, 24).to(torch.int32), chunks=3)
    assert torch.allclose(flat, batched)
    assert torch.allclose(LinearCrossEntropyLoss(chunks=5)(x, w, t), flat)
    per = linear_cross_entropy(x.reshape(4, 24, -1), w, t.reshape(4, 24), reduction="none")
    assert per.shape == (4, 24)


def test_cpu_bias_matches_torch():
    x, w, t = inputs("cpu")
    b = torch.randn(w.shape[0]).requires_grad_()
    ours = linear_cross_entropy(x, w, t, bias=b)
    ref = torch.nn.functional.cross_entropy(x @ w.t() + b, t, ignore_index=-100)
    assert torch.allclose(ours, ref, rtol=1e-5, atol=1e-5)
    assert torch.allclose(torch.autograd.grad(ours, b)[0], torch.autograd.grad(ref, b)[0], atol=1e-6)


def test_bad_arguments_are_named():
    x, w, t = inputs("cpu")
    with pytest.raises(ValueError, match="reduction"):
        linear_cross_entropy(x, w, t, reduction="avg")
    with pytest.raises(ValueError, match="targets"):
        linear_cross_entropy(x, w, t[:-1])
    with pytest.raises(ValueError, match="weight"):
        linear_cross_entropy(x, w[:, :-1], t)
    with pytest.raises(ValueError, match="int32 or int64"):
        linear_cross_entropy(x, w, t.float())
    with pytest.raises(ValueError, match="chunks"):
        linear_cross_entropy(x, w, t, chunks=0)
    with pytest.raises(ValueError, match="chunks"):
        linear_cross_entropy(x, w, t, chunks="best")
    assert torch.allclose(linear_cross_entropy(x, w, t, chunks="auto"), linear_cross_entropy(x, w, t))
    with pytest.raises(ValueError, match="accum_dtype"):
        linear_cross_entropy(x, w, t, accum_dtype=torch.float16)
    with pytest.raises(ValueError, match="bias"):
        linear_cross_entropy(x, w, t, bias=torch.zeros(3))
    # What torch's internals once answered: no vocabulary or hidden size, integer activations,
    # targets outside the vocabulary (ignore_index alone may be).
    with pytest.raises(ValueError, match="V and D must be at least 1"):
        linear_cross_entropy(x, w[:0], t)
    with pytest.raises(ValueError, match="V and D must be at least 1"):
        linear_cross_entropy(x[:, :0], w[:, :0], t)
    with pytest.raises(ValueError, match="floating-point"):
        linear_cross_entropy(x.long(), w, t)
    with pytest.raises(ValueError, match=f"outside \\[0, {w.shape[0]}\\)"):
        linear_cross_entropy(x, w, torch.full_like(t, w.shape[0]))
    with pytest.raises(ValueError, match="outside"):
        linear_cross_entropy(x, w, torch.full_like(t, -5))
    ignored = t.clone()
    ignored[0] = -100
    linear_cross_entropy(x, w, ignored)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU")
@pytest.mark.parametrize("chunks", [1, 3, None])  # None: the op's default count
@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"reduction": "sum"},
        {"label_smoothing": 0.1},
        {"z_loss": 1e-4, "softcap": 30.0},
        {"accum_dtype": torch.float32},
    ],
)
def test_cuda_matches_the_reference_in_bf16(chunks, kw):
    x, w, t = inputs("cuda", n=256, d=128, v=4099, dtype=torch.bfloat16)
    ours = linear_cross_entropy(x, w, t, chunks=chunks, **kw)
    gx, gw = torch.autograd.grad(ours * 2, (x, w))  # a scaled incoming gradient
    xr, wr = x.detach().float().cpu().requires_grad_(), w.detach().float().cpu().requires_grad_()
    ref = linear_cross_entropy(xr, wr, t.cpu(), **{k: v for k, v in kw.items() if k != "accum_dtype"})
    rx, rw = torch.autograd.grad(ref * 2, (xr, wr))
    assert abs(ours.item() - ref.item()) <= 2e-2 * abs(ref.item()) + 1e-3
    # bf16 gradients: within 2% of the largest element (a bf16 step at the scale of the sum's
    # gradients is 1%), and the scaled incoming gradient applied.
    assert torch.allclose(gx.float().cpu(), rx, rtol=0, atol=2e-2 * rx.abs().max().item())
    assert torch.allclose(gw.float().cpu(), rw, rtol=0, atol=2e-2 * rw.abs().max().item())
    assert gw.dtype == w.dtype  # whatever dW accumulated in, the gradient has the weight's dtype
    # An incoming gradient of 1 takes the path without the scaling pass. A second call is a new
    # run: with the exponent in the product (sm_90) each row's offset comes from whichever tile
    # finishes first, so the two differ in bf16's last bits, summed over V (on the H200 by more
    # than 1% of the largest element, two bf16 steps there): compared as the reference is, within
    # 2% (a lost factor of 2 would be off by half the largest element).
    g1x, g1w = torch.autograd.grad(linear_cross_entropy(x, w, t, chunks=chunks, **kw), (x, w))
    assert torch.allclose(g1x.float() * 2, gx.float(), rtol=0, atol=2e-2 * gx.abs().max().item())
    assert torch.allclose(g1w.float() * 2, gw.float(), rtol=0, atol=2e-2 * gw.abs().max().item())


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU")
def test_cuda_gradients_repeat_bit_for_bit_under_deterministic_algorithms():
    x, w, t = inputs("cuda", n=512, d=128, v=40000, dtype=torch.bfloat16)
    was = torch.are_deterministic_algorithms_enabled()
    torch.use_deterministic_algorithms(True)
    try:
        # The first call may time the products' algorithms (each shape once a process).
        runs = [torch.autograd.grad(linear_cross_entropy(x, w, t, chunks=2), (x, w)) for _ in range(4)][1:]
    finally:
        torch.use_deterministic_algorithms(was)
    for gx, gw in runs[1:]:
        assert torch.equal(gx, runs[0][0]) and torch.equal(gw, runs[0][1])


def grads_against_the_reference(x, w, b, t, weights, **kw):
    """Gradients of sum(weights x loss) from the CUDA op and from the CPU reference in fp32."""
    ours = linear_cross_entropy(x, w, t, bias=b, **kw)
    got = torch.autograd.grad((ours * weights).sum(), (x, w, b))
    leaves = [v.detach().float().cpu().requires_grad_() for v in (x, w, b)]
    ref = linear_cross_entropy(
        leaves[0], leaves[1], t.cpu(), bias=leaves[2], **{k: v for k, v in kw.items() if k != "chunks"}
    )
    want = torch.autograd.grad((ref * weights.cpu()).sum(), leaves)
    assert torch.allclose(ours.float().cpu(), ref, rtol=2e-2, atol=2e-2 * ref.abs().max().item())
    for g, r, name in zip(got, want, "xwb"):
        assert torch.allclose(g.float().cpu(), r, rtol=0, atol=2e-2 * r.abs().max().item()), name


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU")
@pytest.mark.parametrize("chunks", [1, 3])
@pytest.mark.parametrize("kw", [{}, {"label_smoothing": 0.1, "softcap": 20.0}])
def test_cuda_bias_and_per_token_gradients_of_reduction_none(chunks, kw):
    x, w, t = inputs("cuda", n=256, d=128, v=4099, dtype=torch.bfloat16)
    b = torch.randn(w.shape[0], device="cuda").to(torch.bfloat16).requires_grad_()
    per_token = torch.randn(x.shape[0], device="cuda")
    grads_against_the_reference(x, w, b, t, per_token, reduction="none", chunks=chunks, **kw)
    grads_against_the_reference(x, w, b, t, torch.tensor(0.5, device="cuda"), chunks=chunks, **kw)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU")
def test_cuda_a_second_backward_through_one_graph_is_refused():
    x, w, t = inputs("cuda", n=64, d=64, v=1000, dtype=torch.bfloat16)
    loss = linear_cross_entropy(x, w, t)
    loss.backward(retain_graph=True)
    with pytest.raises(RuntimeError, match="twice"):
        loss.backward()


@pytest.mark.skipif(
    not torch.cuda.is_available() or not hasattr(torch.library, "custom_op"), reason="needs a CUDA GPU and torch >= 2.4"
)
def test_torch_compile_traces_reduction_none_with_a_bias():
    x, w, t = inputs("cuda", n=256, d=128, v=4099, dtype=torch.bfloat16)
    b = torch.randn(w.shape[0], device="cuda").to(torch.bfloat16).requires_grad_()
    weights = torch.randn(x.shape[0], device="cuda")

    def step(x, w, b, t):
        return (linear_cross_entropy(x * 1.0, w, t, bias=b, reduction="none", chunks=2) * weights).sum()

    compiled = torch.compile(step, fullgraph=True)
    got = torch.autograd.grad(compiled(x, w, b, t), (x, w, b))
    want = torch.autograd.grad(step(x, w, b, t), (x, w, b))
    for g, r in zip(got, want):
        assert torch.allclose(g.float(), r.float(), rtol=1e-2, atol=1e-2 * r.abs().max().item())


@pytest.mark.skipif(
    not torch.cuda.is_available() or not hasattr(torch.library, "custom_op"), reason="needs a CUDA GPU and torch >= 2.4"
)
def test_torch_compile_traces_the_op_without_a_graph_break():
    x, w, t = inputs("cuda", n=256, d=128, v=4099, dtype=torch.bfloat16)

    def step(x, w, t):
        return linear_cross_entropy(x * 1.0, w, t, chunks=2) * 3

    compiled = torch.compile(step, fullgraph=True)  # fullgraph: a graph break is an error
    ours = compiled(x, w, t)
    gx, gw = torch.autograd.grad(ours, (x, w))
    ref = step(x, w, t)
    rx, rw = torch.autograd.grad(ref, (x, w))
    assert torch.allclose(ours, ref)
    assert torch.allclose(gx.float(), rx.float(), rtol=1e-2, atol=1e-2 * rx.abs().max().item())
    assert torch.allclose(gw.float(), rw.float(), rtol=1e-2, atol=1e-2 * rw.abs().max().item())


@pytest.mark.skipif(
    not torch.cuda.is_available() or not hasattr(torch.library, "custom_op"), reason="needs a CUDA GPU and torch >= 2.4"
)
def test_torch_compile_refuses_what_an_eager_call_refuses(monkeypatch):
    x, w, t = inputs("cuda", n=64, d=128, v=4099, dtype=torch.bfloat16)
    bad = (
        ({"chunks": 0}, "chunks must be in 1"),
        ({"chunks": True}, "not a bool"),
        ({"z_loss": True}, "z_loss must be a number, not True"),
        ({"label_smoothing": float("nan")}, "label_smoothing must be finite"),
        ({"softcap": -1.0}, "softcap must be in"),
        ({"chunks": 2**40}, "chunks must be in"),
    )
    for kw, match in bad:
        with pytest.raises((TypeError, ValueError), match=match):
            torch.compile(lambda x, w, t: linear_cross_entropy(x, w, t, **kw))(x, w, t)
    # The count optimize sets is read when the compiled op runs, not when it was traced.
    monkeypatch.delenv("POWERSHAPE_CHUNKS", raising=False)
    step = torch.compile(lambda x, w, t: linear_cross_entropy(x, w, t), fullgraph=True)
    step(x, w, t)
    monkeypatch.setenv("POWERSHAPE_CHUNKS", "many")
    with pytest.raises(Exception, match="POWERSHAPE_CHUNKS must be a count"):
        step(x, w, t)


def test_chunks_auto_asks_for_the_path_the_op_will_take(monkeypatch):
    # Whether the op takes the exponent in the logits product is the library's rule
    # (ps_lmhead_will_fuse): chunks="auto" asks it with the options the op will run with (label
    # smoothing; fuse_exp off under deterministic algorithms) and keys the tune cache on its answer.
    import contextlib

    import powershape.torch as pt
    from powershape import UnsupportedError
    from powershape._lib import lib as real_lib

    asked, told = [], []

    class Lib:
        def ps_lmhead_options_default(self, o):
            real_lib().ps_lmhead_options_default(o)

        def ps_lmhead_will_fuse(self, o):  # an sm_90 GPU's answer
            o = o._obj
            told.append((round(o.label_smoothing, 3), o.fuse_exp))
            return int(o.fuse_exp == 1 and o.label_smoothing == 0)

        def ps_lmhead_tuned_chunks(self, n, d, v, forward_only, exp, objective, device):
            asked.append(exp)
            return 3

    monkeypatch.setattr(pt, "lib", lambda: Lib())
    monkeypatch.setattr(pt, "_tuned", {})
    monkeypatch.setattr(torch.cuda, "device", lambda index: contextlib.nullcontext())
    try:
        real_lib()
    except UnsupportedError as e:
        pytest.skip(f"no libpowershape_c: {e}")
    assert pt._auto_chunks(256, 128, 4099, False, 0.0, 0) == 3
    assert pt._auto_chunks(256, 128, 4099, False, 0.1, 0) == 3
    was = torch.are_deterministic_algorithms_enabled()
    torch.use_deterministic_algorithms(True)
    try:
        pt._tuned.clear()
        assert pt._auto_chunks(256, 128, 4099, False, 0.0, 0) == 3
    finally:
        torch.use_deterministic_algorithms(was)
    assert told == [(0.0, 1), (0.1, 1), (0.0, 0)]
    assert asked == [1, 0, 0]


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU")
def test_cuda_chunks_auto_uses_what_tune_cached(tmp_path, monkeypatch):
    import subprocess

    from powershape._lib import cli, lib

    monkeypatch.setenv("POWERSHAPE_CACHE", str(tmp_path / "tune.json"))
    x, w, t = inputs("cuda", n=256, d=128, v=4099, dtype=torch.bfloat16)
    # The op as it runs here: on an sm_90 GPU with the exponent in the logits product.
    exp = int(torch.cuda.get_device_capability(0) == (9, 0))
    assert lib().ps_lmhead_tuned_chunks(256, 128, 4099, 0, exp, b"time", 0) == 0  # nothing cached yet
    subprocess.run(
        [
            cli(),
            "tune",
            "--workload",
            "lmhead",
            "--device",
            "gpu",
            "--shape",
            "256,128,4099",
            "--chunks",
            "1,2,3",
            "--window",
            "0.05",
            "--rounds",
            "2",
            "--no-model",
        ]
        + (["--exp-in-product"] if exp else []),
        check=True,
        capture_output=True,
    )
    tuned = lib().ps_lmhead_tuned_chunks(256, 128, 4099, 0, exp, b"time", 0)
    assert tuned in (1, 2, 3)
    ours = linear_cross_entropy(x, w, t, chunks="auto")
    assert torch.allclose(ours, linear_cross_entropy(x, w, t, chunks=tuned))

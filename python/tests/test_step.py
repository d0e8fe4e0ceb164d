import os
import time
import types

import pytest
import torch

import powershape
from powershape.hf import PowershapeCallback
from powershape.torch import linear_cross_entropy

DATA = os.path.join(os.path.dirname(__file__), "..", "..", "data", "h200", "gemm_sustained_trace.csv")


def test_a_step_is_marked_for_the_powershape_running_the_program(tmp_path, monkeypatch):
    fifo = str(tmp_path / "control")
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # the surrounding powershape's end
    monkeypatch.setenv("POWERSHAPE_CONTROL", fifo)
    with powershape.step("train step") as s:
        time.sleep(0.01)
    lines = os.read(reader, 4096).decode().splitlines()
    os.close(reader)
    assert s.sent and s.window is None
    assert [ln.split(" ", 2)[0] for ln in lines] == ["begin", "end"]
    assert all(ln.split(" ", 2)[2] == "train step" for ln in lines)
    assert int(lines[1].split()[1]) - int(lines[0].split()[1]) >= 10_000_000


def test_without_a_surrounding_powershape_a_step_sends_nothing_and_still_runs(monkeypatch):
    monkeypatch.delenv("POWERSHAPE_CONTROL", raising=False)
    with powershape.step() as s:
        pass
    assert not s.sent
    with pytest.raises(ValueError, match="name"):
        with powershape.step("bad\nname"):
            pass


def test_a_step_with_a_monitor_is_its_window_and_ends_when_the_step_raises():
    with powershape.Monitor("fake:" + DATA, interval_ms=2) as m:
        with powershape.step(monitor=m) as s:
            time.sleep(0.05)
        assert s.window is not None and 0.04 < s.window.time < 0.5
        with pytest.raises(RuntimeError):
            with powershape.step("failing", monitor=m) as f:
                raise RuntimeError("the step failed")
        assert f.window is not None


def test_a_step_given_its_tokens_has_its_energy_a_token():
    with powershape.Monitor("fake:" + DATA, interval_ms=2) as m:
        with powershape.step(monitor=m, tokens=1000) as s:
            time.sleep(0.05)
        assert s.window.total_energy > 0
        assert s.energy_per_token == pytest.approx(s.window.total_energy / 1000)
    with powershape.step(tokens=10) as bare:  # no monitor: no energy to share out
        pass
    assert bare.energy_per_token is None
    for bad, error in ((0, ValueError), (-5, ValueError), (2.5, TypeError), ("many", TypeError)):
        with pytest.raises(error, match="tokens"):
            with powershape.step(tokens=bad):
                pass


def test_the_op_takes_its_count_from_powershape_chunks(monkeypatch):
    x, w, t = torch.randn(8, 4), torch.randn(16, 4), torch.randint(0, 16, (8,))
    monkeypatch.setenv("POWERSHAPE_CHUNKS", "4")
    ref = linear_cross_entropy(x, w, t, chunks=1)
    assert torch.allclose(linear_cross_entropy(x, w, t), ref)
    for bad in ("0", "four", "-2", "99999999999"):
        monkeypatch.setenv("POWERSHAPE_CHUNKS", bad)
        with pytest.raises(ValueError, match="POWERSHAPE_CHUNKS"):
            linear_cross_entropy(x, w, t)
        assert torch.allclose(linear_cross_entropy(x, w, t, chunks=2), ref)  # a count given wins


class _Trainer:  # the parts of transformers' Trainer a callback meets
    def __init__(self, callbacks):
        self.callback_handler = types.SimpleNamespace(callbacks=list(callbacks))
        self.state = types.SimpleNamespace(log_history=[], num_input_tokens_seen=0, global_step=0)

    def train(self, steps, log_every, tokens_per_step=0):
        args, control = object(), object()
        cbs = self.callback_handler.callbacks
        for cb in cbs:
            cb.on_train_begin(args, self.state, control)
        logged = []
        for i in range(steps):
            for cb in cbs:
                cb.on_step_begin(args, self.state, control)
            time.sleep(0.02)
            self.state.global_step += 1
            self.state.num_input_tokens_seen += tokens_per_step
            for cb in cbs:
                cb.on_step_end(args, self.state, control)
            if (i + 1) % log_every == 0:
                logs = {"loss": 1.0}
                self.state.log_history.append(dict(logs, step=self.state.global_step))
                seen = []
                for cb in cbs:  # what each later callback (a logger) sees
                    cb.on_log(args, self.state, control, logs=logs)
                    seen.append(dict(logs))
                logged.append(seen)
        for cb in cbs:
            cb.on_train_end(args, self.state, control)
        return logged


class _Logger:
    def __getattr__(self, event):
        return lambda *a, **k: None


def test_the_callback_puts_energy_into_the_trainers_logs_before_the_loggers_read_them():
    mon = powershape.Monitor("fake:" + DATA, interval_ms=2)
    trainer = _Trainer([_Logger()])
    cb = PowershapeCallback(monitor=mon).attach(trainer)
    assert trainer.callback_handler.callbacks[0] is cb
    logged = trainer.train(steps=4, log_every=2, tokens_per_step=1024)
    for seen in logged:
        logger_saw = seen[1]
        for key in (
            "powershape/energy_j",
            "powershape/avg_power_w",
            "powershape/sm_clock_mhz",
            "powershape/power_capped",
        ):
            assert key in logger_saw, key
        assert 0.015 < logger_saw["powershape/step_s"] < 0.5
        assert logger_saw["powershape/j_per_token"] == pytest.approx(logger_saw["powershape/energy_j"] / 2048)
    assert "powershape/energy_j" in trainer.state.log_history[-1]
    mon.close()


def test_the_callback_drives_the_chunk_count_through_the_environment(monkeypatch):
    monkeypatch.delenv("POWERSHAPE_CHUNKS", raising=False)
    seen = []

    class Chunker:
        def __init__(self):
            self.reports = []

        def next(self):
            return 2 if len(self.reports) % 2 else 4

        def report(self, chunks, ms, joules):
            seen.append(os.environ["POWERSHAPE_CHUNKS"])
            self.reports.append((chunks, ms, joules))

    chunker = Chunker()
    cb = PowershapeCallback(source="fake:" + DATA, tokens_per_step=10, chunker=chunker)
    _Trainer([cb]).train(steps=3, log_every=3)
    assert seen == ["4", "2", "4"]
    assert [c for c, _, _ in chunker.reports] == [4, 2, 4]
    assert all(ms > 15 for _, ms, _ in chunker.reports)
    assert "POWERSHAPE_CHUNKS" not in os.environ and cb.monitor is None  # its own monitor, closed


EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "finetune.py")


def test_the_example_trains_a_tiny_qwen2_and_marks_its_steps(tmp_path, monkeypatch):
    pytest.importorskip("transformers")  # on the GPU machine's image; not packaged by Debian 12
    import subprocess
    import sys

    fifo = str(tmp_path / "control")
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    env = dict(os.environ, POWERSHAPE_CONTROL=fifo, POWERSHAPE_CHUNKS="2")
    done = subprocess.run([sys.executable, EXAMPLE, "--tiny", "--steps", "3"], env=env, capture_output=True, text=True)
    marks = os.read(reader, 65536).decode().splitlines()
    os.close(reader)
    assert done.returncode == 0, done.stderr
    assert "3 steps" in done.stdout
    assert [m.split()[0] for m in marks] == ["begin", "end"] * 3


def test_the_callback_under_a_real_trainer(tmp_path):
    transformers = pytest.importorskip("transformers")
    from transformers import Qwen2Config, Qwen2ForCausalLM, Trainer, TrainingArguments

    cfg = Qwen2Config(
        vocab_size=512, hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2,
        num_key_value_heads=1,
    )  # fmt: skip
    data = [{"input_ids": torch.randint(0, 512, (16,)), "labels": torch.randint(0, 512, (16,))} for _ in range(8)]
    args = TrainingArguments(
        output_dir=str(tmp_path), max_steps=4, logging_steps=2, per_device_train_batch_size=2, report_to=[],
        use_cpu=True, save_strategy="no",
    )  # fmt: skip
    trainer = Trainer(model=Qwen2ForCausalLM(cfg), args=args, train_dataset=data)
    PowershapeCallback(source="fake:" + DATA, tokens_per_step=32).attach(trainer)
    trainer.train()
    logged = [h for h in trainer.state.log_history if "loss" in h]
    assert len(logged) == 2 and transformers.__version__
    assert all("powershape/energy_j" in h and "powershape/j_per_token" in h for h in logged)

import os
import time

import pytest

import powershape

DATA = os.path.join(os.path.dirname(__file__), "..", "..", "data", "h200", "gemm_sustained_trace.csv")


def test_windows_over_a_replayed_h200_trace():
    with powershape.Monitor("fake:" + DATA, interval_ms=2) as m:
        assert m.gpu_count == 1
        m.begin_window("outer")
        time.sleep(0.2)
        m.begin_window("inner")  # overlapping windows
        time.sleep(0.5)  # the replayed load starts 0.5 s in
        inner = m.end_window("inner")
        outer = m.end_window("outer")
    assert 0.45 < inner.seconds < 0.7
    assert outer.seconds > inner.seconds
    assert inner.energy_j > 0 and inner.energy_method in ("counter", "power")
    assert inner.avg_power_w <= inner.peak_power_w * 1.01
    assert 300 < inner.sm_clock_mhz <= 1980
    assert 0 <= inner.power_capped <= 1
    assert inner.gpu_energy == {0: inner.energy_j}


def test_a_windows_cpu_energy_through_a_powercap_tree(tmp_path, monkeypatch):
    # Zeus' cpu_energy and dram_energy, from each package's RAPL zone and its DRAM's, read at the
    # edges; a zone that cannot be read is None.
    pkg = tmp_path / "intel-rapl:0"
    dram = pkg / "intel-rapl:0:0"
    dram.mkdir(parents=True)
    (pkg / "name").write_text("package-0\n")
    (pkg / "max_energy_range_uj").write_text("262143328850\n")
    (pkg / "energy_uj").write_text("1000000\n")
    (dram / "name").write_text("dram\n")
    (dram / "max_energy_range_uj").write_text("65712999613\n")
    (dram / "energy_uj").write_text("5000\n")
    monkeypatch.setenv("POWERSHAPE_POWERCAP", str(tmp_path))
    with powershape.Monitor("fake:" + DATA) as m:
        m.begin_window("w")
        (pkg / "energy_uj").write_text("3500000\n")
        (dram / "energy_uj").write_text("1005000\n")
        w = m.end_window("w")
        assert w.cpu_zones == {"package-0": 2.5, "package-0 dram": 1.0}
        assert w.cpu_energy == {0: 2.5} and w.dram_energy == {0: 1.0}
        (pkg / "energy_uj").write_text("not a number\n")
        m.begin_window("x")
        assert m.end_window("x").cpu_energy == {0: None}
    monkeypatch.setenv("POWERSHAPE_POWERCAP", str(tmp_path / "none"))
    with powershape.Monitor("fake:" + DATA) as m:
        m.begin_window("w")
        w = m.end_window("w")
    assert w.cpu_zones == {} and w.cpu_energy is None and w.dram_energy is None


def test_errors_are_one_line_and_name_the_thing():
    # Each kind of failure is a class of its own, with .kind: a caller's mistake is also a
    # ValueError; what the machine lacks is UnsupportedError; all are PowershapeErrors.
    with pytest.raises(powershape.InvalidInputError, match="bogus") as bad:
        powershape.Monitor("bogus")
    assert isinstance(bad.value, ValueError) and bad.value.kind == "invalid_input"
    with pytest.raises(powershape.UnsupportedError, match="hwmon|rails") as lacks:
        powershape.Monitor("hwmon:/nonexistent")
    assert isinstance(lacks.value, powershape.PowershapeError) and lacks.value.kind == "unsupported"
    assert powershape.DeviceError("x").kind == "device"
    with powershape.Monitor("fake:" + DATA) as m:
        with pytest.raises(ValueError, match="no region 'never' is open"):
            m.end_window("never")
    with pytest.raises(ValueError, match="closed"):
        m.begin_window("late")


def test_a_missing_library_is_named(monkeypatch):
    from powershape import _lib

    monkeypatch.setattr(_lib, "_lib", None)
    monkeypatch.setenv("POWERSHAPE_LIB", "/nonexistent/libpowershape_c.so")
    with pytest.raises(
        powershape.UnsupportedError,
        match=r"cannot find libpowershape_c.so \(looked in: /nonexistent/libpowershape_c.so",
    ):
        _lib.lib()


def test_windows_reach_an_enclosing_recorder(tmp_path, monkeypatch):
    """Under `powershape monitor` or `compare` (POWERSHAPE_CONTROL set) a window is also sent to
    the enclosing recorder, one line a boundary."""
    fifo = tmp_path / "control"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    monkeypatch.setenv("POWERSHAPE_CONTROL", str(fifo))
    with powershape.Monitor("fake:" + DATA) as m:
        m.begin_window("step")
        m.end_window("step")
    lines = os.read(reader, 4096).decode().splitlines()
    os.close(reader)
    assert [line.split()[0] for line in lines] == ["begin", "end"]
    assert all(line.split()[2] == "step" for line in lines)
    assert int(lines[1].split()[1]) >= int(lines[0].split()[1])


class _FakeCuda:
    """torch.cuda as the monitor sees it: two devices whose synchronize calls are counted."""

    def __init__(self):
        self.synced = []

    def is_available(self):
        return True

    def device_count(self):
        return 2

    def synchronize(self, i):
        self.synced.append((i, time.monotonic_ns()))


def test_window_edges_wait_for_the_gpus_as_zeus_does(monkeypatch):
    import sys
    import types

    cuda = _FakeCuda()
    monkeypatch.setitem(sys.modules, "torch", types.SimpleNamespace(cuda=cuda))
    with powershape.Monitor("fake:" + DATA, interval_ms=2) as m:
        m.begin_window("step")
        assert [i for i, _ in cuda.synced] == [0, 1]  # every device, before the edge
        w = m.end_window("step")
        assert len(cuda.synced) == 4
        m.begin_window("async", sync_execution=False)
        m.end_window("async", sync_execution=False)
        m.begin_window("stamped", t_ns=powershape.now_ns())  # an explicit time: no wait
        m.end_window("stamped")
        assert len(cuda.synced) == 6  # the end, stamped now, waits
        with pytest.raises(ValueError, match="sync_execution"):
            m.begin_window("x", sync_execution="yes")
    assert w.time == w.seconds and w.total_energy == w.energy_j  # Zeus' names


def test_without_torch_nothing_waits(monkeypatch):
    import sys

    monkeypatch.delitem(sys.modules, "torch", raising=False)
    with powershape.Monitor("fake:" + DATA, interval_ms=2) as m:
        m.begin_window("step")
        m.end_window("step")
        with pytest.raises(ValueError, match="needs torch with CUDA"):
            m.begin_window("forced", sync_execution=True)

"""Energy, power, clocks and throttling of named windows of a program, the way Zeus users know it.

    from powershape import Monitor
    with Monitor() as m:                 # NVML, every GPU; Monitor("fake:trace.csv") replays one
        m.begin_window("step")
        train_step()
        w = m.end_window("step")
    print(w.energy_j, w.avg_power_w, w.power_capped)
    print(w.cpu_energy, w.dram_energy)   # the CPUs' through RAPL, where Linux powercap has them

Windows may overlap and nest. Times are CLOCK_MONOTONIC, shared with `powershape mark`. As in
Zeus, each window edge first waits for the work queued on the GPUs (torch.cuda.synchronize) when
torch is imported and has CUDA, so the window measures the work launched inside it, not only its
launches; `sync_execution=False` stamps the edge at once. The CPUs' energy (RAPL, Intel and AMD)
is read at each edge's call, as Zeus reads it.
"""
import ctypes
import math
import sys
from dataclasses import dataclass, field
from typing import Dict, Optional, Sequence

from ._args import INT32_MAX, integer, real, text
from ._lib import check, lib, struct

_METHODS = {0: None, 1: "counter", 2: "power"}


def _value(x: float) -> Optional[float]:
    return None if math.isnan(x) else x


@dataclass
class GpuWindow:
    """What one GPU did over a window. None where the source cannot say."""

    gpu: int
    seconds: float
    energy_j: Optional[float]
    energy_method: Optional[str]  # "counter" (NVML's energy counter) or "power" (integrated)
    avg_power_w: Optional[float]
    peak_power_w: Optional[float]
    sm_clock_mhz: Optional[float]  # time-weighted mean
    sm_clock_p5_mhz: Optional[float]
    sm_clock_p50_mhz: Optional[float]
    sm_clock_p95_mhz: Optional[float]
    power_capped: Optional[float]  # fraction of the window
    thermal_throttled: Optional[float]
    peak_temp_c: Optional[float]

    @staticmethod
    def of(s) -> "GpuWindow":
        return GpuWindow(
            s.gpu,
            s.seconds,
            _value(s.energy_j),
            _METHODS.get(s.energy_method),
            _value(s.avg_power_w),
            _value(s.peak_power_w),
            _value(s.sm_clock_mean_mhz),
            _value(s.sm_clock_p5_mhz),
            _value(s.sm_clock_p50_mhz),
            _value(s.sm_clock_p95_mhz),
            _value(s.power_capped),
            _value(s.thermal_throttled),
            _value(s.peak_temp_c),
        )


@dataclass
class Window:
    """A window over every recorded GPU: `gpus[i]` per GPU; time, and energy summed over GPUs."""

    name: str
    seconds: float
    gpus: Sequence[GpuWindow]
    # Each RAPL zone's J ("package-0", "package-0 dram"); None for a zone that could not be read
    # (energy_uj is root's alone since Linux 5.10: `sudo chmod o+r` it, or run as root); empty
    # without powercap.
    cpu_zones: Dict[str, Optional[float]] = field(default_factory=dict)

    def _zones(self, dram: bool) -> Optional[Dict[int, Optional[float]]]:
        out = {}
        for zone, j in self.cpu_zones.items():
            package, _, rest = zone.partition(" ")
            if package.startswith("package-") and package[8:].isdigit() and (rest == "dram") == dram:
                out[int(package[8:])] = j
        return out or None

    @property
    def cpu_energy(self) -> Optional[Dict[int, Optional[float]]]:
        """Each CPU package's J, keyed by its index (Zeus' Measurement.cpu_energy); None without
        RAPL."""
        return self._zones(False)

    @property
    def dram_energy(self) -> Optional[Dict[int, Optional[float]]]:
        """Each package's DRAM J (Zeus' Measurement.dram_energy); None without a DRAM zone."""
        return self._zones(True)

    @property
    def energy_j(self) -> Optional[float]:
        e = [g.energy_j for g in self.gpus]
        return None if any(x is None for x in e) else sum(e)

    @property
    def gpu_energy(self) -> Dict[int, Optional[float]]:
        """Energy per GPU, keyed by index (as Zeus' Measurement.gpu_energy)."""
        return {g.gpu: g.energy_j for g in self.gpus}

    @property
    def time(self) -> float:
        """Seconds (Zeus' Measurement.time)."""
        return self.seconds

    @property
    def total_energy(self) -> Optional[float]:
        """Joules over every GPU (Zeus' Measurement.total_energy)."""
        return self.energy_j

    def __getattr__(self, field):  # avg_power_w, power_capped, ...: GPU 0's, for one-GPU use
        if field.startswith("_") or not self.gpus:
            raise AttributeError(field)
        return getattr(self.gpus[0], field)


def _sync(sync_execution: Optional[bool], t_ns: int) -> None:
    """Waits for every visible CUDA device's queued work, as Zeus' sync_execution does: by default
    when torch is already imported (never imported here for it) and has CUDA, and the edge is now."""
    if sync_execution is not None and not isinstance(sync_execution, bool):
        raise ValueError(f"sync_execution: expected True, False or None, got {sync_execution!r}")
    torch = sys.modules.get("torch")
    if sync_execution is False or (sync_execution is None and t_ns != 0):
        return
    if torch is None or not torch.cuda.is_available():
        if sync_execution:
            raise ValueError("sync_execution=True needs torch with CUDA")
        return
    for i in range(torch.cuda.device_count()):
        torch.cuda.synchronize(i)


class Monitor:
    """Records GPU telemetry in a background thread of libpowershape_c from open to close().

    source: "nvml" (default), "fake:TRACE.csv" (replay), "hwmon[:ROOT]" (Jetson rails) or
    "sim:PROFILE" (a simulated GPU running the LM head);
    gpus: NVML indices (default all); interval_ms: sampling period (default 10).
    """

    def __init__(self, source: str = "nvml", gpus: Optional[Sequence[int]] = None, interval_ms: float = 10):
        self._r = None
        source_c = text("source", source)
        gpus = [integer("gpus", g, 0, INT32_MAX) for g in gpus] if gpus is not None else []
        interval = real("interval_ms", interval_ms)
        L = lib()
        arr = (ctypes.c_int * len(gpus))(*gpus) if gpus else None
        self._r = L.ps_recorder_open(source_c, arr, len(gpus), interval)
        check(self._r)
        self.gpu_count = L.ps_recorder_gpu_count(self._r)

    def begin_window(self, name: str, t_ns: int = 0, sync_execution: Optional[bool] = None) -> None:
        """Begins a window now (or at t_ns, CLOCK_MONOTONIC, within the recording). sync_execution:
        wait for the GPUs' queued work first (default: when torch with CUDA is imported and no
        t_ns is given)."""
        self._check_open()
        name_c, t = text("name", name), integer("t_ns", t_ns, 0)
        _sync(sync_execution, t)
        check(lib().ps_region_begin(self._r, name_c, t) == 0)

    def end_window(self, name: str, t_ns: int = 0, sync_execution: Optional[bool] = None) -> Window:
        """Ends the innermost open window of that name and returns what each GPU did over it
        (sync_execution as begin_window's)."""
        self._check_open()
        name_c, t = text("name", name), integer("t_ns", t_ns, 0)
        _sync(sync_execution, t)
        out = (struct("ps_summary") * max(1, self.gpu_count))()
        n = lib().ps_region_end(self._r, name_c, t, out, len(out))
        check(n >= 0)
        gpus = [GpuWindow.of(out[i]) for i in range(n)]
        return Window(name, gpus[0].seconds if gpus else 0.0, gpus, self._cpu_energy(name_c))

    def _cpu_energy(self, name: bytes) -> Dict[str, Optional[float]]:
        L = lib()
        zones = L.ps_cpu_zone(self._r, 0, None, 0)
        check(zones >= 0)
        joules = (ctypes.c_double * max(1, zones))()
        check(L.ps_region_cpu_energy(self._r, name, joules, zones) >= 0)
        out = {}
        for i in range(zones):
            buf = ctypes.create_string_buffer(64)
            check(L.ps_cpu_zone(self._r, i, buf, len(buf)) >= 0)
            out[buf.value.decode(errors="replace")] = _value(joules[i])
        return out

    def close(self) -> None:
        if self._r:
            lib().ps_recorder_close(self._r)
            self._r = None

    def _check_open(self):
        if not self._r:
            raise ValueError("the monitor is closed")

    def __enter__(self) -> "Monitor":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self):
        self.close()


def now_ns() -> int:
    """CLOCK_MONOTONIC in ns: the clock windows and `powershape mark` use."""
    return lib().ps_now_ns()

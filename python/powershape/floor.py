"""A power floor by filler work, in process: through a gap in a training step (a collective, data
loading, a host wait), a side stream runs matrix products so that the GPU's power stays up instead
of falling to idle, and stops when the gap's time is over (docs/grid.md). It flattens the swing
that synchronous fleets put on the grid, at the price of the filler's energy.

    from powershape.torch import smooth
    floor = smooth(intensity=0.5)            # half of each 2 ms of a gap in products
    for batch in data:
        loss = model(batch).loss; loss.backward()
        with floor.gap(0.045):               # the expected gap, in seconds
            all_reduce_gradients()           # or anything that leaves the GPU idle
        opt.step()

`intensity` is the share of each period the products run; the rest one SM spins
(torch.cuda._sleep), so the power between idle and the products' is chosen by it
(`bench/floor_power.py` measures the curve on a GPU; `floor_w=` picks the intensity from such a
curve). The filler is queued up front for `fill` (0.9) of the expected gap and then runs on its
own: a gap shorter than expected lets the filler overrun into the job's work, which then shares
the GPU with it. The filler stream has the least priority, which torch's default streams have
too: a job that runs its own streams at a higher one (torch.cuda.Stream(priority=-1)) gets the SMs
first as the filler's blocks end; otherwise the two share them.
"""
from typing import Dict, Optional

from ._args import real

_PERIOD_S = 2e-3  # products and a spin alternate at this period: far above the grid's 20 Hz


class PowerFloor:
    """Filler work on `device` (default: torch's current CUDA device)."""

    def __init__(
        self,
        intensity: float = 1.0,
        floor_w: Optional[float] = None,
        curve: Optional[Dict[float, float]] = None,
        size: int = 4096,
        fill: float = 0.9,
        device=None,
    ):
        import torch

        if not torch.cuda.is_available():
            raise RuntimeError("powershape: a power floor needs a CUDA GPU (torch.cuda.is_available() is False)")
        if floor_w is not None:
            if not curve:
                raise ValueError("floor_w: needs curve, the filler's watts by intensity (bench/floor_power.py)")
            intensity = intensity_for(real("floor_w", floor_w, 0, 1e5), curve)
        self.intensity = real("intensity", intensity, 0, 1)
        self.fill = real("fill", fill, 0, 1)
        if not isinstance(size, int) or isinstance(size, bool) or not 256 <= size <= 16384:
            raise ValueError(f"size: expected a whole number from 256 to 16384, got {size!r}")
        self._torch = torch
        self.device = torch.device("cuda", torch.cuda.current_device()) if device is None else torch.device(device)
        least, _ = torch.cuda.Stream.priority_range()  # (least, greatest): the larger number is lower
        self.stream = torch.cuda.Stream(device=self.device, priority=least)
        g = torch.Generator(device=self.device).manual_seed(0)
        self._a = torch.randn(size, size, device=self.device, dtype=torch.bfloat16, generator=g)
        self._b = torch.randn(size, size, device=self.device, dtype=torch.bfloat16, generator=g)
        self._c = torch.empty(size, size, device=self.device, dtype=torch.bfloat16)
        self._product_s = None
        self._cycles_per_s = None
        self.filled_s = 0.0  # the filler's queued time so far

    def _calibrate(self):
        """Times one product and the spin's cycles on this GPU, once (~80 ms). The spin counts SM
        cycles, so both are timed after 30 ms of products have brought an idle GPU's clock up to
        where the filler runs: timed at an idle clock, each spin would end early by its ratio."""
        torch = self._torch
        with torch.cuda.stream(self.stream):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            warmed_ms = 0.0
            for _ in range(100):  # bounded: 100 blocks of 10 products, whatever the GPU's speed
                start.record()
                for _ in range(10):
                    torch.mm(self._a, self._b, out=self._c)
                end.record()
                end.synchronize()
                warmed_ms += start.elapsed_time(end)
                if warmed_ms >= 30.0:
                    break
            start.record()
            for _ in range(10):
                torch.mm(self._a, self._b, out=self._c)
            end.record()
            end.synchronize()
            self._product_s = start.elapsed_time(end) * 1e-3 / 10
            start.record()
            torch.cuda._sleep(10_000_000)
            end.record()
            end.synchronize()
            self._cycles_per_s = 10_000_000 / (start.elapsed_time(end) * 1e-3)

    def queue(self, seconds: float) -> None:
        """Queues `seconds` of filler on the side stream after the work queued so far."""
        seconds = real("seconds", seconds, 0, 3600)
        if seconds == 0 or self.intensity == 0:
            return
        if self._product_s is None:
            self._calibrate()
        torch = self._torch
        self.stream.wait_stream(torch.cuda.current_stream(self.device))
        periods = max(1, round(seconds / _PERIOD_S))
        per = seconds / periods
        products = per * self.intensity / self._product_s
        spin_cycles = int(per * (1 - self.intensity) * self._cycles_per_s)
        carry = 0.0
        with torch.cuda.stream(self.stream):
            for _ in range(periods):
                carry += products
                for _ in range(int(carry)):
                    torch.mm(self._a, self._b, out=self._c)
                carry -= int(carry)
                if spin_cycles > 0:
                    torch.cuda._sleep(spin_cycles)
        self.filled_s += seconds

    def gap(self, seconds: float):
        """A context for a gap expected to last `seconds`: fills `fill` of it on entry."""
        floor = self

        class _Gap:
            def __enter__(self):
                floor.queue(real("seconds", seconds, 0, 3600) * floor.fill)
                return floor

            def __exit__(self, *exc):
                return False

        return _Gap()


def intensity_for(floor_w: float, curve: Dict[float, float]) -> float:
    """The intensity whose filler draws `floor_w`, interpolated in a measured curve {intensity: W}
    (bench/floor_power.py); the ends where the floor lies outside it."""
    points = sorted((real("intensity", float(k), 0, 1), real("watts", float(v), 0, 1e5)) for k, v in curve.items())
    if len(points) < 2:
        raise ValueError("curve: needs two points or more")
    if floor_w <= points[0][1]:
        return points[0][0]
    for (i0, w0), (i1, w1) in zip(points, points[1:]):
        if w0 <= floor_w <= w1:
            return i0 if w1 == w0 else i0 + (i1 - i0) * (floor_w - w0) / (w1 - w0)
    return points[-1][0]


def smooth(
    intensity: float = 1.0, floor_w: Optional[float] = None, curve: Optional[Dict[float, float]] = None, **kw
) -> PowerFloor:
    """A PowerFloor (see its module): `powershape.torch.smooth(intensity=0.5)`."""
    return PowerFloor(intensity=intensity, floor_w=floor_w, curve=curve, **kw)


__all__ = ["PowerFloor", "intensity_for", "smooth"]

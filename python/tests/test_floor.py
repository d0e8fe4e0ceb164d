"""The power floor's filler (powershape.floor): its arguments everywhere, its timing on a GPU."""
import time

import pytest

from powershape.floor import PowerFloor, intensity_for

torch = pytest.importorskip("torch")
gpu = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU")


def test_intensity_for_interpolates_a_measured_curve():
    curve = {0.0: 120.0, 0.5: 400.0, 1.0: 680.0}
    assert intensity_for(260.0, curve) == pytest.approx(0.25)
    assert intensity_for(680.0, curve) == pytest.approx(1.0)
    assert intensity_for(50.0, curve) == 0.0  # below the curve: its lowest end
    assert intensity_for(900.0, curve) == 1.0  # above it: its highest
    with pytest.raises(ValueError, match="two points"):
        intensity_for(100.0, {0.5: 300.0})
    with pytest.raises(ValueError, match="intensity"):
        intensity_for(100.0, {0.5: 300.0, 2.0: 400.0})


@pytest.mark.skipif(torch.cuda.is_available(), reason="a GPU is here")
def test_without_a_gpu_it_says_so():
    with pytest.raises(RuntimeError, match="needs a CUDA GPU"):
        PowerFloor()


@gpu
def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="intensity"):
        PowerFloor(intensity=1.5)
    with pytest.raises(ValueError, match="floor_w: needs curve"):
        PowerFloor(floor_w=300)
    with pytest.raises(ValueError, match="size"):
        PowerFloor(size=10)
    with pytest.raises(ValueError, match="seconds"):
        PowerFloor().queue(float("nan"))


@gpu
@pytest.mark.parametrize("intensity", [0.3, 1.0])
def test_the_filler_lasts_about_what_was_asked(intensity):
    floor = PowerFloor(intensity=intensity)
    floor.queue(0.01)  # calibrates
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    floor.queue(0.5)
    floor.stream.synchronize()
    took = time.perf_counter() - t0
    assert 0.35 < took < 0.75, took


@gpu
def test_a_gap_fills_its_share_and_leaves_the_job_alone():
    floor = PowerFloor(intensity=0.5, fill=0.8)
    with floor.gap(0.1):
        time.sleep(0.1)
    assert floor.filled_s == pytest.approx(0.08)
    x = torch.ones(4, device="cuda")
    assert float((x * 2).sum()) == 8.0  # the job's own stream still works

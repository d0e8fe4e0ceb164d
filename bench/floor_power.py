#!/usr/bin/env python3
"""The power floor's filler (powershape.floor) on this GPU: its mean power against its intensity,
each held for --seconds after the GPU idled, measured by powershape's Monitor (NVML's energy
counter), with idle measured in the same run as the reference. Prints a table and the curve as
JSON, which `smooth(floor_w=W, curve=...)` takes to hold a floor in watts.

  python3 bench/floor_power.py [--seconds 3] [--intensities 0,0.25,0.5,0.75,1]
"""
import argparse
import json
import os
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from powershape import Monitor  # noqa: E402
from powershape.floor import PowerFloor  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=3)
    ap.add_argument("--intensities", default="0,0.25,0.5,0.75,1")
    a = ap.parse_args()
    if not 0.5 <= a.seconds <= 60:
        sys.exit("floor_power.py: --seconds: expected 0.5 to 60")
    levels = [float(x) for x in a.intensities.split(",")]
    curve = {}
    with Monitor(interval_ms=10) as m:
        time.sleep(1)
        m.begin_window("idle")
        time.sleep(a.seconds)
        idle = m.end_window("idle").avg_power_w
        print(f"{'intensity':>10} {'W':>8} {'over idle':>10} {'filler s':>9}")
        print(f"{'idle':>10} {idle:8.1f} {0:10.1f} {0:9.2f}")
        for level in levels:
            floor = PowerFloor(intensity=level)
            floor.queue(0.05)  # calibrates
            torch.cuda.synchronize()
            time.sleep(1)
            m.begin_window("filler")
            t0 = time.perf_counter()
            floor.queue(a.seconds)
            floor.stream.synchronize()
            took = time.perf_counter() - t0
            w = m.end_window("filler").avg_power_w
            curve[level] = round(w, 1)
            print(f"{level:10.2f} {w:8.1f} {w - idle:10.1f} {took:9.2f}")
    print(json.dumps({"idle_w": round(idle, 1), "curve": curve}))


if __name__ == "__main__":
    main()

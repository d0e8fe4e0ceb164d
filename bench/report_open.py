#!/usr/bin/env python3
"""How long `powershape report`'s page takes to open on a long trace.

Writes an hour of 1 ms samples of one GPU (power with a 50 ms square wave, SM clock, temperature,
clock-event reasons, energy), runs `powershape report` on it, loads the page in headless Chromium
and prints the file sizes, the report's own time and the page's time from navigation to every
plot drawn (the page records it in <body data-ms>). The issue's target: under 2 s.

Usage: bench/report_open.py BUILD/powershape [--seconds 3600] [--keep DIR]
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time


def write_trace(path, seconds):
    with open(path, "w") as f:
        f.write("t_ns,gpu,power_instant_mw,sm_clock_mhz,gpu_temp_c,clock_event_reasons,energy_mj\n")
        energy = 0
        rows = []
        for i in range(int(seconds * 1000)):
            busy = (i // 25) % 2 == 0
            p = 690000 if busy else 120000
            energy += p // 1000
            rows.append(
                "%d,0,%d,%d,%d,%d,%d\n"
                % (i * 1000000, p, 1590 if busy else 1980, 40 + (i // 60000) % 20, 4 if busy else 0, energy)
            )
            if len(rows) == 100000:
                f.writelines(rows)
                rows = []
        f.writelines(rows)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("powershape")
    ap.add_argument("--seconds", type=float, default=3600)
    ap.add_argument("--keep")
    a = ap.parse_args()
    browser = shutil.which("chromium-headless-shell") or shutil.which("chromium")
    if not browser:
        sys.exit("report_open: no chromium-headless-shell or chromium (scripts/deps.sh installs it)")
    d = a.keep or tempfile.mkdtemp()
    csv, html = os.path.join(d, "hour.csv"), os.path.join(d, "hour.html")
    write_trace(csv, a.seconds)
    t0 = time.time()
    subprocess.run([a.powershape, "report", csv, "-o", html], check=True, stderr=subprocess.DEVNULL)
    report_s = time.time() - t0
    t0 = time.time()
    dom = subprocess.run(
        [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--window-size=1400,2000",
            "--dump-dom",
            "file://" + os.path.abspath(html),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    load_s = time.time() - t0
    body = re.search(r"<body[^>]*>", dom).group(0)
    ms = re.search(r'data-ms="(\d+)"', body)
    err = re.search(r'data-error="([^"]*)"', body)
    print(
        "trace: %.0f s of 1 ms rows, %.1f MB CSV; report: %.1f MB HTML in %.1f s"
        % (a.seconds, os.path.getsize(csv) / 1e6, os.path.getsize(html) / 1e6, report_s)
    )
    print(
        "page: every plot drawn %s ms after navigation (browser process %.1f s in all)%s"
        % (ms.group(1) if ms else "?", load_s, "; script error: " + err.group(1) if err else "")
    )
    if not ms or err or int(ms.group(1)) > 2000:
        sys.exit(1)


if __name__ == "__main__":
    main()

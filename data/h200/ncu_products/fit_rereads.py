#!/usr/bin/env python3
"""Fits the h200 profile's kernels.reread_flops and kernels.reread_span to products.csv.

Each product's DRAM reads (ncu's dram__bytes_read) against its bf16 operands read once, the fp32
dW it accumulates into, and its smaller operand S read again: S x min(flops / reread_flops,
other side / reread_span), the simulator's rule (src/powershape/sim/simulator.cpp,
reread_bytes). A grid over both, by the log error of every kernel; prints the best and the
reads per flop of each configuration, measured and modelled.
  python3 fit_rereads.py [products.csv]
"""
import collections
import csv
import math
import os
import sys


def reads(row, flops_per_reread, span):
    m, n, k = (float(row[x]) for x in ("m", "n", "k"))
    a, b = 2 * m * k, 2 * k * n
    s, other = (a, n) if a <= b else (b, m)
    acc = 4 * m * n if row["accumulates"] == "1" else 0
    return a + b + acc + s * min(2 * m * n * k / flops_per_reread, other / span)


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "products.csv")
    rows = list(csv.DictReader(open(path)))
    best = None
    for f in (x * 1e9 for x in (10, 20, 30, 40, 50, 60, 70, 85, 100, 130, 170, 220, 300)):
        for w in (100, 150, 200, 300, 400, 500, 600, 700, 850, 1000, 1500, 2000):
            e = sum(math.log(reads(r, f, w) / float(r["dram_read_bytes"])) ** 2 for r in rows)
            if best is None or e < best[0]:
                best = (e, f, w)
    e, f, w = best
    print(
        f"reread_flops {f:.3g}, reread_span {w}: rms log error {math.sqrt(e / len(rows)):.3f} "
        f"over {len(rows)} kernels"
    )
    totals = collections.OrderedDict()
    for r in rows:
        t = totals.setdefault(r["config"], [0.0, 0.0, 0.0])
        m, n, k = (float(r[x]) for x in ("m", "n", "k"))
        t[0] += float(r["dram_read_bytes"])
        t[1] += reads(r, f, w)
        t[2] += 2 * m * n * k
    print("configuration                                   bytes read per kflop: measured  model")
    for c, (meas, model, flops) in totals.items():
        print(f"{c:48s} {1e3 * meas / flops:27.2f} {1e3 * model / flops:6.2f}")


main()

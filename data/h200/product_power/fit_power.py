"""How the sustained products' power splits between their flop rate and their HBM traffic: at the
power limit every load draws about the same, so the simulator's rule (power = base + memory
W per TB/s x traffic + dynamic W x activity x v(f)^2 f / f_max, activity the flop rate's share of
the peak at that clock, or with a share `a` of it that does not follow the flop rate) should hold
them all with one set of constants. Grid over `a` and the memory term, dynamic W by least squares,
base 95 W (idle and leakage at ~64 C, profiles/h200.json); prints the best and a few others.
    python3 fit_power.py card_6e46/summary.txt [more summaries ...]
A summary without traffic columns takes them, load by load, from card_6e46's (Nsight Compute's
bytes are the kernel's, not the card's)."""
import json
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
profile = json.load(open(os.path.join(here, "../../../profiles/h200.json")))
table = profile["clocks"]["vf_table"]
f_max = profile["clocks"]["max_mhz"]
peak_per_ghz = profile["compute"]["flops_per_cycle"] * 1e-3  # TFLOP/s per GHz at efficiency 1


def volts(f):
    for (f0, v0), (f1, v1) in zip(table, table[1:]):
        if f <= f1:
            return v0 + (v1 - v0) * (f - f0) / (f1 - f0)
    return table[-1][1]


def rows(path):
    lines = open(path).read().splitlines()[1:]
    return [line.split() for line in lines if line.strip()]


traffic = {r[0].rsplit("_", 1)[0]: float(r[9]) for r in rows(os.path.join(here, "card_6e46/summary.txt"))}
loads = []  # (power W, TFLOP/s, NVML MHz, TB/s)
for path in sys.argv[1:]:
    for r in rows(path):
        tbs = float(r[9]) if len(r) > 9 else traffic[r[0].rsplit("_", 1)[0]]
        loads.append((float(r[2]), float(r[1]), float(r[4]), tbs))

base = 95.0
results = []
for a in [i / 20 for i in range(21)]:
    for mem in range(0, 121, 5):
        g = [
            (volts(f) / volts(f_max)) ** 2 * f / f_max * (a + (1 - a) * tf / (f * 1e-3) / peak_per_ghz)
            for _, tf, f, _ in loads
        ]
        y = [w - base - mem * tbs for w, _, _, tbs in loads]
        dyn = sum(gi * yi for gi, yi in zip(g, y)) / sum(gi * gi for gi in g)
        rms = (sum((dyn * gi - yi) ** 2 for gi, yi in zip(g, y)) / len(g)) ** 0.5
        results.append((rms, a, mem, dyn))
results.sort()
print(
    f"{len(loads)} loads; best: a {results[0][1]:.2f}, memory {results[0][2]} W per TB/s, "
    f"dynamic {results[0][3]:.0f} W, rms {results[0][0]:.1f} W"
)
for a in (0.0, 0.5, 1.0):
    best = min(r for r in results if r[1] == a)
    print(f"  a {a:.1f}: best memory {best[2]} W per TB/s, dynamic {best[3]:.0f} W, rms {best[0]:.1f} W")
print(
    "  (profiles/h200.json: memory "
    f"{profile['power']['memory_w'] / profile['memory']['bandwidth_gbs'] * 1e3:.0f} W per TB/s)"
)

# The V/f table is estimated; these loads measure its slope near the clock they sustain (1410-1520
# MHz): with power = base + memory x traffic + k x v(f)^2 x flop rate and v proportional to f^beta
# there, which beta fits them best (the table's slope at 1450 MHz is about beta 0.6).
slopes = []
for b10 in range(0, 21):
    beta = b10 / 10
    for mem in range(0, 121, 5):
        g = [(f / f_max) ** (2 * beta) * tf for _, tf, f, _ in loads]
        y = [w - base - mem * tbs for w, _, _, tbs in loads]
        k = sum(gi * yi for gi, yi in zip(g, y)) / sum(gi * gi for gi in g)
        rms = (sum((k * gi - yi) ** 2 for gi, yi in zip(g, y)) / len(g)) ** 0.5
        slopes.append((rms, beta, mem))
best = min(slopes)
print(
    f"voltage slope: best beta {best[1]:.1f} (memory {best[2]} W per TB/s, rms {best[0]:.1f} W); "
    + ", ".join(f"beta {b:.1f} rms {min(s for s in slopes if s[1] == b)[0]:.1f} W" for b in (0.0, 0.5, 1.0))
)

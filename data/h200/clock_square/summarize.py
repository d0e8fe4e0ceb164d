"""The real SM clock through each square wave here (100 us means of the on-GPU probe), after the
first 300 ms of load: its mean and quantiles, the share of time at 1950 MHz or more (the clock
unthrottled: gaps it does not hold down), and the mean of the rest (the bursts).
    python3 summarize.py [folder]"""
import csv
import glob
import os
import sys

here = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
for path in sorted(glob.glob(os.path.join(here, "sq_*.csv"))):
    rows = list(csv.reader(open(path)))[1:]
    v = sorted(float(m) for t, m in rows if float(t) > 600 and float(m) > 0)

    def q(p):
        return v[int(p * (len(v) - 1))]

    high = [x for x in v if x >= 1950]
    rest = [x for x in v if x < 1950]
    print(
        f"{os.path.basename(path):24s} mean {sum(v) / len(v):5.0f}  p10 {q(.1):5.0f}  "
        f"p50 {q(.5):5.0f}  p90 {q(.9):5.0f}  at >= 1950: {len(high) / len(v):4.2f}  "
        f"mean below {sum(rest) / max(1, len(rest)):5.0f}"
    )

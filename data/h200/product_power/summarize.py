"""One line per load and pass of run.sh: TFLOP/s after the first second (gemm_load's events),
nvidia-smi's mean power (averaged and instant), SM clock and temperature from 3 s on, the load's
flops a cycle and energy per flop; and, where run.sh's Nsight Compute pass is there, its HBM bytes
a thousand flops and what that is at the sustained rate.  python3 summarize.py DIR"""
import csv
import glob
import io
import os
import re
import sys
from datetime import datetime

d = sys.argv[1] if len(sys.argv) > 1 else "."


def when(r):
    return datetime.strptime(r[0].strip(), "%Y/%m/%d %H:%M:%S.%f")


def traffic(name):
    """HBM bytes a kflop over the profiled products of a load, or None."""
    f = os.path.join(d, f"ncu_{name}.csv")
    if not os.path.exists(f):
        return None
    lines = [line for line in open(f) if line.startswith('"')]
    by_id = {}
    for r in csv.DictReader(io.StringIO("".join(lines))):
        v = by_id.setdefault(r["ID"], {})
        v[r["Metric Name"]] = float(r["Metric Value"].replace(",", ""))
    return [x["dram__bytes_read.sum"] + x["dram__bytes_write.sum"] for x in by_id.values()]


print(
    f"{'load':<18}{'TFLOP/s':>9}{'W':>7}{'W inst':>8}{'MHz':>7}{'C':>5}{'TF/GHz':>8}{'J/PF':>7}"
    f"{'B/kflop':>9}{'TB/s':>6}"
)
for f in sorted(glob.glob(os.path.join(d, "load_*.txt"))):
    tag = os.path.basename(f)[5:-4]
    text = open(f).read()
    tf = float(re.search(r"after it ([\d.]+) TFLOP/s", text).group(1))
    m, n, k = map(int, re.search(r"(\d+)x(\d+)x(\d+) bf16", text).groups())
    s = [r for r in csv.reader(open(os.path.join(d, f"smi_{tag}.csv"))) if len(r) >= 6]
    late = [r for r in s if (when(r) - when(s[0])).total_seconds() >= 3]
    w, wi, mhz, c = (sum(float(r[i]) for r in late) / len(late) for i in (1, 2, 3, 4))
    line = f"{tag:<18}{tf:>9.1f}{w:>7.1f}{wi:>8.1f}{mhz:>7.0f}{c:>5.1f}{tf / mhz * 1e3:>8.1f}{w / tf * 1e3:>7.0f}"
    t = traffic(tag.rsplit("_", 1)[0])
    if t:
        b = sum(t) / len(t) / (2 * m * n * k) * 1e3
        line += f"{b:>9.2f}{b * tf / 1e3:>6.2f}"
    print(line)

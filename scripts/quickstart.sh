#!/usr/bin/env bash
# The main job: install what is missing, build, and show the power shape of a GPU running bf16
# matrix products. With an NVIDIA GPU it monitors a real 20 s load; without one it replays the
# recorded H200 run in data/h200.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/build.sh
if build/powershape devices >/dev/null 2>&1 && [ -x build/bench/gemm_load ]; then
  exec build/powershape monitor --interval 1 -o build/trace.csv -- build/bench/gemm_load --seconds 20
fi
echo "powershape: no NVIDIA GPU here; replaying the recorded H200 run (data/h200/gemm_sustained_trace.csv)" >&2
exec build/powershape monitor --source fake:data/h200/gemm_sustained_trace.csv -o build/trace.csv -- sleep 14

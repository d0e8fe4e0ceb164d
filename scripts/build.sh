#!/usr/bin/env bash
# Configures and builds powershape into build/ (CUDA where nvcc is found). Extra arguments go to
# CMake, e.g. -DPOWERSHAPE_CUDA=OFF.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v nvcc >/dev/null || { [ -x /usr/local/cuda/bin/nvcc ] && export PATH=/usr/local/cuda/bin:$PATH; } || true
gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
cmake -S . -B build "${gen[@]}" "$@" >/dev/null
cmake --build build -j "$(nproc)"

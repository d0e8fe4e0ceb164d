#!/usr/bin/env bash
# Configures and builds powershape into build/.
#   scripts/build.sh          the tool alone: the CLI and the C library, and the GPU backend where
#                             nvcc is found and a driver sees a GPU (nvidia-smi -L)
#   scripts/build.sh --all    that, the tests and the benchmarks, and the GPU code wherever nvcc is
#                             found (it compiles; its tests skip without a GPU)
# Further arguments go to CMake: -DPOWERSHAPE_CUDA=ON builds the GPU backend without a driver,
# -DPOWERSHAPE_CUDA=OFF leaves it out. Sources compile in batches (a unity build: the headers of
# CLI11, nlohmann-json and Eigen are parsed once a batch; scripts/readme-times.sh measures it);
# -DCMAKE_UNITY_BUILD=OFF compiles each file alone, quicker to rebuild after editing one.
set -euo pipefail
cd "$(dirname "$0")/.."
all=OFF
if [ "${1:-}" = --all ]; then all=ON; shift; fi
command -v nvcc >/dev/null || { [ -x /usr/local/cuda/bin/nvcc ] && export PATH=/usr/local/cuda/bin:$PATH; } || true
cuda=OFF
if command -v nvcc >/dev/null && { [ $all = ON ] || nvidia-smi -L >/dev/null 2>&1; }; then cuda=ON; fi
gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
cmake -S . -B build "${gen[@]}" -DBUILD_TESTING=$all -DPOWERSHAPE_BENCH=$all -DCMAKE_UNITY_BUILD=ON \
  -DPOWERSHAPE_CUDA=$cuda "$@" >/dev/null
cmake --build build -j "$(nproc)"

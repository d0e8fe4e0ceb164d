#!/usr/bin/env bash
# Installs what is missing, builds everything (the tool, tests, benchmarks), and runs every test.
# GPU tests skip where there is no GPU. Extra arguments go to ctest, e.g. -R Sampler.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh test
scripts/build.sh --all
cd build && ctest --output-on-failure -j "$(nproc)" "$@"

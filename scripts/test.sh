#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test. GPU tests skip where there is no GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/build.sh
cd build && ctest --output-on-failure -j "$(nproc)"

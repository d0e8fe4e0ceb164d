#!/usr/bin/env bash
# The main job: install what is missing, build, and ask whether chunking pays on this machine's
# GPU (`powershape repro`: matmul-softmax-matmul across chunk counts, interleaved rounds,
# confidence intervals). Without a GPU it runs on the simulated H200 and says so first.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/build.sh
exec build/powershape repro "$@"

#!/usr/bin/env bash
# The main job: install what building needs (nothing for the tests), build the tool alone, and ask
# whether chunking pays on this machine's GPU (`powershape repro`: matmul-softmax-matmul across
# chunk counts, interleaved rounds, confidence intervals). Without a GPU it runs on the simulated
# H200 and says so first.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh build
scripts/build.sh
exec build/powershape repro "$@"

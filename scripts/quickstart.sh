#!/usr/bin/env bash
# The main job: install what building needs, build the tool (the GPU backend only where a driver
# sees a GPU, or with POWERSHAPE_CUDA=ON), then ask what would save this GPU time or energy:
#   - a setting (`powershape advise`: clock caps and power limits, within 5% of the time), and
#   - chunking the LM head (`powershape repro`: one piece against 8 chunks, interleaved rounds,
#     confidence intervals).
# Without a GPU both run on the simulated H200, say so, and print what a real H200 measured for
# the same question beside the prediction.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -eq 0 ] || { echo "quickstart.sh: takes no arguments (then: build/powershape repro --help)" >&2; exit 2; }
scripts/deps.sh build
scripts/build.sh ${POWERSHAPE_CUDA:+-DPOWERSHAPE_CUDA=$POWERSHAPE_CUDA}
ps=build/powershape
device=(); gpu_seconds=()
if nvidia-smi -L >/dev/null 2>&1 && grep -q '^POWERSHAPE_CUDA:BOOL=ON' build/CMakeCache.txt; then
  device=(--device gpu); gpu_seconds=(--gpu-seconds 20)
fi
echo "== what setting would save energy (advise)"
"$ps" advise "${device[@]}" "${gpu_seconds[@]}" --max-slowdown 5
echo
echo "== whether chunking the LM head pays (repro)"
"$ps" repro "${device[@]}" --workload lmhead --shape 131072,896,151936 --chunks 1,8 --rounds 4
echo
echo "the tool is $PWD/$ps; for this shell: export PATH=\"$PWD/build:\$PATH\""

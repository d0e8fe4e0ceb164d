#!/usr/bin/env bash
# On a machine with an NVIDIA GPU: builds with CUDA (sm_90), then runs the parts named (all of them,
# ~25 minutes, when none is named; each part fits a 10-minute call):
#   tests      GPU tests, the Python package's tests, compute-sanitizer memcheck on the kernel
#              tests (~6 min with the build on a fresh machine)
#   cpu        the CPU tests on the GPU machine's image (its CLI11, GoogleTest) (~3 min)
#   telemetry  NVML call costs, the sampler's cost idle (1 and 10 ms) and under load (~1 min)
#   lmhead     the cross-entropy pass alone, the LM head at every shape and chunk count (~8 min)
#   peers      the LM head against PyTorch eager, Liger and CCE (bench/peers/) (~3 min)
#   clock      the on-GPU clock probe's step response, probe, repro, monitor (~8 min)
#   readme     every command README.md marks `sh gpu`, run as written, each one's output in
#              $OUT/readme (~10 min: optimize's race around examples/finetune.py)
#   docs       every command docs/ marks `sh gpu`, run as written (~3 min)
#   grid       the power floor's filler against its intensity, then a Qwen2-0.5B training loop with
#              a 45 ms gap a step (the modelled all-reduce of its 1 GB gradient) as it is, with the
#              in-process floor and under `smooth` three ways, each measured by `swing` (~6 min)
#   grid2      the same loop under `smooth --pace` (its start paced), under a 90% floor, and as it
#              is with the LM head as powershape's op at 1 and at 8 chunks (~5 min)
#   grid3      the same loop timed without the synchronisation that closes each step (CUDA events),
#              as it is and with the in-process floor: whether the trough at a step's start is the
#              bench's own; each run folded over its steps (~2 min)
#   attention  causal attention at 32k context, unfused and chunked (powershape's attention workload):
#              repro across chunk counts, then against FlashAttention (bench/attention_peers.py)
#              (~6 min)
#   moe        a Mixtral-8x7B MoE layer at 16384 tokens: repro across chunk counts (~3 min)
#   pip        pip install --no-build-isolation . with CUDA in a fresh venv, then the LM head op
#              on the GPU through the installed package (~4 min)
# Prints its log; traces and JSON results go to $OUT (default build/gpu-check).
#   scripts/gpu-check.sh [tests] [cpu] [telemetry] [lmhead] [peers] [clock] [readme] [docs] [grid] [grid2] [grid3] [attention] [moe] [pip]
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-build/gpu-check}
mkdir -p "$out"
parts=("$@")
[ ${#parts[@]} -eq 0 ] && parts=(tests cpu telemetry lmhead peers clock readme docs grid grid2 grid3 attention moe pip)
for p in "${parts[@]}"; do
  case $p in tests|cpu|telemetry|lmhead|peers|clock|readme|docs|grid|grid2|grid3|attention|moe|pip) ;; *) echo "gpu-check: unknown part '$p' (tests, cpu, telemetry, lmhead, peers, clock, readme, docs, grid, grid2, grid3, attention, moe, pip)" >&2; exit 2 ;; esac
done

tests() {
  echo "== GPU tests (whole output in $out/gpu_tests.log)"
  (cd build && ctest -L gpu --output-on-failure) > "$out/gpu_tests.log" 2>&1
  grep -E "tests passed|Failure|Expected|Which is|Value of|Actual|  [a-z_]+ *[<>=]+|\(Failed\)" "$out/gpu_tests.log" | head -n 40
  echo "== the Python package on the GPU (CUDA op against the reference, torch.compile)"
  POWERSHAPE_LIB=build/libpowershape_c.so PYTHONPATH=python python3 -m pytest -q -p no:cacheprovider python/tests 2>&1 | tail -n 3
  echo "== monitor on the real driver: bounds, CUDA_VISIBLE_DEVICES, the GPU's energy by process"
  build/powershape monitor --interval 10 --json "$out/monitor_processes.json" -- build/bench/gemm_load --seconds 6 2>&1 |
    grep -E "energy  |by process|per-process|not believed|beyond" | head -n 6
  CUDA_VISIBLE_DEVICES=0 build/powershape devices 2>&1 | head -n 2
  echo "== compute-sanitizer memcheck on the kernel tests"
  compute-sanitizer --tool memcheck --error-exitcode 1 build/tests/powershape_gpu_tests \
    --gtest_filter='LmHeadGpu.*:-LmHeadGpu.ARealShapeSlice' 2>&1 | tail -n 4
}

cpu() {
  echo "== CPU tests"; (cd build && ctest -L cpu -j 8 2>&1 | tail -n 3)
}

telemetry() {
  build/powershape devices
  echo "== NVML call costs"
  build/bench/nvml_call_cost
  echo "== sampler cost at 1 ms and at the default 10 ms, idle GPU(s)"
  build/bench/sampler_cost --seconds 6 --interval 1
  build/bench/sampler_cost --seconds 6 --interval 10
  echo "== sampler cost at 1 ms, under a GEMM load"
  build/bench/gemm_load --seconds 14 &
  sleep 2; build/bench/sampler_cost --seconds 5; wait
}

lmhead() {
  echo "== the cross-entropy pass alone, against a copy of the same logits"
  build/bench/ce_pass
  echo "== the exponent in the logits product against cuBLASLt's product and the pass (sm_90)"
  build/bench/logits_exp_speed
  echo "== the op's kernels, each one's time a call at 1 and 8 chunks (the Python op)"
  POWERSHAPE_LIB=build/libpowershape_c.so python3 bench/lmhead_kernels.py
  echo "== LM head: chunk counts against the three products alone (the engine's sustained windows)"
  build/bench/lmhead_speed --chunks "${LMHEAD_CHUNKS:-1,2,4,8,16,32,64}" --window 3 --rounds 3 --json "$out/lmhead_speed.json"
}

peers() {
  echo "== the LM head against its peers (PyTorch eager; Liger and CCE when placed in bench/peers/)"
  python3 bench/peers.py
}

clock() {
  echo "== the SM clock's step response, on the GPU's own clock (10 us bins)"
  build/bench/clock_step -o "$out/clock_step.csv"
  echo "== probe and repro on the GPU"
  build/powershape probe --gaps idle --periods 2,10,50,200,1000 --window 3 -o "$out/probe.json"
  build/powershape repro -o "$out/repro_msm.json"
  build/powershape repro --workload lmhead --shape 131072,896,151936 --chunks 1,4,16,64 --rounds 4 -o "$out/repro_lmhead.json"
  echo "== monitor around a sustained 8192^3 bf16 GEMM load"
  build/powershape monitor --interval 1 -o "$out/monitor_gemm.csv" --json "$out/monitor_gemm.json" \
    -- build/bench/gemm_load --size 8192 --seconds 20
}

readme() {
  echo "== the commands README.md marks sh gpu"
  python3 tests/docs/docs_test.py build/powershape . --gpu --only README.md --log "$out/readme" 2>&1 | tail -n 20
  cat "$out"/readme/*.txt
}

docs() {
  echo "== the commands docs/ marks sh gpu"
  python3 tests/docs/docs_test.py build/powershape . --gpu --only docs/ --log "$out/docs" 2>&1 | tail -n 20
}

grid() {
  echo "== the power floor's filler: its power against its intensity"
  POWERSHAPE_LIB=build/libpowershape_c.so python3 bench/floor_power.py --seconds 3 | tee "$out/floor_power.txt"
  grid_runs none inprocess marked unmarked ramped
}

grid2() { grid_runs paced marked90 chunks1 chunks8; }
grid3() { grid_runs nosync nosync_inprocess; }

# A training loop with a 45 ms gap a step (the modelled all-reduce), 30 s a run, each measured by
# `swing` over its steps (and over the whole run where the ramps are the point).
grid_runs() {
  export POWERSHAPE_LIB=$PWD/build/libpowershape_c.so  # the jobs mark their steps and gaps
  local run
  for run in "$@"; do
    echo "== a training loop with a 45 ms gap a step: $run"
    local job=(python3 bench/finetune_loop.py --seconds 30 --gap-ms 45)
    local smooth=(build/powershape smooth -o "$out/grid_$run.csv")
    local monitor=(build/powershape monitor --interval 5 -o "$out/grid_$run.csv")
    case $run in
      none) "${monitor[@]}" -- "${job[@]}" ;;
      inprocess) "${monitor[@]}" -- "${job[@]}" --floor 0.5 ;;
      marked) "${smooth[@]}" --floor 60% --gap gap -- "${job[@]}" --mark-gap ;;
      marked90) "${smooth[@]}" --floor 90% --gap gap -- "${job[@]}" --mark-gap ;;
      unmarked) "${smooth[@]}" --floor 60% -- "${job[@]}" ;;
      ramped) "${smooth[@]}" --floor 60% --ramp 100 --gap gap -- "${job[@]}" --mark-gap ;;
      paced) "${smooth[@]}" --floor 60% --ramp 100 --pace --gap gap -- "${job[@]}" --mark-gap ;;
      chunks1) "${monitor[@]}" -- "${job[@]}" --chunks 1 ;;
      chunks8) "${monitor[@]}" -- "${job[@]}" --chunks 8 ;;
      nosync) "${monitor[@]}" -- "${job[@]}" --no-step-sync ;;
      nosync_inprocess) "${monitor[@]}" -- "${job[@]}" --no-step-sync --floor 0.5 ;;
    esac > "$out/grid_$run.log" 2>&1
    grep -E "ms per step|^smooth|^filler|^pacing|powershape: |Error|error" "$out/grid_$run.log" | head -n 8
    build/powershape swing "$out/grid_$run.csv" --region step --json "$out/swing_$run.json"
    case $run in ramped|paced) echo "-- the whole run, ramps included"; build/powershape swing "$out/grid_$run.csv" ;; esac
    case $run in nosync*) echo "-- through a step"; build/powershape swing "$out/grid_$run.csv" --region step --fold 10 | sed -n '/ from /,$p' ;; esac
  done
}

attention() {
  echo "== causal attention, 32768 tokens, 32 heads of 128: the chunk effect (repro)"
  build/powershape repro --workload attention --shape 32768,32,128 --chunks 4,8,16,32,64 --rounds 3 \
    -o "$out/repro_attention.json"
  echo "== against FlashAttention (torch's scaled_dot_product_attention), the same shape"
  POWERSHAPE_LIB=build/libpowershape_c.so python3 bench/attention_peers.py --shape 32768,32,128 \
    --chunks 4,8,16,32,64 | tee "$out/attention_peers.txt"
}

moe() {
  echo "== a Mixtral-8x7B MoE layer (16384 tokens, 8 experts, top-2): the chunk effect (repro)"
  build/powershape repro --workload moe --chunks 1,2,4,8 --rounds 3 -o "$out/repro_moe.json"
}

pip() {
  echo "== pip install --no-build-isolation . with CUDA, in a fresh venv (log in $out/pip.log)"
  local venv
  venv=$(mktemp -d)/venv
  python3 -m venv --system-site-packages "$venv" >"$out/pip.log" 2>&1
  POWERSHAPE_BUILD_DIR=build/pip POWERSHAPE_CMAKE_ARGS=-DCMAKE_CUDA_ARCHITECTURES=90 \
    "$venv/bin/pip" install --no-build-isolation --no-index . >>"$out/pip.log" 2>&1 || { tail -n 20 "$out/pip.log"; return; }
  (cd /tmp && env -u POWERSHAPE_LIB -u PYTHONPATH "$venv/bin/python" -c "
import torch, powershape
from powershape.torch import linear_cross_entropy
x = torch.randn(4096, 896, device='cuda', dtype=torch.bfloat16, requires_grad=True)
w = torch.randn(151936, 896, device='cuda', dtype=torch.bfloat16, requires_grad=True) * 0.02
t = torch.randint(0, 151936, (4096,), device='cuda')
loss = linear_cross_entropy(x, w, t, chunks=4)
loss.backward()
ref = torch.nn.functional.cross_entropy((x.float() @ w.float().t()), t)
print('installed package: library', powershape.library_version(), 'loss', loss.item(), 'reference', ref.item())
assert abs(loss.item() - ref.item()) < 1e-2 * abs(ref.item())
print('pip: ok')")
  env -u POWERSHAPE_LIB "$venv/bin/powershape" devices | head -n 3
}


# The tool alone where the parts run only it (docs, pip): minutes less on a fresh machine.
all=()
for p in "${parts[@]}"; do case $p in tests|cpu|telemetry|lmhead|peers|clock|attention|moe) all=(--all) ;; esac; done
scripts/build.sh "${all[@]}" -DPOWERSHAPE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 2>&1 | tail -n 3
nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm,temperature.gpu --format=csv
for p in "${parts[@]}"; do "$p"; done

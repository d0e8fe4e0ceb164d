#!/usr/bin/env bash
# Sustained products of the LM head's shapes and of squares, on one card in one run, each with
# nvidia-smi beside it: power per flop by shape and by data, then each load's HBM traffic under
# Nsight Compute (README.md). Needs build/bench/gemm_load, build/powershape with its GPU backend,
# and ncu; writes into $1 (default .).
#   data/h200/product_power/run.sh OUT_DIR
set -euo pipefail
out=${1:-.}
mkdir -p "$out"
loads=(
  "sq4096|--size 4096"
  "sq8192|--size 8192"
  "sq8192_small|--size 8192 --scale 0.01,0.1"
  "logits|--shape 128256,16384,4096 --op TN --scale 0.1,2"
  "logits_unit|--shape 128256,16384,4096 --op TN"
  "dx|--shape 4096,16384,128256 --op NN --scale 0.1,3.7"
  "dx_unit|--shape 4096,16384,128256 --op NN"
  "dw|--shape 4096,128256,16384 --op NT --out fp32 --scale 2,3.7"
  "dw_unit|--shape 4096,128256,16384 --op NT --out fp32"
  "logits_half|--shape 128256,8192,4096 --op TN --scale 0.1,2"
  "dx_half|--shape 4096,8192,128256 --op NN --scale 0.1,3.7"
  "dw_half|--shape 4096,128256,8192 --op NT --out fp32 --scale 2,3.7"
)
one() {  # name, arguments, pass
  local name=$1 args=$2 tag=$1_$3
  nvidia-smi --query-gpu=timestamp,power.draw,power.draw.instant,clocks.sm,temperature.gpu,clocks_event_reasons.active \
    --format=csv,noheader,nounits -lms 100 > "$out/smi_$tag.csv" &
  local smi=$!
  # shellcheck disable=SC2086
  build/bench/gemm_load $args --seconds 8 > "$out/load_$tag.txt"
  kill $smi; wait $smi 2>/dev/null || true
  sleep 3
}
nvidia-smi --query-gpu=name,uuid,temperature.gpu,power.draw,power.limit --format=csv > "$out/card.csv"
for l in "${loads[@]}"; do one "${l%%|*}" "${l#*|}" 1; done
for ((i = ${#loads[@]} - 1; i >= 0; i--)); do l=${loads[$i]}; one "${l%%|*}" "${l#*|}" 2; done
build/powershape repro --device gpu --workload lmhead --shape 16384,4096,128256 --products-only \
  --chunks 1,2 --rounds 2 --window 3 -o "$out/repro_products.json" > "$out/repro_products.txt"
for l in "${loads[@]}"; do
  # shellcheck disable=SC2086
  ncu --clock-control none --csv --print-units base -c 2 -k regex:'gemm|nvjet|xmma|cutlass|sm90' \
    --metrics dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second \
    build/bench/gemm_load ${l#*|} --seconds 0.01 > "$out/ncu_${l%%|*}.csv"
done

#!/usr/bin/env bash
# Fuzzes every reader and builder for a bounded time: builds the library and the libFuzzer targets
# with clang under AddressSanitizer and UndefinedBehaviorSanitizer into build-fuzz/, then runs each
# target for SECONDS (default 30) from its seed corpus (tests/fuzz/corpus/TARGET), with a 5 s limit
# per input (a hang is a finding) and 2 GiB of memory. Prints the runs of each; a finding (its
# input is saved under build-fuzz/findings/) fails the script.
#   scripts/fuzz.sh [SECONDS] [TARGET...]      targets: trace plan timeline profile calibration lmhead_size
set -uo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-30}
shift || true
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(trace plan timeline profile calibration lmhead_size)
case $seconds in ''|*[!0-9]*) echo "fuzz.sh: SECONDS must be a whole number, not '$seconds'" >&2; exit 2 ;; esac
command -v clang++ >/dev/null || { echo "fuzz.sh: clang++ is needed (apt-get install clang)" >&2; exit 2; }
flags="-fsanitize=fuzzer-no-link,address,undefined,float-cast-overflow -fno-sanitize-recover=all -g -O1"
gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
CXX=clang++ CC=clang cmake -S . -B build-fuzz "${gen[@]}" -DPOWERSHAPE_CUDA=OFF -DPOWERSHAPE_FUZZ=ON \
  -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_C_FLAGS="$flags" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null || exit 1
cmake --build build-fuzz -j "$(nproc)" --target "${targets[@]/%/_fuzz}" >build-fuzz/build.log 2>&1 ||
  { echo "fuzz.sh: the fuzz targets did not build, see build-fuzz/build.log:" >&2; grep -m 5 -E "error|FAILED" build-fuzz/build.log >&2; exit 1; }
mkdir -p build-fuzz/findings
failed=0
for t in "${targets[@]}"; do
  work=build-fuzz/corpus/$t
  mkdir -p "$work"
  log=build-fuzz/$t.log
  build-fuzz/tests/${t}_fuzz -max_total_time="$seconds" -timeout=5 -rss_limit_mb=2048 \
    -artifact_prefix=build-fuzz/findings/$t- "$work" "tests/fuzz/corpus/$t" >"$log" 2>&1
  rc=$?
  runs=$(grep -oE 'Done [0-9]+ runs' "$log" | grep -oE '[0-9]+' || echo "?")
  if [ $rc -eq 0 ]; then
    echo "fuzz $t: $runs runs in $seconds s, no finding"
  else
    echo "fuzz $t: FINDING (exit $rc), see $log:"; grep -E "ERROR|SUMMARY|Test unit written|terminate|what\(\)" "$log" | head -n 6
    failed=1
  fi
done
exit $failed

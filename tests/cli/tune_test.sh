#!/usr/bin/env bash
# End-to-end tests of `powershape tune` on the simulator: the choice cached under the workload as
# it was tuned (what the Python op's chunks="auto" asks for). Usage: tune_test.sh POWERSHAPE
set -u
ps=$1
. "$(dirname "$0")/check.sh"
export POWERSHAPE_CACHE=$tmp/tune.json
race=(tune --device sim --workload lmhead --shape 2048,896,151936 --chunks 1,2 --window 0.05 --rounds 2 --no-model)

"$ps" "${race[@]}" --exp-in-product >"$tmp/e.out" 2>&1; rc=$?
check "tune --exp-in-product exits 0" test $rc -eq 0
check "its choice is cached under the exponent-in-the-product workload" \
  grep -qF "| lmhead 2048x896x151936 dw=bf16 exp=product | time\"" "$tmp/tune.json"
"$ps" "${race[@]}" >"$tmp/p.out" 2>&1; rc=$?
check "tune without it exits 0" test $rc -eq 0
check "and caches the pass's workload beside it" \
  grep -qF "| lmhead 2048x896x151936 dw=bf16 | time\"" "$tmp/tune.json"
finish

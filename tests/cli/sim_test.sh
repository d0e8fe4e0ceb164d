#!/usr/bin/env bash
# End-to-end tests of `powershape sim` and `sim calibrate`. Usage: sim_test.sh POWERSHAPE DATA_DIR
set -u
ps=$1 data=$2
. "$(dirname "$0")/check.sh"

"$ps" sim --workload square --period-ms 10 --seconds 2 -o "$tmp/s.csv" --json "$tmp/s.json" >"$tmp/s.out" 2>&1; rc=$?
check "sim exits 0" test $rc -eq 0
"$ps" sim --workload square --period-ms 10 --seconds 1 --perfetto "$tmp/s.perfetto.json" >/dev/null 2>&1
check "sim --perfetto writes counter tracks on the simulated clock" python3 -c "
import json, sys
j = json.load(open('$tmp/s.perfetto.json'))
ts = [e['ts'] for e in j['traceEvents'] if e['ph'] == 'C']
sys.exit(not (ts and max(ts) < 3e6 and not j['otherData']['wall_clock']))"
check "sim says it is simulated, first" grep -q "^simulated device: h200 (calibrated profile)" <(head -1 "$tmp/s.out")
check "sim prints the monitor's summary" grep -q "MHz  SM clock mean" "$tmp/s.out"
check "sim writes the monitor's trace format" grep -q "^t_ns,gpu,power_usage_mw,power_instant_mw" "$tmp/s.csv"
check "sim writes the summary JSON" grep -q '"name": "workload"' "$tmp/s.json"
"$ps" sim --profile dgx-spark --workload lmhead --shape 4096,896,151936 --chunks 4 --iterations 20 >"$tmp/l.out" 2>&1; rc=$?
check "an lmhead on another profile runs" test $rc -eq 0 -a -n "$(grep '20 iterations' "$tmp/l.out")"
echo '{"name": "p", "phases": [{"kind": "compute", "flops": 1e12}, {"kind": "idle", "seconds": 0.001}]}' >"$tmp/plan.json"
"$ps" sim --workload "$tmp/plan.json" --iterations 10 >/dev/null 2>&1; rc=$?
check "a JSON plan runs" test $rc -eq 0
printf '"Start (ns)","Duration (ns)","Name"\n0,5000000,"sm90_xmma_gemm"\n5000000,2000000,"softmax"\n' >"$tmp/tl.csv"
"$ps" sim --profile dgx-spark --workload "$tmp/tl.csv" --recorded-on h200 --iterations 10 >"$tmp/tl.out" 2>&1; rc=$?
check "a kernel timeline recorded on an H200 replays on another profile" grep -q "timeline .*(2 kernels)" "$tmp/tl.out"
echo '{"phases": [{"kind": "compute"}]}' >"$tmp/bad.json"
"$ps" sim --workload "$tmp/bad.json" --iterations 1 2>"$tmp/bad.err" >/dev/null; rc=$?
check "a bad plan names the field" test $rc -ne 0 -a "$(cat "$tmp/bad.err")" = "powershape: $tmp/bad.json: phases[0].flops: missing"
sed 's/"window_ms": [0-9.e+-]*/"window_ms": -1/' "$data/../profiles/h200.json" >"$tmp/badprof.json"
"$ps" sim --profile "$tmp/badprof.json" --iterations 1 2>"$tmp/bp.err" >/dev/null; rc=$?
check "a bad profile names the field" grep -q "governor.window_ms: -1.000000 is out of range" "$tmp/bp.err"
"$ps" sim --device "sim:$data/h200/ncu_products/h200_rereads.json" --iterations 2 >"$tmp/dev.out" 2>&1; rc=$?
check "--device sim:FILE runs that profile" test $rc -eq 0 -a -n "$(grep '^simulated device: h200' "$tmp/dev.out")"
"$ps" sim --device gpu --iterations 1 2>"$tmp/dg.err" >/dev/null; rc=$?
check "--device gpu is refused by sim, named" test $rc -eq 2 -a -n "$(grep -- "--device: sim runs on a simulated GPU: sim or sim:PROFILE, not 'gpu'" "$tmp/dg.err")"
"$ps" sim --device sim:l40s --profile h200 --iterations 1 2>/dev/null >/dev/null; rc=$?
check "--device and --profile together are refused" test $rc -eq 2
"$ps" sim --profile nosuch --iterations 1 2>"$tmp/np.err" >/dev/null; rc=$?
check "an unknown profile lists the profiles" grep -q "no profile 'nosuch' (profiles in .*h200" "$tmp/np.err"
"$ps" sim --shape 1,2 --iterations 1 2>"$tmp/sh.err" >/dev/null; rc=$?
check "a bad shape is one line" test $rc -ne 0 -a "$(wc -l <"$tmp/sh.err")" -eq 1
"$ps" sim calibrate --data "$data/h200" --max-evals 20 >"$tmp/c.out" 2>&1; rc=$?
check "calibrate exits 0" test $rc -eq 0
check "calibrate reports the fit error per figure" grep -q "square 1000 ms burst TFLOP/s" "$tmp/c.out"
check "each figure's columns line up under the heading, long names too" python3 -c "
import sys
lines = open(sys.argv[1]).read().split(chr(10))
head = next(l for l in lines if l.startswith('figure '))
rows = [l for l in lines if l.endswith('%') and not l.startswith(' ')]
assert rows and all(len(l) == len(head) for l in rows), [l for l in rows if len(l) != len(head)][:3]" "$tmp/c.out"
check "one temperature row" test "$(grep -c '^temperature RMS error C' "$tmp/c.out")" -eq 1

# repro and probe on the simulator (no GPU in CI; on a GPU machine --device sim forces it)
"$ps" repro --device sim --chunks 1,4 --rounds 3 --window 1 -o "$tmp/r.json" >"$tmp/r.out" 2>&1; rc=$?
check "repro exits 0" test $rc -eq 0
check "repro says it is simulated, first" grep -q "^powershape repro on the simulated h200" <(head -1 "$tmp/r.out")
check "repro prints intervals and verdicts" grep -qE "chunks=4 .*\[[0-9.]+, [0-9.]+\].*(faster|slower|no difference|within)" "$tmp/r.out"
check "repro writes raw measurements" grep -q '"measurements"' "$tmp/r.json"
check "repro names the fastest and the least energy" grep -qE "^fastest: .*; least energy: " "$tmp/r.out"
check "repro on the h200 profile gives no verdict inside what its ratios are worth" grep -q "^the simulator's chunk ratios were within 2.08 points of the GPU's .* a difference under 2.08% is called within it" "$tmp/r.out"
"$ps" repro --device sim --chunks 1,4 --rounds 2 --window 0.5 --min-effect 0.2 >"$tmp/r2.out" 2>&1
check "unless the user chooses the minimum effect" bash -c "! grep -q 'ratios were within' '$tmp/r2.out' && grep -qE 'chunks=4 .*(faster|slower|within 0.2%|no difference)' '$tmp/r2.out'"
"$ps" repro --device sim:dgx-spark --workload lmhead --shape 4096,896,151936 --chunks 1,2 --rounds 2 --window 1 >"$tmp/rl.out" 2>&1; rc=$?
check "repro runs the LM head on another profile" test $rc -eq 0
"$ps" repro --device sim --chunks 0,2 2>"$tmp/rc.err" >/dev/null; rc=$?
check "repro refuses a zero chunk count" test $rc -ne 0 -a "$(cat "$tmp/rc.err")" = "powershape: --chunks: chunk counts start at 1"
"$ps" repro --device tpu 2>"$tmp/rd.err" >/dev/null; rc=$?
check "repro refuses an unknown device" grep -q "expected gpu, sim or sim:PROFILE" "$tmp/rd.err"
"$ps" repro --device sim --min-effect 100 2>"$tmp/rm.err" >/dev/null; rc=$?
check "repro refuses a minimum effect of 100%" test $rc -ne 0 -a "$(wc -l <"$tmp/rm.err")" -eq 1
"$ps" probe --device sim --periods 2,1000 --gaps idle --window 2 -o "$tmp/p.json" >"$tmp/p.out" 2>&1; rc=$?
check "probe exits 0" test $rc -eq 0
check "probe reports the power window" grep -q "^power window: compute phases up to 1 ms" "$tmp/p.out"
check "probe reports the sustained-to-boost ratio" grep -q "sustained-to-boost 0.8" "$tmp/p.out"

# probe --record on the simulator, and sim calibrate on what it wrote
"$ps" probe --device sim --record "$tmp/rec" --periods 2,50 --window 0.3 >"$tmp/rec.out" 2>&1; rc=$?
check "probe --record exits 0" test $rc -eq 0
check "it writes the trace, the conditions and the kernel times" test -s "$tmp/rec/trace.csv" -a -s "$tmp/rec/conditions.json" -a -s "$tmp/rec/kernels.csv"
check "square waves at three duties and two gaps, a region each" test "$(grep -c '# region {.*square duty=' "$tmp/rec/trace.csv")" -eq 12
check "each kernel of the LM head at 1-64 chunks" grep -q '^lmhead 16384x4096x128256 chunks=64 dw=bf16,.*,dw,128256,4096,256,' "$tmp/rec/kernels.csv"
check "each kernel with the clock it ran at (real_mhz)" awk -F, 'NR == 1 { ok = $10 == "real_mhz" } NR > 1 && !($10 > 0) { ok = 0 } END { exit !ok }' "$tmp/rec/kernels.csv"
"$ps" probe --device sim --record "$tmp/rec" >/dev/null 2>"$tmp/rec2.err"; rc=$?
check "a folder that holds a recording is not written over" bash -c "test $rc -eq 2 && grep -q 'holds files already' '$tmp/rec2.err'"
"$ps" sim calibrate --data "$tmp/rec" --max-evals 20 -o "$tmp/fit.json" >"$tmp/cal2.out" 2>&1; rc=$?
check "sim calibrate fits a recording" test $rc -eq 0
check "and reports each configuration's kernels before and after" test "$(grep -c 'kernels ms' "$tmp/cal2.out")" -eq 21
check "the fitted profile has the kernel model" grep -q '"epilogue_k"' "$tmp/fit.json"
"$ps" sim calibrate --data "$tmp/rec" --repro "$data/h200/repro_forward_only" --max-evals 5 -o "$tmp/fit2.json" >"$tmp/cal4.out" 2>&1
check "with a GPU's repro results it says what its chunk ratios are worth" grep -qE "^  chunk ratios \(5\): .* 9 in 10 within [0-9.]+; after .* \(accuracy.chunk_ratio_points\)" "$tmp/cal4.out"
check "and writes it into the profile with its source" bash -c "grep -q '\"chunk_ratio_points\": [0-9]' '$tmp/fit2.json' && test \$(grep -c 'accuracy.chunk_ratio_points: 9 in 10 of 5 chunk ratios' '$tmp/fit2.json') -eq 1"
"$ps" sim calibrate --data "$tmp/rec" --repro "$data/h200/repro_forward_only" --repro "$data/h200/repro_token_sweep" --max-evals 1 >"$tmp/cal5.out" 2>&1
check "ratios two cards measured are judged against the two" grep -qE "^  ratios measured in more than one run \(2\): the runs of one span up to [0-9.]+ points; the fitted model lies within half a point of their span for [0-2]" "$tmp/cal5.out"
check "the simulator has no clock probe to record" test ! -e "$tmp/rec/clock_probe.csv"
cp "$data/h200/sm_clock_probe_step.csv" "$tmp/rec/clock_probe.csv"
"$ps" sim calibrate --data "$tmp/rec" --max-evals 5 >"$tmp/cal3.out" 2>&1
check "a recording's clock probe is fitted too" grep -q "^real clock 50-100 ms MHz (probe)" "$tmp/cal3.out"

# JSON a reader can load without casting: a number or null in every numeric field (one whose key
# ends in a unit), strings only for names, verdicts and reasons
check "the JSON files hold numbers or null where numbers go" python3 -c "
import json, re, sys
unit = re.compile(r'_(mw|w|j|mj|mhz|c|s|ns|ms|pct|fraction|tflops)$')
def bad(j, key=''):
    if isinstance(j, dict): return any(bad(v, k) for k, v in j.items() if k != 'unavailable')
    if isinstance(j, list): return any(bad(v, key) for v in j)
    return isinstance(j, str) and bool(unit.search(key))
sys.exit(any(bad(json.load(open(f))) for f in sys.argv[1:]))" "$tmp/s.json" "$tmp/r.json" "$tmp/p.json"

"$ps" sim --power-limit 1000 --seconds 0.1 >/dev/null 2>"$tmp/pl.err"; rc=$?
check "a power limit above the card's own is simulated with a warning" bash -c "test $rc -eq 0 && grep -q \"above h200's own 700 W limit\" '$tmp/pl.err'"

# Long runs show progress on a terminal only (script(1) gives the command one)
if command -v script >/dev/null; then
  script -qec "$ps sim calibrate --max-evals 20" /dev/null >"$tmp/cal.tty" 2>&1
  check "sim calibrate shows its progress on a terminal" grep -q "simulation 40 of 40, ~0 s left" "$tmp/cal.tty"
  script -qec "$ps repro --device sim --chunks 1,2 --rounds 2 --window 0.1" /dev/null >"$tmp/rep.tty" 2>&1
  check "repro shows its rounds on a terminal" grep -q "round 2 of 2" "$tmp/rep.tty"
  script -qec "$ps probe --device sim --periods 2,20 --gaps idle --window 0.5" /dev/null >"$tmp/probe.tty" 2>&1
  check "probe shows its measurements on a terminal" grep -q "measurement 2 of 2" "$tmp/probe.tty"
fi
"$ps" sim calibrate --max-evals 20 >"$tmp/cal.out" 2>&1
check "and not in a log file" bash -c "! grep -q 'simulation 1 of' '$tmp/cal.out'"

finish

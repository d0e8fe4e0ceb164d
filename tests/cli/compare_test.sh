#!/usr/bin/env bash
# End-to-end tests of `powershape compare` on the replayed H200 trace: interleaved rounds after a
# warm-up, a known 1% effect found, a null effect not called significant, -L scans, and failures.
#   compare_test.sh POWERSHAPE DATA_DIR
set -u
ps=$1 data=$2
src=fake:$data/h200/gemm_sustained_trace.csv
. "$(dirname "$0")/check.sh"
py=$(command -v python3)

"$ps" compare --source "$src" --rounds 10 -o "$tmp/a.json" -- sleep 1 ::: sleep 1.01 >"$tmp/a.out" 2>"$tmp/a.err"; rc=$?
check "compare exits 0" test $rc -eq 0
check "every round runs each command once" "$py" -c "
import json, collections, sys
j = json.load(open('$tmp/a.json'))
rounds = collections.defaultdict(list)
for m in j['measurements']: rounds[m['round']].append(m['config'])
sys.exit(not (len(rounds) == 10 and all(sorted(v) == [0, 1] for v in rounds.values())))"
check "the orders are shuffled" "$py" -c "
import json, sys
j = json.load(open('$tmp/a.json'))
firsts = {m['config'] for m in j['measurements'] if [x for x in j['measurements'] if x['round'] == m['round']][0] is m}
sys.exit(len(firsts) != 2)"
check "a warm-up ran first" "$py" -c "
import json, sys; j = json.load(open('$tmp/a.json')); sys.exit(not j['warmup'])"
check "the 1% slower command is found slower" grep -q "^sleep 1.01 .*slower" "$tmp/a.out"
check "a progress line was shown" grep -q "round 10 of 10" "$tmp/a.err"

# A null effect: the same command twice, five seeds; at the 95% level, a verdict of faster or
# slower on more than one of five is a failure (p ~ 0.02 for a correct interval).
called=0
for seed in 1 2 3 4 5; do
  "$ps" compare --source "$src" --rounds 6 --seed $seed --min-effect 0 -- sleep 0.05 ::: sleep 0.05 >"$tmp/n.out" 2>/dev/null
  grep -Eq "^sleep 0.05 .*(faster|slower)," "$tmp/n.out" && called=$((called + 1))
done
check "a null effect is rarely called significant ($called of 5)" test $called -le 1

"$ps" compare --source "$src" --rounds 3 -L d 0.02,0.03 -- sleep {d} >"$tmp/l.out" 2>&1; rc=$?
check "-L scans a parameter" test $rc -eq 0
check "with one command per value" grep -q "^sleep 0.03 " "$tmp/l.out"

"$ps" compare --source "$src" --rounds 3 -- sleep 0.01 ::: sh -c 'exit 3' 2>"$tmp/f.err" >/dev/null; rc=$?
check "a failing command stops the comparison" test $rc -ne 0
check "and is named" grep -q "'sh -c exit 3' exited with 3" "$tmp/f.err"

# a command that marks its steps is measured by them: its start-up is left out (8 rounds: under
# the sanitizers on a loaded machine each mark's own start-up varies by tens of ms, and 4 rounds
# once left 20% inside the interval). The run's 1 s lead puts half a run (what two iterations
# of the whole run would each measure) past 600 ms, so a step's bound can leave the end mark's
# start-up 450 ms (under the sanitizers on a 2-core machine it takes 200 ms and more); the other
# command's steps are twice as long, so that start-up cannot hide the difference.
step() { echo "sleep 1; '$ps' mark begin step; sleep $1; '$ps' mark end step; '$ps' mark begin step; sleep $1; '$ps' mark end step"; }
"$ps" compare --source "$src" --rounds 8 -o "$tmp/r.json" -- sh -c "$(step 0.1)" ::: sh -c "$(step 0.2)" >"$tmp/r.out" 2>&1; rc=$?
check "compare by regions exits 0" test $rc -eq 0
# Under the sanitizers (scripts/sanitize.sh) on two busy cores a mark's start-up alone varies from
# 0.2 s to past the steps themselves: the timing checks run in the plain build only.
if [ "${POWERSHAPE_TIMING_TESTS:-1}" = 0 ]; then
  echo "skip a step is measured, not the run, and the longer steps are found slower (timing)"
else
  check "a step is measured, not the run (two 100 ms steps in 1.2 s runs; a mark process adds its start-up)" "$py" -c "
import json, sys
j = json.load(open('$tmp/r.json'))
ms = [m['ms_per_iteration'] for m in j['measurements'] if m['config'] == 0]
sys.exit(not (all(95 < x < 550 for x in ms) and all(m['iterations'] == 2 for m in j['measurements'])))"
  check "and the twice longer steps are found slower" grep -q "^sh -c .*sleep 0.2.*slower" "$tmp/r.out"
fi
"$ps" compare --source "$src" --rounds 2 --region nope -- sh -c "$(step 0.01)" ::: true >"$tmp/r2.out" 2>&1; rc=$?
check "a region asked for and never marked is named" grep -q "marked no region 'nope'" "$tmp/r2.out"

# Ctrl-C: the rounds that finished are printed and written, and the exit is 128+2
"$ps" compare --source "$src" --rounds 200 --warmup-max 1 -o "$tmp/i.json" -- sleep 0.1 ::: sleep 0.15 >"$tmp/i.out" 2>"$tmp/i.err" &
pid=$!; sleep 5; kill -INT $pid; wait $pid; rc=$?
check "an interrupted compare exits 130" test $rc -eq 130
check "and says after how many rounds" grep -q "interrupted after [0-9]* of 200 rounds" "$tmp/i.err"
check "its finished rounds are written" "$py" -c "
import json, sys
j = json.load(open('$tmp/i.json'))
done = j['rounds_done']
sys.exit(not (j['interrupted'] and 2 <= done < 200 and len(j['configs']) == 2
              and sum(m['round'] < done for m in j['measurements']) == 2 * done))"
check "and printed" grep -q "^sleep 0.15 " "$tmp/i.out"

# tune over a user's command: -L scans it, the race picks the fastest value
"$ps" tune --source "$src" --no-cache -L d 0.1,0.05,0.2 -- sleep {d} >"$tmp/t.out" 2>&1; rc=$?
check "tune -- CMD exits 0" test $rc -eq 0
check "and picks the fastest value" grep -q "^choice: sleep 0.05 " "$tmp/t.out"

finish

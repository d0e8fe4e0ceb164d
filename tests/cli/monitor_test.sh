#!/usr/bin/env bash
# End-to-end tests of `powershape devices`, `monitor` and `mark`, on the fake driver and the
# replay source. Usage: monitor_test.sh POWERSHAPE DATA_DIR FAKE_NVML_DIR
set -u
ps=$1 data=$2 fake=$3
trace=$data/h200/gemm_sustained_trace.csv
. "$(dirname "$0")/check.sh"
with_fake() { LD_LIBRARY_PATH=$fake POWERSHAPE_FAKE_NVML_TRACE=$trace "$@"; }

# devices
with_fake "$ps" devices >"$tmp/dev.txt" 2>&1; rc=$?
check "devices lists the fake GPU" grep -q "GPU 0: Fake H200 0" "$tmp/dev.txt"
check "devices shows the power limit" grep -q "power limit     700 W" "$tmp/dev.txt"
check "devices exits 0" test $rc -eq 0
POWERSHAPE_FAKE_NVML_FAULTS=no_driver with_fake "$ps" devices >"$tmp/nodrv.txt" 2>&1; rc=$?
check "no driver exits non-zero" test $rc -ne 0
check "no driver is one line" test "$(wc -l <"$tmp/nodrv.txt")" -eq 1
check "no driver says so" grep -q "^powershape: no NVIDIA driver" "$tmp/nodrv.txt"
check "and what to read instead" grep -q -- "--source fake:h200/gemm_sustained replays" "$tmp/nodrv.txt"
POWERSHAPE_FAKE_NVML_FAULTS=no_driver with_fake "$ps" monitor -- true >"$tmp/nodrv_m.txt" 2>&1
check "monitor without a driver: what to read instead" grep -q -- "--source fake:.* replays" "$tmp/nodrv_m.txt"

# monitor returns the command's exit code and writes a complete trace and summary
"$ps" monitor --source "fake:$trace" -o "$tmp/a.csv" --json "$tmp/a.json" -- sh -c 'sleep 0.5; exit 3' 2>"$tmp/a.err"; rc=$?
check "monitor returns the command's code" test $rc -eq 3
check "monitor prints energy" grep -q " J  energy" "$tmp/a.err"
check "monitor prints the SM clock" grep -q "MHz  SM clock mean" "$tmp/a.err"
check "the CSV has rows" test "$(grep -vc '^#' "$tmp/a.csv")" -gt 5
"$ps" monitor --every-row --source "fake:$trace" -o "$tmp/every.csv" -- sleep 0.5 2>/dev/null
check "--every-row keeps the repeated polls" test "$(grep -vc '^#' "$tmp/every.csv")" -gt "$(grep -vc '^#' "$tmp/a.csv")"
check "the JSON has the summary" grep -q '"energy_j"' "$tmp/a.json"
check "the CSV carries its wall-clock anchor" grep -q '^# clock {"start_utc":"20[0-9-]*T[0-9:]*Z","wall_minus_steady_ns":[0-9]*}' "$tmp/a.csv"
"$ps" monitor --source "fake:$trace" --perfetto "$tmp/a.perfetto.json" -- sh -c "sleep 0.2; '$ps' mark begin phase; sleep 0.2; '$ps' mark end phase" 2>/dev/null
check "--perfetto writes counters and the region on the wall clock" python3 -c "
import json, sys, time
j = json.load(open('$tmp/a.perfetto.json'))
ev = j['traceEvents']
counters = [e for e in ev if e['ph'] == 'C' and e['name'] == 'power_usage [W]']
slices = [e for e in ev if e['ph'] == 'X' and e['name'] == 'phase']
# the region: its 0.2 s and the end mark's start-up (0.2 s and more under the sanitizers)
ok = counters and len(slices) == 1 and 150e3 < slices[0]['dur'] < 1e6
ok = ok and abs(counters[0]['ts'] / 1e6 - time.time()) < 600 and 50 < counters[0]['args']['value'] < 1000
sys.exit(not ok)"

# a node of 8 GPUs (the fake driver replaying one trace on each): each GPU, then the node's totals
POWERSHAPE_FAKE_NVML_GPUS=8 with_fake "$ps" monitor --textfile "$tmp/node.prom" -- sleep 2.5 >"$tmp/node.out" 2>&1; rc=$?
check "monitor on 8 GPUs exits 0" test $rc -eq 0
check "each of the 8 GPUs is summarised" test "$(grep -c '^ GPU [0-7]  Fake H200' "$tmp/node.out")" -eq 8
check "the node's energy is the sum of its GPUs'" python3 -c "
import re
t = open('$tmp/node.out').read()
gpus = [float(x) for x in re.findall(r'^\s+([0-9.]+) J  energy', t.split(' node ')[0], re.M)]
node = float(re.search(r'node  8 GPUs together\n.*\n\s+([0-9.]+) J  energy', t).group(1))
assert len(gpus) == 8 and abs(sum(gpus) - node) < 0.1 * 8, (gpus, node)"
check "alike GPUs' update periods on one line" grep -q "^ GPUs 0-7 update periods:" "$tmp/node.out"
check "the textfile has the node's power" grep -q '^powershape_node_power_watts{Hostname="[^"]*",gpus="8"} ' "$tmp/node.prom"
# a replayed trace's `cond` column comes back as regions, each summarised and recorded
printf 't_s,cond,power_instant_mw,sm_clock_mhz\n0,idle,80000,345\n0.1,idle,80000,345\n0.2,load,650000,1500\n0.4,load,660000,1490\n0.5,cool,90000,1980\n0.9,cool,90000,1980\n' >"$tmp/cond.csv"
"$ps" monitor --source "fake:$tmp/cond.csv" -o "$tmp/cond_out.csv" -- sleep 0.7 >"$tmp/cond.out" 2>&1
check "a replayed trace's cond regions are summarised" grep -q "region 'load'" "$tmp/cond.out"
check "a replayed trace's cond regions are recorded" grep -q '# region .*"name":"idle"' "$tmp/cond_out.csv"
check "a region still open when the command ends is not cut short" test -z "$(grep "region 'cool'" "$tmp/cond.out")"
"$ps" monitor --source "fake:$trace" -- /nonexistent/cmd 2>"$tmp/b.err"; rc=$?
check "an unstartable command gives 127" test $rc -eq 127
check "and says why" grep -q "cannot run '/nonexistent/cmd': No such file or directory" "$tmp/b.err"

# regions placed by the command through `powershape mark`, on the NVML path
with_fake "$ps" monitor --interval 1 -o "$tmp/c.csv" -- sh -c "sleep 0.2; '$ps' mark begin phase; sleep 0.3; '$ps' mark end phase" 2>"$tmp/c.err"; rc=$?
check "mark + monitor exit 0" test $rc -eq 0
check "the region is in the trace" grep -q '^# region {"begin_ns":[0-9]*,"end_ns":[0-9]*,"gpu":-1,"name":"phase"}' "$tmp/c.csv"
check "the region is summarised" grep -q "region 'phase'" "$tmp/c.err"
# a recorder inside another passes its command's marks on: both traces have the region
"$ps" monitor --source "fake:$trace" -o "$tmp/outer.csv" -- "$ps" monitor --source "fake:$trace" -o "$tmp/inner.csv" -- sh -c "'$ps' mark begin nested; sleep 0.2; '$ps' mark end nested" 2>/dev/null; rc=$?
check "nested monitors exit 0" test $rc -eq 0
check "the inner trace has the region" grep -q '"name":"nested"' "$tmp/inner.csv"
check "and so has the outer one" grep -q '"name":"nested"' "$tmp/outer.csv"
check "driver samples are harvested" awk -F, '!/^#/ && NR>3 && $7 != "" {n++} END {exit !(n > 10)}' "$tmp/c.csv"
# a region left open is closed at the end with a warning; a bad name is refused by mark and
# ignored by the monitor, whose summary survives (invalid UTF-8 once aborted it)
with_fake "$ps" monitor --interval 1 --json "$tmp/o.json" -- sh -c "'$ps' mark begin left_open; sleep 0.2; '$ps' mark begin \"\$(printf 'a\\377b')\" 2>'$tmp/bad.err'; printf 'begin 1 \\377\\n' >\"\$POWERSHAPE_CONTROL\"; sleep 0.1" 2>"$tmp/o.err"; rc=$?
check "a region left open: exit 0" test $rc -eq 0
check "it is closed at the end with a warning" grep -q "region 'left_open' began but never ended: closed at the end" "$tmp/o.err"
check "and summarised" grep -q '"name": "left_open"' "$tmp/o.json"
check "mark refuses a name that is not UTF-8" grep -q "a region name is UTF-8 text" "$tmp/bad.err"
check "the monitor ignores one sent by hand" grep -q "ignored a region: a region name is UTF-8 text" "$tmp/o.err"
"$ps" mark begin x 2>"$tmp/d.err"; rc=$?
check "mark outside monitor fails clearly" test $rc -ne 0 -a "$(cat "$tmp/d.err")" = "powershape: POWERSHAPE_CONTROL is not set: run this under 'powershape monitor'"

# killed outright, the monitor takes its command with it
"$ps" monitor --source "fake:$trace" --json "$tmp/killed.json" --report "$tmp/killed.html" -- sleep 31.73 2>/dev/null &
pid=$!; sleep 0.5; kill -KILL $pid; wait $pid 2>/dev/null; sleep 0.3
check "a killed monitor leaves no command running" test -z "$(pgrep -f 'sleep 31.73')"
check "nor an empty --json or --report file" test ! -e "$tmp/killed.json" -a ! -e "$tmp/killed.html"

# SIGINT reaches the command; the trace on disk is complete
"$ps" monitor --source "fake:$trace" -o "$tmp/e.csv" -- sleep 30 2>"$tmp/e.err" &
pid=$!; sleep 1; kill -INT $pid; wait $pid; rc=$?
check "SIGINT is forwarded (130)" test $rc -eq 130
check "the interrupted trace is whole" awk -F, '!/^#/ {if (!h) h = NF; n = NF} END {exit !(h > 20 && n == h)}' "$tmp/e.csv"
check "and summarised" grep -q "duration" "$tmp/e.err"

# without a command: record until Ctrl-C
"$ps" monitor --source "fake:$trace" -o "$tmp/f.csv" 2>"$tmp/f.err" &
pid=$!; sleep 2; kill -TERM $pid; wait $pid; rc=$?  # 2 s: its start-up under the sanitizers
check "recording without a command stops on SIGTERM" test $rc -eq 143
check "and keeps what it recorded" test "$(grep -vc '^#' "$tmp/f.csv")" -gt 10

# bad input: one line, non-zero
"$ps" monitor --interval 0 --source "fake:$trace" -- true 2>"$tmp/g.err"; rc=$?
check "a bad interval is refused" test $rc -ne 0 -a "$(wc -l <"$tmp/g.err")" -eq 1
"$ps" monitor --gpus 0,x -- true 2>"$tmp/h.err"; rc=$?
check "a bad GPU list is refused" grep -q "^powershape: --gpus: expected comma-separated non-negative integers" "$tmp/h.err"
"$ps" monitor --source "fake:/nonexistent.csv" -- true 2>"$tmp/i.err"; rc=$?
check "a missing trace is named" grep -q "cannot read /nonexistent.csv" "$tmp/i.err"
# A reader that goes (`-o - | head -1`) ends neither the recording nor the command: its exit code
# comes back, the summary follows; the command gets SIGPIPE's default (not powershape's ignore).
"$ps" monitor --interval 5 --source "fake:$trace" -o - --json "$tmp/pipe.json" -- sh -c 'sleep 1; exit 3' 2>"$tmp/pipe.err" | head -n 1 >/dev/null
check "-o - into a reader that went: the command's exit code" test "${PIPESTATUS[0]}" -eq 3
check "and a word that its reader went" grep -q "its reader went" "$tmp/pipe.err"
check "and the summary" grep -q "average power" "$tmp/pipe.err"
check "and the --json summary, whole" python3 -c "import json,sys; assert json.load(open(sys.argv[1]))['summary']" "$tmp/pipe.json"
timeout 20 "$ps" monitor --interval 5 --source "fake:$trace" -o - 2>/dev/null | head -n 1 >/dev/null
check "-o - with no command ends when its reader goes" test "${PIPESTATUS[0]}" -ne 124
ign=$("$ps" monitor --source "fake:$trace" -- grep SigIgn /proc/self/status 2>/dev/null | awk '{print $2}')
check "the command's SIGPIPE is not ignored" test $((0x${ign:-1000} & 0x1000)) -eq 0
# The CPU's energy (RAPL, through a fake powercap tree): each package and its DRAM over the run,
# and the node's total with the GPUs'.
pc="$tmp/powercap"; mkdir -p "$pc/intel-rapl:0/intel-rapl:0:0"
printf 'package-0\n' >"$pc/intel-rapl:0/name"; printf '262143328850\n' >"$pc/intel-rapl:0/max_energy_range_uj"
printf '1000000\n' >"$pc/intel-rapl:0/energy_uj"
printf 'dram\n' >"$pc/intel-rapl:0/intel-rapl:0:0/name"; printf '65712999613\n' >"$pc/intel-rapl:0/intel-rapl:0:0/max_energy_range_uj"
printf '5000\n' >"$pc/intel-rapl:0/intel-rapl:0:0/energy_uj"
POWERSHAPE_POWERCAP="$pc" "$ps" monitor --source "fake:$trace" --json "$tmp/rapl.json" -- sh -c "sleep 0.3; echo 3500000 >'$pc/intel-rapl:0/energy_uj'; echo 1005000 >'$pc/intel-rapl:0/intel-rapl:0:0/energy_uj'" 2>"$tmp/rapl.err"
check "the CPU's energy under the GPUs'" grep -q "CPU (RAPL): package-0 2.5 J, package-0 dram 1 J; with the GPUs'" "$tmp/rapl.err"
check "and in the JSON" python3 -c "import json,sys; c = json.load(open(sys.argv[1]))['cpu_energy']; assert c == {'package-0': 2.5, 'package-0 dram': 1.0}, c" "$tmp/rapl.json"

# The energy a token, where the command marks its steps: the GPUs' in the steps and over the run,
# and with the CPUs' (the fake powercap tree above).
POWERSHAPE_POWERCAP="$pc" "$ps" monitor --source "fake:$trace" --tokens-per-step 1000 --json "$tmp/tok.json" --textfile "$tmp/tok.prom" -- sh -c "sleep 0.2; for i in 1 2; do '$ps' mark begin step; sleep 0.2; '$ps' mark end step; done" 2>"$tmp/tok.err"
check "the energy a token" grep -q "energy a token: .* mJ in the steps, .* mJ over the run (GPUs; 2 steps of 1000 tokens); .* mJ with the CPUs" "$tmp/tok.err"
check "and in the JSON" python3 -c "import json,sys; t = json.load(open(sys.argv[1]))['energy_per_token']; assert t['steps'] == 2 and t['tokens'] == 2000 and 0 < t['gpu_j_per_token_in_steps'] < t['gpu_j_per_token'] <= t['node_j_per_token'], t" "$tmp/tok.json"
"$ps" monitor --source "fake:$trace" --tokens-per-step 1000 -- true 2>"$tmp/tok0.err"
check "the exporter's gauge: the last step's energy a token" grep -qE '^powershape_step_energy_per_token_joules [0-9.e-]+$' "$tmp/tok.prom"
# (How long a step takes depends on the machine's speed: marks start a process each.)
"$ps" monitor --source "fake:$trace" -- sh -c "for i in 1 2 3 4 5 6; do '$ps' mark begin step; sleep 0.1; '$ps' mark end step; done" 2>"$tmp/many.err"
check "a repeated region shows three blocks, then one line for the rest" bash -c "test \$(grep -c \"^ GPU 0  region 'step'\$\" '$tmp/many.err') -eq 3 && grep -q \"^ GPU 0  region 'step': 3 more, each a median [0-9.]* s and [0-9.]* J (--json keeps every one)\" '$tmp/many.err'"
check "without steps it says what it needs" grep -q "energy a token: none: --tokens-per-step needs the command's steps marked" "$tmp/tok0.err"

# Per-process GPU energy (NVML's per-process samples, on the fake driver): two processes busy 60%
# and 20% of the time share the GPU's energy 3:1, and the parts add up to the GPU's energy.
sleep 30 & p1=$!; sleep 30 & p2=$!
POWERSHAPE_FAKE_NVML_PROCESSES="$p1:60,$p2:20" with_fake "$ps" monitor --interval 5 -o "$tmp/proc.csv" --json "$tmp/proc.json" --textfile "$tmp/proc.prom" -- sleep 2.5 2>"$tmp/proc.err"
POWERSHAPE_FAKE_NVML_FAULTS=code=processes:not_supported POWERSHAPE_FAKE_NVML_PROCESSES="$p1:60" with_fake "$ps" monitor --interval 5 -- sleep 0.3 2>"$tmp/proc0.err"
kill $p1 $p2 2>/dev/null
check "the exporter's counter a process" grep -q "^powershape_gpu_process_energy_joules_total{gpu=\"0\",pid=\"$p1\",process=\"sleep\"} [0-9.]*$" "$tmp/proc.prom"
check "a GPU without per-process samples says so once" test "$(grep -c "per-process utilization: .*(no energy by process on this GPU)" "$tmp/proc0.err")" -eq 1
check "and shows no split" bash -c "! grep -q 'GPU 0 by process' '$tmp/proc0.err'"
check "the summary has the GPU's energy by process" grep -q "GPU 0 by process (its SM time a second; not each one's power): sleep (pid $p1) [0-9.]* J, [0-9.]* s busy, sleep (pid $p2)" "$tmp/proc.err"
check "the recording keeps the process samples" grep -q "^# process {.*\"pid\":$p1" "$tmp/proc.csv"
check "the JSON shares them 3:1 and adds up to the GPU's energy" python3 -c "
import json, sys
j = json.load(open(sys.argv[1]))
by = {e['pid']: e['joules'] for e in j['gpu_energy_by_process']}
gpu = [s for s in j['summary'] if s['name'] == 'all'][0]['energy_j']
assert abs(by[$p1] / by[$p2] - 3) < 0.3 and abs(sum(by.values()) - gpu) < 0.01 * gpu, (by, gpu)" "$tmp/proc.json"
"$ps" report "$tmp/proc.csv" --json "$tmp/proc.json" -o "$tmp/proc.html" 2>/dev/null
check "the report carries the GPU's energy by process" grep -q "\"gpu_energy_by_process\":\[{\"busy_s\"" "$tmp/proc.html"
python3 -c "import json,sys; j = json.load(open(sys.argv[1])); j['cpu_energy'] = 'hot'; json.dump(j, open(sys.argv[2], 'w'))" "$tmp/proc.json" "$tmp/badjob.json"
"$ps" report "$tmp/proc.csv" --json "$tmp/badjob.json" -o "$tmp/bad.html" 2>"$tmp/badjob.err"; rc=$?
check "a JSON whose cpu_energy is not an object is refused in one line" test $rc -ne 0 -a "$(wc -l <"$tmp/badjob.err")" -eq 1
check "naming it" grep -q "^powershape: --json: $tmp/badjob.json: cpu_energy: expected an object" "$tmp/badjob.err"

# Outputs are regular files: a FIFO (no reader: it would block the run forever) is refused at once.
mkfifo "$tmp/out.fifo"
timeout 10 "$ps" monitor --source "fake:$trace" --textfile "$tmp/out.fifo" -- true 2>"$tmp/j.err"; rc=$?
check "a FIFO as the textfile is refused at once" test $rc -eq 2
check "and named" grep -q "^powershape: --textfile: cannot write $tmp/out.fifo: it is a FIFO" "$tmp/j.err"
timeout 10 "$ps" monitor --source "fake:$trace" -o "$tmp/out.fifo" -- true 2>"$tmp/k.err"; rc=$?
check "a FIFO as -o is refused at once" test $rc -eq 2
# Inputs are regular files too: a FIFO without a writer is refused, not waited on forever.
timeout 10 "$ps" monitor --source "fake:$tmp/out.fifo" -- true 2>"$tmp/l.err"; rc=$?
check "a FIFO as the replayed trace is refused at once" grep -q "cannot read $tmp/out.fifo: it is a FIFO" "$tmp/l.err"

# --textfile: a Prometheus text file for node_exporter, with dcgm-exporter's names
"$ps" monitor --interval 5 --source "fake:$trace" --textfile "$tmp/ps.prom" -- sleep 1.3 2>/dev/null
check "--textfile keeps dcgm-exporter's power metric and labels" grep -q '^DCGM_FI_DEV_POWER_USAGE{gpu="0",UUID="[^"]*",device="nvidia0",modelName="[^"]*",Hostname="[^"]*"} [0-9.]*$' "$tmp/ps.prom"
check "and the power-capped fraction" grep -q '^powershape_power_capped_fraction{' "$tmp/ps.prom"
check "and leaves no temporary file" test ! -e "$tmp/ps.prom.tmp"

# monitor --prometheus serves while recording; --live shows a line per GPU
port2=$((40000 + $$ % 20000))
with_fake "$ps" monitor --live --interval 5 --prometheus 127.0.0.1:$port2 -- sh -c "sleep 1.3; python3 -c \"import urllib.request; open('$tmp/y.prom', 'wb').write(urllib.request.urlopen('http://127.0.0.1:$port2/metrics', timeout=5).read())\"" 2>"$tmp/y.err"; rc=$?
check "monitor --prometheus serves /metrics" grep -q '^DCGM_FI_DEV_SM_CLOCK{gpu="0"' "$tmp/y.prom"
check "--live shows power against the limit, clock, temperature, energy and reasons" grep -Eq '^GPU 0 +[0-9]+ / 700 W +[0-9]+ MHz +[0-9]+ C +[0-9.]+ J  (sw_power_cap|-|[a-z_,]+)$' "$tmp/y.err"

# the exporter: /metrics for Prometheus until SIGTERM
port=$((20000 + $$ % 20000))
"$ps" exporter --listen 127.0.0.1:$port --source "fake:$trace" 2>"$tmp/x.err" &
pid=$!; sleep 1.5
python3 -c "
import urllib.request
r = urllib.request.urlopen('http://127.0.0.1:$port/metrics', timeout=5)
open('$tmp/x.prom', 'wb').write(r.read())" 2>/dev/null
kill -TERM $pid; wait $pid
check "the exporter serves dcgm-exporter's power metric" grep -q '^DCGM_FI_DEV_POWER_USAGE{gpu="0"' "$tmp/x.prom"
check "and says where" grep -q "serving http://127.0.0.1:$port/metrics" "$tmp/x.err"
"$ps" exporter --listen 127.0.0.1:99999 --source "fake:$trace" 2>"$tmp/x2.err"; rc=$?
check "a bad port is one clear line" test $rc -ne 0 -a "$(wc -l <"$tmp/x2.err")" -eq 1

# outputs: never the replayed trace, never one file for both, never one another monitor holds
cp "$trace" "$tmp/src.csv"; before=$(md5sum <"$tmp/src.csv")
"$ps" monitor --source "fake:$tmp/src.csv" -o "$tmp/src.csv" -- true 2>"$tmp/j.err"; rc=$?
check "the --source trace is not an output" test $rc -ne 0 -a "$(md5sum <"$tmp/src.csv")" = "$before"
check "and that is said" grep -q "^powershape: -o: $tmp/src.csv is an input; it would be overwritten" "$tmp/j.err"
"$ps" monitor --source "fake:$trace" -o "$tmp/k.csv" --json "$tmp/k.csv" -- true 2>"$tmp/k.err"; rc=$?
check "-o and --json on one file are refused" grep -q "name the same file" "$tmp/k.err"
"$ps" monitor --source "fake:$trace" --json "$tmp" -- true 2>"$tmp/k2.err"; rc=$?
check "a folder as --json is refused before the command runs" grep -q "^powershape: --json: cannot write $tmp: it is a folder" "$tmp/k2.err"
"$ps" monitor --source "fake:$trace" -o "$tmp/held.csv" -- sleep 1.5 2>/dev/null &
first=$!; sleep 0.5
"$ps" monitor --source "fake:$trace" -o "$tmp/held.csv" -- touch "$tmp/second_ran" 2>"$tmp/l.err"; rc=$?
wait $first
check "a file another monitor writes is refused" grep -q "another powershape monitor is writing it" "$tmp/l.err"
check "before its command runs" test ! -e "$tmp/second_ran"
check "and the first monitor's trace is whole" test "$(grep -vc '^#' "$tmp/held.csv")" -gt 5

# an output that fails mid-run under a file size limit (SIGXFSZ's default would kill the monitor
# and its command): sampling goes on, one warning, the command runs to its end with the signal's
# default disposition, the summary and the JSON still come; the CSV on disk stays readable (its
# torn last row is dropped on read)
(ulimit -f 32; exec "$ps" monitor --every-row --every-interval --interval 1 --source "fake:$trace" -o "$tmp/full.csv" --json "$tmp/full.json" -- sh -c "sleep 1; grep SigIgn /proc/self/status >'$tmp/child_done'") 2>"$tmp/m.err"; rc=$?
check "a failing output: the command ran to its end" test -e "$tmp/child_done"
check "with SIGXFSZ not ignored" python3 -c "import sys; sys.exit(int(open('$tmp/child_done').read().split()[1], 16) >> 24 & 1)"
check "one warning" test "$(grep -c 'recording goes on in memory' "$tmp/m.err")" -eq 1
check "the summary is printed" grep -q " J  energy" "$tmp/m.err"
check "the JSON is written" grep -q '"energy_j"' "$tmp/full.json"
check "the exit code says something was lost" test $rc -eq 1
"$ps" monitor --source "fake:$tmp/full.csv" -- true 2>"$tmp/m2.err"; rc=$?
check "the cut-off CSV is still readable" test $rc -eq 0

# a killed monitor's temporary folder is removed by the next monitor
mkdir -p "$tmp/t"
TMPDIR=$tmp/t "$ps" monitor --source "fake:$trace" -- sleep 30.37 2>/dev/null &
pid=$!; sleep 0.5; kill -KILL $pid; wait $pid 2>/dev/null; sleep 0.3
check "a killed monitor leaves its folder" test -n "$(ls "$tmp/t" | grep "^powershape\.$pid\.")"
TMPDIR=$tmp/t "$ps" monitor --source "fake:$trace" -- true 2>/dev/null
check "the next monitor removes it" test -z "$(ls "$tmp/t")"

# "-" is standard output: the data alone there, the table on standard error
"$ps" monitor --source "fake:$trace" -o - -- sleep 0.5 >"$tmp/stdout.csv" 2>"$tmp/table.txt"
check "-o - writes the trace to standard output" grep -q "^# powershape trace" "$tmp/stdout.csv"
check "and nothing else there" test -z "$(grep -v '^#' "$tmp/stdout.csv" | grep -v '^[0-9t]')"
check "the table goes to standard error" grep -q "power-capped" "$tmp/table.txt"
check "no file named -" test ! -e ./-
"$ps" monitor --source "fake:$trace" --json - -- sleep 0.5 2>/dev/null | python3 -c "import json, sys; json.load(sys.stdin)"
check "--json - writes JSON alone to standard output" test $? -eq 0
# Only outputs count: "-" is also a name (a title, a region), and a command's own word.
"$ps" report "$trace" --title - -o - >"$tmp/dash.html" 2>"$tmp/dash.err"
check "a title '-' beside -o - is no second output" grep -q "<html" "$tmp/dash.html"
"$ps" monitor --source "fake:$trace" -o - -- echo - >"$tmp/dash.csv" 2>/dev/null
check "nor is a command's '-'" grep -q "^# powershape trace" "$tmp/dash.csv"

# Each signal read about twice an update (the replay's ~100 ms), at most every 4 intervals, so at
# 1 ms the sampler wakes about every 4 intervals; --every-interval reads every signal every one.
rounds() { "$ps" monitor --source "fake:$trace" --interval 1 --slow-interval 100 "$@" -- sleep 1 2>&1 | sed -n 's/^ sampler: \([0-9]*\) rounds.*/\1/p'; }
stretched=$(rounds) every=$(rounds --every-interval)
check "a 1 ms interval wakes for what is due" test "${stretched:-9999}" -lt 600
check "--every-interval reads every interval" test "${every:-0}" -gt 800

finish

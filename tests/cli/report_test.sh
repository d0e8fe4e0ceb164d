#!/usr/bin/env bash
# `powershape report` looked at as a person would: the report of a shipped H200 trace, with a
# probe and a repro result, opened in headless Chromium; the page must draw every plot (its own
# count of painted pixels per canvas), raise no script error or console error, and its screenshot
# must not be blank. Skips (77) only where no Chromium is installed: scripts/deps.sh installs
# chromium-headless-shell, so CI runs it.
# Usage: report_test.sh POWERSHAPE DATA_DIR
set -u
ps=$1 data=$2
. "$(dirname "$0")/check.sh"
browser=$(command -v chromium-headless-shell || command -v chromium || true)
if [ -z "$browser" ]; then echo "SKIP: no chromium-headless-shell or chromium"; exit 77; fi
open_page() {  # URL EXTRA_ARGS... : the browser, headless, bounded in time
  local url=$1; shift
  timeout 60 "$browser" --headless --no-sandbox --disable-gpu --no-first-run \
    --user-data-dir="$tmp/profile" --window-size=1400,2600 --enable-logging=stderr --v=0 "$@" "$url"
}

"$ps" probe --device sim --periods 2,20,200 --gaps idle,memory --window 1 -o "$tmp/p.json" >/dev/null 2>&1
"$ps" repro --device sim --chunks 1,2,4 --rounds 2 --window 0.5 -o "$tmp/r.json" >/dev/null 2>&1
"$ps" report "$data/h200/square_wave_idle_trace.csv" --probe "$tmp/p.json" --repro "$tmp/r.json" \
  -o "$tmp/report.html" --perfetto "$tmp/report.perfetto.json" 2>"$tmp/w.err"; rc=$?
check "report exits 0" test $rc -eq 0
check "report says what it wrote" grep -q "wrote $tmp/report.html" "$tmp/w.err"
check "the page fetches nothing" bash -c "! grep -qE 'src=\"http|href=\"http|@import' '$tmp/report.html'"
check "report --perfetto writes the trace" grep -q '"traceEvents"' "$tmp/report.perfetto.json"

open_page "file://$tmp/report.html" --dump-dom >"$tmp/dom.html" 2>"$tmp/console.log"
body=$(grep -o '<body[^>]*>' "$tmp/dom.html")
check "the page's script ran to its end" grep -q 'data-rendered="yes"' <<<"$body"
check "no script error" bash -c "! grep -q 'data-error' <<<'$body'"
check "no console error" bash -c "! grep -E 'CONSOLE.*(Uncaught|Error|error)' '$tmp/console.log'"
# Power, SM clock, temperature, reasons, probe, repro, the trace's swings: seven canvases, each
# with ink on it.
check "seven plots drawn" grep -q 'data-plots="7"' <<<"$body"
ink=$(sed -n 's/.*data-ink="\([0-9,]*\)".*/\1/p' <<<"$body")
check "every plot has lines on it ($ink)" python3 -c "
import sys; v = [int(x) for x in '$ink'.split(',') if x]; sys.exit(not (len(v) == 7 and min(v) > 300))"
check "the regions are named on the page" grep -q 'sq_idle_50ms' "$tmp/report.html"

open_page "file://$tmp/report.html" --screenshot="$tmp/shot.png" >/dev/null 2>&1
check "the screenshot is not blank" python3 - "$tmp/shot.png" <<'PY'
# Decode the PNG with the standard library and count pixels that are not the white background.
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n"
pos, idat, w = 8, b"", 0
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if kind == b"IHDR":
        w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
        bpp = {2: 3, 6: 4}[ctype]
    if kind == b"IDAT":
        idat += body
    pos += 12 + n
raw, stride = zlib.decompress(idat), w * bpp
prev, inked, colours = bytearray(stride), 0, set()
for y in range(h):
    f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):  # undo the PNG row filters
        a = line[i - bpp] if i >= bpp else 0
        b, c = prev[i], prev[i - bpp] if i >= bpp else 0
        if f == 1: line[i] = (line[i] + a) & 255
        elif f == 2: line[i] = (line[i] + b) & 255
        elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c; pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    for x in range(0, w, 4):
        px = bytes(line[x * bpp:x * bpp + 3])
        if px != b"\xff\xff\xff":
            inked += 1
            colours.add(px)
    prev = line
share = inked / (w * h / 4)
print("screenshot %dx%d: %.1f%% of pixels not background, %d colours" % (w, h, 100 * share, len(colours)))
sys.exit(not (share > 0.05 and len(colours) > 20))
PY

# A replayed run, as the README tells it: the verdict in one sentence, the limit line from the
# profile where the recording holds none (and said so), each series its own colour in any report,
# a series hidden under another said in the legend, repeated region names told apart.
# The replay is the first second of the H200's gemm_sustained recording, the part where its
# average power field equals its power usage in every row; the last readings hold however far a
# slow machine gets, so the one series lies under the other throughout and the page must say so.
mkdir -p "$tmp/h200"; head -n 250 "$data/h200/gemm_sustained_trace.csv" >"$tmp/h200/calm.csv"
"$ps" monitor --source "fake:$tmp/h200/calm.csv" -o "$tmp/rep.csv" -- sh -c "'$ps' mark begin rest; sleep 0.3; '$ps' mark end rest; '$ps' mark begin rest; sleep 0.3; '$ps' mark end rest" 2>/dev/null
"$ps" report "$tmp/rep.csv" -o "$tmp/rep.html" 2>/dev/null
open_page "file://$tmp/rep.html" --dump-dom >"$tmp/dom6.html" 2>/dev/null
# One sentence, for GPU 0, with its clock (html_report_test checks each wording).
check "the verdict, one sentence a GPU" bash -c "grep -o '<p id=\"verdict\">[^<]*</p>' '$tmp/dom6.html' | grep -Eq '^<p id=\"verdict\">GPU 0 [^.]*, its SM clock at [0-9]+ MHz on average[^.]*: [^.]*\\.</p>\$'"
check "the limit line is the profile's, said so" grep -q -- '- - limit 700 W (the h200 profile.s: the recording holds none)' "$tmp/dom6.html"
check "a series under another is said" grep -q 'average field (under power usage (1 s average))' "$tmp/dom6.html"
check "the swing's limits take the profile's rated power, said so" grep -q 'rated power: the h200 profile.s power limit (the recording holds none)' "$tmp/dom6.html"
check "repeated names told apart" bash -c "grep -q '<td>rest #1</td>' '$tmp/dom6.html' && grep -q '<td>rest #2</td>' '$tmp/dom6.html'"
colour() { grep -o "<i style=\"background: [^\"]*\"></i>$2<" "$1" | head -n 1 | cut -d'"' -f2; }
open_page "file://$tmp/report.html" --dump-dom >"$tmp/dom7.html" 2>/dev/null
check "a series keeps its colour from one report to the next ($(colour "$tmp/dom6.html" "SM clock"))" \
  test -n "$(colour "$tmp/dom6.html" "SM clock")" -a "$(colour "$tmp/dom6.html" "SM clock")" = "$(colour "$tmp/dom7.html" "SM clock")"
check "and no two series of a panel share one" bash -c "test \$(grep -o '<b>power  </b>.*' '$tmp/dom6.html' | head -n 1 | grep -o 'background: [^;]*' | head -n 3 | sort -u | wc -l) -eq 3"

# Recordings by name, from a folder that is not the checkout: every command that reads a trace.
(cd "$tmp" && "$ps" report h200/square_wave_idle -o named.html) >/dev/null 2>&1
check "report reads a recording by name from any folder" test -s "$tmp/named.html"
(cd "$tmp" && "$ps" advise --trace h200/finetune_qwen2_0.5b --max-slowdown 5) >"$tmp/named_advise.out" 2>&1
check "so does advise --trace" grep -q "^recommended: power limit" "$tmp/named_advise.out"
(cd "$tmp" && "$ps" swing h200/finetune_qwen2_0.5b) >"$tmp/named_swing.out" 2>&1
check "and swing" grep -q "^powershape swing: 1 recording" "$tmp/named_swing.out"

# The job's energy beside the GPUs' (monitor --json: RAPL, by process, a token) is drawn as a table,
# a process name shown as text.
"$ps" monitor --source "fake:$data/h200/gemm_sustained_trace.csv" -o "$tmp/j.csv" --json "$tmp/j.json" -- sleep 0.5 2>/dev/null
python3 - "$tmp/j.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
j["cpu_energy"] = {"package-0": 21.5, "package-0 dram": 3.25}
j["gpu_energy_by_process"] = [{"gpu": 0, "pid": 4242, "name": "<b>train", "joules": 150.0, "busy_s": 0.4},
                              {"gpu": 0, "pid": None, "name": "no process busy", "joules": 12.0, "busy_s": 0}]
j["energy_per_token"] = {"steps": 2, "tokens": 2000, "gpu_j_per_token_in_steps": 0.05, "gpu_j_per_token": 0.08, "node_j_per_token": 0.09}
json.dump(j, open(sys.argv[1], "w"))
PY
"$ps" report "$tmp/j.csv" --json "$tmp/j.json" -o "$tmp/job.html" 2>/dev/null
open_page "file://$tmp/job.html" --dump-dom >"$tmp/dom5.html" 2>/dev/null
check "the job's energy: the CPU's zones" grep -q '<td>CPU package-0 dram (RAPL)</td><td>3.25 J</td>' "$tmp/dom5.html"
check "the job's energy: a process, its name as text" grep -q '<td>GPU 0: &lt;b&gt;train (pid 4242)</td><td>150 J</td><td>0.40 s busy</td>' "$tmp/dom5.html"
check "the job's energy: a token" grep -q '<td>a token, over the run (GPUs and CPUs)</td><td>90.0 mJ</td>' "$tmp/dom5.html"

# A page with only a repro result (what `repro --report` writes) draws its one chart.
"$ps" report --repro "$tmp/r.json" -o "$tmp/repro.html" 2>/dev/null
open_page "file://$tmp/repro.html" --dump-dom >"$tmp/dom2.html" 2>/dev/null
check "a repro-only page draws one plot" grep -q 'data-plots="1"' <(grep -o '<body[^>]*>' "$tmp/dom2.html")

# A swing result alone (swing --json) draws its spectrum, with the verdicts' table.
"$ps" swing "$data/h200/finetune_qwen2_0.5b_trace.csv" --gpus 1000 --json "$tmp/s.json" >/dev/null
"$ps" report --swing "$tmp/s.json" -o "$tmp/swing.html" 2>/dev/null
open_page "file://$tmp/swing.html" --dump-dom >"$tmp/dom4.html" 2>/dev/null
check "a swing-only page draws one plot" grep -q 'data-plots="1"' <(grep -o '<body[^>]*>' "$tmp/dom4.html")
check "the swing page shows each verdict" grep -q '<td>band 0.1-20 Hz</td>' "$tmp/dom4.html"
echo '{"spectrum": {"freq_hz": [], "psd_w2_per_hz": []}, "verdicts": [], "power_w": {}, "ramp_w_per_s": {}, "range_w": {}}' >"$tmp/bad_swing.json"
"$ps" report --swing "$tmp/bad_swing.json" -o "$tmp/bad.html" 2>"$tmp/bad.err"; rc=$?
check "an empty spectrum is refused in one line" bash -c "test $rc -eq 2 && grep -q 'two lists of one length' '$tmp/bad.err'"

# Strings that would stop the page's script ("<!--<script>", "</script>") and text that is not
# UTF-8 (a Latin-1 cell, a title byte): the page is written with one warning and still runs.
python3 - "$data/h200/square_wave_idle_trace.csv" "$tmp/hostile.csv" <<'PY'
import sys
lines = open(sys.argv[1], "rb").read().split(b"\n")[:3000]
names = [b"<!--<script>", b"a</script><script>x", b"caf\xe9"]
out = [lines[0]] + [names[i * 3 // len(lines)] + l[l.index(b","):] for i, l in enumerate(lines[1:]) if l]
open(sys.argv[2], "wb").write(b"\n".join(out) + b"\n")
PY
"$ps" report "$tmp/hostile.csv" --title $'\xff <!--<script>' -o "$tmp/hostile.html" 2>"$tmp/h.err"; rc=$?
check "hostile strings: report exits 0" test $rc -eq 0
check "one warning for the text that is not UTF-8" test "$(grep -c 'not UTF-8' "$tmp/h.err")" -eq 1
check "no '<' of the data reaches the page" bash -c "! grep -q '<!--<script>' '$tmp/hostile.html'"
open_page "file://$tmp/hostile.html" --dump-dom >"$tmp/dom3.html" 2>/dev/null
body3=$(grep -o '<body[^>]*>' "$tmp/dom3.html")
check "hostile strings: the page's script ran to its end" grep -q 'data-rendered="yes"' <<<"$body3"
check "hostile strings: no script error" bash -c "! grep -q 'data-error' <<<'$body3'"
check "the names are shown as text" grep -q '&lt;!--&lt;script&gt;' "$tmp/dom3.html"

finish

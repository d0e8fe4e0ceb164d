#!/usr/bin/env bash
# Measures the times and sizes README.md states, on this machine, from a clean clone of HEAD:
#   scripts/readme-times.sh           the quick start's first command and the install's size
#   scripts/readme-times.sh --tests   and the second command, the whole test suite (~15 min)
# Prints the machine, then one line a figure. Packages are installed first (deps.sh), so the
# times are a build's and a run's, not a download's.
set -euo pipefail
cd "$(dirname "$0")/.."
tests=0
case "${1:-}" in --tests) tests=1 ;; "") ;; *) echo "readme-times.sh: expected --tests or nothing, found '$1'" >&2; exit 2 ;; esac
scripts/deps.sh "$([ $tests = 1 ] && echo test || echo build)" >/dev/null
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
git clone -q . "$dir/clone"
cd "$dir/clone"
cpu=$(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -n 1)
os=$(. /etc/os-release && echo "$PRETTY_NAME")
echo "machine: $(nproc) cores ($cpu), $(free -g | awk '/^Mem:/{print $2}') GiB, $os," \
  "$(command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ] && echo "CUDA toolkit present" || echo "no CUDA toolkit"),"\
  "$(nvidia-smi -L >/dev/null 2>&1 && echo "a GPU" || echo "no GPU"); $(date -u +%F) at $(git rev-parse --short HEAD)"
t0=$(date +%s.%N)
scripts/quickstart.sh >"$dir/quickstart.log" 2>&1 || { tail -n 20 "$dir/quickstart.log"; exit 1; }
t1=$(date +%s.%N)
seconds() { python3 -c "import sys; s = round(float(sys.argv[2]) - float(sys.argv[1])); print(f'{s // 60} min {s % 60} s')" "$@"; }
echo "scripts/quickstart.sh: $(seconds "$t0" "$t1") from a clean clone"
cmake --install build --prefix "$dir/prefix" >/dev/null
echo "cmake --install: $(du -sh "$dir/prefix" | cut -f1) (the CLI $(du -h "$dir/prefix/bin/powershape" | cut -f1)," \
  "the recorded H200 data $(du -sh "$dir/prefix/share/powershape/data/h200" | cut -f1))"
if [ $tests = 1 ]; then
  t0=$(date +%s.%N)
  scripts/test.sh >"$dir/test.log" 2>&1 || { tail -n 20 "$dir/test.log"; exit 1; }
  t1=$(date +%s.%N)
  echo "scripts/test.sh: $(seconds "$t0" "$t1") after the quick start ($(sed -n 's/.*tests passed, \([0-9]*\) tests failed out of \([0-9]*\).*/\2 tests, \1 failed/p' "$dir/test.log" | tail -n 1))"
fi

#!/usr/bin/env bash
# The simulator's CLI output, kept as golden files: a change that alters what `repro`, `probe` or
# `sim` print shows up here. Usage: golden_test.sh POWERSHAPE REPO_ROOT [--update]
set -u
ps=$(realpath "$1") root=$(realpath "$2") update=${3:-}
dir=$root/tests/cli/golden
cd "$root" || exit 2
failures=0 passed=0
while IFS='|' read -r name args; do
  name=$(echo "$name" | xargs)
  case $name in ''|'#'*) continue ;; esac
  # shellcheck disable=SC2086
  out=$("$ps" $args 2>&1)
  if [ "$update" = --update ]; then
    printf '%s\n' "$out" >"$dir/$name.txt"
    echo "wrote $name"
  elif diff <(printf '%s\n' "$out") "$dir/$name.txt" >/tmp/golden_diff.$$ 2>&1; then
    echo "ok   $name"; passed=$((passed + 1))
  else
    echo "FAIL $name: powershape$args differs from $name.txt:"; head -n 20 /tmp/golden_diff.$$
    failures=$((failures + 1))
  fi
done <"$dir/commands.txt"
rm -f /tmp/golden_diff.$$
echo "$passed passed, $failures failed"
test $failures -eq 0

#!/usr/bin/env bash
# Values that would make a run unbounded or wrong are refused before it starts: each case in
# bad_values.txt exits non-zero within 10 s with an error line that names the option.
#   bad_values_test.sh POWERSHAPE REPO_ROOT
set -u
ps=$(realpath "$1") root=$(realpath "$2")
cd "$root" || exit 2
failures=0 passed=0
while IFS='|' read -r args words; do
  case $args in ''|'#'*) continue ;; esac
  args=$(echo "$args" | xargs) words=$(echo "$words" | xargs)
  # shellcheck disable=SC2086
  err=$(timeout 10 "$ps" $args 2>&1 >/dev/null); rc=$?
  line=$(printf '%s\n' "$err" | grep -v -e '^Run with --help' -e '^powershape .* on the simulated' | head -n 1)
  if [ $rc -ne 0 ] && [ $rc -ne 124 ] && [[ $line == *"$words"* ]]; then
    passed=$((passed + 1))
  else
    echo "FAIL powershape $args: exit $rc, '$line' (expected '$words')"; failures=$((failures + 1))
  fi
done <"$root/tests/cli/bad_values.txt"
echo "$passed passed, $failures failed"
test $failures -eq 0

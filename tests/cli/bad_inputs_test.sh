#!/usr/bin/env bash
# The bad-input corpus (tests/cli/bad_inputs.txt): each case exits with its code within 10 s, with
# one error line of at most 400 characters that contains its words; none may succeed, hang or die
# on a signal.
#   bad_inputs_test.sh POWERSHAPE REPO_ROOT
set -u
ps=$(realpath "$1") root=$(realpath "$2")
cd "$root" || exit 2
trim() { local s=$1; s=${s#"${s%%[![:space:]]*}"}; s=${s%"${s##*[![:space:]]}"}; printf '%s' "$s"; }
failures=0 passed=0
while IFS='|' read -r args code words; do
  case $args in ''|'#'*) continue ;; esac
  args=$(trim "$args") code=$(trim "$code") words=$(trim "$words")
  eval "set -- $args"
  err=$(timeout 10 "$ps" "$@" 2>&1 >/dev/null </dev/null); rc=$?
  lines=$(printf '%s\n' "$err" | grep -a -v -e '^Run with --help' -e '^powershape .* on the simulated' -e '^$')
  line=$(printf '%s\n' "$lines" | head -n 1)
  why=""
  if [ $rc -eq 124 ]; then why="hung"
  elif [ $rc -gt 128 ]; then why="died on signal $((rc - 128))"
  elif [ "$rc" != "$code" ]; then why="exit $rc, expected $code"
  elif [[ $line != *"$words"* ]]; then why="error lacks '$words'"
  elif [ ${#line} -gt 400 ]; then why="error line of ${#line} characters"
  elif [ "$(printf '%s\n' "$lines" | wc -l)" -gt 1 ]; then why="more than one line"
  fi
  if [ -z "$why" ]; then
    passed=$((passed + 1))
  else
    echo "FAIL powershape $args: $why: '${line:0:300}'"; failures=$((failures + 1))
  fi
done <"$root/tests/cli/bad_inputs.txt"
echo "$passed passed, $failures failed"
test $failures -eq 0 -a $passed -ge 250

# Sourced by the end-to-end test scripts: a temporary folder removed at exit ($tmp), and
# `check NAME CONDITION...`, which counts and prints each result; `finish` prints the count and
# fails when any check failed.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0 passed=0
check() {
  local name=$1; shift
  if "$@"; then echo "ok   $name"; passed=$((passed + 1)); else echo "FAIL $name"; failures=$((failures + 1)); fi
}
finish() {
  echo "$passed passed, $failures failed"
  test $failures -eq 0
}

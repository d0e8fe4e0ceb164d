#!/usr/bin/env bash
# src/cli holds options and printing only (docs/design.md): at most 2,000 lines, and none of the
# engines' headers (the poll loop, the sampler, a child process, NVML). An engine moved back into
# the CLI fails here. Usage: options_only_test.sh REPO_ROOT
set -u
cli=$1/src/cli
lines=$(cat "$cli"/*.cpp "$cli"/*.hpp | wc -l)
status=0
if [ "$lines" -gt 2000 ]; then
  echo "FAIL src/cli is $lines lines, over 2,000: an engine belongs in the library"; status=1
else
  echo "ok   src/cli is $lines lines"
fi
if grep -nE '#include ([<"](poll\.h|.*sampler\.hpp|.*child\.hpp|.*nvml[^"]*)[>"])' "$cli"/*; then
  echo "FAIL src/cli includes an engine's header (above)"; status=1
else
  echo "ok   no engine headers"
fi
exit $status

#!/usr/bin/env bash
# The library's layering (docs/design.md): a module includes only modules before it in the order
# below; nothing outside kernels/ includes a CUDA header; benchmarks never include src/cli. Prints
# each include that breaks a rule (file:line) and exits 1 if there is any. The test suite runs it.
set -uo pipefail
cd "$(dirname "$0")/.."
order=(util telemetry trace monitor shape analysis exporter report workload kernels reference sim experiment advise optimize)
rank() { local i; for i in "${!order[@]}"; do [ "${order[$i]}" = "$1" ] && { echo "$i"; return; }; done; echo -1; }
bad=0
for dir in src/powershape/*/; do
  m=$(basename "$dir")
  r=$(rank "$m")
  if [ "$r" -lt 0 ]; then echo "layers: $dir is no module in the order ($(echo "${order[@]}"))"; bad=1; continue; fi
  while IFS=: read -r file line inc; do
    dep=$(sed -n 's|.*"powershape/\([a-z_]*\)/.*|\1|p' <<<"$inc")
    [ -z "$dep" ] && continue
    d=$(rank "$dep")
    if [ "$d" -gt "$r" ]; then echo "layers: $file:$line: $m includes $dep, which comes after it"; bad=1; fi
  done < <(grep -n '#include "powershape/' "$dir"* 2>/dev/null)
  if [ "$m" != kernels ]; then
    while IFS= read -r hit; do echo "layers: $hit: a CUDA header outside kernels/"; bad=1; done \
      < <(grep -nE '#include <(cuda|cublas|cudnn|nccl)[a-zA-Z_]*\.h>' "$dir"* 2>/dev/null)
  fi
done
while IFS= read -r hit; do echo "layers: $hit: a benchmark includes the CLI"; bad=1; done \
  < <(grep -nE '#include "(\.\./)*src/cli/|#include "(subcommands|workload_options|backend_spec)\.hpp"' bench/* 2>/dev/null)
[ $bad -eq 0 ] && echo "layers: every include keeps the order (${order[*]})"
exit $bad

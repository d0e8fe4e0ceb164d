#!/bin/sh
# A job for optimize's tests: STEPS steps (default 4), each marked as a region `step`, each
# sleeping longer the further POWERSHAPE_CHUNKS is from BEST (default 4); without the variable it
# runs as 1 chunk would. With FLAT=1 the count changes nothing; with FAIL=N a run at N chunks
# exits 3 after its steps.
#   chunked_job.sh POWERSHAPE
ps=$1
chunks=${POWERSHAPE_CHUNKS:-1}
best=${BEST:-4}
i=0
while [ "$i" -lt "${STEPS:-4}" ]; do
  "$ps" mark begin step
  if [ "${FLAT:-0}" = 1 ]; then
    sleep 0.05
  else
    # 50 ms at the best count, 100 ms more for each doubling away from it: well clear of the
    # tens of ms a loaded machine adds to starting `mark`, awk and sleep
    awk -v c="$chunks" -v b="$best" 'BEGIN { d = log(c / b) / log(2); if (d < 0) d = -d; system("sleep " 0.05 + 0.1 * d) }'
  fi
  "$ps" mark end step
  i=$((i + 1))
done
[ -n "${FAIL:-}" ] && [ "$FAIL" = "${POWERSHAPE_CHUNKS:-}" ] && exit 3
exit 0

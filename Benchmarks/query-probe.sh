#!/bin/sh
# Issue 31's queries in callgrind instructions: each aggregate against the same SQL by hand, and
# prefetching against N+1. Build first: swift build -c release --product QueryProbe.
set -eu
probe=.build/release/QueryProbe
count() { # arguments -> instructions; the probe switches collection on around the workload alone
    valgrind --tool=callgrind --callgrind-out-file=/dev/null --collect-atstart=no "$probe" "$@" 2>&1 >/dev/null \
        | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
printf '%-12s %16s %16s %8s\n' workload modelwright hand ratio
for workload in ${WORKLOADS:-sumScore averageAge grouped maxName}; do
    mine=$(count "$workload")
    hand=$(count "$workload" hand)
    printf '%-12s %16s %16s %8s\n' "$workload" "$mine" "$hand" "$(awk -v a="$mine" -v b="$hand" 'BEGIN { printf "%.3f×", a / b }')"
done
prefetch=$(count prefetch)
plusOne=$(count nPlusOne)
echo "prefetch $prefetch   N+1 $plusOne   N+1 / prefetch $(awk -v a="$plusOne" -v b="$prefetch" 'BEGIN { printf "%.2f×", a / b }')"

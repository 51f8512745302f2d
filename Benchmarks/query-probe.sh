#!/bin/sh
# Issue 31's queries in callgrind instructions: each aggregate against the same SQL by hand, and
# prefetching against N+1. Build first: swift build -c release --product QueryProbe.
set -eu
probe=.build/release/QueryProbe
# A --toggle-collect for each symbol of the function whose mangled name contains $1, but none for
# the closures nested in it (their names hold `U_`), whose entry would switch collection off again.
toggles() {
    nm "$probe" | awk '{ print $3 }' | grep -F "$1" | grep -v 'U_' | sed 's/^/--toggle-collect=/'
}
count() { # function, arguments -> instructions
    function=$1
    shift
    valgrind --tool=callgrind --callgrind-out-file=/dev/null $(toggles "$function") "$probe" "$@" 2>&1 >/dev/null \
        | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
printf '%-12s %16s %16s %8s\n' workload modelwright hand ratio
for workload in ${WORKLOADS:-sumScore averageAge grouped maxName}; do
    mine=$(count "5QueryO${#workload}${workload}y" "$workload")
    hand=$(count "4HandO${#workload}${workload}y" "$workload" hand)
    printf '%-12s %16s %16s %8s\n' "$workload" "$mine" "$hand" "$(awk -v a="$mine" -v b="$hand" 'BEGIN { printf "%.3f×", a / b }')"
done
prefetch=$(count 5QueryO8prefetchy prefetch)
plusOne=$(count 5QueryO8nPlusOney nPlusOne)
echo "prefetch $prefetch   N+1 $plusOne   N+1 / prefetch $(awk -v a="$plusOne" -v b="$prefetch" 'BEGIN { printf "%.2f×", a / b }')"

#!/bin/sh
# Every FetchProbe workload for every contender, in one run, as a table of ratios to raw C.
#
#     ./probe.sh instructions [ROWS]          callgrind instruction counts (independent of the load)
#     ./probe.sh time [ROWS] [REPEATS]        wall-time medians (the load average is printed with them)
#
# Build first: swift build -c release --product FetchProbe. WORKLOADS and CONTENDERS in the
# environment narrow the run (e.g. WORKLOADS="fetchAll lookUp" CONTENDERS="raw modelwright").
set -eu
mode=${1:-instructions}
rows=${2:-100000}
repeats=${3:-7}
probe=.build/release/FetchProbe
workloads=${WORKLOADS:-"fetchAll indexedFetch lookUp lookUpByName fetchNewest petsOfOwner insert"}
contenders=${CONTENDERS:-"raw modelwright prepared grdb grdb-codable"}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
file="$dir/people.sqlite"
# One file for every contender and read workload, filled once, outside the counts.
"$probe" fill "$rows" "$file"

measure() { # workload contender -> one number
    if [ "$mode" = instructions ]; then
        # The probe switches collection on and off around the workload itself (a callgrind client request).
        valgrind --tool=callgrind --callgrind-out-file=/dev/null --collect-atstart=no \
            "$probe" "$rows" "$1" "$2" "$file" 2>&1 >/dev/null | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
    else
        "$probe" "$rows" "$1" "$2" "$file" --repeat "$repeats" | sed -n 's/.*median \([0-9.]*\) ms.*/\1/p'
    fi
}

if [ "$mode" = instructions ]; then
    echo "callgrind instructions (ratio to raw C), $rows rows"
else
    echo "wall-time medians of $repeats runs, ms (ratio to raw C), $rows rows; load average: $(cut -d' ' -f1-3 /proc/loadavg)"
fi
printf '%-14s' workload
for contender in $contenders; do printf '%26s' "$contender"; done
echo
for workload in $workloads; do
    printf '%-14s' "$workload"
    base=
    for contender in $contenders; do
        value=$(measure "$workload" "$contender")
        [ -z "$base" ] && base=$value
        printf '%26s' "$(awk -v v="$value" -v b="$base" 'BEGIN { printf "%s (%.3f×)", v, (b > 0 ? v / b : 0) }')"
    done
    echo
done
[ "$mode" = time ] && echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
exit 0

#!/bin/sh
# PostgresProbe's reads for both contenders, in callgrind instructions (the client's, independent of
# the load), as a table of ratios to raw libpq. The server must already run on loopback PORT (user
# postgres, trusted); valgrind cannot follow the start of one.
#
#     ./pg-probe.sh PORT [ROWS]       fills the table with ROWS people first (default 100,000)
#
# Build first: swift build -c release --product PostgresProbe. WORKLOADS narrows the run.
set -eu
port=$1
rows=${2:-100000}
probe=.build/release/PostgresProbe
workloads=${WORKLOADS:-"fetch lookups filtered"}
"$probe" fill "$port" "$rows" >/dev/null
echo "callgrind instructions (ratio to raw libpq), $rows rows"
printf '%-10s%26s%26s\n' workload libpq modelwright
for workload in $workloads; do
    printf '%-10s' "$workload"
    base=
    for contender in libpq modelwright; do
        value=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null --collect-atstart=no \
            "$probe" "$port" "$workload" "$contender" 2>&1 >/dev/null | sed -n 's/.*Collected : \([0-9]*\).*/\1/p')
        [ -z "$base" ] && base=$value
        printf '%26s' "$(awk -v v="$value" -v b="$base" 'BEGIN { printf "%s (%.3f×)", v, (b > 0 ? v / b : 0) }')"
    done
    echo
done

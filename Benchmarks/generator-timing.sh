#!/usr/bin/env bash
# Times `modelwright generate`, whole process, on synthetic models of 100, 1,000 and 5,000 entities
# (20 attributes and 3 relationships each), in release and debug builds of the CLI.
#
#   bash Benchmarks/generator-timing.sh [--runs N] [--baseline <git revision>]
#
# Run from the repository root. Each figure is the median (and the fastest) of N runs (default 11;
# a third as many at 5,000 entities). The builds take turns run by run, so a drift in the
# machine's speed affects them alike. With --baseline, that revision is built in a temporary
# worktree and run in the same rotation, and the table shows current / baseline ratios.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=11
baseline=""
while [ $# -gt 0 ]; do
    case $1 in
        --runs) runs=$2; shift 2 ;;
        --baseline) baseline=$2; shift 2 ;;
        *) echo "usage: $0 [--runs N] [--baseline <git revision>]" >&2; exit 2 ;;
    esac
done
work=$(mktemp -d)
trap 'git worktree remove --force "$work/baseline" 2>/dev/null || true; rm -rf "$work"' EXIT

synthesize() {  # synthesize <entities> <folder>
    local n=$1 folder=$2
    mkdir -p "$folder"
    {
        echo "model Synthetic version 1"
        for ((i = 0; i < n; i++)); do
            echo "/// Entity number $i."
            echo "entity E$i {"
            for ((a = 0; a < 20; a++)); do
                case $((a % 4)) in
                    0) echo "    text$a: String" ;;
                    1) echo "    number$a: Int64 = 0" ;;
                    2) echo "    flag$a: Bool = false" ;;
                    3) echo "    when$a: Date?" ;;
                esac
            done
            echo "    parent: E$(((i + 1) % n))? @noInverse"
            echo "    friend: E$(((i + 2) % n))? @noInverse"
            echo "    items: Set<E$(((i + 3) % n))> @noInverse"
            echo "}"
        done
    } > "$folder/Synthetic.v1.model"
}

build() {  # build <package folder> → the release and debug executables' paths
    (cd "$1" && swift build -c release --product modelwright > /dev/null && swift build --product modelwright > /dev/null)
    echo "$(cd "$1" && swift build -c release --show-bin-path)/modelwright"
    echo "$(cd "$1" && swift build --show-bin-path)/modelwright"
}

median_and_min() {  # median_and_min <file of seconds, one per line> → "median min"
    sort -n "$1" | awk '{ t[NR] = $1 } END { printf "%.3f %.3f\n", (NR % 2 ? t[(NR + 1) / 2] : (t[NR / 2] + t[NR / 2 + 1]) / 2), t[1] }'
}

mapfile -t binaries < <(build .)
if [ -n "$baseline" ]; then
    git worktree add --detach "$work/baseline" "$baseline" > /dev/null 2>&1
    mapfile -t old < <(build "$work/baseline")
    binaries+=("${old[@]}")
fi

if [ -n "$baseline" ]; then
    printf "%-9s %-24s %-24s %-24s %-24s %s\n" entities "release median (min)" "baseline release" \
        "debug median (min)" "baseline debug" "ratio release / debug"
else
    printf "%-9s %-24s %-24s %s\n" entities "release median (min)" "debug median (min)" "model lines"
fi
for n in 100 1000 5000; do
    synthesize "$n" "$work/m$n/Synthetic"
    count=$runs
    [ "$n" -ge 5000 ] && count=$(((runs + 2) / 3))
    for index in "${!binaries[@]}"; do : > "$work/times-$index"; done
    for ((run = 0; run < count; run++)); do
        for index in "${!binaries[@]}"; do
            rm -rf "$work/out"
            start=$(date +%s.%N)
            "${binaries[$index]}" generate "$work/m$n/Synthetic" --output "$work/out" > /dev/null
            end=$(date +%s.%N)
            echo "$end - $start" | bc >> "$work/times-$index"
        done
    done
    figures=()
    for index in "${!binaries[@]}"; do
        read -r median fastest < <(median_and_min "$work/times-$index")
        figures+=("$median ($fastest)")
        medians[index]=$median
    done
    if [ -n "$baseline" ]; then
        ratios=$(awk -v a="${medians[0]}" -v b="${medians[2]}" -v c="${medians[1]}" -v d="${medians[3]}" \
            'BEGIN { printf "%.2f / %.2f", a / b, c / d }')
        printf "%-9s %-24s %-24s %-24s %-24s %s\n" "$n" "${figures[0]} s" "${figures[2]} s" "${figures[1]} s" \
            "${figures[3]} s" "$ratios"
    else
        lines=$(wc -l < "$work/m$n/Synthetic/Synthetic.v1.model")
        printf "%-9s %-24s %-24s %s\n" "$n" "${figures[0]} s" "${figures[1]} s" "$lines"
    fi
done

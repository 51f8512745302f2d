#!/usr/bin/env bash
# Times `modelwright generate`, whole process, on synthetic models of 100, 1,000 and 5,000 entities
# (20 attributes and 3 relationships each), in release and debug builds of the CLI.
# Run from the repository root: bash Benchmarks/generator-timing.sh
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

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

best_of_3() {  # best_of_3 <binary> <model> <output> → seconds
    local best=""
    for _ in 1 2 3; do
        rm -rf "$3"
        local start end
        start=$(date +%s.%N)
        "$1" generate "$2" --output "$3" > /dev/null
        end=$(date +%s.%N)
        best=$(echo "$end - $start" | bc | awk -v b="$best" '{ if (b == "" || $1 < b) print $1; else print b }')
    done
    echo "$best"
}

swift build -c release --product modelwright > /dev/null
swift build --product modelwright > /dev/null
release=$(swift build -c release --show-bin-path)/modelwright
debug=$(swift build --show-bin-path)/modelwright

printf "%-10s %12s %12s %14s\n" entities "release (s)" "debug (s)" "model (lines)"
for n in 100 1000 5000; do
    synthesize "$n" "$work/m$n/Synthetic"
    lines=$(wc -l < "$work/m$n/Synthetic/Synthetic.v1.model")
    printf "%-10s %12s %12s %14s\n" "$n" "$(best_of_3 "$release" "$work/m$n/Synthetic" "$work/out")" \
        "$(best_of_3 "$debug" "$work/m$n/Synthetic" "$work/out")" "$lines"
done

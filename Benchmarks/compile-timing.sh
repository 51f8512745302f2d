#!/usr/bin/env bash
# Compares how long `swiftc -typecheck` takes on the code `modelwright generate` writes for a
# 200-entity model (20 attributes and 3 relationships each, as in generator-timing.sh) against
# plain structs with the same stored properties (the baseline), in the same run. Best of 3 each;
# prints both times and the ratio (target: generated ≤ 3× plain).
# Run from the repository root: bash Benchmarks/compile-timing.sh [entities]
set -euo pipefail
cd "$(dirname "$0")/.."
entities=${1:-200}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

swift build -c release --product modelwright > /dev/null
swift build --target Modelwright > /dev/null
modelwright=$(swift build -c release --show-bin-path)/modelwright
modules=$(swift build --show-bin-path)/Modules

# The model, as generator-timing.sh writes it.
mkdir -p "$work/Synthetic" "$work/generated" "$work/plain"
{
    echo "model Synthetic version 1"
    for ((i = 0; i < entities; i++)); do
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
        echo "    parent: E$(((i + 1) % entities))? @noInverse"
        echo "    friend: E$(((i + 2) % entities))? @noInverse"
        echo "    items: Set<E$(((i + 3) % entities))> @noInverse"
        echo "}"
    done
} > "$work/Synthetic/Synthetic.v1.model"
"$modelwright" generate "$work/Synthetic" --output "$work/generated" > /dev/null

# The baseline: what a developer would write by hand for the same data, with no persistence.
{
    echo "import Foundation"
    for ((i = 0; i < entities; i++)); do
        echo ""
        echo "/// Entity number $i."
        echo "struct E$i: Hashable, Codable, Sendable {"
        echo "    let id: UUID"
        for ((a = 0; a < 20; a++)); do
            case $((a % 4)) in
                0) echo "    let text$a: String" ;;
                1) echo "    let number$a: Int64" ;;
                2) echo "    let flag$a: Bool" ;;
                3) echo "    let when$a: Date?" ;;
            esac
        done
        echo "    let parentID: UUID?"
        echo "    let friendID: UUID?"
        echo "}"
    done
} > "$work/plain/Plain.swift"

best_of_3() {  # best_of_3 <swiftc arguments…> → seconds
    local best=""
    for _ in 1 2 3; do
        local start end
        start=$(date +%s.%N)
        swiftc -typecheck -swift-version 6 "$@"
        end=$(date +%s.%N)
        best=$(echo "$end - $start" | bc | awk -v b="$best" '{ if (b == "" || $1 < b) print $1; else print b }')
    done
    echo "$best"
}

# Modelwright's module imports CSQLite, whose module map the compiler must find too.
generated=$(best_of_3 -module-name Synthetic -I "$modules" -I Sources/CSQLite "$work"/generated/*.swift)
plain=$(best_of_3 -module-name Plain "$work/plain/Plain.swift")
lines_generated=$(cat "$work"/generated/*.swift | wc -l)
lines_plain=$(wc -l < "$work/plain/Plain.swift")

printf "%-28s %10s %10s\n" "$entities entities" "lines" "seconds"
printf "%-28s %10s %10s\n" "generated (3 files)" "$lines_generated" "$generated"
printf "%-28s %10s %10s\n" "plain structs (baseline)" "$lines_plain" "$plain"
ratio=$(echo "scale=2; $generated / $plain" | bc)
verdict=$(echo "$ratio <= 3" | bc)
echo "ratio: ${ratio}x (target ≤ 3x): $([ "$verdict" = 1 ] && echo met || echo MISSED)"

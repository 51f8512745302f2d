#!/usr/bin/env bash
# Checks that the build tool plugin does not run the generator when nothing changed: builds the
# Trips target four times in a scratch path of its own (.build-noop): from scratch, twice with no
# change, and after touching one model version file. For each build it counts the generator runs
# (invocations of the plugin's generate command in the build log) and the generated files whose
# modification time changed. Expected: 1, (see below), 0, 1 runs.
#
# Runs are counted from the tool's command line, which `swift build -v` prints each time it runs
# the plugin's command. The modification times alone prove nothing: the generator leaves a file
# whose bytes would not change untouched, so build 4 runs it and still rewrites nothing.
# Run from the repository root: bash Benchmarks/noop-build-check.sh
set -euo pipefail
cd "$(dirname "$0")/.."
scratch=.build-noop
log=$(mktemp)
trap 'rm -f "$log"' EXIT

mtimes() {  # the modification time of every file the plugin generated, one "time path" a line
    { find "$scratch/plugins/outputs" -name '*.swift' -path '*ModelwrightPlugin*' -printf '%T@ %p\n' 2>/dev/null || true; } \
        | sort -k2
}

build() {  # build <label>: builds Trips and prints the counts
    local before after runs changed
    before=$(mtimes)
    swift build --target Trips --scratch-path "$scratch" -v > "$log" 2>&1 || { cat "$log"; exit 1; }
    after=$(mtimes)
    runs=$(grep -cE "ModelwrightCLI(-tool)? generate " "$log" || true)
    changed=$(diff <(echo "$before") <(echo "$after") | grep -c '^>' || true)
    printf "%-34s generator runs: %s, generated files rewritten: %s\n" "$1" "$runs" "$changed"
    echo "$runs" > "$log.runs"
}

rm -rf "$scratch"
build "1. clean build"
build "2. same again (first after clean)"
settle=$(cat "$log.runs")
build "3. no-op build (nothing changed)"
noop=$(cat "$log.runs")
touch Models/Trips/Trips.v3.model
build "4. after touching Trips.v3.model"
touched=$(cat "$log.runs")
rm -f "$log.runs"

if [ "$settle" != 0 ]; then
    # SwiftPM plans the first build after a clean one again, rebuilds the plugin's tool and so
    # reruns its command once; every build after that is a true no-op.
    echo "note: the first build after a clean one reran the generator $settle time(s) (SwiftPM re-plans it)"
fi
if [ "$noop" = 0 ] && [ "$touched" -ge 1 ]; then
    echo "ok: a no-op build runs the generator 0 times; a changed model file runs it again"
else
    echo "FAILED: expected 0 generator runs in build 3 and at least 1 in build 4"
    exit 1
fi

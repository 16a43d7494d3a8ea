#!/usr/bin/env bash
# Usage: scripts/compare-engines.sh N [ROUNDS]
# The quadrant engine against the d4 engine (default kernel), side by side on this machine.
# Each round runs, one after the other, `count N --engine d4 -t 1`, `--engine quadrant -t 1`
# and `--engine quadrant -t 2` (ROUNDS rounds, default 5, after one warm-up round), so a
# machine whose speed drifts (shared hosts) slows all three alike. Prints the CPU model, each
# command's median, min and max wall time, and the medians (min-max) of the ratios taken
# within a round: d4 over quadrant on one thread, and quadrant one thread over two. Then the
# peak memory of one two-thread run (`--stats`). Every run must print the same total. Times
# include process start-up (a few ms): meant for N >= 15.
#
# Example: scripts/compare-engines.sh 17 7
set -euo pipefail
n=${1:?usage: scripts/compare-engines.sh N [ROUNDS]}
rounds=${2:-5}
cd "$(dirname "$0")/.."
cargo build --release --quiet
bin=target/release/nqueens
variants=("--engine d4 -t 1" "--engine quadrant -t 1" "--engine quadrant -t 2")
times=$(mktemp)
trap 'rm -f "$times"' EXIT
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
expected=$("$bin" count "$n")
for ((r = 0; r <= rounds; r++)); do
    for i in "${!variants[@]}"; do
        start=$(date +%s%N)
        # shellcheck disable=SC2086 # the variant is several flags
        total=$("$bin" count "$n" ${variants[$i]})
        end=$(date +%s%N)
        if [ "$total" != "$expected" ]; then
            echo "count $n ${variants[$i]} printed $total, not $expected" >&2
            exit 1
        fi
        # round 0 warms up and is not kept
        [ "$r" -gt 0 ] && echo "$r $i $(((end - start) / 1000))" >>"$times"
    done
done
# the median, min and max of a column of numbers, one per line
summary() { sort -g | awk '{v[NR] = $1} END {m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.3f (%.3f-%.3f)", m, v[1], v[NR]}'; }
for i in "${!variants[@]}"; do
    echo "count $n ${variants[$i]}: $(awk -v i="$i" '$2 == i {print $3 / 1e6}' "$times" | summary) s"
done
# the ratio of variant a's time to variant b's, round by round
ratio() { awk -v a="$1" -v b="$2" '$2 == a {x[$1] = $3} $2 == b {y[$1] = $3} END {for (r in x) print x[r] / y[r]}' "$times" | summary; }
echo "d4 / quadrant, 1 thread: $(ratio 0 1)"
echo "quadrant 1 thread / 2 threads: $(ratio 1 2)"
"$bin" count "$n" -t 2 --engine quadrant --stats 2>&1 >/dev/null | tr ' ' '\n' | grep peak_memory

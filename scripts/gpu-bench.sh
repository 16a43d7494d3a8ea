#!/usr/bin/env bash
# Usage: scripts/gpu-bench.sh [BASELINE] [ROUNDS] [FROM TO]
# The GPU against the CPU, side by side on this machine: one table per GPU adapter (as
# `nqueens devices` lists them), one row per N, whole-process seconds (wall, and CPU time:
# what a CPU-emulated adapter such as lavapipe costs) for
#   gpu       count N --device gpu --gpus I       (the GPU's d4, CPU threads sharing its work)
#   gpu-only  count N --device gpu-only --gpus I  (the GPU's d4 alone)
#   quadrant  count N --engine quadrant --device gpu-only --gpus I  (the quadrant engine's
#             pairs on the GPU, its halves on the CPU threads)
#   cpu       count N --device cpu                (the CPU engines, auto)
#   baseline  BASELINE N DEPTH 64 e [WORKGROUPS]  (a standalone wgpu counter, when its path is
#             given: the first adapter only, it picks its own)
# and the ratio baseline / gpu-only of CPU seconds (software) or wall seconds (GPU), taken
# within each round. Each round runs every command once (ROUNDS rounds, default 3, after one
# warm-up round), so a machine whose speed drifts slows them alike; medians, then min-max.
# N runs FROM..TO: default 12..15 on a software adapter, 16..21 on a GPU. Every run must print
# the known total (OEIS A000170, tests/it/oeis.rs; past N = 27, the same as the CPU's).
# Prints the CPU model and each adapter.
#
# Example: scripts/gpu-bench.sh /tmp/gpu-ref/release/gpu-reference 5
# NQUEENS=PATH measures that nqueens binary instead of building one (a machine without cargo).
# LIMIT=S (default 120) ends any one command after S seconds: its row says so and the next N
# is not tried, so a lent machine's minutes are not spent on one stalled run.
# ONLY="quadrant cpu" runs only those of gpu, gpu-only, quadrant and cpu (the others' cells
# stay empty): the GPU's d4 takes minutes from N = 21 on an H100.
# WARMUP=0 leaves out the warm-up round (a lent machine's minutes: each run then counts).
# Where nvidia-smi is found, the quadrant column also gives its GPU's busy share: the mean of
# `nvidia-smi dmon` one-second samples of the multiprocessors while it ran (of every NVIDIA
# GPU of the machine: where there are several, their mean).
set -euo pipefail
baseline=${1:-}
[ "$baseline" = "-" ] && baseline=
rounds=${2:-3}
limit=${LIMIT:-120}
first_round=1
[ "${WARMUP:-1}" = 0 ] || first_round=0
only=${ONLY:-gpu gpu-only quadrant cpu}
for name in $only; do
    case $name in
    gpu | gpu-only | quadrant | cpu) ;;
    *)
        echo "ONLY names '$name': gpu, gpu-only, quadrant or cpu are allowed" >&2
        exit 2
        ;;
    esac
done
cd "$(dirname "$0")/.."
if [ -n "${NQUEENS:-}" ]; then
    bin=$(realpath "$NQUEENS")
else
    cargo build --release --quiet
    bin=$PWD/target/release/nqueens
fi
# The known answer for N (OEIS A000170, the tests' table), or nothing past it.
known() {
    awk -v n="$1" '/pub const TOTAL/ {on = 1; next}
        on && /^ *[0-9]+,$/ {if (++k == n) {gsub(/[ ,]/, ""); print; exit}}
        on && /];/ {exit}' tests/it/oeis.rs
}
times=$(mktemp)
trap 'rm -f "$times"' EXIT
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//') ($(nproc) logical CPUs)"
adapters=$("$bin" devices)
if [ -z "$adapters" ]; then
    echo "no GPU adapter: nothing to measure" >&2
    exit 1
fi
# median (min-max) of a column of numbers
summary() { sort -g | awk '{v[NR] = $1} END {m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.3f (%.3f-%.3f)", m, v[1], v[NR]}'; }
# runs a command once; appends "round name wall cpu" to $times; checks its total against
# $want (the known answer, or where N is past the table, the cpu column's first run's). Returns 1 when it ran
# past $limit seconds.
measure() {
    local round=$1 name=$2
    shift 2
    [ "$name" = baseline ] || [[ " $only " == *" $name "* ]] || return 0
    local out stamp dmon= busy
    stamp=$(mktemp)
    if [ "$name" = quadrant ] && command -v nvidia-smi >/dev/null; then
        busy=$(mktemp)
        nvidia-smi dmon -s u -d 1 >"$busy" 2>/dev/null &
        dmon=$!
    fi
    TIMEFORMAT='%R %U %S'
    if ! out=$( { time timeout "$limit" "$@" 2>/dev/null; } 2>"$stamp"); then
        rm -f "$stamp"
        [ -n "$dmon" ] && kill "$dmon" && rm -f "$busy"
        echo "$name ($*) did not end within $limit s (LIMIT)" >&2
        return 1
    fi
    if [ -n "$dmon" ]; then
        kill "$dmon" && wait "$dmon" 2>/dev/null || true
        # the samples' second column: the multiprocessors' busy share, in percent
        awk -v r="$round" '$1 ~ /^[0-9]+$/ {s += $2; c++} END {if (c && r > 0) print r, "busy", s / c, s / c}' "$busy" >>"$times"
        rm -f "$busy"
    fi
    local total
    total=$(echo "$out" | grep -Eo 'total=[0-9]+' | cut -d= -f2 || true)
    [ -z "$total" ] && total=$(echo "$out" | tail -1)
    # the CPU's first count is the answer where no count was made for it
    [ -z "$want" ] && [ "$name" = cpu ] && want=$total
    if [ "$total" != "$want" ]; then
        echo "$name printed $total, not $want" >&2
        exit 1
    fi
    read -r wall user sys <"$stamp"
    rm -f "$stamp"
    [ "$round" -gt 0 ] && awk -v r="$round" -v c="$name" -v w="$wall" -v u="$user" -v s="$sys" 'BEGIN {print r, c, w, u + s}' >>"$times"
    return 0
}
first=yes
while read -r index kind name; do
    if [ "$kind" = software ]; then
        from=${3:-12} to=${4:-15} groups=64 col=4
    else
        from=${3:-16} to=${4:-21} groups=1024 col=3
    fi
    echo
    echo "adapter $index: $name ($kind)"
    echo "| N | gpu s | gpu cpu s | gpu-only s | gpu-only cpu s | quadrant gpu-only s | quadrant gpu-only cpu s | cpu s | baseline s | baseline cpu s | baseline / gpu-only | quadrant GPU busy % |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
    for ((n = from; n <= to; n++)); do
        : >"$times"
        # the answer every run must print: the known one; past the table, the cpu column's
        # first run where it runs (first in each round), else a count on the CPU made for it
        want=$(known "$n")
        [ -n "$want" ] || [[ " $only " == *" cpu "* ]] || want=$("$bin" count "$n" --device cpu)
        depth=$((n <= 15 ? 5 : 6))
        ended=yes
        for ((r = first_round; r <= rounds; r++)); do
            measure "$r" cpu "$bin" count "$n" --device cpu &&
                measure "$r" gpu "$bin" count "$n" --device gpu --gpus "$index" &&
                measure "$r" gpu-only "$bin" count "$n" --device gpu-only --gpus "$index" &&
                measure "$r" quadrant "$bin" count "$n" --engine quadrant --device gpu-only --gpus "$index" || ended=no
            if [ "$ended" = yes ] && [ -n "$baseline" ] && [ "$first" = yes ]; then
                measure "$r" baseline "$baseline" "$n" "$depth" 64 e "$groups" || ended=no
            fi
            [ "$ended" = yes ] || break
        done
        if [ "$ended" = no ]; then
            echo "| $n | a command ran past $limit s: N = $n and above not measured | | | | | | | | | | |"
            break
        fi
        # a command not run (ONLY) leaves its cells empty
        cell() { grep -q " $1 " "$times" && awk -v c="$1" -v k="$2" '$2 == c {print $k}' "$times" | summary || true; }
        row="| $n | $(cell gpu 3) | $(cell gpu 4) | $(cell gpu-only 3) | $(cell gpu-only 4) | $(cell quadrant 3) | $(cell quadrant 4) | $(cell cpu 3)"
        if grep -q ' baseline ' "$times"; then
            ratio=
            grep -q ' gpu-only ' "$times" && ratio=$(awk -v k="$col" '$2 == "baseline" {b[$1] = $k} $2 == "gpu-only" {g[$1] = $k} END {for (r in b) print b[r] / g[r]}' "$times" | summary)
            row="$row | $(cell baseline 3) | $(cell baseline 4) | $ratio"
        else
            row="$row | | |"
        fi
        row="$row | $(cell busy 3) |"
        echo "$row"
    done
    first=no
done <<<"$adapters"

#!/usr/bin/env bash
# Usage: scripts/compare-engines.sh N [RUNS]
# The quadrant engine against the d4 engine (default kernel), side by side on this machine:
#   1. one hyperfine run of `count N --engine d4 -t 1`, `--engine quadrant -t 1` and
#      `--engine quadrant -t 2` (RUNS runs each after a warm-up; median, min, max);
#   2. `nqueens scale N --engine quadrant --threads 1,2 --repeat RUNS`: one and two threads in
#      alternating rounds, so a machine whose speed drifts slows both alike;
#   3. the peak memory of one two-thread run (`--stats`).
# Prints the CPU model first. Needs hyperfine (Debian: apt-get install hyperfine).
#
# Example: scripts/compare-engines.sh 17 7
set -euo pipefail
n=${1:?usage: scripts/compare-engines.sh N [RUNS]}
runs=${2:-5}
cd "$(dirname "$0")/.."
cargo build --release --quiet
bin=target/release/nqueens
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
hyperfine -N --warmup 1 --runs "$runs" \
    "$bin count $n -t 1 --engine d4" \
    "$bin count $n -t 1 --engine quadrant" \
    "$bin count $n -t 2 --engine quadrant"
"$bin" scale "$n" --engine quadrant --threads 1,2 --repeat "$runs"
"$bin" count "$n" -t 2 --engine quadrant --stats 2>&1 >/dev/null | tr ' ' '\n' | grep peak_memory

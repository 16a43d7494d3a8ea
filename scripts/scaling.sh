#!/usr/bin/env bash
# Usage: scripts/scaling.sh N [THREADS] [PLOT.svg]
#
# Measures how `nqueens count N` scales with threads and prints CSV on stdout:
#   threads,runs,median_s,min_s,max_s,speedup,efficiency
# THREADS is a comma-separated list (default: 1, 2, 4, ... up to all logical CPUs).
# PLOT.svg, when given, receives a plot of speedup against threads with the ideal line.
# REPEAT (environment, default 3) sets the runs per thread count; PIN=1 pins threads to cores.
# Every run's count is checked against the others: a mismatch exits 1.
#
# Example: scripts/scaling.sh 17 1,2 docs/scaling.svg > scaling.csv
set -euo pipefail
n=${1:?usage: scripts/scaling.sh N [THREADS] [PLOT.svg]}
threads=${2:-}
plot=${3:-}
cd "$(dirname "$0")/.."
cargo build --release --quiet
args=(scale "$n" --format csv --repeat "${REPEAT:-3}")
[ -n "$threads" ] && args+=(--threads "$threads")
[ -n "$plot" ] && args+=(--plot "$plot")
[ "${PIN:-0}" = 1 ] && args+=(--pin)
exec target/release/nqueens "${args[@]}"

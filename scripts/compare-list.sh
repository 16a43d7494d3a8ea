#!/usr/bin/env bash
# Usage: scripts/compare-list.sh [N] [RUNS]
# Times `nqueens list N > /dev/null` (writing every solution) against the seeds' C algorithm
# only counting them on one thread (benches/baseline/seed.c), side by side with hyperfine,
# (hyperfine sends stdout to /dev/null) and prints median/min/max and the ratio. Default N = 15, RUNS = 5.
set -euo pipefail
n=${1:-15}
runs=${2:-5}
cd "$(dirname "$0")/.."
cargo build --release --quiet
seed=${TMPDIR:-/tmp}/nqueens-seed
gcc -O3 -march=native -o "$seed" benches/baseline/seed.c
bin=target/release/nqueens
lines=$("$bin" list "$n" | wc -l)
[ "$lines" = "$("$seed" "$n")" ] || { echo "list printed $lines lines, seed counts $("$seed" "$n")" >&2; exit 1; }
json=${TMPDIR:-/tmp}/compare-list-$n.json
hyperfine -N --warmup 1 --runs "$runs" --export-json "$json" \
    -n "seed.c count (1 thread)" "$seed $n" \
    -n "nqueens list $n > /dev/null" "$bin list $n" >&2
python3 - "$json" <<'PY'
import json, statistics, sys
res = json.load(open(sys.argv[1]))["results"]
base = statistics.median(res[0]["times"])
for r in res:
    t = r["times"]
    print(f"{r['command']:32} median {statistics.median(t):.3f}s min {min(t):.3f}s max {max(t):.3f}s  ratio to seed {statistics.median(t) / base:.2f}")
PY

#!/usr/bin/env bash
# Usage: scripts/compare-baseline.sh N [RUNS] [-- extra nqueens count flags]
# Builds the seeds' algorithm in C (benches/baseline/seed.c, gcc -O3 -march=native, one thread,
# first-row mirror halving) and times it side by side with `nqueens count N` on 1 and 2 threads
# (mirror engine and the default engine) using hyperfine. Checks that all print the same total.
# Needs gcc and hyperfine (Debian: apt-get install hyperfine).
set -euo pipefail
n=${1:?usage: scripts/compare-baseline.sh N [RUNS] [-- extra count flags]}
runs=${2:-5}
shift $(( $# >= 2 ? 2 : $# ))
[ "${1:-}" = "--" ] && shift
cd "$(dirname "$0")/.."
cargo build --release --quiet
out=${TMPDIR:-/tmp}/nqueens-seed
gcc -O3 -march=native -o "$out" benches/baseline/seed.c
bin=target/release/nqueens
expected=$("$out" "$n")
for args in "--engine mirror -t 1" "--engine mirror -t 2" "-t 1" "-t 2"; do
    got=$($bin count "$n" $args "$@")
    [ "$got" = "$expected" ] || { echo "mismatch: seed $expected, nqueens $args: $got" >&2; exit 1; }
done
echo "N=$n total=$expected (all agree)" >&2
hyperfine -N --warmup 1 --runs "$runs" --export-json "${TMPDIR:-/tmp}/compare-baseline-$n.json" \
    -n "seed.c (1 thread)" "$out $n" \
    -n "nqueens mirror -t 1" "$bin count $n --engine mirror -t 1 $*" \
    -n "nqueens mirror -t 2" "$bin count $n --engine mirror -t 2 $*" \
    -n "nqueens -t 1" "$bin count $n -t 1 $*" \
    -n "nqueens -t 2" "$bin count $n -t 2 $*"
python3 - "${TMPDIR:-/tmp}/compare-baseline-$n.json" <<'PY'
import json, statistics, sys
res = json.load(open(sys.argv[1]))["results"]
base = statistics.median(res[0]["times"])
print(f"{'command':24} {'median_s':>9} {'min_s':>8} {'max_s':>8} {'vs seed':>8}")
for r in res:
    med = statistics.median(r["times"])
    print(f"{r['command']:24} {med:9.3f} {min(r['times']):8.3f} {max(r['times']):8.3f} {base / med:7.2f}x")
PY

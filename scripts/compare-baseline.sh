#!/usr/bin/env bash
# Usage: scripts/compare-baseline.sh N [RUNS] [-- extra nqueens count flags]
# Builds the seeds' algorithm in C (benches/baseline/seed.c, gcc -O3 -march=native, one thread,
# first-row mirror halving) and times it side by side, in one hyperfine run, with every kernel
# this CPU has: the scalar kernel with the mirror and the full-symmetry (d4) engines, and each
# vector kernel with the default engine, on 1 and 2 threads (CPU only). Checks that all print
# the same total, then prints one table: median, min, max and the speedup over seed.c.
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
variants=("--kernel scalar --engine mirror" "--kernel scalar --engine d4")
for kernel in avx2 avx512; do
    # a kernel this CPU lacks is refused: leave it out
    if "$bin" count 4 --kernel "$kernel" >/dev/null 2>&1; then variants+=("--kernel $kernel --engine d4"); fi
done
# the meet-in-the-middle engine (no row search: kernels do not apply to it the same way)
if [ "$n" -le 22 ]; then variants+=("--engine quadrant"); fi
commands=(-n "seed.c (1 thread)" "$out $n")
for v in "${variants[@]}"; do
    for t in 1 2; do
        args="$v -t $t --device cpu $*"
        got=$($bin count "$n" $args)
        [ "$got" = "$expected" ] || { echo "mismatch: seed $expected, nqueens $args: $got" >&2; exit 1; }
        commands+=(-n "nqueens $v -t $t" "$bin count $n $args")
    done
done
echo "N=$n total=$expected (all agree); CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')" >&2
json=${TMPDIR:-/tmp}/compare-baseline-$n.json
hyperfine -N --warmup 1 --runs "$runs" --export-json "$json" "${commands[@]}" >&2
python3 - "$json" <<'PY'
import json, statistics, sys
res = json.load(open(sys.argv[1]))["results"]
base = statistics.median(res[0]["times"])
print(f"{'command':44} {'median_s':>9} {'min_s':>8} {'max_s':>8} {'vs seed':>8}")
for r in res:
    med = statistics.median(r["times"])
    print(f"{r['command']:44} {med:9.3f} {min(r['times']):8.3f} {max(r['times']):8.3f} {base / med:7.2f}x")
PY

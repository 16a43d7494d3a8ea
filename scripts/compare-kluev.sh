#!/usr/bin/env bash
# Usage: scripts/compare-kluev.sh [SRC] [RUNS] [N:THREADS ...]
# Times nqueens side by side with Evgeny Kluev's quadrant counter
# (https://github.com/EvgenyKluev/N-Queens-Count-Sol, the fastest other CPU counter we know
# of): by default N = 16, 17 and 18 on one thread and N = 20 on two (16:1 17:1 18:1 20:2;
# N from 16 to 22), in one hyperfine run per N, after
# checking that both print the same total. SRC is a clone of that repository (cloned there
# when it does not exist; default ${TMPDIR:-/tmp}/N-Queens-Count-Sol). Its board size and
# tuning are compile-time settings in solcounter.h: each N is built with the row of the
# table its author gives there (sieve cuts, match size, BMI2, prefetch, quarter symmetry),
# by `g++ -std=c++20 -O3 -march=native`. Prints median, min and max seconds of each, the
# ratio, and each one's peak memory (one run under /usr/bin/time -f %M).
# Needs git, g++ 11 or newer, hyperfine and GNU time (Debian: apt-get install git g++
# hyperfine time).
set -euo pipefail
tmp=${TMPDIR:-/tmp}
src=$(realpath -m "${1:-$tmp/N-Queens-Count-Sol}")
runs=${2:-5}
shift $(( $# >= 2 ? 2 : $# ))
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(16:1 17:1 18:1 20:2)
[ -d "$src" ] || git clone --quiet https://github.com/EvgenyKluev/N-Queens-Count-Sol "$src"
cd "$(dirname "$0")/.."
cargo build --release --quiet
bin=$PWD/target/release/nqueens

# its solcounter.h table: N sieveCuts matchMinSize bmiIntrin prefetch symmetry
# (N = 20's prefetch is "*", either: on here)
settings() {
    case $1 in
        16 | 17 | 18) echo 0 40 false true QNoSymmetry ;;
        19) echo 0 40 true true QNoSymmetry ;;
        20) echo 3 60 true true QNoSymmetry ;;
        21) echo 3 60 true false QNoSymmetry ;;
        22) echo 6 80 true true QRowSymmetry ;;
        *) echo "no settings for N = $1 in its table (16 to 22)" >&2; exit 2 ;;
    esac
}

# builds its program for an n x n board into $tmp/kluev-N
build() {
    local n=$1 cuts min bmi prefetch symmetry dir=$tmp/kluev-src-$1
    read -r cuts min bmi prefetch symmetry <<<"$(settings "$n")"
    rm -rf "$dir" && cp -r "$src" "$dir"
    sed -i -e "s/^inline constexpr int size = [0-9]*;/inline constexpr int size = $n;/" \
        -e "s/\.sieveCuts = [0-9]*,/.sieveCuts = $cuts,/" \
        -e "s/\.matchMinSize = [0-9]*,/.matchMinSize = $min,/" \
        -e "s/\.bmiIntrin = [a-z]*,/.bmiIntrin = $bmi,/" \
        -e "s/\.prefetch = [a-z]*,/.prefetch = $prefetch,/" \
        -e "s/Subsquare<size \/ 2, Q[A-Za-z]*,/Subsquare<size \/ 2, $symmetry,/" "$dir/solcounter.h"
    grep -q "int size = $n;" "$dir/solcounter.h" || { echo "solcounter.h changed upstream: size not set" >&2; exit 1; }
    [ "$bmi" = true ] && sed -i 's|^//#include "bmi2.h"|#include "bmi2.h"|' "$dir/bmintrin.h"
    [ "$prefetch" = true ] && sed -i 's|^//#include "prefetchx86.h"|#include "prefetchx86.h"|' "$dir/prefetch.h"
    g++ -std=c++20 -O3 -march=native -o "$tmp/kluev-$n" "$dir/main.cpp" -lpthread
}

peak() { /usr/bin/time -f %M "$@" 2>&1 >/dev/null | tail -1; }

# every N checked first, here and not in build's subshell: an N off its table ends the script
for nt in "${sizes[@]}"; do settings "${nt%%:*}" >/dev/null; done
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) logical CPUs" >&2
printf '%-4s %-3s %10s %10s %10s %10s %8s %10s %10s\n' N t nqueens_s min max kluev_s ratio nq_KB kluev_KB
for nt in "${sizes[@]}"; do
    n=${nt%%:*} t=${nt##*:}
    build "$n"
    theirs=$("$tmp/kluev-$n" "$t" | sed -n 's/^Result: //p')
    ours=$("$bin" count "$n" -t "$t" --device cpu)
    [ "$theirs" = "$ours" ] || { echo "N = $n: Kluev $theirs, nqueens $ours" >&2; exit 1; }
    json=$tmp/compare-kluev-$n.json
    hyperfine -N --warmup 1 --runs "$runs" --export-json "$json" \
        "$bin count $n -t $t --device cpu" "$tmp/kluev-$n $t" >/dev/null
    python3 - "$json" "$n" "$t" "$(peak "$bin" count "$n" -t "$t" --device cpu)" \
        "$(peak "$tmp/kluev-$n" "$t")" <<'PY'
import json, statistics, sys
ours, theirs = (r["times"] for r in json.load(open(sys.argv[1]))["results"])
mo, mt = statistics.median(ours), statistics.median(theirs)
print(f"{sys.argv[2]:<4} {sys.argv[3]:<3} {mo:10.3f} {min(ours):10.3f} {max(ours):10.3f} "
      f"{mt:10.3f} {mt / mo:7.2f}x {sys.argv[4]:>10} {sys.argv[5]:>10}")
PY
done

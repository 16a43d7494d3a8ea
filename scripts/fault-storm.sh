#!/usr/bin/env bash
# Usage: scripts/fault-storm.sh [N] [INTERRUPTS] [FLIPS] [-- extra count flags]
#
# Fault injection against checkpoints, with figures:
#   1. a storm: one `count N --checkpoint` run interrupted INTERRUPTS times (default 24) at
#      random moments by a random SIGINT, SIGTERM or SIGKILL, resumed each time, then finished;
#      its total must equal a fresh count's. Prints each signal's latency to exit, and for
#      SIGKILL the work lost: seconds since the last save at the moment of the kill.
#   2. FLIPS (default 400) random bit flips of a finished checkpoint: each must be refused
#      (exit 1) or, where the flip leaves the file meaning the same, give the right total.
#   3. every truncation of that checkpoint (in 64 steps): each must be refused.
# Exits 1 if any run gave a wrong total or a damaged file was not refused.
#
# Example: scripts/fault-storm.sh 17 24 400 -- --kernel scalar
set -euo pipefail
n=${1:-17}
interrupts=${2:-24}
flips=${3:-400}
shift $(($# < 3 ? $# : 3))
[ "${1:-}" = "--" ] && shift
extra=("$@")
here=$(cd "$(dirname "$0")/.." && pwd)
if [ -z "${NQUEENS_BIN:-}" ]; then
    (cd "$here" && cargo build --release --quiet)
    NQUEENS_BIN=$here/target/release/nqueens
fi
bin=$NQUEENS_BIN
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ck=$work/run.ckpt
now() { date +%s.%N; }
minus() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a - b }'; }

want=$("$bin" count "$n" "${extra[@]}")
echo "fresh count: $want"

# 1. the storm
signals=(INT TERM KILL)
declare -a lat_int lat_term lost_kill
done_interrupts=0
while [ "$done_interrupts" -lt "$interrupts" ]; do
    "$bin" count "$n" --checkpoint "$ck" --checkpoint-every 0.5 --progress never "${extra[@]}" \
        > "$work/out" 2> "$work/err" &
    pid=$!
    sleep "0.$((RANDOM % 9 + 1))"
    sig=${signals[$((RANDOM % 3))]}
    sent=$(now)
    saved_at=$(stat -c %.9Y "$ck" 2>/dev/null || echo "$sent")
    kill -"$sig" "$pid" 2>/dev/null || true
    code=0
    { wait "$pid"; } 2>/dev/null || code=$?
    took=$(minus "$(now)" "$sent")
    if [ "$code" -eq 0 ]; then
        # finished before the signal landed: check it and start over
        [ "$(cat "$work/out")" = "$want" ] || { echo "WRONG total $(cat "$work/out")"; exit 1; }
        rm -f "$ck"
        continue
    fi
    case $sig in
        INT) lat_int+=("$took"); [ "$code" -eq 130 ] || { echo "SIGINT gave exit $code"; exit 1; } ;;
        TERM) lat_term+=("$took"); [ "$code" -eq 130 ] || { echo "SIGTERM gave exit $code"; exit 1; } ;;
        KILL) lost_kill+=("$(minus "$sent" "$saved_at")") ;;
    esac
    done_interrupts=$((done_interrupts + 1))
done
got=$("$bin" count "$n" --checkpoint "$ck" --progress never "${extra[@]}")
summary() {
    if [ $# -eq 0 ]; then echo "none"; return; fi
    printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {printf "%d, median %.3f s, max %.3f s\n", NR, a[int((NR+1)/2)], a[NR]}'
}
echo "storm: $interrupts interrupts; final total $got ($([ "$got" = "$want" ] && echo exact || echo WRONG))"
echo "  SIGINT latency to exit: $(summary "${lat_int[@]}")"
echo "  SIGTERM latency to exit: $(summary "${lat_term[@]}")"
echo "  SIGKILL work lost (since the last save): $(summary "${lost_kill[@]}")"
[ "$got" = "$want" ] || exit 1

# 2. bit flips and 3. truncations of the finished checkpoint
size=$(stat -c %s "$ck")
refused=0; same=0; wrong=0
try() {
    local code=0 out
    out=$("$bin" count "$n" --checkpoint "$work/bad" --progress never "${extra[@]}" 2>/dev/null) || code=$?
    if [ "$code" -eq 1 ]; then
        refused=$((refused + 1))
    elif [ "$code" -eq 0 ] && [ "$out" = "$want" ]; then
        same=$((same + 1))
    else
        wrong=$((wrong + 1)); echo "NOT REFUSED: exit $code, output $out"
    fi
}
for _ in $(seq "$flips"); do
    cp "$ck" "$work/bad"
    at=$(( (RANDOM * 32768 + RANDOM) % size ))
    bit=$((1 << (RANDOM % 8)))
    byte=$(od -An -tu1 -j "$at" -N1 "$work/bad" | tr -d ' ')
    printf "$(printf '\\%03o' $((byte ^ bit)))" | dd of="$work/bad" bs=1 seek="$at" conv=notrunc status=none
    try
done
echo "bit flips: $flips tried, $refused refused, $same harmless (right total), $wrong wrong"
flips_wrong=$wrong
refused=0; same=0; wrong=0
step=$(( size / 64 > 0 ? size / 64 : 1 ))
tried=0
for len in $(seq 0 "$step" $((size - 1))); do
    head -c "$len" "$ck" > "$work/bad"
    try
    tried=$((tried + 1))
done
echo "truncations: $tried tried, $refused refused, $same harmless, $wrong wrong"
[ "$flips_wrong" -eq 0 ] && [ "$wrong" -eq 0 ]

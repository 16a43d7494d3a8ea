#!/usr/bin/env bash
# Usage: scripts/count-table.sh [FROM] [TO] [-- extra count flags...]
# Prints a table "N total seconds" for N = FROM..TO (default 1..16), one `nqueens count` per N.
# Example: scripts/count-table.sh 10 17 -- --threads 2 --engine mirror
set -euo pipefail
from=${1:-1}
to=${2:-16}
shift $(( $# >= 2 ? 2 : $# ))
[ "${1:-}" = "--" ] && shift
cd "$(dirname "$0")/.."
cargo build --release --quiet
bin=target/release/nqueens
printf '%-4s %-22s %s\n' N total seconds
for n in $(seq "$from" "$to"); do
    json=$("$bin" count "$n" --json "$@")
    total=$(sed -E 's/.*"total":"([0-9]+)".*/\1/' <<<"$json")
    secs=$(sed -E 's/.*"elapsed_s":([0-9.e-]+).*/\1/' <<<"$json")
    printf '%-4s %-22s %.3f\n' "$n" "$total" "$secs"
done

#!/usr/bin/env bash
# Usage: scripts/run-shards.sh N M [HOSTS] [-- extra count flags]
#
# Counts N-Queens for board side N as M shards run by GNU parallel, then merges them and
# prints the total last. Each shard keeps a checkpoint, so re-running the same command after an
# interruption resumes every unfinished shard, and a finished shard is only read back. The
# checkpoint names its run (N, engine, split depth, prefix, --unique, shard): re-running with
# other flags in the same directory is refused instead of mixing two runs. Results and
# checkpoints go to ${NQUEENS_SHARD_DIR:-nqueens-N-M}/.
#
#   HOSTS  optional comma-separated ssh logins for parallel --sshlogin ("4/node1,4/node2";
#          ":" is this machine). Every host needs `nqueens` on its PATH and a shared or
#          identical working directory; without HOSTS the shards run here, one per core.
#
# Example: scripts/run-shards.sh 16 8                      # 8 shards on this machine
#          scripts/run-shards.sh 20 64 ':,16/gpu1'         # this machine and gpu1 (16 jobs)
#          scripts/run-shards.sh 14 4 -- --prefix "1 3"    # extra flags, quoted as in a shell
set -euo pipefail
usage="usage: scripts/run-shards.sh N M [HOSTS] [-- extra count flags]"
n=${1:?$usage}
m=${2:?$usage}
shift 2
hosts=""
if [ $# -gt 0 ] && [ "$1" != "--" ]; then hosts=$1; shift; fi
[ "${1:-}" = "--" ] && shift
command -v parallel >/dev/null || { echo "run-shards.sh: GNU parallel is needed (apt-get install parallel)" >&2; exit 1; }

here=$(cd "$(dirname "$0")/.." && pwd)
if [ -n "${NQUEENS_BIN:-}" ]; then
    bin=$NQUEENS_BIN
elif command -v nqueens >/dev/null && [ -n "$hosts" ]; then
    bin=nqueens
else
    (cd "$here" && cargo build --release --quiet)
    bin=$here/target/release/nqueens
fi
dir=${NQUEENS_SHARD_DIR:-nqueens-$n-$m}
mkdir -p "$dir"

# every word quoted for the shell that parallel starts, so "1 3" stays one argument
extra=""
if [ $# -gt 0 ]; then extra=$(printf ' %q' "$@"); fi
q_bin=$(printf '%q' "$bin")
q_dir=$(printf '%q' "$dir")
ssh_args=()
if [ -n "$hosts" ]; then
    ssh_args=(--sshlogin "$hosts" --workdir "$PWD")
fi
# one thread per shard: parallel runs as many shards at once as there are cores. A shard's
# result is written to a temporary file and renamed, so a file present is a finished shard.
seq 0 $((m - 1)) | parallel --halt now,fail=1 "${ssh_args[@]}" \
    "$q_bin count $n --shard {}/$m --threads 1 --json --progress never \
     --checkpoint $q_dir/shard-{}.ckpt$extra > $q_dir/shard-{}.json.tmp \
     && mv $q_dir/shard-{}.json.tmp $q_dir/shard-{}.json"
files=()
for i in $(seq 0 $((m - 1))); do files+=("$dir/shard-$i.json"); done
"$bin" merge "${files[@]}"

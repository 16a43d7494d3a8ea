#!/usr/bin/env bash
# Usage: scripts/slurm-array.sh N M [extra count flags]
#
# Submitted as is, it sends two jobs to Slurm: an array of M tasks, each counting one shard of
# N-Queens for board side N on all the cores Slurm gives it, and a merge job that runs once
# every task has succeeded and writes the total to nqueens-N-M/total.json. Each task keeps a
# checkpoint, so a preempted or requeued task (SIGTERM) resumes where it stopped.
#
#   sbatch is needed on PATH; `nqueens` must be on PATH on the compute nodes (or set
#   NQUEENS_BIN), and the working directory must be on a shared file system.
#   Slurm options (partition, time, account) come from the usual SBATCH_* variables.
#
# Example: scripts/slurm-array.sh 21 256 --unique
set -euo pipefail
if [ -n "${SLURM_ARRAY_TASK_ID:-}" ]; then
    # inside an array task: the shard comes from SLURM_ARRAY_TASK_ID / SLURM_ARRAY_TASK_COUNT
    n=$1; m=$2; shift 2
    dir=nqueens-$n-$m
    bin=${NQUEENS_BIN:-nqueens}
    exec "$bin" count "$n" --json --progress never --threads "${SLURM_CPUS_PER_TASK:-$(nproc)}" \
        --checkpoint "$dir/shard-$SLURM_ARRAY_TASK_ID.ckpt" "$@" \
        > "$dir/shard-$SLURM_ARRAY_TASK_ID.json"
fi
n=${1:?usage: scripts/slurm-array.sh N M [extra count flags]}
m=${2:?usage: scripts/slurm-array.sh N M [extra count flags]}
shift 2
dir=nqueens-$n-$m
mkdir -p "$dir"
bin=${NQUEENS_BIN:-nqueens}
script=$(realpath "$0")
array=$(sbatch --parsable --array="0-$((m - 1))" --requeue --signal=TERM@60 \
    --job-name="nqueens-$n" --output="$dir/slurm-%A_%a.out" "$script" "$n" "$m" "$@")
merge=$(sbatch --parsable --dependency="afterok:${array%%;*}" --job-name="nqueens-$n-merge" \
    --output="$dir/merge.out" --wrap="$bin merge $dir/shard-*.json --json > $dir/total.json")
echo "submitted array job $array ($m shards) and merge job $merge; total will be in $dir/total.json"

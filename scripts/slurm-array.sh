#!/usr/bin/env bash
# Usage: scripts/slurm-array.sh N M [extra count flags]
#
# Submitted as is, it sends two jobs to Slurm: an array of M tasks (ids 0 to M-1), each
# counting one shard of N-Queens for board side N on all the cores Slurm gives it, and a merge
# job that runs once every task has succeeded and writes the total to nqueens-N-M/total.json.
#
# Each task keeps a checkpoint. Slurm sends SIGTERM 60 s before the time limit (and on
# preemption): the count saves and stops, and the task asks Slurm to requeue it, so it resumes
# where it stopped instead of failing the merge's dependency. A task's shard is its array id
# and M, so one task resubmitted alone (sbatch --array=5 ...) still counts shard 5 of M. Its
# result is written to a temporary file and renamed: a finished result is never emptied.
#
#   sbatch (and scontrol, for requeues) are needed on PATH; `nqueens` must be on PATH on the
#   compute nodes (or set NQUEENS_BIN), and the working directory must be on a shared file
#   system. Slurm options (partition, time, account) come from the usual SBATCH_* variables.
#
# Example: scripts/slurm-array.sh 21 256 --unique
set -euo pipefail
if [ -n "${SLURM_ARRAY_TASK_ID:-}" ]; then
    # inside an array task
    n=$1; m=$2; shift 2
    i=$SLURM_ARRAY_TASK_ID
    dir=nqueens-$n-$m
    bin=${NQUEENS_BIN:-nqueens}
    result=$dir/shard-$i.json
    "$bin" count "$n" --shard "$i/$m" --json --progress never \
        --threads "${SLURM_CPUS_PER_TASK:-$(nproc)}" \
        --checkpoint "$dir/shard-$i.ckpt" "$@" > "$result.tmp" &
    pid=$!
    # Slurm signals this shell (--signal=B:TERM): pass it on, then wait for the save
    trap 'kill -TERM "$pid" 2>/dev/null' TERM INT
    code=0
    wait "$pid" || code=$?
    while kill -0 "$pid" 2>/dev/null; do wait "$pid" || code=$?; done
    if [ "$code" -eq 0 ]; then
        mv "$result.tmp" "$result"
        exit 0
    fi
    rm -f "$result.tmp"
    if [ "$code" -eq 130 ] || [ "$code" -eq 143 ]; then
        job=${SLURM_ARRAY_JOB_ID:-${SLURM_JOB_ID:-}}
        echo "slurm-array.sh: shard $i/$m stopped and saved; requeueing ${job}_$i to resume" >&2
        if scontrol requeue "${job}_$i"; then
            exit 0
        fi
    fi
    exit "$code"
fi
n=${1:?usage: scripts/slurm-array.sh N M [extra count flags]}
m=${2:?usage: scripts/slurm-array.sh N M [extra count flags]}
shift 2
dir=nqueens-$n-$m
mkdir -p "$dir"
bin=${NQUEENS_BIN:-nqueens}
script=$(realpath "$0")
array=$(sbatch --parsable --array="0-$((m - 1))" --requeue --signal=B:TERM@60 \
    --job-name="nqueens-$n" --output="$dir/slurm-%A_%a.out" "$script" "$n" "$m" "$@")
merge=$(sbatch --parsable --dependency="afterok:${array%%;*}" --job-name="nqueens-$n-merge" \
    --output="$dir/merge.out" \
    --wrap="$bin merge $dir/shard-*.json --json > $dir/total.json.tmp && mv $dir/total.json.tmp $dir/total.json")
echo "submitted array job $array ($m shards) and merge job $merge; total will be in $dir/total.json"

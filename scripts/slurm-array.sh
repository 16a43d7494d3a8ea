#!/usr/bin/env bash
# Usage: scripts/slurm-array.sh N M [extra count flags]
#
# Submitted as is, it sends two jobs to Slurm: an array of M tasks (ids 0 to M-1), each
# counting one shard of N-Queens for board side N on all the cores Slurm gives it, and a merge
# job that runs once every task has succeeded and writes the total to nqueens-N-M/total.json.
# Before submitting anything it checks N, M and the flags by running the exact command line a
# task runs with `--dry-run` (so a flag the tasks set themselves, such as --json, --threads or
# --checkpoint, is refused here, not by every task), and it names the directory and jobs by N
# as nqueens reads it (" 8" and 08 are 8).
#
# Each task keeps a checkpoint. Slurm sends SIGTERM 60 s before the time limit (and on
# preemption, or `scancel -b -s TERM JOB_TASK`): the count saves and stops, and the task asks
# Slurm to requeue it, so it resumes where it stopped instead of failing the merge's
# dependency. Its result is written to a temporary file and renamed: a finished result is
# never emptied. Each task's messages, over all its starts, are in nqueens-N-M/slurm-JOB_TASK.out.
#
# To look at a run in progress: the shards finished so far, added up and checked, and the
# ones still missing named on stderr:
#   nqueens merge --partial nqueens-N-M/shard-*.json
#
# A run of more shards than the cluster's MaxArraySize, or one to count a part at a time:
# NQUEENS_PART=A-B submits shards A to B alone (array tasks 0 to B-A; task T counts shard
# A+T) and no merge job; merge by hand once every part is in, as above. For N = 24 to 27 the
# quadrant engine's shards take about 0.1 GB and 0.25 GB a thread at N = 24
# (0.4–0.5 GB on 2 threads), up to 1.3 GB a thread at N = 26; ask Slurm for it with
# SBATCH_MEM_PER_NODE. Example, the first 1000 of 4096 shards of N = 24:
#   NQUEENS_PART=0-999 scripts/slurm-array.sh 24 4096
#
# A task that fails (exit other than a requeue) makes Slurm cancel the merge job. Fix the
# cause, resubmit that task alone (its shard is its array id and M, so task K of the same
# command counts shard K of M), then merge by hand:
#   sbatch --array=K --requeue --open-mode=append --output='nqueens-N-M/slurm-%A_%a.out' \
#       scripts/slurm-array.sh N M [the same flags]
# (with NQUEENS_PART=A-B set as it was: task K counts shard A+K)
#   nqueens merge nqueens-N-M/shard-*.json --json > nqueens-N-M/total.json
#
#   sbatch and scontrol are needed on PATH; `nqueens` must be on PATH here and on the
#   compute nodes (or set NQUEENS_BIN), and the working directory must be on a shared file
#   system. Slurm options (partition, time, account) come from the usual SBATCH_* variables.
#   To try it on one machine: scripts/slurm-local.sh up DIR.
#
# Example: scripts/slurm-array.sh 21 256 --unique
set -euo pipefail
# The command line of the task counting shard $1 on $2 threads, in the array `task`: the
# tasks run it, and the check before submitting runs it too (with --dry-run), so a flag that
# every task would refuse (one given twice, say) is refused before anything is submitted.
task_command() {
    local shard=$1 threads=$2
    shift 2
    task=(count "$n" --shard "$shard/$m" --json --progress never --threads "$threads"
        --checkpoint "$dir/shard-$shard.ckpt" "$@")
}
if [ -n "${SLURM_ARRAY_TASK_ID:-}" ]; then
    # inside an array task
    n=$1; m=$2; shift 2
    first=${NQUEENS_PART:-0}
    i=$((SLURM_ARRAY_TASK_ID + ${first%%-*}))
    dir=nqueens-$n-$m
    bin=${NQUEENS_BIN:-nqueens}
    result=$dir/shard-$i.json
    task_command "$i" "${SLURM_CPUS_PER_TASK:-$(nproc)}" "$@"
    "$bin" "${task[@]}" > "$result.tmp" &
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
        # the array task to requeue is this one (its id), not its shard (A + id with
        # NQUEENS_PART=A-B)
        array_task=${SLURM_ARRAY_JOB_ID:-${SLURM_JOB_ID:-}}_$SLURM_ARRAY_TASK_ID
        echo "slurm-array.sh: shard $i/$m stopped and saved; requeueing $array_task to resume" >&2
        if scontrol requeue "$array_task"; then
            exit 0
        fi
    fi
    exit "$code"
fi
usage="usage: scripts/slurm-array.sh N M [extra count flags]"
refuse() { echo "slurm-array.sh: $1; nothing submitted" >&2; exit "${2:-2}"; }
[ $# -ge 2 ] || refuse "$usage"
n=$1
m=$2
shift 2
case $m in
'' | *[!0-9]* | 0*) refuse "M '$m' is not a shard count: a whole number from 1 (no sign, no leading 0)" ;;
esac
for tool in sbatch scontrol; do
    command -v "$tool" >/dev/null \
        || refuse "$tool is not on PATH: run this where Slurm's commands are (a login node; to try it here: scripts/slurm-local.sh up DIR)" 1
done
[ "${#m}" -le 18 ] || refuse "M '$m' is more shards than this script numbers (fewer than 10^18; nqueens itself takes up to 2^64 - 1)"
# the shards to submit: all, or those of NQUEENS_PART=A-B
first=0
last=$((m - 1))
if [ -n "${NQUEENS_PART:-}" ]; then
    first=${NQUEENS_PART%%-*}
    last=${NQUEENS_PART#*-}
    index() { case $1 in '' | *[!0-9]* | 0[0-9]*) return 1 ;; esac; [ "${#1}" -le 18 ]; }
    { index "$first" && index "$last" && [ "$first" -le "$last" ] && [ "$last" -lt "$m" ]; } \
        || refuse "NQUEENS_PART '$NQUEENS_PART' is not a range A-B of shards with A <= B < M = $m"
fi
tasks=$((last - first + 1))
max_array=$(scontrol show config 2>/dev/null | awk '$1 == "MaxArraySize" { print $3 }') || max_array=""
if [ -n "$max_array" ] && [ "$tasks" -gt "$max_array" ]; then
    refuse "$tasks shards are more tasks than this cluster's MaxArraySize allows (1 to $max_array): submit a part at a time with NQUEENS_PART=A-B"
fi
bin=${NQUEENS_BIN:-nqueens}
command -v "$bin" >/dev/null || refuse "'$bin' not found (set NQUEENS_BIN or put nqueens on PATH)" 1
# N as nqueens reads it (" 8", "08" and "+8" are 8), for the directory and the jobs
plan=$("$bin" count "$n" --dry-run) || exit
n=${plan#n=}
n=${n%% *}
dir=nqueens-$n-$m
# the count's own checks on the exact command line a task runs: nqueens names a bad value in
# one line
task_command 0 1 "$@"
"$bin" "${task[@]}" --dry-run >/dev/null || exit
mkdir -p "$dir"
script=$(realpath "$0")
array=$(sbatch --parsable --array="0-$((tasks - 1))" --requeue --signal=B:TERM@60 --open-mode=append \
    --job-name="nqueens-$n" --output="$dir/slurm-%A_%a.out" "$script" "$n" "$m" "$@")
array=${array%%;*}
if [ "$tasks" -lt "$m" ]; then
    echo "submitted array job $array (shards $first to $last of $m); no merge job: once every part is in, nqueens merge $dir/shard-*.json"
    echo "each task's messages: $dir/slurm-${array}_TASK.out (task T counts shard $first+T); the run so far: nqueens merge --partial $dir/shard-*.json"
    exit 0
fi
# the merge job's command line, each word quoted for the shell that runs it
q_bin=$(printf '%q' "$bin")
q_dir=$(printf '%q' "$dir")
merge=$(sbatch --parsable --dependency="afterok:$array" --kill-on-invalid-dep=yes \
    --job-name="nqueens-$n-merge" --output="$dir/merge.out" \
    --wrap="$q_bin merge $q_dir/shard-*.json --json > $q_dir/total.json.tmp && mv $q_dir/total.json.tmp $q_dir/total.json")
merge=${merge%%;*}
echo "submitted array job $array ($m shards) and merge job $merge; total will be in $dir/total.json"
echo "each task's messages: $dir/slurm-${array}_TASK.out; a failed task cancels the merge job (see the head of $script)"

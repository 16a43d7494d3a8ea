#!/usr/bin/env bash
# Usage: bash tests/slurm.sh
#
# scripts/slurm-array.sh on a real one-node Slurm (scripts/slurm-local.sh), as .ci/run runs it:
# needs Debian's slurm-wlm and munge, root, and target/release/nqueens (or NQUEENS_BIN).
#  - bad input is refused in one line and submits nothing;
#  - N = 19 in 2 shards (the default engine, quadrant): task 0 is preempted through Slurm
#    (scancel -b -s TERM), saves, requeues itself and resumes; the merge job's total.json has
#    the exact total, complete, with resumed subtasks; a part of a run (NQUEENS_PART=2-2)
#    preempted alike requeues its own task, not the one of its shard's number;
#  - --unique, --engine d4 and --engine mirror arrays merge to their known counts;
#  - a task that fails makes Slurm cancel the merge job, and its output file says why;
#    merge --partial adds up the shard that finished and names the one missing;
#  - N = 24 (the quadrant engine past N = 23): three shards of one unit each, submitted as a
#    part of the run (NQUEENS_PART), merged with --partial --verify 1 to the sum of the same
#    shards counted outside Slurm; more shards than MaxArraySize are refused with the way out.
# Known totals are OEIS A000170 / A002562.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
export NQUEENS_BIN=${NQUEENS_BIN:-$root/target/release/nqueens}
[ -x "$NQUEENS_BIN" ] || { echo "slurm test: build $NQUEENS_BIN first (cargo build --release)" >&2; exit 1; }
work=$(mktemp -d)
cluster=$work/cluster
array_sh=$root/scripts/slurm-array.sh
started=$SECONDS

fail() {
    echo "slurm test: $*" >&2
    squeue >&2 || true
    for f in "$work"/nqueens-*/*.out "$cluster"/log/slurmctld.log; do
        [ -f "$f" ] && { echo "== $f" >&2; tail -n 15 "$f" >&2; }
    done
    exit 1
}
say() { echo "slurm test ($((SECONDS - started)) s): $*"; }

eval "$(bash "$root/scripts/slurm-local.sh" up "$cluster")"
trap 'bash "$root/scripts/slurm-local.sh" down "$cluster" >/dev/null; rm -rf "$work"' EXIT
cd "$work"

field() { scontrol show job "$1" 2>/dev/null | tr ' ' '\n' | sed -n "s/^$2=//p" | head -1; }
# wait_until SECONDS WHAT COMMAND...: polls COMMAND every 0.2 s
wait_until() {
    local limit=$1 what=$2 t0=$SECONDS
    shift 2
    until "$@"; do
        [ $((SECONDS - t0)) -lt "$limit" ] || fail "waited $limit s for $what"
        sleep 0.2
    done
}
submit() {
    local out
    out=$(bash "$array_sh" "$@") || fail "slurm-array.sh $* was refused"
    sed -n 's/^submitted array job \([0-9]*\) .* merge job \([0-9]*\);.*/\1 \2/p' <<< "$out"
}
jobs_now() { squeue -h -o %i | wc -l; }

# --- bad input: one line on stderr, nothing submitted
mkdir -p nobin
# (the flags every task sets itself: given again, every task would refuse them)
for bad in "19" "19 0" "19 abc" "19 -2" "19 007" "40 4" "19 4 --engine quadrant --unique" "19 4 --bogus" \
    "8 4 --json" "8 4 --threads 3" "8 4 --checkpoint x" "8 4 --progress always"; do
    # shellcheck disable=SC2086 # the words are the arguments
    if bash "$array_sh" $bad 2> err; then fail "slurm-array.sh $bad was accepted"; fi
    [ "$(wc -l < err)" -eq 1 ] || fail "slurm-array.sh $bad: not one line: $(cat err)"
done
for bad in "5-2" "0-4" "x" "1-" "01-2"; do
    if NQUEENS_PART=$bad bash "$array_sh" 19 4 2> err; then fail "NQUEENS_PART=$bad was accepted"; fi
    [ "$(wc -l < err)" -eq 1 ] && grep -q "NQUEENS_PART '$bad'" err || fail "NQUEENS_PART=$bad: $(cat err)"
done
if bash "$array_sh" 24 4096 2> err; then fail "4096 tasks were submitted past MaxArraySize"; fi
grep -q "submit a part at a time with NQUEENS_PART=A-B" err || fail "24 4096: $(cat err)"
if PATH=$work/nobin /bin/bash "$array_sh" 19 2 2> err; then fail "submitted without sbatch"; fi
grep -q "sbatch is not on PATH" err || fail "without sbatch: $(cat err)"
[ "$(jobs_now)" -eq 0 ] || fail "a refused submission left jobs"
[ ! -e nqueens-19-0 ] && [ ! -e nqueens-40-4 ] && [ ! -e nqueens-24-4096 ] \
    || fail "a refused submission made its directory"
say "bad input refused, nothing submitted"

# --- submissions: the preempted run first, so its tasks take the CPUs
read -r big big_merge < <(submit 19 2)
[ -n "$big" ] || fail "no job id from slurm-array.sh 19 2"
read -r uniq uniq_merge < <(submit 13 3 --unique)
read -r d4 d4_merge < <(submit 12 2 --engine d4)
read -r mirror mirror_merge < <(submit 11 2 --engine mirror)
# N as nqueens reads it: " 9" is 9, in nqueens-9-2
read -r spaced spaced_merge < <(submit " 9" 2)
[ -n "$spaced" ] || fail "no job id from slurm-array.sh ' 9' 2"
mkdir -p nqueens-10-2/shard-1.ckpt # task 1's checkpoint cannot be written: it fails
read -r bad bad_merge < <(submit 10 2)
# N = 24 in shards of one unit id each (1,352,078 ids): three of them, a part of the run
units24=1352078
part24=$(NQUEENS_PART=20000-20002 bash "$array_sh" 24 $units24) || fail "N = 24's part was refused"
grep -q "^submitted array job [0-9]* (shards 20000 to 20002 of $units24); no merge job" <<< "$part24" \
    || fail "N = 24's part: $part24"

# --- preempt task 0 of N = 19 once it has counted for a while
running_a_while() { [ "$(field "${big}_0" JobState)" = RUNNING ] && [ -e nqueens-19-2/shard-0.ckpt ] && sleep 1; }
wait_until 60 "task ${big}_0 to run" running_a_while
[ "$(field "${big}_0" JobState)" = RUNNING ] || fail "task ${big}_0 ended before it was preempted"
scancel -b -s TERM "${big}_0"
say "sent SIGTERM to ${big}_0 through Slurm"
requeued() { grep -q "requeueing ${big}_0" nqueens-19-2/slurm-"${big}"_0.out 2>/dev/null; }
wait_until 30 "task ${big}_0 to save and requeue" requeued
restarted() { [ "$(field "${big}_0" Restarts)" = 1 ] && [ "$(field "${big}_0" JobState)" != PENDING ]; }
wait_until 60 "task ${big}_0 to start again" restarted
say "${big}_0 requeued and started again"
# --- a part of a run (NQUEENS_PART=2-2 of N = 20 in 4): its one task, 0, counts shard 2;
# preempted, it requeues itself, not task 2 (its shard's number, which does not exist)
part20=$(NQUEENS_PART=2-2 bash "$array_sh" 20 4) || fail "N = 20's part was refused"
part=$(sed -n 's/^submitted array job \([0-9]*\) (shards 2 to 2 of 4).*/\1/p' <<< "$part20")
[ -n "$part" ] || fail "N = 20's part: $part20"
part_running() { [ "$(field "${part}_0" JobState)" = RUNNING ] && [ -e nqueens-20-4/shard-2.ckpt ] && sleep 1; }
wait_until 60 "task ${part}_0 to run" part_running
[ "$(field "${part}_0" JobState)" = RUNNING ] || fail "task ${part}_0 ended before it was preempted"
scancel -b -s TERM "${part}_0"
part_requeued() { grep -q "shard 2/4 stopped and saved; requeueing ${part}_0 to resume" nqueens-20-4/slurm-"${part}"_0.out 2>/dev/null; }
wait_until 30 "task ${part}_0 to save and requeue itself" part_requeued
wait_until 240 "shard 2/4 of N = 20" test -s nqueens-20-4/shard-2.json
grep -q '"resumed_subtasks":[1-9]' nqueens-20-4/shard-2.json || fail "shard 2/4 did not resume: $(cat nqueens-20-4/shard-2.json)"
"$NQUEENS_BIN" merge --partial --verify 1 nqueens-20-4/shard-*.json > /dev/null 2> partial.err \
    || fail "merge --partial of N = 20's part: $(cat partial.err)"
grep -q "the sum of 1 of 4 shards, not the total: missing 0-1, 3" partial.err || fail "$(cat partial.err)"
say "part 2-2 of N = 20: task ${part}_0 (shard 2) preempted, requeued itself and resumed"

# --- every merge
total_of() { sed -n "s/.*\"$2\":\"\{0,1\}\([0-9a-z]*\)\"\{0,1\}[,}].*/\1/p" "nqueens-$1/total.json"; }
merged() { [ -s "nqueens-$1/total.json" ]; }
wait_until 240 "the N = 19 merge" merged 19-2
[ "$(total_of 19-2 total)" = 4968057848 ] || fail "N = 19: $(cat nqueens-19-2/total.json)"
[ "$(total_of 19-2 complete)" = true ] || fail "N = 19 not complete"
[ "$(total_of 19-2 engine)" = quadrant ] || fail "N = 19 not by the default engine"
resumed=$(total_of 19-2 resumed_subtasks)
[ "$resumed" -gt 0 ] || fail "N = 19: no resumed subtasks after the preemption"
say "N = 19: 4968057848, complete, $resumed subtasks resumed"
for run in "13-3 73712 9233 d4" "12-2 14200 - d4" "11-2 2680 - mirror" "9-2 352 - d4"; do
    read -r dir total unique engine <<< "$run"
    wait_until 60 "the N = $dir merge" merged "$dir"
    [ "$(total_of "$dir" total)" = "$total" ] || fail "$dir: $(cat "nqueens-$dir/total.json")"
    [ "$unique" = - ] || [ "$(total_of "$dir" unique)" = "$unique" ] || fail "$dir unique"
    [ "$(total_of "$dir" engine)" = "$engine" ] || fail "$dir: engine $(total_of "$dir" engine)"
done
say "--unique, d4 and mirror arrays merged to their counts, and N = ' 9' as 9"

# --- the failed task: Slurm cancels the merge job, the task's output says why
merge_gone() {
    local state
    state=$(field "$bad_merge" JobState)
    [ "$state" = CANCELLED ] || [ -z "$state" ]
}
wait_until 60 "the merge job of a failed array to be cancelled" merge_gone
[ "$(field "${bad}_1" JobState)" = FAILED ] || fail "task ${bad}_1: $(field "${bad}_1" JobState)"
[ ! -e nqueens-10-2/total.json ] || fail "a merge ran after a failed task"
grep -q "shard-1.ckpt" "nqueens-10-2/slurm-${bad}_1.out" || fail "the failed task's output names nothing"
say "failed task ${bad}_1: merge job $bad_merge cancelled, the task's output names its checkpoint"

# --- a look at the run as it stands: the finished shard added up, the failed one named
wait_until 60 "task ${bad}_0's result" test -s nqueens-10-2/shard-0.json
partial=$("$NQUEENS_BIN" merge --partial --verify 1 nqueens-10-2/shard-*.json 2> partial.err) \
    || fail "merge --partial of N = 10: $(cat partial.err)"
grep -q "the sum of 1 of 2 shards, not the total: missing 1" partial.err || fail "$(cat partial.err)"
[ "$partial" -gt 0 ] && [ "$partial" -lt 724 ] || fail "N = 10's partial sum $partial"
say "merge --partial: $partial from shard 0 of 2, shard 1 named missing"

# --- N = 24's part: the three shards, checked by rows, add up as counted outside Slurm
dir24=nqueens-24-$units24
three_in() { [ -s $dir24/shard-20000.json ] && [ -s $dir24/shard-20001.json ] && [ -s $dir24/shard-20002.json ]; }
wait_until 240 "N = 24's three shards" three_in
[ "$(ls $dir24/shard-*.json | wc -l)" -eq 3 ] || fail "N = 24: $(ls $dir24)"
partial=$("$NQUEENS_BIN" merge --partial --verify 1 $dir24/shard-*.json 2> partial.err) \
    || fail "merge --partial of N = 24: $(cat partial.err)"
grep -q "the sum of 3 of $units24 shards, not the total: missing 0-19999, 20003-$((units24 - 1))" partial.err \
    || fail "N = 24: $(cat partial.err)"
want=0
for k in 20000 20001 20002; do
    want=$((want + $("$NQUEENS_BIN" count 24 --shard $k/$units24 2>/dev/null)))
done
[ "$partial" -eq "$want" ] && [ "$want" -gt 0 ] || fail "N = 24's part: $partial, counted outside Slurm $want"
say "N = 24: shards 20000-20002 of $units24 merged with --partial --verify 1 to $partial"
# --- the recovery the script's header gives: resubmit the task alone, then merge by hand
rerun_task() { # N M K [flags]: sbatch --array=K ... as a user would, waiting for it to end
    local n=$1 m=$2 k=$3
    shift 3
    sbatch --wait --quiet --array="$k" --requeue --open-mode=append \
        --output="nqueens-$n-$m/slurm-%A_%a.out" "$array_sh" "$n" "$m" "$@"
}
rmdir nqueens-10-2/shard-1.ckpt
rerun_task 10 2 1 || fail "the resubmitted task 1 of N = 10 failed"
grep -q '"shard":{"index":1,"count":2}' nqueens-10-2/shard-1.json || fail "resubmitted alone, task 1 counted another shard"
[ "$("$NQUEENS_BIN" merge nqueens-10-2/shard-*.json)" = 724 ] || fail "N = 10 merged by hand"
# a rerun that fails leaves the finished result as it was
cp nqueens-12-2/shard-1.json before.json
if rerun_task 12 2 1 --engine nope; then fail "a task with a bad engine succeeded"; fi
cmp -s before.json nqueens-12-2/shard-1.json || fail "a failed rerun changed a finished result"
say "a task resubmitted alone counts its shard; a failed rerun keeps the finished result"
[ -n "$uniq$uniq_merge$d4$d4_merge$mirror$mirror_merge$big_merge" ]
say "ok"

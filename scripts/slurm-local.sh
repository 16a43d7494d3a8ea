#!/usr/bin/env bash
# Usage: scripts/slurm-local.sh up DIR     then: export SLURM_CONF=DIR/slurm.conf
#        scripts/slurm-local.sh down DIR
#
# A one-node Slurm cluster on this machine, for trying the cluster workflow
# (scripts/slurm-array.sh) and for the tests. `up` writes a key, a slurm.conf and the daemons'
# state, logs and pid files under DIR, starts munged, slurmctld and slurmd from Debian's
# packages (it installs nothing; it names the packages that are missing) and waits until the
# node is idle. Slurm's commands find this cluster through SLURM_CONF, which `up` prints as an
# export line and which jobs inherit. `down` stops exactly the daemons `up` started, by their
# pid files in DIR, and leaves DIR for its logs.
#
# The node has this machine's CPUs, one partition (`local`, no time limit), no accounting
# (squeue and scontrol, not sacct); a requeued job may start again 5 s after its requeue
# (Slurm's default is 120 s) and the scheduler looks at pending jobs every second. The daemons
# run as the user who calls `up`: run it as root, as CI does, for jobs to run as their own
# users. The ports are SLURM_LOCAL_PORT (default 6817, slurmctld) and the next (slurmd).
#
# Example: scripts/slurm-local.sh up /tmp/slurm && export SLURM_CONF=/tmp/slurm/slurm.conf
#          scripts/slurm-array.sh 19 4; squeue
#          scripts/slurm-local.sh down /tmp/slurm
set -euo pipefail
usage="usage: scripts/slurm-local.sh up|down DIR"
[ $# -eq 2 ] || { echo "slurm-local.sh: $usage" >&2; exit 2; }
action=$1
dir=$2
node=nqueens-local
daemons=(slurmd slurmctld munged)

pid_of() { cat "$dir/run/$1.pid" 2>/dev/null || true; }

running() {
    local pid
    pid=$(pid_of "$1")
    [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null
}

stop_all() {
    local d pid
    for d in "${daemons[@]}"; do
        pid=$(pid_of "$d")
        if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
            kill -TERM "$pid"
            for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
            kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null
            echo "slurm-local.sh: stopped $d ($pid)"
        fi
        rm -f "$dir/run/$d.pid"
    done
}

case $action in
down)
    [ -d "$dir" ] || { echo "slurm-local.sh: $dir is not a directory: nothing to stop" >&2; exit 1; }
    stop_all
    exit 0
    ;;
up) ;;
*) echo "slurm-local.sh: '$action' is not an action: use up or down ($usage)" >&2; exit 2 ;;
esac

missing=()
for tool in munged:munge mungekey:munge slurmctld:slurmctld slurmd:slurmd sbatch:slurm-client \
    scontrol:slurm-client sinfo:slurm-client; do
    command -v "${tool%%:*}" >/dev/null || PATH=$PATH:/usr/sbin command -v "${tool%%:*}" >/dev/null \
        || missing+=("${tool#*:}")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "slurm-local.sh: missing Debian packages: $(printf '%s\n' "${missing[@]}" | sort -u | tr '\n' ' ')(apt-get install slurm-wlm munge)" >&2
    exit 1
fi
export PATH=$PATH:/usr/sbin

mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
for d in "${daemons[@]}"; do
    if running "$d"; then
        echo "slurm-local.sh: $d already runs from $dir (pid $(pid_of "$d")); run down first" >&2
        exit 1
    fi
done
mkdir -p "$dir"/{munge,run,log,ctld,spool}
chmod 700 "$dir/munge"
user=$(id -un)
port=${SLURM_LOCAL_PORT:-6817}
case $port in
'' | *[!0-9]*) echo "slurm-local.sh: SLURM_LOCAL_PORT '$port' is not a port number" >&2; exit 2 ;;
esac

[ -f "$dir/munge/munge.key" ] || mungekey --create --keyfile="$dir/munge/munge.key" >/dev/null
force=()
[ "$(id -u)" -eq 0 ] && force=(--force) # munged refuses root without it
munged "${force[@]}" --socket="$dir/munge/munge.socket" --key-file="$dir/munge/munge.key" \
    --pid-file="$dir/run/munged.pid" --log-file="$dir/log/munged.log" \
    --seed-file="$dir/munge/munged.seed"

cat > "$dir/slurm.conf" <<EOF
# written by scripts/slurm-local.sh: a one-node cluster for trying nqueens' Slurm scripts
ClusterName=nqueens-local
SlurmctldHost=$(hostname -s)(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=$user
SlurmdUser=$user
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.socket,cred_expire=5
StateSaveLocation=$dir/ctld
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
# look at pending jobs every second (a requeued job waits for cred_expire, then for a look)
SchedulerParameters=sched_interval=1,bf_interval=1
MpiDefault=none
SwitchType=switch/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
ReturnToService=2
NodeName=$node NodeHostname=$(hostname) NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=local Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$dir/slurm.conf

# -c: a fresh cluster each time (no jobs from an earlier `up` come back)
slurmctld -c -f "$SLURM_CONF"
slurmd -N "$node" -f "$SLURM_CONF"
state=""
for _ in $(seq 300); do
    state=$(sinfo -h -n "$node" -o %T 2>/dev/null || true)
    [ "$state" = idle ] && break
    sleep 0.1
done
if [ "$state" != idle ]; then
    echo "slurm-local.sh: node $node is '${state:-unreachable}' after 30 s; logs in $dir/log" >&2
    stop_all >&2
    exit 1
fi
echo "slurm-local.sh: node $node idle with $(nproc) CPUs; daemons' logs in $dir/log" >&2
echo "export SLURM_CONF=$SLURM_CONF"

#!/usr/bin/env bash
# A single-node SLURM cluster on 127.0.0.1, for CI and for trying the launcher presets.
#
#   slurm/local_cluster.sh start    # munged + slurmctld + slurmd, waits until sinfo shows the node idle
#   eval "$(slurm/local_cluster.sh env)"   # SLURM_CONF and the sacct stand-in for this shell
#   slurm/local_cluster.sh status
#   slurm/local_cluster.sh stop     # cancels every job, shuts the daemons down, removes the directory
#
# Needs root and Debian's packages: apt-get install --no-install-recommends slurmctld slurmd slurm-client munge.
# Everything (munge key, slurm.conf, state, spool, logs, pid files) lives in $TESTNAV_SLURM_DIR
# (default /tmp/testnav-slurm); nothing under /etc is touched and every port binds to loopback.
# Why each setting is there: /work/shared/reference/slurm-local.md (measured on this kind of machine).
set -euo pipefail

DIR=${TESTNAV_SLURM_DIR:-/tmp/testnav-slurm}
CTLD_PORT=${TESTNAV_SLURM_CTLD_PORT:-6817}
SLURMD_PORT=${TESTNAV_SLURM_SLURMD_PORT:-6818}
PARTITION=${TESTNAV_SLURM_PARTITION:-local}
HERE=$(cd "$(dirname "$0")" && pwd)
HOST=$(hostname -s)
export SLURM_CONF="$DIR/etc/slurm.conf"

die() { echo "local_cluster: $*" >&2; exit 1; }

alive() { [[ -f $1 ]] && kill -0 "$(cat "$1")" 2>/dev/null; }

write_conf() {
    local cpus mem
    cpus=$(nproc)
    mem=$(awk '/MemAvailable/ {print int($2 / 1024 * 0.8)}' /proc/meminfo)
    cat >"$SLURM_CONF" <<EOF
ClusterName=testnav
SlurmctldHost=$HOST(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
CommunicationParameters=NoCtldInAddrAny,NoInAddrAny
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$DIR/munge-run/munge.socket.2,cred_expire=5
SlurmUser=root
SlurmdUser=root
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
SchedulerParameters=bf_interval=1,sched_interval=2
MpiDefault=none
SwitchType=switch/none
MailProg=/bin/true
ReturnToService=2
# SIGTERM to SIGKILL: short, so that a requeued job stops soon (submitit ignores SIGTERM)
KillWait=2
InactiveLimit=0
Waittime=0
MinJobAge=3600
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/run/slurmctld.pid
SlurmdPidFile=$DIR/run/slurmd.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.log
NodeName=$HOST NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=$PARTITION Nodes=$HOST Default=YES MaxTime=INFINITE State=UP
EOF
}

start() {
    [[ $(id -u) == 0 ]] || die "needs root (the daemons run as root in a private directory)"
    for b in munged slurmctld slurmd sinfo sbatch squeue; do
        command -v "$b" >/dev/null || die "$b not found (apt-get install --no-install-recommends slurmctld slurmd slurm-client munge)"
    done
    alive "$DIR/run/slurmctld.pid" && die "already running in $DIR (stop it first)"
    rm -rf "$DIR"
    mkdir -p "$DIR"/{etc,state,spool,run,log,bin,munge-lib}
    install -d -m 711 "$DIR/munge-key"   # munged refuses a key directory others can read
    install -d -m 755 "$DIR/munge-run"   # ... and a socket directory others cannot enter
    chmod 755 "$DIR"
    dd if=/dev/urandom of="$DIR/munge-key/munge.key" bs=1024 count=1 status=none
    chmod 400 "$DIR/munge-key/munge.key"
    munged --key-file="$DIR/munge-key/munge.key" --socket="$DIR/munge-run/munge.socket.2" \
        --pid-file="$DIR/munge-run/munged.pid" --log-file="$DIR/log/munged.log" \
        --seed-file="$DIR/munge-lib/munged.seed"
    write_conf
    # submitit asks sacct for job states; without accounting there is none, and a job that dies
    # without a result would be waited on forever. This stand-in answers from squeue instead.
    install -m 755 "$HERE/sacct-standin" "$DIR/bin/sacct"
    slurmctld -f "$SLURM_CONF"
    slurmd -f "$SLURM_CONF"
    local t0=$SECONDS state=""
    while (( SECONDS - t0 < 60 )); do
        state=$(sinfo -h -N -o '%T' 2>/dev/null | head -1 || true)
        [[ $state == idle ]] && { echo "local_cluster: node $HOST idle, partition $PARTITION, in $DIR"; return 0; }
        sleep 0.5
    done
    tail -n 20 "$DIR"/log/*.log >&2 || true
    die "node not idle after 60 s (state '${state:-none}'); logs above"
}

stop() {
    if [[ -f $SLURM_CONF ]] && alive "$DIR/run/slurmctld.pid"; then
        # scontrol shutdown leaves running jobs alive: cancel them first
        local ids
        ids=$(squeue -h -o '%i' 2>/dev/null | tr '\n' ' ' || true)
        [[ -n ${ids// /} ]] && scancel $ids 2>/dev/null || true
        local t0=$SECONDS
        while (( SECONDS - t0 < 15 )) && [[ -n $(squeue -h -t running,completing -o '%i' 2>/dev/null || true) ]]; do
            sleep 0.5
        done
        scontrol shutdown 2>/dev/null || true
    fi
    local pidfile pid
    for pidfile in "$DIR/run/slurmd.pid" "$DIR/run/slurmctld.pid" "$DIR/munge-run/munged.pid"; do
        [[ -f $pidfile ]] || continue
        pid=$(cat "$pidfile")
        for _ in $(seq 20); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
        if kill -0 "$pid" 2>/dev/null; then
            kill -TERM "$pid" 2>/dev/null || true
            for _ in $(seq 20); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
            kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null || true
        fi
    done
    [[ ${TESTNAV_SLURM_KEEP:-0} == 1 ]] || rm -rf "$DIR"
    echo "local_cluster: stopped"
}

case ${1:-} in
    start) start ;;
    stop) stop ;;
    status) alive "$DIR/run/slurmctld.pid" && sinfo || { echo "local_cluster: not running"; exit 1; } ;;
    env) echo "export SLURM_CONF='$SLURM_CONF' PATH='$DIR/bin':\"\$PATH\"" ;;
    *) echo "usage: $0 start|stop|status|env" >&2; exit 2 ;;
esac

#!/usr/bin/env bash
# A one-node Slurm cluster on this machine, for trying the sbatch templates in slurm/ and for CI.
#
#   scripts/slurm_local.sh start    install Debian's slurm-wlm and munge when missing (apt-get), write a
#                                   one-node slurm.conf, start munged, slurmctld and slurmd (no
#                                   systemd), and wait until the node takes jobs
#   scripts/slurm_local.sh stop     cancel the cluster's jobs and stop the daemons that start started
#   scripts/slurm_local.sh status   the daemons and the node; exit 0 when all three run
#
# Needs root (apt-get, the daemons) and a Debian or Ubuntu system. The cluster: partition "debug" with
# one node (this host, its CPUs as `slurmd -C` counts them), MpiDefault=none (Slurm's own default, so
# the templates must choose the launch plugin themselves), no GPUs, no accounting, no cgroups.
# slurm.conf goes to /etc/slurm/slurm.conf, which sbatch and srun read without further setup; an
# existing slurm.conf that this script did not write is never replaced.
#
# Variables (default):
#   DBFS_SLURM_DIR=/var/tmp/dbfs-slurm   state, spool, logs and pid files
set -euo pipefail

DIR=${DBFS_SLURM_DIR:-/var/tmp/dbfs-slurm}
CONF=/etc/slurm/slurm.conf
MARK="# Written by dbfs scripts/slurm_local.sh"
MUNGE_PID=/run/munge/munged.pid

fail() {
    echo "slurm_local: error: $*" >&2
    exit 2
}

note() {
    echo "slurm_local: $*" >&2
}

running() {  # running PIDFILE: the pid file names a live process
    [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null
}

install_packages() {
    local missing=()
    command -v slurmctld >/dev/null && command -v slurmd >/dev/null && command -v sbatch >/dev/null ||
        missing+=(slurm-wlm)
    command -v munged >/dev/null || missing+=(munge)
    [ ${#missing[@]} -eq 0 ] && return
    command -v apt-get >/dev/null || fail "${missing[*]} missing and no apt-get to install them (Debian/Ubuntu only)"
    note "installing ${missing[*]} (apt-get)"
    apt-get update -qq >&2 || fail "apt-get update failed"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2 ||
        fail "apt-get install ${missing[*]} failed"
}

write_conf() {
    [ ! -f "$CONF" ] || head -n 1 "$CONF" | grep -qF "$MARK" ||
        fail "$CONF exists and was not written by this script: not replacing a site's configuration"
    local host node
    host=$(hostname -s)
    # slurmd -C: this machine's CPUs, sockets, cores and memory, as slurmd will find them.
    node=$(slurmd -C | head -n 1)
    [[ $node == NodeName=* ]] || fail "slurmd -C did not describe this node: $node"
    mkdir -p "$DIR/state" "$DIR/spool" "$(dirname "$CONF")"
    cat >"$CONF" <<EOF
$MARK: a one-node cluster for dbfs's sbatch templates.
ClusterName=dbfs-local
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
KillWait=10
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd.pid
SlurmctldLogFile=$DIR/slurmctld.log
SlurmdLogFile=$DIR/slurmd.log
${node/NodeName=$host/NodeName=$host NodeAddr=127.0.0.1} State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
}

start() {
    [ "$(id -u)" -eq 0 ] || fail "needs root (apt-get and the Slurm daemons); run it with sudo"
    install_packages
    mkdir -p "$DIR"
    if running "$DIR/slurmctld.pid" && running "$DIR/slurmd.pid"; then
        note "already running (pids $(cat "$DIR/slurmctld.pid") and $(cat "$DIR/slurmd.pid"))"
        return
    fi
    write_conf
    if ! running "$MUNGE_PID"; then
        [ -s /etc/munge/munge.key ] || mungekey --create --keyfile=/etc/munge/munge.key
        mkdir -p /run/munge /var/lib/munge
        # --force: munged refuses to run as root, or with a key owned by another user, without it.
        munged --force --pid-file="$MUNGE_PID" --log-file="$DIR/munged.log"
        touch "$DIR/munged.ours"
    fi
    running "$DIR/slurmctld.pid" || slurmctld -i   # -i: start even if saved state is unreadable
    running "$DIR/slurmd.pid" || slurmd
    local state waited=0
    while :; do
        state=$(sinfo -h -n "$(hostname -s)" -o %T 2>/dev/null || true)
        case $state in idle*) break ;; esac
        [ "$waited" -lt 30 ] ||
            fail "the node is '${state:-not answering}' after 30 s; see $DIR/slurmctld.log and $DIR/slurmd.log"
        sleep 1
        waited=$((waited + 1))
    done
    note "started: slurmctld pid $(cat "$DIR/slurmctld.pid"), slurmd pid $(cat "$DIR/slurmd.pid"), config $CONF"
    sinfo >&2
}

stop_pid() {  # stop_pid NAME PIDFILE: SIGTERM, then wait up to 20 s for the process to end
    running "$2" || return 0
    local pid waited=0
    pid=$(cat "$2")
    kill "$pid"
    while kill -0 "$pid" 2>/dev/null; do
        [ "$waited" -lt 40 ] || fail "$1 (pid $pid) still runs 20 s after SIGTERM"
        sleep 0.5
        waited=$((waited + 1))
    done
    note "stopped $1 (pid $pid)"
}

stop() {
    local jobs waited=0
    if running "$DIR/slurmctld.pid"; then
        jobs=$(squeue -h -o %i 2>/dev/null || true)
        if [ -n "$jobs" ]; then
            note "cancelling jobs $(echo $jobs)"
            # shellcheck disable=SC2086
            scancel $jobs || true
            while [ -n "$(squeue -h -o %i 2>/dev/null)" ] && [ "$waited" -lt 30 ]; do
                sleep 1
                waited=$((waited + 1))
            done
        fi
    fi
    stop_pid slurmd "$DIR/slurmd.pid"
    stop_pid slurmctld "$DIR/slurmctld.pid"
    if [ -f "$DIR/munged.ours" ]; then
        stop_pid munged "$MUNGE_PID"
        rm -f "$DIR/munged.ours"
    fi
}

status() {
    local ok=0 name file
    for name in munged slurmctld slurmd; do
        file=$DIR/$name.pid
        [ "$name" != munged ] || file=$MUNGE_PID
        if running "$file"; then
            echo "$name: running (pid $(cat "$file"))"
        else
            echo "$name: not running"
            ok=1
        fi
    done
    [ "$ok" -ne 0 ] || sinfo
    return "$ok"
}

case ${1:-} in
start | stop | status) "$1" ;;
*) fail "usage: $0 start|stop|status" ;;
esac

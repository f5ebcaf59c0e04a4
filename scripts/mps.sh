#!/usr/bin/env bash
# Start, stop or query the CUDA MPS daemon of the current user, so that several MPI ranks on one GPU
# share it (their kernels run side by side) instead of time-slicing it, where every cross-rank wait
# costs milliseconds. NCCL refuses ranks that share a GPU, so such runs use --comm mpi.
#
#   scripts/mps.sh start     start the daemon (no-op when it runs); prints the export line to use
#   scripts/mps.sh stop      stop it (waits until its processes are gone)
#   scripts/mps.sh status    "running" or "stopped" (exit 0 or 3)
#
# The daemon's pipe and log folders: $DBFS_MPS_DIR (default /tmp/dbfs-mps-$UID). Ranks find the daemon
# through CUDA_MPS_PIPE_DIRECTORY; mpirun passes it on with `-x CUDA_MPS_PIPE_DIRECTORY`:
#   eval "$(scripts/mps.sh start)"
#   mpirun -n 4 -x CUDA_MPS_PIPE_DIRECTORY python -m dbfs --scale 22 --comm mpi
#   scripts/mps.sh stop
set -euo pipefail
dir=${DBFS_MPS_DIR:-/tmp/dbfs-mps-$(id -u)}
export CUDA_MPS_PIPE_DIRECTORY="$dir/pipe" CUDA_MPS_LOG_DIRECTORY="$dir/log"

running() { [ -S "$CUDA_MPS_PIPE_DIRECTORY/control" ] && echo get_server_list | nvidia-cuda-mps-control >/dev/null 2>&1; }

case ${1:-} in
start)
    command -v nvidia-cuda-mps-control >/dev/null || { echo "mps.sh: nvidia-cuda-mps-control not found (no CUDA driver utilities on this machine)" >&2; exit 1; }
    if ! running; then
        mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
        nvidia-cuda-mps-control -d || { echo "mps.sh: the MPS daemon did not start (see $CUDA_MPS_LOG_DIRECTORY)" >&2; exit 1; }
        echo "mps.sh: MPS daemon started ($CUDA_MPS_PIPE_DIRECTORY)" >&2
    fi
    echo "export CUDA_MPS_PIPE_DIRECTORY=$CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY=$CUDA_MPS_LOG_DIRECTORY" ;;
stop)
    if running; then
        echo quit | nvidia-cuda-mps-control
        for _ in $(seq 50); do running || break; sleep 0.1; done
        echo "mps.sh: MPS daemon stopped" >&2
    fi ;;
status)
    if running; then echo running; else echo stopped; exit 3; fi ;;
*)
    echo "usage: scripts/mps.sh start|stop|status" >&2; exit 2 ;;
esac

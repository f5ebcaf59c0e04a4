#!/usr/bin/env bash
# one H200 under MPS: who takes a rank's core -- ftrace's sched_switch during 22 on 4x4 runs (the default,
# unbound ranks), every preemption of a rank thread attributed to the task that ran instead
set -u
START=$(date +%s)
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
RESULTS=$R OUT= scripts/gpu_check.sh > $R/install.log 2>&1 || { tail -20 $R/install.log; exit 1; }
{ nvidia-smi; date -u; nproc; uname -a; cat /proc/sys/kernel/sched_*  2>/dev/null; lscpu; } > $R/machine.txt 2>&1
pack() { (cd $OUT && tar cf r.tar r); }
T=/sys/kernel/tracing; [ -d $T/events ] || mount -t tracefs nodev $T 2>> $R/trace_setup.txt || { T=/sys/kernel/debug/tracing; mount -t debugfs nodev /sys/kernel/debug 2>> $R/trace_setup.txt; }
ls $T >> $R/trace_setup.txt 2>&1; echo "tracefs at $T: $(ls $T/events/sched 2>/dev/null | head -3 | tr '\n' ' ')"
echo 65536 > $T/buffer_size_kb; echo 0 > $T/tracing_on; echo > $T/trace
echo 1 > $T/events/sched/sched_switch/enable
eval "$(scripts/mps.sh start)"
ps -eLo pid,tid,psr,rtprio,ni,comm > $R/threads_idle.txt
# first run compiles and caches the kernels (untraced)
(cd $R && timeout -s KILL 120 mpirun -x PYTHONPATH -x CUDA_MPS_PIPE_DIRECTORY -n 16 python3 -m dbfs --scale 20 --roots 2 --grid 4x4 --comm nvshmem --backend gpu > warm.log 2>&1); tail -n 2 $R/warm.log
for k in 1 2 3 4 5 6; do
  [ $(( $(date +%s) - START )) -gt 480 ] && break
  echo > $T/trace; echo 1 > $T/tracing_on
  echo "+ [$k] mpirun -n 16 python -m dbfs --scale 22 --roots 8 --grid 4x4 --comm nvshmem --backend gpu (sched_switch traced)" >> $R/commands.txt
  (cd $R && timeout -s KILL 90 mpirun -x PYTHONPATH -x CUDA_MPS_PIPE_DIRECTORY -n 16 python3 -m dbfs --scale 22 --roots 8 --grid 4x4 --comm nvshmem --backend gpu --json s22_$k.json > s22_$k.log 2>&1 & 
   sleep 8; ps -eLo pid,tid,psr,pcpu,comm --sort=-pcpu | head -60 > threads_busy_$k.txt; wait)
  echo 0 > $T/tracing_on; cat $T/trace > $R/trace_$k.txt
  python3 -c "
import json; d=json.load(open('$R/s22_$k.json'))
t=[s['time']*1e3 for s in d['searches']]
print('$k', 'mean %.3f median %.3f max %.3f valid %s' % (d['bfs_mean_time']*1e3, d['bfs_median_time']*1e3, max(t), all(s['validated'] for s in d['searches'])), ' '.join('%.2f' % x for x in t))"
  python3 .probe/sched/intruders.py $R/trace_$k.txt > $R/intruders_$k.txt 2>&1; head -30 $R/intruders_$k.txt
  xz -T4 $R/trace_$k.txt; pack
done
echo 0 > $T/events/sched/sched_switch/enable
scripts/mps.sh stop >/dev/null 2>&1; pack

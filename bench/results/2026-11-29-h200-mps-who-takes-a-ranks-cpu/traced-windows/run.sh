#!/usr/bin/env bash
# one H200 under MPS: who takes a stalled search's late rank's core -- ftrace's sched_switch with each search's
# window marked (mark.py) during 22 on 4x4 runs, bound (--bind-to core) and unbound in turn
set -u
START=$(date +%s)
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
RESULTS=$R OUT= scripts/gpu_check.sh > $R/install.log 2>&1 || { tail -20 $R/install.log; exit 1; }
pack() { (cd $OUT && tar cf r.tar r); }
T=/sys/kernel/tracing; [ -d $T/events ] || mount -t tracefs nodev $T
echo 32768 > $T/buffer_size_kb; echo 0 > $T/tracing_on; echo > $T/trace
echo 1 > $T/events/sched/sched_switch/enable
eval "$(scripts/mps.sh start)"
P=$PWD/.probe/sched
(cd $R && timeout -s KILL 120 mpirun -x PYTHONPATH -x CUDA_MPS_PIPE_DIRECTORY -n 16 python3 -m dbfs --scale 20 --roots 2 --grid 4x4 --comm nvshmem --backend gpu > warm.log 2>&1); tail -n 1 $R/warm.log
for k in $(seq 1 24); do
  [ $(( $(date +%s) - START )) -gt 420 ] && break
  bind=""; [ $((k % 2)) = 1 ] && bind="--bind-to core"
  echo > $T/trace; echo 1 > $T/tracing_on
  echo "+ [$k] mpirun $bind -n 16 mark.py --scale 22 --roots 8 --grid 4x4 --comm nvshmem --backend gpu (sched_switch traced)" >> $R/commands.txt
  (cd $R && timeout -s KILL 90 mpirun $bind -x PYTHONPATH -x CUDA_MPS_PIPE_DIRECTORY -n 16 python3 -P $P/mark.py --scale 22 --roots 8 --grid 4x4 --comm nvshmem --backend gpu --json s22_$k.json > s22_$k.log 2>&1) 
  echo 0 > $T/tracing_on; cat $T/trace > $R/trace_$k.txt
  slow=$(python3 -c "
import json; d=json.load(open('$R/s22_$k.json'))
t=[s['time']*1e3 for s in d['searches']]
print('$k $bind', 'mean %.3f median %.3f max %.3f valid %s' % (d['bfs_mean_time']*1e3, d['bfs_median_time']*1e3, max(t), all(s['validated'] for s in d['searches'])), ' '.join('%.2f' % x for x in t), file=__import__('sys').stderr)
print(int(max(t) > 2.0))")
  python3 .probe/sched/windows.py $R/trace_$k.txt 2.0 > $R/windows_$k.txt 2>&1
  if [ "$slow" = 1 ]; then grep -E "^search|^   rank" $R/windows_$k.txt | awk '/^search/ { if ($3+0 > 2.0) print; next } {print}' | head -30; xz -T4 $R/trace_$k.txt; else rm $R/trace_$k.txt; fi
  pack
done
echo 0 > $T/events/sched/sched_switch/enable
scripts/mps.sh stop >/dev/null 2>&1; pack

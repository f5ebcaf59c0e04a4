#!/usr/bin/env bash
# one H200 under MPS: issue 29's sixteen-PE figure with each rank's searching thread on a CPU of its own (the
# launch left unbound, as a user types it): one rank and 22 on 4x4 in turn, 8 roots a run, every search validated
set -u
START=$(date +%s)
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
RESULTS=$R OUT= scripts/gpu_check.sh > $R/install.log 2>&1 || { tail -20 $R/install.log; exit 1; }
{ nvidia-smi; date -u; nproc; git log -1 --format=%H 2>/dev/null; } > $R/machine.txt 2>&1
pack() { (cd $OUT && tar cf r.tar r); }
eval "$(scripts/mps.sh start)"
(cd $R && timeout -s KILL 120 mpirun -x PYTHONPATH -x CUDA_MPS_PIPE_DIRECTORY -n 16 python3 -m dbfs --scale 20 --roots 2 --grid 4x4 --comm nvshmem --backend gpu > warm.log 2>&1); tail -n 1 $R/warm.log
show() { python3 -c "
import json; d=json.load(open('$R/$1.json'))
t=[s['time']*1e3 for s in d['searches']]
print('$1', 'mean %.3f median %.3f max %.3f valid %s' % (d['bfs_mean_time']*1e3, d['bfs_median_time']*1e3, max(t), all(s['validated'] for s in d['searches'])), ' '.join('%.2f' % x for x in t))"; }
for k in $(seq 1 14); do
  [ $(( $(date +%s) - START )) -gt 470 ] && break
  echo "+ python -m dbfs --scale 22 --roots 8 --backend gpu --json one_$k.json" >> $R/commands.txt
  (cd $R && timeout -s KILL 60 python3 -m dbfs --scale 22 --roots 8 --backend gpu --json one_$k.json > one_$k.log 2>&1); show one_$k
  echo "+ mpirun -n 16 python -m dbfs --scale 22 --roots 8 --grid 4x4 --comm nvshmem --backend gpu --json s22_$k.json" >> $R/commands.txt
  (cd $R && timeout -s KILL 90 mpirun -x PYTHONPATH -x CUDA_MPS_PIPE_DIRECTORY -n 16 python3 -m dbfs --scale 22 --roots 8 --grid 4x4 --comm nvshmem --backend gpu --json s22_$k.json > s22_$k.log 2>&1); show s22_$k
  pack
done
grep -h "CPU of its own" $R/s22_1.log | head -1
scripts/mps.sh stop >/dev/null 2>&1; (cd $R && tar cJf logs.tar.xz *.log *.json && rm -f one_*.log s22_*.log) ; pack

#!/usr/bin/env bash
# one H200 under MPS: 22 on 4x4 (7b4e3f4: searching threads pinned) with the host's flag waits as now (poll and
# yield) against waits that sleep 10 us between polls (at once, or after 100 us of polling), in rotation
set -u
START=$(date +%s)
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
mkdir -p /tmp/h7b4 && xz -dc .probe/h7b4.tar.xz | tar x -C /tmp/h7b4 && cp -r .whl /tmp/h7b4/
(cd /tmp/h7b4 && RESULTS=$R OUT= scripts/gpu_check.sh > $R/install.log 2>&1) || { tail -20 $R/install.log; exit 1; }
pack() { (cd $OUT && tar cf r.tar r); }
eval "$(/tmp/h7b4/scripts/mps.sh start)"
P=$PWD/.probe/sleep
(cd $R && timeout -s KILL 100 mpirun -x PYTHONPATH -x CUDA_MPS_PIPE_DIRECTORY -n 16 python3 -m dbfs --scale 20 --roots 2 --grid 4x4 --comm nvshmem --backend gpu > warm.log 2>&1); tail -n 1 $R/warm.log
echo "ready at $(( $(date +%s) - START )) s"
for k in $(seq 1 15); do
  [ $(( $(date +%s) - START )) -gt 215 ] && break
  arm=$((k % 3)); spin=0; run="-m dbfs"
  [ $arm = 1 ] || run="-P $P/sleepy.py"; [ $arm = 0 ] && spin=100
  echo "+ [$k] SPIN_US=$spin mpirun -n 16 python3 $run --scale 22 --roots 8 --grid 4x4 --comm nvshmem" >> $R/commands.txt
  (cd $R && SPIN_US=$spin timeout -s KILL 60 mpirun -x PYTHONPATH -x CUDA_MPS_PIPE_DIRECTORY -x SPIN_US -n 16 python3 $run --scale 22 --roots 8 --grid 4x4 --comm nvshmem --backend gpu --json s22_$k.json > s22_$k.log 2>&1)
  python3 -c "
import json; d=json.load(open('$R/s22_$k.json'))
t=[s['time']*1e3 for s in d['searches']]
print('$k arm $arm', 'mean %.3f median %.3f max %.3f valid %s' % (d['bfs_mean_time']*1e3, d['bfs_median_time']*1e3, max(t), all(s['validated'] for s in d['searches'])), ' '.join('%.2f' % x for x in t))"
  pack
done
/tmp/h7b4/scripts/mps.sh stop >/dev/null 2>&1; pack

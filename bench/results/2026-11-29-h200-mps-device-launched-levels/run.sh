#!/usr/bin/env bash
# one H200: the device-launched search's GPU tests, then, if they pass, 22 on 4x4 (16 PEs under
# MPS, 8 roots) with the device launching the levels' graphs and with the host, and one rank, in turn
set -u
START=$(date +%s)
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
RESULTS=$R/t OUT= GPU_TESTS=tests/test_schedule.py MULTI_TESTS="tests/test_bfs.py -k nvshmem" \
  timeout 330 scripts/gpu_check.sh tests mps-start multi "${PES:-4}" mps-stop > $R/tests.log 2>&1
rc=$?; echo "tests rc $rc"; grep -a -E "passed|failed|FAILED" $R/t/*.log | tail -8
pack() { (cd $OUT && tar cf r.tar r); }
pack
[ $rc = 0 ] || exit 0
eval "$(scripts/mps.sh start)"
(cd $R && timeout -s KILL 120 mpirun -x PYTHONPATH -x CUDA_MPS_PIPE_DIRECTORY -n 16 python3 -m dbfs --scale 20 --roots 2 --grid 4x4 --comm nvshmem --backend gpu > warm.log 2>&1); tail -n 2 $R/warm.log
for k in 1 2 3 4 5; do
  [ $(( $(date +%s) - START )) -gt 540 ] && break
  for launch in device host; do
    echo "+ mpirun -n 16 python3 -m dbfs --scale 22 --roots 8 --grid 4x4 --comm nvshmem --level-launch $launch" >> $R/commands.txt
    (cd $R && timeout -s KILL 60 mpirun -x PYTHONPATH -x CUDA_MPS_PIPE_DIRECTORY -n 16 python3 -m dbfs --scale 22 --roots 8 --grid 4x4 --comm nvshmem --level-launch $launch --backend gpu --json s22_${launch}_$k.json > s22_${launch}_$k.log 2>&1)
    python3 -c "
import json; d=json.load(open('$R/s22_${launch}_$k.json'))
t=[s['time']*1e3 for s in d['searches']]
print('$k $launch', 'mean %.3f median %.3f max %.3f valid %s' % (d['bfs_mean_time']*1e3, d['bfs_median_time']*1e3, max(t), all(s['validated'] for s in d['searches'])))" 2>&1 | tail -1
  done
  echo "+ python3 -m dbfs --scale 22 --roots 8" >> $R/commands.txt
  (cd $R && timeout -s KILL 60 python3 -m dbfs --scale 22 --roots 8 --backend gpu --json s22_one_$k.json > s22_one_$k.log 2>&1)
  python3 -c "
import json; d=json.load(open('$R/s22_one_$k.json')); print('$k one', 'mean %.3f median %.3f' % (d['bfs_mean_time']*1e3, d['bfs_median_time']*1e3))" 2>&1 | tail -1
  pack
done
scripts/mps.sh stop >/dev/null 2>&1; pack

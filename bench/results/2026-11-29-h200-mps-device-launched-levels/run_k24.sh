#!/usr/bin/env bash
# one H200 under MPS: Kronecker 24, 16 roots, 4 PEs (--comm nvshmem) with the device launching the levels' graphs,
# one rank, and the host launching them, validated (issue 29's 1.5x line with the new default)
set -u
START=$(date +%s)
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl >/dev/null 2>&1
python3 -m pip install -q --no-index --no-build-isolation --no-deps . >/dev/null 2>&1
export PYTHONPATH=/tmp/site
pack() { (cd $OUT && tar cf r.tar r); }
eval "$(scripts/mps.sh start)"
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; python3 -m dbfs info; } > $R/machine.txt 2>&1
summary() { python3 -c "
import json; d=json.load(open('$R/$1.json')); t=[s['time']*1e3 for s in d['searches']]
print('$1', 'mean %.3f median %.3f max %.3f valid %s' % (d['bfs_mean_time']*1e3, d['bfs_median_time']*1e3, max(t), all(s['validated'] for s in d['searches'])))" 2>&1 | tail -1; }
for run in "device 4 --level-launch device" "one 1" "host 4 --level-launch host"; do
  set -- $run; name=k24_$1; p=$2; shift 2
  extra=""; [ $p -gt 1 ] && extra="--comm nvshmem"
  echo "+ mpirun -n $p python3 -m dbfs --scale 24 --roots 16 $extra $* --backend gpu --json $name.json" >> $R/commands.txt
  (cd $R && timeout -s KILL $(( 265 - ($(date +%s) - START) )) mpirun -x PYTHONPATH -x CUDA_MPS_PIPE_DIRECTORY -n $p python3 -m dbfs --scale 24 --roots 16 $extra "$@" --backend gpu --json $name.json > $name.log 2>&1)
  summary $name; pack
done
scripts/mps.sh stop >/dev/null 2>&1; pack

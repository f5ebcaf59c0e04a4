#!/usr/bin/env bash
# one H200 under MPS: the own frontier's message read in place (new) against ae0ff9c (prev), alternating:
# 24 on 2x2 again, and the default grids of 4 and 2 PEs (4x1, 2x1), 16 roots each
set -u
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
RESULTS=$R OUT= scripts/gpu_check.sh > $R/install.log 2>&1 || { tail -20 $R/install.log; exit 1; }
{ nvidia-smi; date -u; nproc; } > $R/machine.txt 2>&1
mkdir -p /tmp/oh && tar xJf .probe/hae0.tar.xz -C /tmp/oh
pack() { (cd $OUT && tar cf r.tar r); }
eval "$(scripts/mps.sh start)"
run() {  # tag pythonpath n args...
  local t=$1 pp=$2 n=$3; shift 3
  echo "+ [$t] mpirun -n $n python -m dbfs --scale 24 --roots 16 $* --comm nvshmem --backend gpu --json s24_$t.json" >> $R/commands.txt
  (cd $R && PYTHONPATH=$pp timeout -s KILL 100 mpirun -x PYTHONPATH -x CUDA_MPS_PIPE_DIRECTORY -n $n python3 -P -m dbfs --scale 24 --roots 16 "$@" --comm nvshmem --backend gpu --json s24_$t.json > s24_$t.log 2>&1)
  python3 -c "
import json; d=json.load(open('$R/s24_$t.json')); print('$t', d['grid'], 'mean %.3f median %.3f peak %.2f valid %s' % (d['bfs_mean_time']*1e3, d['bfs_median_time']*1e3, d['memory_peak']/2**20, all(s['validated'] for s in d['searches'])))" || tail -5 $R/s24_$t.log
  xz -q $R/s24_$t.json $R/s24_$t.log; pack
}
run 2x2_prev /tmp/oh/hae0:/tmp/site 4 --grid 2x2
run 2x2 /tmp/site 4 --grid 2x2
run 4_prev /tmp/oh/hae0:/tmp/site 4
run 4 /tmp/site 4
run 2_prev /tmp/oh/hae0:/tmp/site 2
run 2 /tmp/site 2
scripts/mps.sh stop >/dev/null 2>&1
pack

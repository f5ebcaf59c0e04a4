#!/usr/bin/env bash
# one H200 under MPS: 22 on 4x4, three trees in turn, twice: HEAD (the scan in parts and the Positions' starts a
# group of four words), 0358e08 (the scan in parts alone) and 327a693 (prev)
set -u
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
RESULTS=$R OUT= scripts/gpu_check.sh > $R/install.log 2>&1 || { tail -20 $R/install.log; exit 1; }
{ nvidia-smi; date -u; nproc; } > $R/machine.txt 2>&1
mkdir -p /tmp/oh && tar xJf .probe/h327.tar.xz -C /tmp/oh && tar xJf .probe/h035.tar.xz -C /tmp/oh
pack() { (cd $OUT && tar cf r.tar r); }
pack
eval "$(scripts/mps.sh start)"
summary() { python3 -c "
import json, collections; d=json.load(open('$R/$1.json')); t=collections.Counter()
for s in d['searches']: t.update(s['phases'])
print('$1', 'mean %.3f median %.3f peak %.2f est %.2f valid %s' % (d['bfs_mean_time']*1e3, d['bfs_median_time']*1e3, d['memory_peak']/2**20, d['memory_estimate']/2**20, all(s['validated'] for s in d['searches'])), ' '.join('%s=%.3f' % (k, v / len(d['searches']) * 1e3) for k, v in sorted(t.items())))" || tail -5 $R/$1.log; xz -q $R/$1.json $R/$1.log; pack; }
run() {  # tag pythonpath n scale args...
  local t=$1 pp=$2 n=$3 sc=$4; shift 4
  echo "+ [$t] mpirun -n $n python -m dbfs --scale $sc $* --comm nvshmem --backend gpu --json s${sc}_$t.json" >> $R/commands.txt
  (cd $R && PYTHONPATH=$pp timeout -s KILL 100 mpirun -x PYTHONPATH -x CUDA_MPS_PIPE_DIRECTORY -n $n python3 -P -m dbfs --scale $sc "$@" --comm nvshmem --backend gpu --json s${sc}_$t.json > s${sc}_$t.log 2>&1)
  summary s${sc}_$t
}
for k in 1 2; do
  run 4x4_$k /tmp/site 16 22 --roots 8 --grid 4x4
  run 4x4_parts_$k /tmp/oh/h035:/tmp/site 16 22 --roots 8 --grid 4x4
  run 4x4_prev_$k /tmp/oh/h327:/tmp/site 16 22 --roots 8 --grid 4x4
done
scripts/mps.sh stop >/dev/null 2>&1
pack

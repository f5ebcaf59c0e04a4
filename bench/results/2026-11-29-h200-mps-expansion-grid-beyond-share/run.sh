#!/usr/bin/env bash
# one H200 under MPS: the expansion kernel's grid at 1, 2, 4 and 16 times a rank's share of the GPU
# (DBFS_PROBE_SHARE in a probe tree of main, .probe/hprobe.tar.xz), 22 on 4x4 and on the default 16x1
set -u
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
RESULTS=$R OUT= scripts/gpu_check.sh > $R/install.log 2>&1 || { tail -20 $R/install.log; exit 1; }
{ nvidia-smi; date -u; nproc; } > $R/machine.txt 2>&1
mkdir -p /tmp/oh && tar xJf .probe/hprobe.tar.xz -C /tmp/oh
pack() { (cd $OUT && tar cf r.tar r); }
eval "$(scripts/mps.sh start)"
summary() { python3 -c "
import json, collections; d=json.load(open('$R/$1.json')); t=collections.Counter()
for s in d['searches']: t.update(s['phases'])
print('$1', 'mean %.3f median %.3f peak %.2f valid %s' % (d['bfs_mean_time']*1e3, d['bfs_median_time']*1e3, d['memory_peak']/2**20, all(s['validated'] for s in d['searches'])), ' '.join('%s=%.3f' % (k, v / len(d['searches']) * 1e3) for k, v in sorted(t.items())))" || tail -5 $R/$1.log; xz -q $R/$1.json $R/$1.log; pack; }
run() {  # tag share n scale args...
  local t=$1 sh=$2 n=$3 sc=$4; shift 4
  echo "+ [$t] DBFS_PROBE_SHARE=$sh mpirun -n $n python -m dbfs --scale $sc $* --comm nvshmem --backend gpu --json s${sc}_$t.json" >> $R/commands.txt
  (cd $R && DBFS_PROBE_SHARE=$sh PYTHONPATH=/tmp/oh/hprobe:/tmp/site timeout -s KILL 100 mpirun -x DBFS_PROBE_SHARE -x PYTHONPATH -x CUDA_MPS_PIPE_DIRECTORY -n $n python3 -P -m dbfs --scale $sc "$@" --comm nvshmem --backend gpu --json s${sc}_$t.json > s${sc}_$t.log 2>&1)
  summary s${sc}_$t
}
for sh in 1 4 16 2 1 4; do run 4x4_x${sh}_$RANDOM $sh 16 22 --roots 8 --grid 4x4; done
run 16x1_x1 1 16 22 --roots 8; run 16x1_x4 4 16 22 --roots 8
scripts/mps.sh stop >/dev/null 2>&1
pack

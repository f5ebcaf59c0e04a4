#!/usr/bin/env bash
# one H200 under MPS, the working tree (b02776a and the bottom-up level's timer node between its barriers dropped):
# 22 on one rank (8 roots) and on 4x4 (8 roots), default and without device-driven stretches (probe), alternating
set -u
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
RESULTS=$R OUT= scripts/gpu_check.sh > $R/install.log 2>&1 || { tail -20 $R/install.log; exit 1; }
{ nvidia-smi; date -u; nproc; } > $R/machine.txt 2>&1
pack() { (cd $OUT && tar cf r.tar r); }
cp .probe/capacity.py /tmp/capacity.py
(cd $R && timeout 200 python3 -P -m dbfs --scale 12 --roots 2 --backend gpu > warm.log 2>&1); echo "warm: $(tail -n 1 $R/warm.log)"
eval "$(scripts/mps.sh start)"
summary() { python3 -c "
import json, collections; d=json.load(open('$R/$1.json')); t=collections.Counter()
for s in d['searches']: t.update(s['phases'])
print('$1', 'mean %.3f median %.3f peak %.2f valid %s' % (d['bfs_mean_time']*1e3, d['bfs_median_time']*1e3, d['memory_peak']/2**20, all(s['validated'] for s in d['searches'])), ' '.join('%s=%.3f' % (k, v / len(d['searches']) * 1e3) for k, v in sorted(t.items())))" || tail -5 $R/$1.log; xz -q $R/$1.json $R/$1.log; pack; }
run() {  # tag capacity-scale n scale args...
  local t=$1 c=$2 n=$3 sc=$4; shift 4
  echo "+ [$t] PROBE_CAPACITY_SCALE=$c mpirun -n $n python .probe/capacity.py --scale $sc $* --backend gpu --json s${sc}_$t.json" >> $R/commands.txt
  (cd $R && PROBE_CAPACITY_SCALE=$c timeout -s KILL 100 mpirun -x PYTHONPATH -x PROBE_CAPACITY_SCALE -x CUDA_MPS_PIPE_DIRECTORY -n $n python3 -P /tmp/capacity.py --scale $sc "$@" --backend gpu --json s${sc}_$t.json > s${sc}_$t.log 2>&1)
  summary s${sc}_$t
}
run 1rank_1 1 1 22 --roots 8
run 4x4_default_1 1 16 22 --roots 8 --grid 4x4 --comm nvshmem; run 4x4_nostretch_1 0 16 22 --roots 8 --grid 4x4 --comm nvshmem
run 4x4_nostretch_2 0 16 22 --roots 8 --grid 4x4 --comm nvshmem; run 4x4_default_2 1 16 22 --roots 8 --grid 4x4 --comm nvshmem
run 4x4_nostretch_log 0 16 22 --roots 2 --grid 4x4 --comm nvshmem --log-levels
run 1rank_2 1 1 22 --roots 8
scripts/mps.sh stop >/dev/null 2>&1
pack

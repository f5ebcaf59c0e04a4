#!/usr/bin/env bash
# one H200 under MPS, e4821c2 (installed): 22 on 4x4 (8 roots) under the direction rule's parameters (--alpha,
# --beta) around their defaults (14, 24), and one rank for reference
set -u
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
RESULTS=$R OUT= scripts/gpu_check.sh > $R/install.log 2>&1 || { tail -20 $R/install.log; exit 1; }
{ nvidia-smi; date -u; nproc; } > $R/machine.txt 2>&1
pack() { (cd $OUT && tar cf r.tar r); }
(cd $R && timeout 200 python3 -P -m dbfs --scale 12 --roots 2 --backend gpu > warm.log 2>&1); echo "warm: $(tail -n 1 $R/warm.log)"
eval "$(scripts/mps.sh start)"
summary() { python3 -c "
import json, collections; d=json.load(open('$R/$1.json')); t=collections.Counter()
for s in d['searches']: t.update(s['phases'])
print('$1', 'mean %.3f median %.3f valid %s' % (d['bfs_mean_time']*1e3, d['bfs_median_time']*1e3, all(s['validated'] for s in d['searches'])), 'depths', sorted(collections.Counter(s['depth'] for s in d['searches']).items()))" || tail -5 $R/$1.log; xz -q $R/$1.json $R/$1.log; pack; }
run() {  # tag n args...
  local t=$1 n=$2 comm="--comm nvshmem"; shift 2; [ $n = 1 ] && comm=
  echo "+ [$t] mpirun -n $n python -m dbfs --scale 22 --roots 8 $* $comm --backend gpu --json s22_$t.json" >> $R/commands.txt
  (cd $R && timeout -s KILL 100 mpirun -x PYTHONPATH -x CUDA_MPS_PIPE_DIRECTORY -n $n python3 -P -m dbfs --scale 22 --roots 8 "$@" $comm --backend gpu --json s22_$t.json > s22_$t.log 2>&1)
  summary s22_$t
}
run 1rank 1
run 4x4_default 16 --grid 4x4
run 4x4_beta12 16 --grid 4x4 --beta 12; run 4x4_beta48 16 --grid 4x4 --beta 48
run 4x4_alpha6 16 --grid 4x4 --alpha 6; run 4x4_alpha30 16 --grid 4x4 --alpha 30
run 4x4_default_2 16 --grid 4x4
run 1rank_beta48 1 --beta 48
scripts/mps.sh stop >/dev/null 2>&1
pack

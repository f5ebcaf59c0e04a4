#!/usr/bin/env bash
# one H200 under MPS: issue 29's figure on 59b1d90 (.probe/h59b.tar.xz first on PYTHONPATH) in a start of its own: one
# rank and 22 on 4x4 (8 roots) in turn
set -u
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
RESULTS=$R OUT= scripts/gpu_check.sh > $R/install.log 2>&1 || { tail -20 $R/install.log; exit 1; }
{ nvidia-smi; date -u; nproc; } > $R/machine.txt 2>&1
pack() { (cd $OUT && tar cf r.tar r); }
mkdir -p /tmp/oh && tar xJf .probe/h59b.tar.xz -C /tmp/oh
NEW=/tmp/oh/h59b
(cd $NEW && PYTHONPATH=$NEW:/tmp/site timeout 200 python3 -P -m dbfs --scale 12 --roots 2 --backend gpu > $R/warm.log 2>&1); echo "warm: $(tail -n 1 $R/warm.log)"
eval "$(scripts/mps.sh start)"
summary() { python3 -c "
import json; d=json.load(open('$R/$1.json'))
print('$1', 'mean %.3f median %.3f max %.3f valid %s' % (d['bfs_mean_time']*1e3, d['bfs_median_time']*1e3, max(s['time'] for s in d['searches'])*1e3, all(s['validated'] for s in d['searches'])))" || tail -5 $R/$1.log; xz -q $R/$1.json $R/$1.log; pack; }
run() {  # tag n args...
  local t=$1 n=$2; shift 2
  echo "+ [$t] mpirun -n $n python -m dbfs --scale 22 --roots 8 $* --backend gpu --json s22_$t.json" >> $R/commands.txt
  (cd $R && PYTHONPATH=$NEW:/tmp/site timeout -s KILL 100 mpirun -x PYTHONPATH -x CUDA_MPS_PIPE_DIRECTORY -n $n python3 -P -m dbfs --scale 22 --roots 8 "$@" --backend gpu --json s22_$t.json > s22_$t.log 2>&1)
  summary s22_$t
}
G="--grid 4x4 --comm nvshmem"
run 1rank_1 1; run 4x4_1 16 $G; run 4x4_2 16 $G
run 1rank_2 1; run 4x4_3 16 $G; run 4x4_4 16 $G
run 1rank_3 1; run 4x4_5 16 $G; run 4x4_6 16 $G
run 1rank_4 1
scripts/mps.sh stop >/dev/null 2>&1
xz -q $R/*.log 2>/dev/null
pack

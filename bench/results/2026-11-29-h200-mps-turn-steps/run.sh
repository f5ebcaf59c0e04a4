#!/usr/bin/env bash
# one H200 under MPS: checkpoints on a 4x4 search's turns; the collector off during searches against on (probe)
set -u
R=$OUT/r; mkdir -p $R
P=$PWD/.probe/turns
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
RESULTS=$R OUT= scripts/gpu_check.sh > $R/install.log 2>&1 || { tail -20 $R/install.log; exit 1; }
{ nvidia-smi; date -u; nproc; git log -1 --format=%H 2>/dev/null; } > $R/machine.txt 2>&1
pack() { (cd $OUT && tar cf r.tar r); }
eval "$(scripts/mps.sh start)"
summary() { python3 -c "
import json; d=json.load(open('$R/$1.json'))
print('$1', 'mean %.3f median %.3f max %.3f valid %s' % (d['bfs_mean_time']*1e3, d['bfs_median_time']*1e3, max(s['time'] for s in d['searches'])*1e3, all(s['validated'] for s in d['searches'])))" || tail -5 $R/$1.log; pack; }
run() {  # tag n env args...
  local t=$1 n=$2 e=$3; shift 3
  mkdir -p $R/p_$t
  echo "+ [$t] $e mpirun -n $n python probe.py --scale 22 --roots 8 $* --backend gpu --json s22_$t.json" >> $R/commands.txt
  (cd $R && env $e PROBE_DIR=$R/p_$t timeout -s KILL 100 mpirun -x PYTHONPATH -x CUDA_MPS_PIPE_DIRECTORY -x PROBE_DIR -x PROBE_GC -x PROBE_CHECK -n $n python3 -P $P/probe.py --scale 22 --roots 8 "$@" --backend gpu --json s22_$t.json > s22_$t.log 2>&1)
  summary s22_$t
  python3 $P/analyse.py $R/p_$t > $R/p_$t.txt 2>&1; grep -E "flag->run|gc in" $R/p_$t.txt | head -20
}
G="--grid 4x4 --comm nvshmem"
run check 16 "PROBE_CHECK=1 PROBE_GC=on" $G
head -40 $R/p_check.txt
run 1rank_1 1 "PROBE_GC=on"
run gcon_1 16 "PROBE_GC=on" $G; run gcoff_1 16 "PROBE_GC=off" $G
run gcoff_2 16 "PROBE_GC=off" $G; run gcon_2 16 "PROBE_GC=on" $G
run gcon_3 16 "PROBE_GC=on" $G; run gcoff_3 16 "PROBE_GC=off" $G
run 1rank_2 1 "PROBE_GC=on"
scripts/mps.sh stop >/dev/null 2>&1
xz -q $R/*.log 2>/dev/null
pack

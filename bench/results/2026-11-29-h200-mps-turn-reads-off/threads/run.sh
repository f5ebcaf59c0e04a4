#!/usr/bin/env bash
# one H200 under MPS: where a 4x4 run's threads spend the CPU (ps snapshots), a search's thread time against its wall
# time and context switches (probe), and NVSHMEM's remote transport off
set -u
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
RESULTS=$R OUT= scripts/gpu_check.sh > $R/install.log 2>&1 || { tail -20 $R/install.log; exit 1; }
pack() { (cd $OUT && tar cf r.tar r); }
eval "$(scripts/mps.sh start)"
P=$PWD/.probe/turns
summary() { python3 -c "
import json; d=json.load(open('$R/$1.json'))
print('$1', 'mean %.3f median %.3f max %.3f valid %s' % (d['bfs_mean_time']*1e3, d['bfs_median_time']*1e3, max(s['time'] for s in d['searches'])*1e3, all(s['validated'] for s in d['searches'])))" || tail -5 $R/$1.log; pack; }
run() {  # tag env args...
  local t=$1 e=$2; shift 2
  mkdir -p $R/p_$t
  echo "+ [$t] $e mpirun -n 16 python probe.py --scale 22 --roots 8 $* --backend gpu --json s22_$t.json" >> $R/commands.txt
  (cd $R && env $e PROBE_DIR=$R/p_$t timeout -s KILL 100 mpirun -x PYTHONPATH -x CUDA_MPS_PIPE_DIRECTORY -x PROBE_DIR -x PROBE_CHECK -x NVSHMEM_REMOTE_TRANSPORT -n 16 python3 -P $P/probe.py --scale 22 --roots 8 "$@" --backend gpu --json s22_$t.json > s22_$t.log 2>&1) &
  local pid=$!
  for k in $(seq 1 40); do sleep 1; kill -0 $pid 2>/dev/null || break; { echo "== $k s"; ps -eLo pid,tid,psr,pcpu,stat,time,comm --sort=-pcpu | head -45; } >> $R/ps_$t.txt; done
  wait $pid
  summary s22_$t
  python3 $P/analyse.py $R/p_$t > $R/p_$t.txt 2>&1; grep -E "flag->run|searches|threads" $R/p_$t.txt
}
G="--grid 4x4 --comm nvshmem"
run plain "PROBE_CHECK=0" $G
tail -47 $R/ps_plain.txt | head -47
run check "PROBE_CHECK=1" $G
run notransport "PROBE_CHECK=0 NVSHMEM_REMOTE_TRANSPORT=none" $G
grep -i -m3 "warn\|error" $R/s22_notransport.log
tail -47 $R/ps_notransport.txt | head -30
scripts/mps.sh stop >/dev/null 2>&1
(cd $R && tar cJf p.tar.xz p_* && rm -rf p_plain p_check p_notransport)
xz -q $R/*.log $R/ps_*.txt 2>/dev/null
pack

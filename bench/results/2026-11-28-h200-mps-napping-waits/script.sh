#!/usr/bin/env bash
# one H100 under MPS: 22 on 16 PEs, 64 roots, yielding waits (c5961c0) against napping ones (HEAD), with and
# without a periodic intruder (wakes every 4 ms, computes 1 ms); per search and rank the run-queue delay
set -u
T0=$(date +%s); late() { [ $(( $(date +%s) - T0 )) -gt ${1:-500} ]; }
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
RESULTS=$R OUT= scripts/gpu_check.sh > $R/install.log 2>&1 || { tail -20 $R/install.log; exit 1; }
{ nvidia-smi; date -u; nproc; uname -a; git log -1 --format=%H; } > $R/machine.txt 2>&1
P=$PWD/.probe
tar xJf $P/hc596.tar.xz -C /tmp
eval "$(scripts/mps.sh start)"
run() { # name tree(new/old) intruder(0/1) nap ranks args
  local f=$1 tree=$2 intr=$3 nap=$4 n=$5; shift 5
  if late; then echo "skipped $f (time)"; return; fi
  mkdir -p $R/$f
  local pp=/tmp/site; [ $tree = old ] && pp=/tmp/hc596:/tmp/site
  local ipid=""
  if [ $intr = 1 ]; then python3 $P/intruder.py 0.004 0.001 & ipid=$!; fi
  echo "+ [$tree intruder=$intr NAP_S=$nap] mpirun -n $n python -m dbfs $* --backend gpu --json $f.json" >> $R/commands.txt
  (cd $R/$f && NAP_S=$nap PYTHONPATH=$pp timeout -s KILL 100 mpirun -x CUDA_MPS_PIPE_DIRECTORY -x PYTHONPATH -x NAP_S -n $n python3 -P $P/ss.py "$@" --backend gpu --json $f.json > $f.log 2>&1) || echo "FAILED $f"
  [ -n "$ipid" ] && kill $ipid
  python3 - $R/$f $f <<'PY'
import json, sys, glob, statistics as st
d, f = sys.argv[1], sys.argv[2]
j = json.load(open(f"{d}/{f}.json")); t = [s["time"] * 1e3 for s in j["searches"]]
rows = {json.load(open(g))["rank"]: json.load(open(g))["rows"] for g in glob.glob(d + "/ss_*.json")}
n = len(rows["0"])
md = [max((rows[r][i]["b"]["delay"] - rows[r][i]["a"]["delay"]) / 1e6 for r in rows) for i in range(n)]
print(f"{f:8s} mean {st.mean(t):.3f} median {st.median(t):.3f} max {max(t):.2f} over 1.6 ms: {sum(x > 1.6 for x in t)} of {len(t)}; "
      f"valid {all(s['validated'] for s in j['searches'])}; searches with a rank delayed > 0.4 ms: {sum(m > 0.4 for m in md)}")
PY
  (cd $R && tar cJf $f.tar.xz $f && rm -rf $f)
}
run one   new 0 "" 1  --scale 22 --roots 64 --comm nvshmem
run y0    old 0 "" 16 --scale 22 --roots 64 --comm nvshmem
run n0    new 0 "" 16 --scale 22 --roots 64 --comm nvshmem
run y1    old 1 "" 16 --scale 22 --roots 64 --comm nvshmem
run n1    new 1 "" 16 --scale 22 --roots 64 --comm nvshmem
run n10_1 new 1 10e-6 16 --scale 22 --roots 64 --comm nvshmem
run n10_0 new 0 10e-6 16 --scale 22 --roots 64 --comm nvshmem
run y0b   old 0 "" 16 --scale 22 --roots 64 --comm nvshmem
run n0b   new 0 "" 16 --scale 22 --roots 64 --comm nvshmem
(cd $OUT && tar cf r.tar r)

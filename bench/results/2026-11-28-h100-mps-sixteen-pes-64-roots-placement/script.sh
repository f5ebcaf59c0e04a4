#!/usr/bin/env bash
# one H100 under MPS, HEAD: 22 on 16 PEs, 64 roots, the default placement against one rank per hardware thread
set -u
T0=$(date +%s); late() { [ $(( $(date +%s) - T0 )) -gt ${1:-230} ]; }
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
RESULTS=$R OUT= scripts/gpu_check.sh > /tmp/install.txt 2>&1 || { tail -20 /tmp/install.txt; exit 1; }
{ nvidia-smi; date -u; nproc; lscpu; } > $R/machine.txt 2>&1
grep -E "^CPU\(s\)|Thread|Core|Socket|NUMA node\(s\)" $R/machine.txt
P=$PWD/.probe
pack() { (cd $OUT && tar cf r.tar r); }
run() { # file mpirun-extra args
  local f=$1 extra=$2; shift 2
  if late; then echo "skipped $f (time)"; return; fi
  echo "+ mpirun $extra -n 16 python -m dbfs $* --backend gpu --json $f.json" >> $R/commands.txt
  (cd $R && timeout -s KILL 100 mpirun $extra -x CUDA_MPS_PIPE_DIRECTORY -x PYTHONPATH -n 16 python3 -P -m dbfs "$@" --backend gpu --json $f.json > $f.log 2>&1) || { echo "FAILED $f"; tail -3 $R/$f.log; pkill -9 -f "m dbfs"; sleep 3; }
  python3 - $R/$f.json <<'PY'
import json, sys, statistics as st
d = json.load(open(sys.argv[1])); t = sorted(s["time"] * 1e3 for s in d["searches"])
print(sys.argv[1].split("/")[-1], "mean %.3f median %.3f p90 %.3f max %.2f over 1.6 ms: %d of %d valid %s" % (
    st.mean(t), st.median(t), t[int(0.9 * len(t))], t[-1], sum(x > 1.6 for x in t), len(t), all(s["validated"] for s in d["searches"])))
PY
  xz -q $R/$f.json $R/$f.log; pack
}
eval "$(scripts/mps.sh start)"
run free1 "" --scale 22 --roots 64 --comm nvshmem
run bound1 "--bind-to hwthread --report-bindings" --scale 22 --roots 64 --comm nvshmem
run free2 "" --scale 22 --roots 64 --comm nvshmem
run bound2 "--bind-to hwthread" --scale 22 --roots 64 --comm nvshmem
pack

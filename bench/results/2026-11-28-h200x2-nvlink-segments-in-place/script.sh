#!/usr/bin/env bash
# two H200 of one host: the NVSHMEM BFS GPU tests at 2 PEs, a GPU each (segments searched in place
# through NVLink on 1x2, and on 2x1 without the row copy); 24 on 1x2 and 2x1 --row-copy off, nvshmem
set -u
T0=$(date +%s); late() { [ $(( $(date +%s) - T0 )) -gt ${1:-560} ]; }
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=2G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
RESULTS=$R OUT= scripts/gpu_check.sh > $R/install.log 2>&1 || { tail -20 $R/install.log; exit 1; }
{ nvidia-smi; nvidia-smi topo -m; date -u; nproc; } > $R/machine.txt 2>&1
pack() { (cd $OUT && tar cf r.tar r); }
run() { # n file args
  local n=$1 f=$2; shift 2
  if late ${LATE:-400}; then echo "skipped $f (time)"; return; fi
  echo "+ mpirun -n $n python -m dbfs $* --backend gpu --json $f.json" >> $R/commands.txt
  (cd $R && timeout -s KILL 120 mpirun -x PYTHONPATH -n $n python3 -P -m dbfs "$@" --backend gpu --json $f.json > $f.log 2>&1) || { echo "FAILED $f"; tail -3 $R/$f.log; pkill -9 -f "m dbfs"; sleep 2; }
  python3 - $R/$f.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print(sys.argv[1].split("/")[-1], "grid", d["grid"], "mean %.3f median %.3f ms peak %.2f MiB est %.2f valid %s" % (
    d["bfs_mean_time"] * 1e3, d["bfs_median_time"] * 1e3, d["memory_peak"] / 2**20, d["memory_estimate"] / 2**20,
    all(s["validated"] for s in d["searches"])))
PY
  xz -q $R/$f.json $R/$f.log; pack
}
timeout 200 mpirun -x PYTHONPATH -n 2 python3 -m pytest --with-mpi -q -m gpu -p no:cacheprovider tests/test_bfs.py -k nvshmem > $R/t_bfs2_2gpus.log 2>&1; echo "tests 2 PEs on 2 GPUs: $(tail -1 $R/t_bfs2_2gpus.log)"; pack
run 2 s24_1x2 --scale 24 --roots 16 --grid 1x2 --comm nvshmem
run 2 s24_2x1_off --scale 24 --roots 16 --grid 2x1 --comm nvshmem --row-copy off
run 2 s24_2x1 --scale 24 --roots 16 --comm nvshmem
pack

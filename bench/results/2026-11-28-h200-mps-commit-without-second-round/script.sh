#!/usr/bin/env bash
# one H200 under MPS: the NVSHMEM BFS GPU tests at 4 and 2 PEs; 22 on 16x1 and 4x4 against 5ef425b (prev);
# without MPS, 26 on one rank against 25f595a (base)
set -u
T0=$(date +%s); late() { [ $(( $(date +%s) - T0 )) -gt ${1:-560} ]; }
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
RESULTS=$R OUT= scripts/gpu_check.sh > $R/install.log 2>&1 || { tail -20 $R/install.log; exit 1; }
{ nvidia-smi; date -u; nproc; } > $R/machine.txt 2>&1
mkdir -p /tmp/oh && tar xJf .probe/h25f.tar.xz -C /tmp/oh && tar xJf .probe/h5ef.tar.xz -C /tmp/oh
pack() { (cd $OUT && tar cf r.tar r); }
run() { # tree n file args
  local tree=$1 n=$2 f=$3; shift 3
  if late ${LATE:-330}; then echo "skipped $f (time)"; return; fi
  local pp=/tmp/site; [ $tree = base ] && pp=/tmp/oh/h25f:/tmp/site; [ $tree = prev ] && pp=/tmp/oh/h5ef:/tmp/site
  echo "+ [$tree] mpirun -n $n python -m dbfs $* --backend gpu --json $f.json" >> $R/commands.txt
  (cd $R && PYTHONPATH=$pp timeout -s KILL 150 mpirun -x PYTHONPATH ${CUDA_MPS_PIPE_DIRECTORY:+-x CUDA_MPS_PIPE_DIRECTORY} -n $n python3 -P -m dbfs "$@" --backend gpu --json $f.json > $f.log 2>&1) || { echo "FAILED $f"; tail -3 $R/$f.log; pkill -9 -f "m dbfs"; sleep 2; }
  python3 - $R/$f.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
t = [s["time"] * 1e3 for s in d["searches"]]
ph = {}
for s in d["searches"]:
    for k, v in s.get("phases", {}).items():
        ph[k] = ph.get(k, 0) + v * 1e3 / len(d["searches"])
print(sys.argv[1].split("/")[-1], "grid", d["grid"], "mean %.3f median %.3f ms peak %.2f MiB est %.2f constr %.3f s valid %s" % (
    d["bfs_mean_time"] * 1e3, d["bfs_median_time"] * 1e3, d["memory_peak"] / 2**20, d["memory_estimate"] / 2**20,
    d["construction_time"], all(s["validated"] for s in d["searches"])), {k: round(v, 3) for k, v in ph.items()}, "max %.3f" % max(t))
PY
  xz -q $R/$f.json $R/$f.log; pack
}
tests() { # n
  CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=$(( 100 / $1 )) timeout 150 mpirun -x PYTHONPATH -x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_ACTIVE_THREAD_PERCENTAGE -n $1 python3 -m pytest --with-mpi -q -m gpu -p no:cacheprovider tests/test_bfs.py -k nvshmem > $R/t_bfs$1.log 2>&1; echo "tests $1 PEs: $(tail -1 $R/t_bfs$1.log)"; pack
}
eval "$(scripts/mps.sh start)"
tests 4
tests 2
run new 16 s22_16 --scale 22 --roots 8 --comm nvshmem
run prev 16 s22_16_prev --scale 22 --roots 8 --comm nvshmem
run new 16 s22_4x4 --scale 22 --roots 8 --grid 4x4 --comm nvshmem
run prev 16 s22_4x4_prev --scale 22 --roots 8 --grid 4x4 --comm nvshmem
run new 16 s22_16_2 --scale 22 --roots 8 --comm nvshmem
run prev 16 s22_16_prev2 --scale 22 --roots 8 --comm nvshmem
scripts/mps.sh stop >/dev/null 2>&1
LATE=480 run new 1 s26_1 --scale 26 --roots 16
LATE=480 run base 1 s26_1_base --scale 26 --roots 16
pack

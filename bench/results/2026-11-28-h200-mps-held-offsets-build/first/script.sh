#!/usr/bin/env bash
# one GPU: GPU tests of the claims' fetched positions (kernels against twins, searches at 1 and 4 PEs);
# then 0fa32c9 (prev) and 279e32d (base) against the new tree at 24 on 4x4 (row copy off, nvshmem),
# 22 on 4x4 and 16x1, one rank 22; a per-level log of 22 on 4x4
set -u
T0=$(date +%s); late() { [ $(( $(date +%s) - T0 )) -gt ${1:-560} ]; }
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
RESULTS=$R OUT= scripts/gpu_check.sh > $R/install.log 2>&1 || { tail -20 $R/install.log; exit 1; }
{ nvidia-smi; date -u; nproc; git log --oneline -1; } > $R/machine.txt 2>&1
P=$PWD/.probe
tar xJf $P/hb79.tar.xz -C /tmp
pack() { (cd $OUT && tar cf r.tar r); }
STAGE=${STAGE:-all}
run() { # tree n file args
  local tree=$1 n=$2 f=$3; shift 3
  if late ${LATE:-330}; then echo "skipped $f (time)"; return; fi
  local pp=/tmp/site; [ $tree = base ] && pp=/tmp/h279:/tmp/site; [ $tree = prev ] && pp=/tmp/hb79:/tmp/site
  echo "+ [$tree] mpirun -n $n python -m dbfs $* --backend gpu --json $f.json" >> $R/commands.txt
  (cd $R && PYTHONPATH=$pp timeout -s KILL 100 mpirun -x PYTHONPATH ${CUDA_MPS_PIPE_DIRECTORY:+-x CUDA_MPS_PIPE_DIRECTORY} -n $n python3 -P -m dbfs "$@" --backend gpu --json $f.json > $f.log 2>&1) || { echo "FAILED $f"; tail -3 $R/$f.log; pkill -9 -f "m dbfs"; sleep 2; }
  python3 - $R/$f.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ph = d.get("phases", {})
print(sys.argv[1].split("/")[-1], "build %.3f s peak %.2f, mean %.3f median %.3f ms peak %.2f MiB est %.2f validate %.1f ms valid %s" % (
    d["construction_time"], (d.get("memory_construction_peak") or 0) / 2**20,
    d["bfs_mean_time"] * 1e3, d["bfs_median_time"] * 1e3, d["memory_peak"] / 2**20,
    d["memory_estimate"] / 2**20, d["bfs_mean_validate"] * 1e3,
    all(s["validated"] for s in d["searches"])), {k: round(v * 1e3, 3) for k, v in ph.items() if isinstance(v, float)})
PY
  xz -q $R/$f.json $R/$f.log; pack
}
# the build's held offsets: GPU tests at one rank (kernels against twins, the certificate, the rows' order),
# at 4 PEs under MPS (the builds on every transport); then b79649e (prev) against the new tree
G1="tests/test_ops_build.py tests/test_ops_row_order.py tests/test_certificate.py tests/test_build.py tests/test_ops_sparse.py"
echo "+ python -m pytest -m gpu $G1" >> $R/commands.txt
timeout -s KILL 200 python3 -m pytest -q -m gpu -p no:cacheprovider $G1 > $R/tests1.log 2>&1
echo "tests1: $(grep -aE 'passed|failed|error' $R/tests1.log | tail -1)"; grep -aE "^FAILED|^E  " $R/tests1.log | head -8
xz -q $R/tests1.log; pack
eval "$(scripts/mps.sh start)"
T4="tests/test_build.py tests/test_certificate.py tests/test_bfs.py"
echo "+ CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=25 mpirun -n 4 python -m pytest --with-mpi -m gpu $T4" >> $R/commands.txt
CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=25 timeout -s KILL 170 mpirun -x PYTHONPATH -x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_ACTIVE_THREAD_PERCENTAGE -n 4 python3 -m pytest --with-mpi -q -m gpu -p no:cacheprovider $T4 > $R/tests4.log 2>&1
echo "tests4: $(grep -aE 'passed|failed|error' $R/tests4.log | tail -1)"; grep -aE "^FAILED|^E  " $R/tests4.log | head -8
xz -q $R/tests4.log; pack
run new 16 s24_4x4_new1 --scale 24 --roots 16 --grid 4x4 --row-copy off --comm nvshmem
run prev 16 s24_4x4_prev1 --scale 24 --roots 16 --grid 4x4 --row-copy off --comm nvshmem
run new 16 s24_4x4_new2 --scale 24 --roots 16 --grid 4x4 --row-copy off --comm nvshmem
run prev 16 s24_4x4_prev2 --scale 24 --roots 16 --grid 4x4 --row-copy off --comm nvshmem
run new 16 s24_4x4_copy_new --scale 24 --roots 8 --grid 4x4 --comm nvshmem
run prev 16 s24_4x4_copy_prev --scale 24 --roots 8 --grid 4x4 --comm nvshmem
run new 4 s24_2x2_new --scale 24 --roots 16 --grid 2x2 --row-copy off --comm nvshmem
run new 16 s22_16_new --scale 22 --roots 8 --comm nvshmem
run new 16 s22_4x4_new --scale 22 --roots 8 --grid 4x4 --comm nvshmem
scripts/mps.sh stop >/dev/null 2>&1
run new 1 s24_1_new --scale 24 --roots 16
pack

#!/usr/bin/env bash
# one GPU: the GPU tests of 32-bit and 64-bit offsets (1 rank; NVSHMEM at 4 PEs under MPS), then c5961c0
# against HEAD: Kronecker 24 on one rank, 24 on 4x4 (no row copy) and 22 on 16 PEs under MPS, 26 on one rank
set -u
T0=$(date +%s); late() { [ $(( $(date +%s) - T0 )) -gt ${1:-500} ]; }
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
RESULTS=$R OUT= scripts/gpu_check.sh > $R/install.log 2>&1 || { tail -20 $R/install.log; exit 1; }
{ nvidia-smi; date -u; nproc; } > $R/machine.txt 2>&1
P=$PWD/.probe
tar xJf $P/hc596.tar.xz -C /tmp
pack() { (cd $OUT && tar cf r.tar r); }
tests() { # name timeout files/args
  local name=$1 lim=$2; shift 2
  echo "+ python -m pytest -m gpu $*" >> $R/commands.txt
  timeout -s KILL $lim python3 -m pytest -q -m gpu -p no:cacheprovider "$@" > $R/$name.log 2>&1
  echo "$name: $(grep -aE 'passed|failed|error' $R/$name.log | tail -1)"
  grep -aE "^FAILED|^E  " $R/$name.log | head -12
  xz -q $R/$name.log; pack
}
tests tests_ops 120 tests/test_ops.py tests/test_ops_build.py tests/test_ops_row_order.py tests/test_ops_bottom_up.py tests/test_ops_validate.py tests/test_build.py tests/test_certificate.py
tests tests_search 150 tests/test_bfs.py tests/test_validate.py tests/test_graph_runs.py
run() { # tree n file args
  local tree=$1 n=$2 f=$3; shift 3
  if late; then echo "skipped $f (time)"; return; fi
  local pp=/tmp/site; [ $tree = old ] && pp=/tmp/hc596:/tmp/site
  echo "+ [$tree] mpirun -n $n python -m dbfs $* --backend gpu --json $f.json" >> $R/commands.txt
  (cd $R && PYTHONPATH=$pp timeout -s KILL 150 mpirun -x PYTHONPATH ${CUDA_MPS_PIPE_DIRECTORY:+-x CUDA_MPS_PIPE_DIRECTORY} -n $n python3 -P -m dbfs "$@" --backend gpu --json $f.json > $f.log 2>&1) || { echo "FAILED $f"; tail -3 $R/$f.log; pkill -9 -f "m dbfs"; sleep 2; }
  python3 $P/summ.py $R/$f.json | head -1 | cut -c1-200
  xz -q $R/$f.json $R/$f.log; pack
}
run new 1 s24_1_new --scale 24 --roots 16
run old 1 s24_1_old --scale 24 --roots 16
eval "$(scripts/mps.sh start)"
echo "+ (MPS, CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=25) mpirun -n 4 python -m pytest --with-mpi -m gpu tests/test_bfs.py -k nvshmem" >> $R/commands.txt
CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=25 timeout -s KILL 120 mpirun -x PYTHONPATH -x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_ACTIVE_THREAD_PERCENTAGE -n 4 python3 -m pytest --with-mpi -q -m gpu -p no:cacheprovider tests/test_bfs.py -k nvshmem > $R/tests_4pes.log 2>&1
echo "tests_4pes: $(grep -aE 'passed|failed|error' $R/tests_4pes.log | tail -1)"; xz -q $R/tests_4pes.log; pack
run new 16 s24_4x4_new --scale 24 --roots 4 --grid 4x4 --row-copy off --comm nvshmem
run old 16 s24_4x4_old --scale 24 --roots 4 --grid 4x4 --row-copy off --comm nvshmem
run new 16 s22_16_new --scale 22 --roots 8 --comm nvshmem
run old 16 s22_16_old --scale 22 --roots 8 --comm nvshmem
scripts/mps.sh stop
run new 1 s26_1_new --scale 26 --roots 8
run old 1 s26_1_old --scale 26 --roots 8
pack

#!/usr/bin/env bash
# one H100 under MPS, HEAD: the NVSHMEM GPU tests at 2, 3 and 4 PEs
set -u
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
RESULTS=$R OUT= scripts/gpu_check.sh > /tmp/install.txt 2>&1 || { tail -20 /tmp/install.txt; exit 1; }
{ nvidia-smi; date -u; nproc; } > $R/machine.txt 2>&1
pack() { (cd $OUT && tar cf r.tar r); }
t() { # name n pct files...
  local name=$1 n=$2 pct=$3; shift 3
  echo "+ (MPS, CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=$pct) mpirun -n $n python -m pytest --with-mpi -m gpu $*" >> $R/commands.txt
  CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=$pct timeout -s KILL 130 mpirun -x PYTHONPATH -x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_ACTIVE_THREAD_PERCENTAGE -n $n python3 -m pytest --with-mpi -q -m gpu -p no:cacheprovider "$@" > $R/$name.log 2>&1
  echo "$name: $(grep -aE 'passed|failed|error' $R/$name.log | tail -1)"; xz -q $R/$name.log; pack
}
eval "$(scripts/mps.sh start)"
t tests_4pes 4 25 tests/test_bfs.py tests/test_grid_loop.py -k "nvshmem or levels_report or launches"
t tests_3pes 3 33 tests/test_bfs.py tests/test_grid_loop.py -k "nvshmem or levels_report or launches"
t tests_2pes 2 50 tests/test_bfs.py tests/test_grid_loop.py -k "nvshmem or levels_report or launches"
P=$PWD/.probe
run() { # n file args
  local n=$1 f=$2; shift 2
  echo "+ mpirun -n $n python -m dbfs $* --backend gpu --json $f.json" >> $R/commands.txt
  (cd $R && timeout -s KILL 120 mpirun -x CUDA_MPS_PIPE_DIRECTORY -x PYTHONPATH -n $n python3 -P -m dbfs "$@" --backend gpu --json $f.json > $f.log 2>&1) || { echo "FAILED $f"; tail -3 $R/$f.log; pkill -9 -f "m dbfs"; sleep 3; }
  python3 $P/summ.py $R/$f.json | cut -c1-200
  xz -q $R/$f.json $R/$f.log; pack
}
run 1 s22_1 --scale 22 --roots 8
(for k in 1 2 3; do sleep 6; echo "== sample $k"; ps -eLo pid,tid,psr,pcpu,stat,comm --sort=-pcpu | head -60; done > $R/threads.txt 2>&1) &
run 16 s22_16c --scale 22 --roots 8 --comm nvshmem
wait
run 16 s22_16d --scale 22 --roots 8 --comm nvshmem
run 16 s22_16e --scale 22 --roots 8 --comm nvshmem
pack

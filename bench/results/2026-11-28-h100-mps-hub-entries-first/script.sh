#!/usr/bin/env bash
# one H100 under MPS: issue 29's runs with the rows' hub entries first (new) against 1c4baa4 (old), alternating;
# the GPU tests of the BFS and the grid loop at 4 PEs
set -u
T0=$(date +%s); late() { [ $(( $(date +%s) - T0 )) -gt ${1:-520} ]; }
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
RESULTS=$R OUT= scripts/gpu_check.sh > /tmp/install.txt 2>&1 || { tail -20 /tmp/install.txt; exit 1; }
tar xJf .probe/old1c4.tar.xz -C /tmp
{ nvidia-smi; date -u; nproc; ( cd /tmp; python3 -P -c "import dbfs.build as b; print('new code (row order present):', 'row_order' in open(b.__file__).read(), b.__file__)";
  PYTHONPATH=/tmp/old1c4:/tmp/site python3 -P -c "import dbfs.build as b; print('old code (row order absent):', 'row_order' not in open(b.__file__).read(), b.__file__)" ); } > $R/machine.txt 2>&1
tail -2 $R/machine.txt
P=$PWD/.probe
pack() { (cd $OUT && tar cf r.tar r); }
run() { # code n file args
  local code=$1 n=$2 f=$3; shift 3
  if late; then echo "skipped $f (time)"; return; fi
  local pp=/tmp/site; [ $code = old ] && pp=/tmp/old1c4:/tmp/site
  echo "+ ($code) mpirun -n $n python -m dbfs $* --backend gpu --json $f.json" >> $R/commands.txt
  (cd $R && PYTHONPATH=$pp timeout -s KILL 150 mpirun -x CUDA_MPS_PIPE_DIRECTORY -x PYTHONPATH -n $n python3 -P -m dbfs "$@" --backend gpu --json $f.json > $f.log 2>&1) || { echo "FAILED $f"; tail -3 $R/$f.log; pkill -9 -f "m dbfs"; sleep 3; }
  python3 $P/summ.py $R/$f.json | head -1 | cut -c1-200
  xz -q $R/$f.json $R/$f.log; pack
}
eval "$(scripts/mps.sh start)"
python3 -m dbfs generate --lattice 2048x2048 --out /tmp/lat.h5 > $R/generate.log 2>&1 || echo "FAILED generate"
run new 1 s24_1_new --scale 24 --roots 16
run old 1 s24_1_old --scale 24 --roots 16
run new 4 s24_4_new1 --scale 24 --roots 16
run old 4 s24_4_old1 --scale 24 --roots 16
run new 2 s24_2_new --scale 24 --roots 16
run old 2 s24_2_old --scale 24 --roots 16
run new 16 s22_16_new --scale 22 --roots 8 --comm nvshmem
run old 16 s22_16_old --scale 22 --roots 8 --comm nvshmem
run new 1 s22_1_new --scale 22 --roots 8
run old 1 s22_1_old --scale 22 --roots 8
run new 4 s24_4_new2 --scale 24 --roots 16
run old 4 s24_4_old2 --scale 24 --roots 16
run new 4 lat2x2_new --graph /tmp/lat.h5 --roots 2
run old 4 lat2x2_old --graph /tmp/lat.h5 --roots 2
run new 1 lat1_new --graph /tmp/lat.h5 --roots 2
if ! late 400; then
  export CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=25
  echo "+ (MPS, CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=25) mpirun -n 4 python -m pytest --with-mpi -m gpu tests/test_bfs.py tests/test_grid_loop.py" >> $R/commands.txt
  timeout -s KILL 110 mpirun -x PYTHONPATH -x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_ACTIVE_THREAD_PERCENTAGE -n 4 python3 -m pytest --with-mpi -q -m gpu -p no:cacheprovider tests/test_bfs.py tests/test_grid_loop.py > $R/tests_4pes.log 2>&1
  echo "4 PEs: $(strings $R/tests_4pes.log | grep -E 'passed|failed' | tail -1)"
fi
cd $R && for f in *.log; do [ -f $f ] && xz -q $f; done; pack

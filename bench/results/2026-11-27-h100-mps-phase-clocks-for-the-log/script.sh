#!/usr/bin/env bash
# one H100 under MPS: the phase clocks read only for the log (new) against 4654a10 (old)
set -u
T0=$(date +%s); late() { [ $(( $(date +%s) - T0 )) -gt ${1:-540} ]; }
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
RESULTS=$R OUT= scripts/gpu_check.sh > /tmp/install.txt 2>&1 || { tail -20 /tmp/install.txt; exit 1; }
rm -rf /tmp/oldhead; tar xJf .probe/old4654.tar.xz -C /tmp
{ nvidia-smi; date -u; nproc; ( cd /tmp; python3 -P -c "import dbfs.kernels as k, os; print('new code (timer guard present):', 'const bool timer' in open(os.path.join(os.path.dirname(k.__file__), 'peer_levels.cu')).read())";
  PYTHONPATH=/tmp/oldhead:/tmp/site python3 -P -c "import dbfs.kernels as k, os; print('old code (timer guard absent):', 'const bool timer' not in open(os.path.join(os.path.dirname(k.__file__), 'peer_levels.cu')).read())" ); } > $R/machine.txt 2>&1
P=$PWD/.probe
run() { # code n file args
  local code=$1 n=$2 f=$3; shift 3
  if late; then echo "skipped $f (time)"; return; fi
  local pp=/tmp/site; [ $code = old ] && pp=/tmp/oldhead:/tmp/site
  echo "+ ($code) mpirun -n $n python -m dbfs $* --backend gpu --json $f.json" >> $R/commands.txt
  (cd $R && PYTHONPATH=$pp timeout -s KILL 150 mpirun -x CUDA_MPS_PIPE_DIRECTORY -x PYTHONPATH -n $n python3 -P -m dbfs "$@" --backend gpu --json $f.json > $f.log 2>&1) || { echo "FAILED $f"; tail -3 $R/$f.log; pkill -9 -f "m dbfs"; sleep 3; }
  python3 $P/summ.py $R/$f.json | cut -c1-200
}
eval "$(scripts/mps.sh start)"
export CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=25
echo "+ (MPS, CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=25) mpirun -n 4 python -m pytest --with-mpi -m gpu tests/test_bfs.py tests/test_grid_loop.py -k 'nvshmem or level_totals or launches or log'" >> $R/commands.txt
timeout -s KILL 200 mpirun -x PYTHONPATH -x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_ACTIVE_THREAD_PERCENTAGE -n 4 python3 -m pytest --with-mpi -q -m gpu -p no:cacheprovider tests/test_bfs.py tests/test_grid_loop.py -k "nvshmem or level_totals or launches or log" > $R/tests_4pes.log 2>&1
echo "4 PEs: $(strings $R/tests_4pes.log | grep -E 'passed|failed' | tail -1)"
strings $R/tests_4pes.log | grep -q failed && strings $R/tests_4pes.log | grep -E "Error|assert|FAILED" | head -20
unset CUDA_MPS_ACTIVE_THREAD_PERCENTAGE
python3 -m dbfs generate --lattice 2048x2048 --out /tmp/lat.h5 > $R/generate.log 2>&1 || echo "FAILED generate"
run new 4 lat2x2_new --graph /tmp/lat.h5 --roots 2
run old 4 lat2x2_old --graph /tmp/lat.h5 --roots 2
run new 4 lat2x2_new_b --graph /tmp/lat.h5 --roots 2
run old 4 lat2x2_old_b --graph /tmp/lat.h5 --roots 2
run new 16 s22_16_new --scale 22 --roots 8 --comm nvshmem
run old 16 s22_16_old --scale 22 --roots 8 --comm nvshmem
run new 4 lat2x2_new_c --graph /tmp/lat.h5 --roots 2
run old 4 lat2x2_old_c --graph /tmp/lat.h5 --roots 2
run new 4 lat2x2_new_log --graph /tmp/lat.h5 --roots 2 --log-levels
cd $R && for f in *.log *.json; do [ -f $f ] && xz -q $f; done; cd ..; tar cf $OUT/r.tar r && rm -rf r

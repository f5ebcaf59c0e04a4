#!/usr/bin/env bash
# one H100 under MPS: the block-wide reservations (new) against the commit before (old): GPU tests at 2 and 4 PEs, Kronecker 24
set -u
T0=$(date +%s); late() { [ $(( $(date +%s) - T0 )) -gt ${1:-300} ]; }
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
RESULTS=$R OUT= scripts/gpu_check.sh > /tmp/install.txt 2>&1 || { tail -20 /tmp/install.txt; exit 1; }
eval "$(scripts/mps.sh start)"
{ nvidia-smi; date -u; } > $R/machine.txt 2>&1
P=$PWD/.probe
tests() { # name n limit args
  local name=$1 n=$2 lim=$3; shift 3
  if late $((420 - lim)); then echo "skipped $name (time)"; return; fi
  echo "+ (CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=$((100/n))) mpirun -n $n python -m pytest --with-mpi -q -m gpu $*" >> $R/commands.txt
  CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=$((100/n)) timeout -s KILL $lim mpirun -x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_ACTIVE_THREAD_PERCENTAGE -x PYTHONPATH -n $n python3 -m pytest --with-mpi -q -m gpu -p no:cacheprovider "$@" > $R/$name.log 2>&1 || { pkill -9 -f "m pytest"; sleep 3; }
  echo "$name: $(tail -1 $R/$name.log)"
}
run() { # n file args
  local n=$1 f=$2; shift 2
  if late; then echo "skipped $f (time)"; return; fi
  echo "+ mpirun -n $n python -m dbfs $* --backend gpu --json $f.json" >> $R/commands.txt
  (cd $R && timeout -s KILL 120 mpirun -x CUDA_MPS_PIPE_DIRECTORY -x PYTHONPATH -n $n python3 -P -m dbfs "$@" --backend gpu --json $f.json > $f.log 2>&1) || { echo "FAILED $f"; pkill -9 -f "m dbfs"; sleep 3; }
  python3 $P/summ.py $R/$f.json | cut -c1-300
}
tar xJf .probe/head.tar.xz -C /tmp
runo() { # tag n file args
  local tag=$1 n=$2 f=$3; shift 3
  if late; then echo "skipped $f (time)"; return; fi
  if [ $tag = old ]; then pp=/tmp/oldhead:/tmp/site; else pp=/tmp/site; fi
  echo "+ [$tag] mpirun -n $n python -m dbfs $* --backend gpu --json $f.json" >> $R/commands.txt
  (cd $R && timeout -s KILL 90 mpirun -x CUDA_MPS_PIPE_DIRECTORY -x PYTHONPATH=$pp -n $n python3 -P -m dbfs "$@" --backend gpu --json $f.json > $f.log 2>&1) || { echo "FAILED $f"; pkill -9 -f "m dbfs"; sleep 3; }
  python3 $P/summ.py $R/$f.json | cut -c1-220
}
tests tests_4ranks 4 80 tests/test_bfs.py tests/test_grid_loop.py
tests tests_2ranks 2 100 tests/test_bfs.py tests/test_grid_loop.py
runo new 4 s24_4_new --scale 24 --roots 16
runo old 4 s24_4_old --scale 24 --roots 16
runo new 1 s24_1 --scale 24 --roots 16
runo new 4 s24_4_new2 --scale 24 --roots 16
cd $R && for f in *.log *.json; do [ -f $f ] && gzip -q $f; done; cd ..; tar czf $OUT/r.tgz r && rm -rf r

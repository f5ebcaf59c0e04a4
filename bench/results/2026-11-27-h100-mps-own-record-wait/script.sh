#!/usr/bin/env bash
# one H100 under MPS: the non-leader blocks' own-record wait and the one-column row copy (new) against 99b8d01 (old)
# $1 = a: install, lattice A/B, builds, build tests; b: search tests at 2-4 ranks, Kronecker figures
set -u
T0=$(date +%s); late() { [ $(( $(date +%s) - T0 )) -gt ${1:-500} ]; }
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
[ -d /tmp/oldhead ] || tar xJf .probe/old99b.tar.xz -C /tmp
RESULTS=$R OUT= scripts/gpu_check.sh > /tmp/install.txt 2>&1 || { tail -20 /tmp/install.txt; exit 1; }
eval "$(scripts/mps.sh start)"
{ nvidia-smi; date -u; } > $R/machine.txt 2>&1
[ -f /tmp/lat.h5 ] || python3 -m dbfs generate --lattice 2048x2048 --out /tmp/lat.h5 > $R/generate.log 2>&1 || echo "FAILED generate"
P=$PWD/.probe
tests() { # name n limit args
  local name=$1 n=$2 lim=$3; shift 3
  if late $((600 - lim - 20)); then echo "skipped $name (time)"; return; fi
  echo "+ (CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=$((100/n))) mpirun -n $n python -m pytest --with-mpi -q -m gpu $*" >> $R/commands.txt
  CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=$((100/n)) timeout -s KILL $lim mpirun -x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_ACTIVE_THREAD_PERCENTAGE -x PYTHONPATH -n $n python3 -m pytest --with-mpi -q -m gpu -p no:cacheprovider "$@" > $R/$name.log 2>&1 || { pkill -9 -f "m pytest"; sleep 3; }
  echo "$name: $(tail -1 $R/$name.log)"
}
run() { # tag n file args
  local tag=$1 n=$2 f=$3; shift 3
  if late; then echo "skipped $f (time)"; return; fi
  if [ $tag = old ]; then pp=/tmp/oldhead:/tmp/site; else pp=/tmp/site; fi
  echo "+ [$tag] mpirun -n $n python -m dbfs $* --backend gpu --json $f.json" >> $R/commands.txt
  (cd $R && timeout -s KILL 120 mpirun -x CUDA_MPS_PIPE_DIRECTORY -x PYTHONPATH=$pp -n $n python3 -P -m dbfs "$@" --backend gpu --json $f.json > $f.log 2>&1) || { echo "FAILED $f"; pkill -9 -f "m dbfs"; sleep 3; }
  python3 $P/summ.py $R/$f.json | cut -c1-300
  python3 -c "import json,sys; d=json.load(open('$R/$f.json')); print('   construction', round(d['construction_time'],3), {k: round(v,3) for k,v in d['construction_phases'].items()})" 2>/dev/null
}
if [ "$1" = a ]; then
  echo "+ python -m pytest -q -m gpu tests/test_ops_build.py" >> $R/commands.txt
  timeout -s KILL 60 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_ops_build.py > $R/tests_ops_build.log 2>&1; echo "ops_build: $(tail -1 $R/tests_ops_build.log)"
  tests tests_build_2ranks 2 90 tests/test_build.py
  tests tests_build_4ranks 4 100 tests/test_build.py
  run new 4 lat2x2_new1 --graph /tmp/lat.h5 --roots 2 --log-levels
  run old 4 lat2x2_old1 --graph /tmp/lat.h5 --roots 2 --log-levels
  run new 4 lat2x2_new2 --graph /tmp/lat.h5 --roots 2 --log-levels
  run old 4 lat2x2_old2 --graph /tmp/lat.h5 --roots 2 --log-levels
  run new 4 lat2x2_new3 --graph /tmp/lat.h5 --roots 2
  run new 2 lat2x1_new --graph /tmp/lat.h5 --roots 2 --log-levels
  run old 2 lat2x1_old --graph /tmp/lat.h5 --roots 2 --log-levels
  run new 4 s24_4x1_new --scale 24 --roots 16 --grid 4x1
  run old 4 s24_4x1_old --scale 24 --roots 16 --grid 4x1
  run new 2 s24_2x1_new --scale 24 --roots 16
  run old 2 s24_2x1_old --scale 24 --roots 16
  run new 4 lat4x1_new --graph /tmp/lat.h5 --roots 2 --log-levels --grid 4x1
  run old 4 lat2x2_old3 --graph /tmp/lat.h5 --roots 2
else
  for p in 2 3 4; do tests tests_${p}ranks $p 115 tests/test_bfs.py tests/test_grid_loop.py; done
  run new 1 s24_1 --scale 24 --roots 16
  run new 4 s24_4 --scale 24 --roots 16
  run new 1 s26_1 --scale 26 --roots 16
fi
cd $R && for f in *.log *.json; do [ -f $f ] && gzip -q $f; done; cd ..; tar czf $OUT/r.tgz r && rm -rf r

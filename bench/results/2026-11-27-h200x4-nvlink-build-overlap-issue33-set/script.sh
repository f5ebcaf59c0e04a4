#!/usr/bin/env bash
# GPUs of one host: the build's NCCL round beside the own group's placing and the root's visit in the first stretch (new) against b029c8c (old), alternating; GPU tests at 2 ranks; issue 33's set on the new code
set -u
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
T0=$(date +%s); late() { [ $(( $(date +%s) - T0 )) -gt ${1:-500} ]; }
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
RESULTS=$R OUT= scripts/gpu_check.sh > /tmp/install.txt 2>&1 || { tail -20 /tmp/install.txt; exit 1; }
{ nvidia-smi; nvidia-smi topo -m; date -u; nproc; } > $R/machine.txt 2>&1
GPUS=$(nvidia-smi -L | wc -l)
tar xJf .probe/b02.tar.xz -C /tmp
P=$PWD/.probe
pack() { (cd $OUT && tar czf r.tgz r); }
run() { # tag n file args
  local tag=$1 n=$2 f=$3 pp=/tmp/site; shift 3
  if late; then echo "skipped $f (time)"; return; fi
  if [ $tag = old ]; then pp=/tmp/oldhead:/tmp/site; fi
  echo "+ [$tag] mpirun -n $n python -m dbfs $* --backend gpu --json $f.json" >> $R/commands.txt
  (cd $R && PYTHONPATH=$pp timeout -s KILL 100 mpirun -x PYTHONPATH -n $n python3 -P -m dbfs "$@" --backend gpu --json $f.json > $f.log 2>&1) || { echo "FAILED $f"; tail -3 $R/$f.log; pkill -9 -f "m dbfs"; sleep 3; }
  python3 $P/summ.py $R/$f.json | cut -c1-200
  python3 -c "import json; d=json.load(open('$R/$f.json')); print('   construction', round(d['construction_time'],3), {k: round(v,3) for k,v in d['construction_phases'].items()}, 'peak', round(d['memory_peak']/2**30,2), 'est', round(d['memory_estimate']/2**30,2))" 2>/dev/null
  gzip -q $R/$f.json $R/$f.log; pack
}
echo "+ mpirun -n 2 python -m pytest --with-mpi -m gpu tests/test_build.py tests/test_bfs.py tests/test_grid_loop.py" >> $R/commands.txt
timeout -s KILL 170 mpirun -x PYTHONPATH -n 2 python3 -m pytest --with-mpi -q -m gpu -p no:cacheprovider tests/test_build.py tests/test_bfs.py tests/test_grid_loop.py > $R/tests_2.log 2>&1; echo "tests 2 ranks: $(grep -a -E 'passed|failed' $R/tests_2.log | tail -2 | tr '\n' ' ')"
run new 2 s28_2_first --scale 28 --roots 16
run new 2 s28_2a --scale 28 --roots 16
run old 2 s28_2_old1 --scale 28 --roots 16
run new 1 s27_1a --scale 27 --roots 16
run new 2 s28_2b --scale 28 --roots 16 --log-levels
run old 2 s28_2_old2 --scale 28 --roots 16
run new 1 s27_1b --scale 27 --roots 16
run new 2 s28_2c --scale 28 --roots 16
run new 2 s28_2_nccl --scale 28 --roots 16 --comm nccl --log-levels
run new 2 s28_2_mpi --scale 28 --roots 16 --comm mpi --log-levels
run new 2 s27_2 --scale 27 --roots 16
run new 1 s27_1c --scale 27 --roots 16
[ "$GPUS" -ge 4 ] && run new 4 s29_4 --scale 29 --roots 16
if ! late 430; then
  python3 -m dbfs generate --lattice 2048x2048 --out /tmp/lat.h5 > $R/generate.log 2>&1 || echo "FAILED generate"
  run new 1 lat_1 --graph /tmp/lat.h5 --roots 4
  run new 2 lat_2 --graph /tmp/lat.h5 --roots 4
fi

#!/usr/bin/env bash
# two H100: the link wake (old = the code before it), issue 33's set
set -u
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
T0=$(date +%s); late() { [ $(( $(date +%s) - T0 )) -gt ${1:-520} ]; }
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
tar xJf .probe/oldhead.tar.xz -C /tmp
RESULTS=$R OUT= scripts/gpu_check.sh > /tmp/install.txt 2>&1 || { tail -20 /tmp/install.txt; exit 1; }
{ nvidia-smi; nvidia-smi topo -m; nvidia-smi nvlink -gLowPwrInfo -i 0; date -u; nproc; git log --oneline -1; } > $R/machine.txt 2>&1
python3 -m dbfs generate --lattice 2048x2048 --out /tmp/lat.h5 > $R/generate.log 2>&1 || echo "FAILED generate"
P=$PWD/.probe
cd $R
run() { # tag n file args
  local tag=$1 n=$2 f=$3; shift 3
  if late; then echo "skipped $f (time)"; return; fi
  if [ $tag = old ]; then pp=/tmp/oldhead:/tmp/site; else pp=/tmp/site; fi
  echo "+ [$tag] mpirun -n $n python -m dbfs $* --backend gpu --json $f.json" >> commands.txt
  timeout -s KILL 150 mpirun -x PYTHONPATH=$pp -n $n python3 -P -m dbfs "$@" --backend gpu --json $f.json > $f.log 2>&1 || { echo "FAILED $f"; pkill -9 -f "m dbfs"; sleep 3; }
  python3 $P/summ.py $f.json | cut -c1-400
}
run new 1 lat1 --graph /tmp/lat.h5 --roots 2
run new 2 lat2 --graph /tmp/lat.h5 --roots 2
run old 2 lat2_old --graph /tmp/lat.h5 --roots 2
run new 2 lat2_levels --graph /tmp/lat.h5 --roots 2 --log-levels
run new 1 s27_1 --scale 27 --roots 16
run new 2 s28_auto --scale 28 --roots 16
run old 2 s28_old --scale 28 --roots 16
run new 2 s28_auto_levels --scale 28 --roots 16 --log-levels
run new 2 s27_strong --scale 27 --roots 16
run new 2 s28_auto_b --scale 28 --roots 16
cd $OLDPWD
if ! late 470; then
echo "+ mpirun -n 2 python -m pytest --with-mpi -q -m gpu tests/test_bfs.py tests/test_grid_loop.py" >> $R/commands.txt
timeout -s KILL 120 mpirun -x PYTHONPATH -n 2 python3 -m pytest --with-mpi -q -m gpu -p no:cacheprovider tests/test_bfs.py tests/test_grid_loop.py > $R/tests_2gpus.log 2>&1 || { pkill -9 -f "m pytest"; sleep 3; }
echo "tests 2 GPUs: $(tail -1 $R/tests_2gpus.log)"
fi
cd $R && for f in *.log *.json; do gzip -q $f; done; cd ..; tar czf $OUT/r.tgz r && rm -rf r

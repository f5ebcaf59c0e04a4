#!/usr/bin/env bash
# two GPUs: the bottom-up frontier stored into the column peers' bitmaps (new) against ce6e2d0 (old)
set -u
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
T0=$(date +%s); late() { [ $(( $(date +%s) - T0 )) -gt ${1:-400} ]; }
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
RESULTS=$R OUT= scripts/gpu_check.sh > /tmp/install.txt 2>&1 || { tail -20 /tmp/install.txt; exit 1; }
{ nvidia-smi; nvidia-smi topo -m; date -u; nproc; } > $R/machine.txt 2>&1
tar xJf .probe/ce6.tar.xz -C /tmp    # commit ce6e2d0's dbfs package as /tmp/oldhead/dbfs
echo "+ python -m pytest -q -m gpu tests/test_message.py tests/test_ops_bottom_up.py tests/test_ops.py" >> $R/commands.txt
timeout -s KILL 100 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_message.py tests/test_ops_bottom_up.py tests/test_ops.py > $R/tests_ops.log 2>&1
echo "tests ops 1 GPU: $(tail -1 $R/tests_ops.log)"
P=$PWD/.probe
run() { # tag n file args
  local tag=$1 n=$2 f=$3; shift 3
  if late; then echo "skipped $f (time)"; return; fi
  if [ $tag = old ]; then pp=/tmp/oldhead:/tmp/site; else pp=/tmp/site; fi
  echo "+ [$tag] mpirun -n $n python -m dbfs $* --backend gpu --json $f.json" >> $R/commands.txt
  (cd $R && timeout -s KILL 120 mpirun -x PYTHONPATH=$pp -n $n python3 -P -m dbfs "$@" --backend gpu --json $f.json > $f.log 2>&1) || { echo "FAILED $f"; tail -5 $R/$f.log; pkill -9 -f "m dbfs"; sleep 3; }
  python3 $P/summ.py $R/$f.json | cut -c1-220
}
run new 2 s28_new1 --scale 28 --roots 16 --log-levels
run old 2 s28_old1 --scale 28 --roots 16
run new 2 s28_new2 --scale 28 --roots 16
run old 2 s28_old2 --scale 28 --roots 16
run new 1 s27_1 --scale 27 --roots 16
echo "+ mpirun -n 2 python -m pytest --with-mpi -q -m gpu tests/test_grid_loop.py tests/test_bfs.py" >> $R/commands.txt
left=$(( 560 - ($(date +%s) - T0) ))
timeout -s KILL $left mpirun -x PYTHONPATH -n 2 python3 -m pytest --with-mpi -q -m gpu -p no:cacheprovider tests/test_grid_loop.py tests/test_bfs.py > $R/tests_2gpus.log 2>&1 || { pkill -9 -f "m pytest"; sleep 2; }
echo "tests 2 GPUs ($left s): $(tail -1 $R/tests_2gpus.log)"
cd $R && for f in *.log *.json; do [ -f $f ] && gzip -q $f; done; cd ..; tar czf $OUT/r.tgz r && rm -rf r

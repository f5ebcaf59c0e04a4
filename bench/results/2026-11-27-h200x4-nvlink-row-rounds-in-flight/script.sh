#!/usr/bin/env bash
# the row copy's rounds in flight against 98c6c9e: construction of 28 on 2 and 27 on 1, alternating; GPU tests
set -u
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
T0=$(date +%s); late() { [ $(( $(date +%s) - T0 )) -gt ${1:-330} ]; }
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
RESULTS=$R OUT= scripts/gpu_check.sh > /tmp/install.txt 2>&1 || { tail -20 /tmp/install.txt; exit 1; }
tar xJf .probe/old98c6.tar.xz -C /tmp
{ nvidia-smi; nvidia-smi topo -m; date -u; nproc
  ( cd /tmp; python3 -P -c "import dbfs.build as c; print('new: _send_row_round present:', hasattr(c._Passes, '_send_row_round'), c.__file__)" )
  ( cd /tmp; PYTHONPATH=/tmp/oldhead:/tmp/site python3 -P -c "import dbfs.build as c; print('old: _send_row_round present:', hasattr(c._Passes, '_send_row_round'), c.__file__)" ); } > $R/machine.txt 2>&1
tail -2 $R/machine.txt
P=$PWD/.probe
pack() { (cd $OUT && tar cf r.tar r); }
run() { # old|new n file args
  local which=$1 n=$2 f=$3; shift 3
  if late; then echo "skipped $f (time)"; return; fi
  local pp=/tmp/site; [ $which = old ] && pp=/tmp/oldhead:/tmp/site
  echo "+ ($which) mpirun -n $n python -m dbfs $* --backend gpu --json $f.json" >> $R/commands.txt
  (cd $R && PYTHONPATH=$pp timeout -s KILL 100 mpirun -x PYTHONPATH -n $n python3 -P -m dbfs "$@" --backend gpu --json $f.json > $f.log 2>&1) || { echo "FAILED $f"; tail -3 $R/$f.log; pkill -9 -f "m dbfs"; sleep 3; }
  python3 $P/summ.py $R/$f.json | head -1 | cut -c1-200
  grep -h "construction:" $R/$f.log | cut -c16-190
  xz -q $R/$f.json $R/$f.log; pack
}
run new 2 warm_2 --scale 22 --roots 1
run new 1 s27_1_new1 --scale 27 --roots 4
run new 2 s28_2_new1 --scale 28 --roots 4
run old 2 s28_2_old1 --scale 28 --roots 4
run new 2 s28_2_new2 --scale 28 --roots 4
run old 2 s28_2_old2 --scale 28 --roots 4
run new 2 s28_2_new3 --scale 28 --roots 4
if ! late 310; then
  (timeout 100 mpirun -x PYTHONPATH -n 2 python3 -m pytest --with-mpi -q -x -m gpu -p no:cacheprovider --color=no tests/test_build.py > $R/gpu_tests_2gpus.log 2>&1); tail -1 $R/gpu_tests_2gpus.log
fi
cd $R && for f in *.log; do [ -f $f ] && xz -q $f; done; pack

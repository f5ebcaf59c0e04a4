#!/usr/bin/env bash
# the rows' hub entries first (+ the large kernel's first test alone) against 1c4baa4 and the ordering alone (f63ffc4):
# 27 on 1 and 29 on 4, alternating; 28 on 2 (construction); GPU tests of the changed kernels and the build at 2 GPUs
set -u
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
T0=$(date +%s); late() { [ $(( $(date +%s) - T0 )) -gt ${1:-520} ]; }
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
RESULTS=$R OUT= scripts/gpu_check.sh > /tmp/install.txt 2>&1 || { tail -20 /tmp/install.txt; exit 1; }
tar xJf .probe/old1c4.tar.xz -C /tmp; tar xJf .probe/ordf63.tar.xz -C /tmp
{ nvidia-smi; nvidia-smi topo -m; date -u; nproc
  for t in new:/tmp/site old:/tmp/old1c4:/tmp/site order:/tmp/ordf63:/tmp/site; do
    ( cd /tmp; PYTHONPATH=${t#*:} python3 -P -c "import dbfs.build as b, dbfs.kernels as k, os; print('${t%%:*}:', b.__file__, 'row_order' in open(b.__file__).read(), 'bottom_up_step_large' in open(os.path.join(k.DIRECTORY, 'bottom_up.cu')).read())" ); done; } > $R/machine.txt 2>&1
tail -3 $R/machine.txt
GPUS=$(nvidia-smi -L | wc -l)
P=$PWD/.probe
pack() { (cd $OUT && tar cf r.tar r); }
run() { # new|old|order n file args
  local which=$1 n=$2 f=$3; shift 3
  if late; then echo "skipped $f (time)"; return; fi
  local pp=/tmp/site; [ $which = old ] && pp=/tmp/old1c4:/tmp/site; [ $which = order ] && pp=/tmp/ordf63:/tmp/site
  echo "+ ($which) mpirun -n $n python -m dbfs $* --backend gpu --json $f.json" >> $R/commands.txt
  (cd $R && PYTHONPATH=$pp timeout -s KILL 100 mpirun -x PYTHONPATH -n $n python3 -P -m dbfs "$@" --backend gpu --json $f.json > $f.log 2>&1) || { echo "FAILED $f"; tail -3 $R/$f.log; pkill -9 -f "m dbfs"; sleep 3; }
  python3 $P/summ.py $R/$f.json | head -1 | cut -c1-200
  python3 -c "import json; d=json.load(open('$R/$f.json')); print('   construction', round(d['construction_time'],3), {k: round(v,3) for k,v in d['construction_phases'].items()})" 2>/dev/null
  xz -q $R/$f.json $R/$f.log; pack
}
(timeout 90 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_ops_row_order.py tests/test_ops_bottom_up.py tests/test_ops_owner_groups.py > $R/gpu_tests_ops.log 2>&1); tail -1 $R/gpu_tests_ops.log
run new 2 warm_2 --scale 22 --roots 1
run new 4 s29_4_new1 --scale 29 --roots 16
run old 4 s29_4_old1 --scale 29 --roots 16
run new 1 s27_1_new1 --scale 27 --roots 16
run old 1 s27_1_old1 --scale 27 --roots 16
run order 4 s29_4_ord1 --scale 29 --roots 16
run new 2 s28_2_new1 --scale 28 --roots 16
run new 4 s29_4_new2 --scale 29 --roots 16 --log-levels
run old 4 s29_4_old2 --scale 29 --roots 16
run new 1 s27_1_new2 --scale 27 --roots 16 --log-levels
run old 1 s27_1_old2 --scale 27 --roots 16
run order 1 s27_1_ord1 --scale 27 --roots 16
if ! late 470; then (timeout 80 mpirun -n 2 -x PYTHONPATH python3 -m pytest --with-mpi -q -m gpu -p no:cacheprovider tests/test_build.py > $R/gpu_tests_build_2gpus.log 2>&1); tail -1 $R/gpu_tests_build_2gpus.log; fi
cd $R && for f in *.log; do [ -f $f ] && xz -q $f; done; pack

#!/usr/bin/env bash
# one-kernel routing and grouping against 7070794: construction of 28 on 2, alternating; GPU tests of the new kernels
set -u
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
T0=$(date +%s); late() { [ $(( $(date +%s) - T0 )) -gt ${1:-230} ]; }
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
RESULTS=$R OUT= scripts/gpu_check.sh > /tmp/install.txt 2>&1 || { tail -20 /tmp/install.txt; exit 1; }
tar xJf .probe/old7070.tar.xz -C /tmp
{ nvidia-smi; nvidia-smi topo -m; date -u; nproc
  ( cd /tmp; python3 -P -c "import dbfs.ops.owner_groups as c; print('new: group_tuples present:', hasattr(c, 'group_tuples'), c.__file__)" )
  ( cd /tmp; PYTHONPATH=/tmp/oldhead:/tmp/site python3 -P -c "import dbfs.ops.owner_groups as c; print('old: group_tuples present:', hasattr(c, 'group_tuples'), c.__file__)" ); } > $R/machine.txt 2>&1
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
(timeout 60 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_ops_owner_groups.py > $R/gpu_tests_owner_groups.log 2>&1); tail -1 $R/gpu_tests_owner_groups.log
run new 2 warm_2 --scale 22 --roots 1
run new 2 s28_2_new1 --scale 28 --roots 4
run old 2 s28_2_old1 --scale 28 --roots 4
run new 2 s28_2_new2 --scale 28 --roots 4
run old 2 s28_2_old2 --scale 28 --roots 4
cd $R && for f in *.log; do [ -f $f ] && xz -q $f; done; pack

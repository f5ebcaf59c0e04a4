#!/usr/bin/env bash
# two GPUs: the bottom-up step with its bitmap kept in L2 (new) against the commit before (old)
set -u
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
T0=$(date +%s); late() { [ $(( $(date +%s) - T0 )) -gt ${1:-510} ]; }
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
tar xJf .probe/head.tar.xz -C /tmp
RESULTS=$R OUT= scripts/gpu_check.sh > /tmp/install.txt 2>&1 || { tail -20 /tmp/install.txt; exit 1; }
{ nvidia-smi; nvidia-smi topo -m; date -u; nproc; } > $R/machine.txt 2>&1
P=$PWD/.probe
run() { # tag n file args
  local tag=$1 n=$2 f=$3; shift 3
  if late; then echo "skipped $f (time)"; return; fi
  if [ $tag = old ]; then pp=/tmp/oldhead:/tmp/site; else pp=/tmp/site; fi
  echo "+ [$tag] mpirun -n $n python -m dbfs $* --backend gpu --json $f.json" >> $R/commands.txt
  (cd $R && timeout -s KILL 150 mpirun -x PYTHONPATH=$pp -n $n python3 -P -m dbfs "$@" --backend gpu --json $f.json > $f.log 2>&1) || { echo "FAILED $f"; pkill -9 -f "m dbfs"; sleep 3; }
  python3 $P/summ.py $R/$f.json | cut -c1-300
  python3 -c "import json,sys; d=json.load(open('$R/$f.json')); print('   construction', round(d['construction_time'],3), {k: round(v,3) for k,v in d['construction_phases'].items()}, d.get('construction_comm'))" 2>/dev/null
}
echo "+ python -m pytest -q -m gpu tests/test_ops_bottom_up.py" >> $R/commands.txt
timeout -s KILL 100 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_ops_bottom_up.py > $R/tests_ops_bottom_up.log 2>&1
echo "tests ops bottom-up: $(tail -1 $R/tests_ops_bottom_up.log)"
run new 1 s27_1_new1 --scale 27 --roots 16
run old 1 s27_1_old1 --scale 27 --roots 16
run new 2 s28_new1 --scale 28 --roots 16 --log-levels
run old 2 s28_old1 --scale 28 --roots 16 --log-levels
run new 2 s28_new2 --scale 28 --roots 16
run old 2 s28_old2 --scale 28 --roots 16
run new 1 s27_1_new2 --scale 27 --roots 16 --log-levels
run old 1 s27_1_old2 --scale 27 --roots 16 --log-levels
cd $R && for f in *.log *.json; do [ -f $f ] && gzip -q $f; done; cd ..; tar czf $OUT/r.tgz r && rm -rf r

#!/usr/bin/env bash
# one GPU: the search GPU tests (1 rank), then c5961c0 against HEAD: Kronecker 24 and 26 on one rank
set -u
T0=$(date +%s); late() { [ $(( $(date +%s) - T0 )) -gt ${1:-420} ]; }
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
RESULTS=$R OUT= scripts/gpu_check.sh > $R/install.log 2>&1 || { tail -20 $R/install.log; exit 1; }
{ nvidia-smi; date -u; nproc; } > $R/machine.txt 2>&1
P=$PWD/.probe
tar xJf $P/hc596.tar.xz -C /tmp
pack() { (cd $OUT && tar cf r.tar r); }
echo "+ python -m pytest -m gpu tests/test_bfs.py tests/test_validate.py tests/test_graph_runs.py" >> $R/commands.txt
timeout -s KILL 170 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_bfs.py tests/test_validate.py tests/test_graph_runs.py > $R/tests_search.log 2>&1
echo "tests_search: $(grep -aE 'passed|failed|error' $R/tests_search.log | tail -1)"; grep -aE "^FAILED|^E  " $R/tests_search.log | head -12
xz -q $R/tests_search.log; pack
run() { # tree n file args
  local tree=$1 n=$2 f=$3; shift 3
  if late; then echo "skipped $f (time)"; return; fi
  local pp=/tmp/site; [ $tree = old ] && pp=/tmp/hc596:/tmp/site
  echo "+ [$tree] mpirun -n $n python -m dbfs $* --backend gpu --json $f.json" >> $R/commands.txt
  (cd $R && PYTHONPATH=$pp timeout -s KILL 150 mpirun -x PYTHONPATH -n $n python3 -P -m dbfs "$@" --backend gpu --json $f.json > $f.log 2>&1) || { echo "FAILED $f"; tail -3 $R/$f.log; pkill -9 -f "m dbfs"; sleep 2; }
  python3 $P/summ.py $R/$f.json | head -1 | cut -c1-200
  xz -q $R/$f.json $R/$f.log; pack
}
run new 1 s24_1_new --scale 24 --roots 16
run old 1 s24_1_old --scale 24 --roots 16
run new 1 s26_1_new --scale 26 --roots 8
run old 1 s26_1_old --scale 26 --roots 8
run new 1 s24_1_new2 --scale 24 --roots 16
pack

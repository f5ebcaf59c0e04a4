#!/usr/bin/env bash
# one H100: scale 29 on one GPU with the validator's column table lent by the search; scale 28; the validation GPU tests
set -u
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
RESULTS=$R OUT= scripts/gpu_check.sh > /tmp/install.txt 2>&1 || { tail -20 /tmp/install.txt; exit 1; }
{ nvidia-smi; date -u; nproc; ( cd /tmp; python3 -P -c "import dbfs.search_state as s; print('columns lent to the validation:', 'columns' in s.idle_after_search(type('G', (), {'R': 1, 'C': 1})()))" ); } > $R/machine.txt 2>&1
P=$PWD/.probe
run() { # n file args
  local n=$1 f=$2; shift 2
  echo "+ mpirun -n $n python -m dbfs $* --backend gpu --json $f.json" >> $R/commands.txt
  (cd $R && timeout -s KILL 200 mpirun -x PYTHONPATH -n $n python3 -P -m dbfs "$@" --backend gpu --json $f.json > $f.log 2>&1) || { echo "FAILED $f"; tail -5 $R/$f.log; pkill -9 -f "m dbfs"; sleep 3; }
  python3 $P/summ.py $R/$f.json | cut -c1-200
  grep "device memory peak\|available\|does not fit" $R/$f.log | head -3
}
echo "+ python -m pytest -q -m gpu tests/test_validate.py tests/test_ops_validate.py" >> $R/commands.txt
timeout -s KILL 150 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_validate.py tests/test_ops_validate.py > $R/tests_1gpu.log 2>&1
echo "1 GPU: $(grep -E 'passed|failed' $R/tests_1gpu.log | tail -1)"
run 1 s29_1 --scale 29 --roots 16
run 1 s24_1 --scale 24 --roots 16
run 1 s28_1 --scale 28 --roots 16
cd $R && for f in *.log *.json; do [ -f $f ] && xz -q $f; done; cd ..; tar cf $OUT/r.tar r && rm -rf r

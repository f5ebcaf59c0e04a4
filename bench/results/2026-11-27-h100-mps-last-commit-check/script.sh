#!/usr/bin/env bash
# one H100 under MPS: the session's last commit, a sanity pass (ops tests, 1, 2 and 4 ranks)
set -u
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
RESULTS=$R OUT= scripts/gpu_check.sh > /tmp/install.txt 2>&1 || { tail -20 /tmp/install.txt; exit 1; }
{ nvidia-smi; date -u; nproc; } > $R/machine.txt 2>&1
echo "+ python -m pytest -q -m gpu tests/test_ops_bottom_up.py tests/test_message.py" >> $R/commands.txt
timeout -s KILL 90 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_ops_bottom_up.py tests/test_message.py > $R/tests_ops.log 2>&1
echo "ops: $(tail -1 $R/tests_ops.log)"
eval "$(scripts/mps.sh start)"
P=$PWD/.probe
for spec in "1 s22_1" "2 s22_2" "4 s22_4"; do
  set -- $spec; n=$1; f=$2
  echo "+ mpirun -n $n python -m dbfs --scale 22 --roots 8 --backend gpu --json $f.json" >> $R/commands.txt
  (cd $R && timeout -s KILL 60 mpirun -x CUDA_MPS_PIPE_DIRECTORY -x PYTHONPATH -n $n python3 -P -m dbfs --scale 22 --roots 8 --backend gpu --json $f.json > $f.log 2>&1) || { echo "FAILED $f"; tail -3 $R/$f.log; }
  python3 $P/summ.py $R/$f.json | cut -c1-200
done
cd $R && for f in *.log *.json; do [ -f $f ] && xz -q $f; done; cd ..; tar cf $OUT/r.tar r && rm -rf r

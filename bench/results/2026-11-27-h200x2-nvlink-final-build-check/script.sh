#!/usr/bin/env bash
# the final commit: the build's GPU tests at 1 and 2 GPUs, Kronecker 28 on two and 27 on one (construction)
set -u
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
RESULTS=$R OUT= scripts/gpu_check.sh > /tmp/install.txt 2>&1 || { tail -20 /tmp/install.txt; exit 1; }
{ nvidia-smi; nvidia-smi topo -m; date -u; nproc; } > $R/machine.txt 2>&1
P=$PWD/.probe
echo "+ mpirun -n 2 python -m pytest --with-mpi -m gpu tests/test_build.py tests/test_ops_owner_groups.py tests/test_ops_build.py" >> $R/commands.txt
timeout -s KILL 100 mpirun -x PYTHONPATH -n 2 python3 -m pytest --with-mpi -q -m gpu -p no:cacheprovider tests/test_build.py tests/test_ops_owner_groups.py tests/test_ops_build.py > $R/tests_2gpus.log 2>&1
echo "2 GPUs: $(strings $R/tests_2gpus.log | grep -E 'passed|failed' | tail -1)"
for spec in "2 s28_2 28" "1 s27_1 27" "2 s28_2b 28"; do
  set -- $spec; n=$1; f=$2; s=$3
  echo "+ mpirun -n $n python -m dbfs --scale $s --roots 16 --backend gpu --json $f.json" >> $R/commands.txt
  (cd $R && timeout -s KILL 90 mpirun -x PYTHONPATH -n $n python3 -P -m dbfs --scale $s --roots 16 --backend gpu --json $f.json > $f.log 2>&1) || { echo "FAILED $f"; tail -3 $R/$f.log; }
  python3 $P/summ.py $R/$f.json | cut -c1-200
  python3 -c "import json; d=json.load(open('$R/$f.json')); print('   construction', round(d['construction_time'],3), {k: round(v,3) for k,v in d['construction_phases'].items()})" 2>/dev/null
done
cd $R && for f in *.log *.json; do [ -f $f ] && xz -q $f; done; cd ..; tar cf $OUT/r.tar r && rm -rf r

#!/usr/bin/env bash
# probe: the direction rule's alpha with the frontier summary, 27 on 1 and 29 on 4
set -u
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
RESULTS=$R OUT= scripts/gpu_check.sh > /tmp/install.txt 2>&1 || { tail -20 /tmp/install.txt; exit 1; }
P=$PWD/.probe
run() { local n=$1 f=$2; shift 2
  echo "+ mpirun -n $n python -m dbfs $* --backend gpu --json $f.json" >> $R/commands.txt
  (cd $R && timeout -s KILL 100 mpirun -x PYTHONPATH -n $n python3 -P -m dbfs "$@" --backend gpu --json $f.json > $f.log 2>&1) || { echo "FAILED $f"; tail -3 $R/$f.log; }
  python3 $P/summ.py $R/$f.json | cut -c1-200; xz -q $R/$f.json $R/$f.log; (cd $OUT && tar cf r.tar r); }
run 4 s29_4_a20 --scale 29 --roots 16 --alpha 20
run 1 s27_1_a20 --scale 27 --roots 16 --alpha 20
run 4 s29_4_a28 --scale 29 --roots 16 --alpha 28
run 1 s27_1_a28 --scale 27 --roots 16 --alpha 28
run 4 s29_4_a14 --scale 29 --roots 16

#!/usr/bin/env bash
# one H100 under MPS, HEAD: 22 on 16 PEs (default 16x1) with the per-level log, and bound to cores
set -u
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
RESULTS=$R OUT= scripts/gpu_check.sh > /tmp/install.txt 2>&1 || { tail -20 /tmp/install.txt; exit 1; }
{ nvidia-smi; date -u; nproc; } > $R/machine.txt 2>&1
P=$PWD/.probe
pack() { (cd $OUT && tar cf r.tar r); }
run() { # n file mpirun-extra -- args
  local n=$1 f=$2 extra=$3; shift 3
  echo "+ mpirun $extra -n $n python -m dbfs $* --backend gpu --json $f.json" >> $R/commands.txt
  (cd $R && timeout -s KILL 120 mpirun $extra -x CUDA_MPS_PIPE_DIRECTORY -x PYTHONPATH -n $n python3 -P -m dbfs "$@" --backend gpu --json $f.json > $f.log 2>&1) || { echo "FAILED $f"; tail -3 $R/$f.log; pkill -9 -f "m dbfs"; sleep 3; }
  python3 $P/summ.py $R/$f.json | head -1 | cut -c1-200
  xz -q $R/$f.json $R/$f.log; pack
}
eval "$(scripts/mps.sh start)"
run 1 s22_1 "" --scale 22 --roots 8
run 16 s22_16_log "" --scale 22 --roots 8 --comm nvshmem --log-levels
run 16 s22_16_bound "--bind-to core" --scale 22 --roots 8 --comm nvshmem
run 16 s22_16 "" --scale 22 --roots 8 --comm nvshmem

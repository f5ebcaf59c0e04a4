#!/usr/bin/env bash
# one H100 under MPS: timeline of 16 PEs (and 4) at scale 22 with the in-place stretch edges
set -u
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
RESULTS=$R OUT= scripts/gpu_check.sh > /tmp/install.txt 2>&1 || { tail -20 /tmp/install.txt; exit 1; }
P=$PWD/.probe
eval "$(scripts/mps.sh start)"
tl() { # name n args
  local f=$1 n=$2; shift 2
  mkdir -p $R/$f
  (cd $R/$f && timeout -s KILL 100 mpirun -x CUDA_MPS_PIPE_DIRECTORY -x PYTHONPATH -n $n python3 -P $P/tl.py "$@" --backend gpu --json $f.json > $f.log 2>&1) || echo "FAILED $f"
  python3 $P/summ.py $R/$f/$f.json | head -1
  python3 $P/tla.py $R/$f > $R/$f.txt 2>&1; head -30 $R/$f.txt
}
tl t16log 16 --scale 22 --roots 8 --comm nvshmem --log-levels
tl t16 16 --scale 22 --roots 8 --comm nvshmem
tl t4log 4 --scale 22 --roots 8 --comm nvshmem --log-levels
(cd $OUT && tar cJf r.tar.xz r)

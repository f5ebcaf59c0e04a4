#!/usr/bin/env bash
# one H100 under MPS: timeline of 16 PEs at scale 22, small host copies as memcpy nodes or as a kernel
set -u
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
RESULTS=$R OUT= scripts/gpu_check.sh > /tmp/install.txt 2>&1 || { tail -20 /tmp/install.txt; exit 1; }
P=$PWD/.probe
eval "$(scripts/mps.sh start)"
tl() { # name n env args
  local f=$1 n=$2 e=$3; shift 3
  mkdir -p $R/$f
  (cd $R/$f && env $e timeout -s KILL 100 mpirun -x CUDA_MPS_PIPE_DIRECTORY -x PYTHONPATH -x MAPPED_COPY -n $n python3 -P $P/tl.py "$@" --backend gpu --json $f.json > $f.log 2>&1) || echo "FAILED $f"
  python3 $P/summ.py $R/$f/$f.json | head -1
  python3 $P/tla.py $R/$f > $R/$f.txt 2>&1; sed -n 2,12p $R/$f.txt
}
export MAPPED_COPY=
tl m16log 16 MAPPED_COPY=1 --scale 22 --roots 8 --comm nvshmem --log-levels
tl c16 16 "" --scale 22 --roots 8 --comm nvshmem
tl m16 16 MAPPED_COPY=1 --scale 22 --roots 8 --comm nvshmem
tl c16b 16 "" --scale 22 --roots 8 --comm nvshmem
tl m16b 16 MAPPED_COPY=1 --scale 22 --roots 8 --comm nvshmem
(cd $OUT && tar cJf r.tar.xz r)

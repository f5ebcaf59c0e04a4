#!/usr/bin/env bash
set -u
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
{ nvidia-smi -L; nvidia-smi topo -m; nvidia-smi nvlink -s -i 0 | head -8; nvidia-smi nvlink -h 2>&1 | grep -i -A1 "pow\|thres"; nvidia-smi -q -i 0 | grep -i -A3 "nvlink\|power state\|Perf"; } > $OUT/machine.txt 2>&1
timeout -s KILL 120 mpirun -x PYTHONPATH -n 2 python3 .probe/link_idle.py > $OUT/link_idle.txt 2>&1; echo rc $?
cat $OUT/link_idle.txt | tail -60

#!/usr/bin/env bash
set -u
R=$OUT/r; mkdir -p $R
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
RESULTS=$R OUT= scripts/gpu_check.sh > /tmp/install.txt 2>&1 || { tail -20 /tmp/install.txt; exit 1; }
{ nvidia-smi -L; nvidia-smi topo -m; } > $R/machine.txt
P=$PWD/.probe
cd /tmp
timeout 150 python3 -P $P/build_probe.py 27 2>&1 | grep -v "^\[dbfs\]" | tee $R/probe_s27_1.txt
timeout 200 mpirun -x PYTHONPATH -n 2 python3 -P $P/build_probe.py 28 2>&1 | grep -v "^\[dbfs\]" | tee $R/probe_s28_2.txt
cd $OUT && tar cf r.tar r
# and, on one H100 in another start: .probe/micro.sh (micro.py 27)

#!/usr/bin/env bash
# the construction kernels' GPU tests at one rank on the final tree (test_ops_build)
set -u
R=$OUT/r; mkdir -p $R
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/pytest_mpi*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site:$PWD
{ nvidia-smi -L; date -u; git log --oneline -1; } > $R/machine.txt 2>&1
echo "+ python -m pytest -m gpu tests/test_ops_build.py" > $R/commands.txt
timeout -s KILL 150 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_ops_build.py > $R/tests1.log 2>&1
echo "tests1: $(grep -aE 'passed|failed|error' $R/tests1.log | tail -1)"; grep -aE "^FAILED|^E  " $R/tests1.log | head -8

#!/usr/bin/env bash
# one H100: the grouping kernels' GPU tests after owner_scatter and owner_tuple_scatter share scatter_tiles;
# the build's GPU tests on one rank and at 2 PEs under MPS (the NVSHMEM build groups with owner_scatter)
set -u
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
RESULTS=$R OUT= scripts/gpu_check.sh > /tmp/install.txt 2>&1 || { tail -20 /tmp/install.txt; exit 1; }
nvidia-smi -L > $R/machine.txt; git log -1 --format=%h >> $R/machine.txt 2>/dev/null
echo "+ python -m pytest -m gpu tests/test_ops_owner_groups.py tests/test_ops_build.py tests/test_build.py" > $R/commands.txt
timeout 150 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_ops_owner_groups.py tests/test_ops_build.py tests/test_build.py > $R/gpu_tests_1.log 2>&1; tail -1 $R/gpu_tests_1.log
eval "$(scripts/mps.sh start)"
echo "+ (MPS) mpirun -n 2 python -m pytest --with-mpi -m gpu tests/test_build.py" >> $R/commands.txt
timeout 150 mpirun -x PYTHONPATH -x CUDA_MPS_PIPE_DIRECTORY -n 2 python3 -m pytest --with-mpi -q -m gpu -p no:cacheprovider tests/test_build.py > $R/gpu_tests_2pes.log 2>&1; strings $R/gpu_tests_2pes.log | grep -E "passed|failed" | tail -1
grep -E "FAILED|Error" $R/gpu_tests_*.log | head -10
cd $OUT && tar cf r.tar r

#!/usr/bin/env bash
# one H200: message.put in its one form: the message kernels against their twins (1 rank); NVSHMEM BFS GPU
# tests at 2 PEs under MPS (the build's and the rounds' puts)
set -u
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
RESULTS=$R OUT= scripts/gpu_check.sh > $R/install.log 2>&1 || { tail -20 $R/install.log; exit 1; }
{ nvidia-smi; date -u; nproc; } > $R/machine.txt 2>&1
timeout 90 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_message.py > $R/t_message.log 2>&1; echo "message tests: $(tail -n 1 $R/t_message.log)"
eval "$(scripts/mps.sh start)"
CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50 timeout 120 mpirun -x PYTHONPATH -x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_ACTIVE_THREAD_PERCENTAGE -n 2 python3 -m pytest --with-mpi -q -m gpu -p no:cacheprovider tests/test_bfs.py -k nvshmem > $R/t_bfs2.log 2>&1; echo "tests 2 PEs: $(tail -n 1 $R/t_bfs2.log)"; grep -m2 -B2 -A20 'Error' $R/t_bfs2.log | head -40
scripts/mps.sh stop >/dev/null 2>&1

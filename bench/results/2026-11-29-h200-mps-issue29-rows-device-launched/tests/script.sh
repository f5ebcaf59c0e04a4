#!/usr/bin/env bash
# one H200 under MPS, HEAD: the GPU tests of the device-launched search (schedule kernel vs twin and the grid
# loop's at 1 rank; the NVSHMEM BFS and the grid loop's GPU tests at 2, 3 and 4 PEs, each its share of the GPU),
# then a warm-up that compiles the 16-rank kernels
set -u
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
RESULTS=$R GPU_TESTS="tests/test_schedule.py tests/test_grid_loop.py" OUT= timeout 200 scripts/gpu_check.sh tests > $R/tests_1.log 2>&1
echo "1 rank: rc $? $(grep -aE 'passed|failed|error' $R/gpu_tests.log | tail -1)"
{ nvidia-smi; date -u; nproc; git log -1 --format=%H 2>/dev/null; } >> $R/machine.txt 2>&1
eval "$(scripts/mps.sh start)"
for p in 2 3 4; do
  echo "+ (MPS, CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=$((100 / p))) mpirun -n $p python -m pytest --with-mpi -m gpu tests/test_bfs.py tests/test_grid_loop.py -k 'nvshmem or launches'" >> $R/commands.txt
  CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=$((100 / p)) timeout -s KILL 150 mpirun -x PYTHONPATH -x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_ACTIVE_THREAD_PERCENTAGE -n $p python3 -m pytest --with-mpi -q -m gpu -p no:cacheprovider tests/test_bfs.py tests/test_grid_loop.py -k "nvshmem or launches" > $R/tests_${p}pes.log 2>&1
  echo "$p PEs: $(grep -aE 'passed|failed|error' $R/tests_${p}pes.log | tail -1)"
  (cd $OUT && tar cf r.tar r)
done
(cd /tmp && timeout -s KILL 150 mpirun -x PYTHONPATH -x CUDA_MPS_PIPE_DIRECTORY -n 16 python3 -m dbfs --scale 20 --roots 2 --grid 4x4 --comm nvshmem --backend gpu > $R/warm.log 2>&1); tail -n 2 $R/warm.log
scripts/mps.sh stop >/dev/null 2>&1
(cd $OUT && tar cf r.tar r)

#!/usr/bin/env bash
# one H200: the final tree's bottom-up kernel tests (1 rank) and NVSHMEM BFS GPU tests at 4 and 2 PEs
# under MPS; 22 on 4x4 once
set -u
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
RESULTS=$R OUT= scripts/gpu_check.sh > $R/install.log 2>&1 || { tail -20 $R/install.log; exit 1; }
{ nvidia-smi; date -u; nproc; } > $R/machine.txt 2>&1
pack() { (cd $OUT && tar cf r.tar r); }
timeout 120 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_ops_bottom_up.py > $R/t_kernel.log 2>&1; echo "kernel tests: $(tail -1 $R/t_kernel.log)"
eval "$(scripts/mps.sh start)"
for n in 4 2; do
  CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=$(( 100 / n )) timeout 150 mpirun -x PYTHONPATH -x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_ACTIVE_THREAD_PERCENTAGE -n $n python3 -m pytest --with-mpi -q -m gpu -p no:cacheprovider tests/test_bfs.py tests/test_exchange.py -k nvshmem > $R/t_bfs$n.log 2>&1; echo "tests $n PEs: $(tail -1 $R/t_bfs$n.log)"; pack
done
echo "+ mpirun -n 16 python -m dbfs --scale 22 --roots 8 --grid 4x4 --comm nvshmem --backend gpu --json s22_4x4.json" > $R/commands.txt
(cd $R && timeout -s KILL 120 mpirun -x PYTHONPATH -x CUDA_MPS_PIPE_DIRECTORY -n 16 python3 -P -m dbfs --scale 22 --roots 8 --grid 4x4 --comm nvshmem --backend gpu --json s22_4x4.json > s22_4x4.log 2>&1; tail -2 s22_4x4.log)
scripts/mps.sh stop >/dev/null 2>&1
xz -q $R/s22_4x4.json $R/s22_4x4.log; pack

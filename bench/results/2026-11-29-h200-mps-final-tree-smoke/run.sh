#!/usr/bin/env bash
# one H200 under MPS, the final tree (f901f93): NVSHMEM BFS GPU tests at 4 PEs, the bottom-up kernels' tests, 22 on 4x4 once
set -u
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
RESULTS=$R OUT= scripts/gpu_check.sh > $R/install.log 2>&1 || { tail -20 $R/install.log; exit 1; }
{ nvidia-smi; date -u; nproc; } > $R/machine.txt 2>&1
timeout 100 python3 -m pytest -q -m gpu -p no:cacheprovider -rf tests/test_ops_bottom_up.py > $R/t_bottom_up.log 2>&1; echo "bottom-up kernels: $(tail -n 1 $R/t_bottom_up.log)"
eval "$(scripts/mps.sh start)"
CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=25 timeout 90 mpirun -x PYTHONPATH -x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_ACTIVE_THREAD_PERCENTAGE -n 4 python3 -m pytest --with-mpi -q -m gpu -p no:cacheprovider tests/test_bfs.py -k nvshmem > $R/t_bfs4.log 2>&1; echo "bfs nvshmem 4 PEs: $(grep -aE "passed|failed" $R/t_bfs4.log | tail -n 1)"
echo "+ mpirun -n 16 python -m dbfs --scale 22 --roots 8 --grid 4x4 --comm nvshmem --backend gpu --json s22_4x4.json" >> $R/commands.txt
(cd $R && timeout -s KILL 60 mpirun -x PYTHONPATH -x CUDA_MPS_PIPE_DIRECTORY -n 16 python3 -P -m dbfs --scale 22 --roots 8 --grid 4x4 --comm nvshmem --backend gpu --json s22_4x4.json > s22_4x4.log 2>&1)
grep -aE "bfs_mean_time|bfs_median_time" $R/s22_4x4.log | tr -s ' ' | paste -sd' '; grep -c '"validated": true' $R/s22_4x4.json
scripts/mps.sh stop >/dev/null 2>&1
xz -q $R/*.log $R/*.json 2>/dev/null
(cd $OUT && tar cf r.tar r)

#!/usr/bin/env bash
# one H200: the final tree's main command at one rank and at 4 PEs under MPS (--comm nvshmem), and the
# expansion's GPU tests (the edges-per-thread variants)
set -u
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
RESULTS=$R OUT= scripts/gpu_check.sh > $R/install.log 2>&1 || { tail -20 $R/install.log; exit 1; }
{ nvidia-smi; date -u; nproc; } > $R/machine.txt 2>&1
timeout 100 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_ops.py -k expand > $R/t_expand.log 2>&1; echo "expand tests: $(tail -n 1 $R/t_expand.log)"
(cd $R && timeout 100 python3 -P -m dbfs --scale 22 --roots 8 --backend gpu --edges-per-thread 8 --json s22_1.json > s22_1.log 2>&1); echo "one rank rc=$?: $(grep -E 'bfs_mean_time|harmonic_mean_TEPS' $R/s22_1.log | tr -s ' ' | paste -sd' ')"
eval "$(scripts/mps.sh start)"
(cd $R && timeout -s KILL 120 mpirun -x PYTHONPATH -x CUDA_MPS_PIPE_DIRECTORY -n 4 python3 -P -m dbfs --scale 22 --roots 8 --comm nvshmem --backend gpu --json s22_4.json > s22_4.log 2>&1); echo "4 PEs rc=$?: $(grep -E 'bfs_mean_time|harmonic_mean_TEPS' $R/s22_4.log | tr -s ' ' | paste -sd' ')"
scripts/mps.sh stop >/dev/null 2>&1
grep -c '"validated": true' $R/s22_1.json $R/s22_4.json
echo "+ python -m dbfs --scale 22 --roots 8 --backend gpu --edges-per-thread 8 --json s22_1.json" > $R/commands.txt
echo "+ mpirun -n 4 python -m dbfs --scale 22 --roots 8 --comm nvshmem --backend gpu --json s22_4.json" >> $R/commands.txt
(cd $OUT && tar cf r.tar r)

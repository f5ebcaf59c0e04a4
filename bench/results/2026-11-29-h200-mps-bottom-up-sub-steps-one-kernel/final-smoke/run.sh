#!/usr/bin/env bash
# one H200 under MPS: the merged tree (59f4aad): bottom-up GPU tests at one rank; 24 on 2x2 and 22 on 4x4 once each
set -u
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
RESULTS=$R OUT= scripts/gpu_check.sh > $R/install.log 2>&1 || { tail -20 $R/install.log; exit 1; }
{ nvidia-smi; date -u; nproc; } > $R/machine.txt 2>&1
timeout 60 python3 -m pytest -q -m gpu -p no:cacheprovider -rf tests/test_ops_bottom_up.py > $R/t_bottom_up.log 2>&1; echo "bottom-up kernels: $(tail -n 1 $R/t_bottom_up.log)"
eval "$(scripts/mps.sh start)"
for a in "4 24 2x2" "16 22 4x4"; do set -- $a
  echo "+ mpirun -n $1 python -m dbfs --scale $2 --roots 8 --grid $3 --comm nvshmem --backend gpu --json s$2_$3.json" >> $R/commands.txt
  (cd $R && timeout -s KILL 70 mpirun -x PYTHONPATH -x CUDA_MPS_PIPE_DIRECTORY -n $1 python3 -P -m dbfs --scale $2 --roots 8 --grid $3 --comm nvshmem --backend gpu --json s$2_$3.json > s$2_$3.log 2>&1)
  grep -E "bfs_mean_time|bfs_median_time" $R/s$2_$3.log | tr -s ' ' | paste -sd' '; grep -c '"validated": true' $R/s$2_$3.json
done
scripts/mps.sh stop >/dev/null 2>&1
(cd $OUT && tar cf r.tar r)

#!/usr/bin/env bash
# one H200 under MPS: a cross-rank timeline probe of 22 on 4x4 and 16x1 (host clock and GPU timer marks per rank)
set -u
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
RESULTS=$R OUT= scripts/gpu_check.sh > $R/install.log 2>&1 || { tail -20 $R/install.log; exit 1; }
{ nvidia-smi; date -u; nproc; } > $R/machine.txt 2>&1
pack() { (cd $OUT && tar cf r.tar r); }
(cd $R && timeout 200 python3 -P -m dbfs --scale 22 --roots 8 --backend gpu --json s22_1.json > s22_1.log 2>&1); grep -aE "bfs_mean_time|bfs_median_time" $R/s22_1.log | tr -s ' ' | paste -sd' '
eval "$(scripts/mps.sh start)"
P=$PWD/.probe/timeline.py
for t in 4x4_a0 4x4_b1 4x4_c0 4x4_d1; do
  g=4x4; f=${t: -1}; mkdir -p $R/p_$t
  (cd $R && PROBE_FLAG_WAKE=$f PROBE_DIR=$R/p_$t timeout -s KILL 150 mpirun -x PYTHONPATH -x CUDA_MPS_PIPE_DIRECTORY -x PROBE_DIR -x PROBE_FLAG_WAKE -n 16 python3 -P $P --scale 22 --roots 8 --grid $g --comm nvshmem --backend gpu --json s22_$t.json > s22_$t.log 2>&1)
  echo "$t: $(grep -aE "bfs_mean_time|bfs_median_time" $R/s22_$t.log | tr -s ' ' | paste -sd' ') files $(ls $R/p_$t | wc -l) validated $(grep -o "\"validated\": true" $R/s22_$t.json | wc -l)"
  pack
done
(cd $R && timeout 100 python3 -P -m dbfs --scale 22 --roots 8 --backend gpu --json s22_1b.json > s22_1b.log 2>&1); grep -aE "bfs_mean_time|bfs_median_time" $R/s22_1b.log | tr -s ' ' | paste -sd' '
scripts/mps.sh stop >/dev/null 2>&1
xz -q $R/*.log $R/*.json 2>/dev/null
pack

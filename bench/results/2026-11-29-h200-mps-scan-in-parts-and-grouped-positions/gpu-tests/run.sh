#!/usr/bin/env bash
# one H200: the degree scan in parts and the Positions' starts a group of four words: NVSHMEM BFS GPU tests at
# 4 and 2 PEs under MPS, then the one-rank GPU suite
set -u
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
t0=$(date +%s)
RESULTS=$R OUT= scripts/gpu_check.sh > $R/install.log 2>&1 || { tail -20 $R/install.log; exit 1; }
{ nvidia-smi; date -u; nproc; } > $R/machine.txt 2>&1
echo "installed after $(( $(date +%s) - t0 )) s"
pack() { (cd $OUT && tar cf r.tar r); }
eval "$(scripts/mps.sh start)"
for n in 4 2; do
  CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=$(( 100 / n )) timeout 150 mpirun -x PYTHONPATH -x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_ACTIVE_THREAD_PERCENTAGE -n $n python3 -m pytest --with-mpi -q -m gpu -p no:cacheprovider tests/test_bfs.py -k nvshmem > $R/t_bfs$n.log 2>&1; echo "tests $n PEs: $(tail -n 1 $R/t_bfs$n.log) after $(( $(date +%s) - t0 )) s"; grep -m2 -B2 -A25 'Error' $R/t_bfs$n.log | head -60; pack
done
scripts/mps.sh stop >/dev/null 2>&1
left=$(( 560 - ($(date +%s) - t0) ))
timeout $left python3 -m pytest -q -m gpu -p no:cacheprovider -rf tests > $R/t_gpu1.log 2>&1; echo "one-rank GPU suite: $(tail -n 1 $R/t_gpu1.log) after $(( $(date +%s) - t0 )) s"
grep -E "^FAILED|^ERROR" $R/t_gpu1.log | head -20; grep -m2 -B2 -A30 'Error' $R/t_gpu1.log | head -70
pack

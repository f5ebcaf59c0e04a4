#!/usr/bin/env bash
# the day's last code: the grid loop's NVSHMEM GPU tests at 4 and 3 PEs on one GPU under MPS
set -u
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
RESULTS=$R OUT= scripts/gpu_check.sh > /tmp/install.txt 2>&1 || { tail -20 /tmp/install.txt; exit 1; }
{ nvidia-smi; date -u; nproc; python3 -c "import dbfs.ops.frontier as f, dbfs.ops.owner_groups as m; print('publish_figures, count_by_owner present:', hasattr(f, 'publish_figures'), hasattr(m, 'count_by_owner'))"; } > $R/machine.txt 2>&1
eval "$(scripts/mps.sh start)"
T="tests/test_bfs.py tests/test_grid_loop.py"
for n in 4 3; do
  export CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=$((100 / n))
  echo "+ (MPS, CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=$CUDA_MPS_ACTIVE_THREAD_PERCENTAGE) mpirun -n $n python -m pytest --with-mpi -m gpu $T -k 'nvshmem or level_totals or launches'" >> $R/commands.txt
  timeout -s KILL 170 mpirun -x PYTHONPATH -x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_ACTIVE_THREAD_PERCENTAGE -n $n python3 -m pytest --with-mpi -q -m gpu -p no:cacheprovider $T -k "nvshmem or level_totals or launches" > $R/tests_${n}pes.log 2>&1
  echo "$n PEs: $(strings $R/tests_${n}pes.log | grep -E 'passed|failed' | tail -1)"
done
cd $R && for f in *.log; do [ -f $f ] && xz -q $f; done; cd ..; tar cf $OUT/r.tar r && rm -rf r

#!/usr/bin/env bash
# one H200 under MPS: no send scratch for records gathered by position (f0091c0): 24 on 4x4 over MPI without the
# row copy (the discoverers held and gathered), its peak against the plan's figures before and after; the
# NVSHMEM-free BFS GPU tests at 4 PEs
set -u
T0=$(date +%s); late() { [ $(( $(date +%s) - T0 )) -gt ${1:-300} ]; }
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl >/dev/null 2>&1
python3 -m pip install -q --no-index --no-build-isolation --no-deps . > /tmp/install.txt 2>&1 || { tail -5 /tmp/install.txt; exit 1; }
{ nvidia-smi; date -u; nproc; } > $R/machine.txt 2>&1
eval "$(scripts/mps.sh start)"
echo "+ mpirun -n 16 python -m dbfs --scale 24 --roots 4 --grid 4x4 --comm mpi --row-copy off --backend gpu --json s24_4x4_mpi.json" >> $R/commands.txt
(cd $R && PYTHONPATH=/tmp/site timeout -s KILL 230 mpirun -x CUDA_MPS_PIPE_DIRECTORY -x PYTHONPATH -n 16 python3 -P -m dbfs --scale 24 --roots 4 --grid 4x4 --comm mpi --row-copy off --backend gpu --json s24_4x4_mpi.json > s24_4x4_mpi.log 2>&1) || echo FAILED
python3 .probe/summ.py $R/s24_4x4_mpi.json | cut -c1-220; grep -a "memory peak\|memory estimate" $R/s24_4x4_mpi.log | cut -c1-200
if ! late; then
  echo "+ (MPS, CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=25) mpirun -n 4 python -m pytest --with-mpi -m gpu tests/test_bfs.py -k 'mpi and not nvshmem'" >> $R/commands.txt
  CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=25 PYTHONPATH=/tmp/site timeout -s KILL 100 mpirun -x PYTHONPATH -x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_ACTIVE_THREAD_PERCENTAGE -n 4 python3 -m pytest --with-mpi -q -m gpu -p no:cacheprovider tests/test_bfs.py -k "mpi and not nvshmem" > $R/tests_4pes.log 2>&1
  echo "BFS GPU tests over MPI, 4 PEs: $(grep -aE 'passed|failed|error' $R/tests_4pes.log | tail -1)"
fi
scripts/mps.sh stop >/dev/null 2>&1
cd $R && for f in *.log *.json; do [ -f $f ] && xz -q $f; done; (cd $OUT && tar cf r.tar r)

#!/usr/bin/env bash
# the root's visit in the first stretch: GPU tests of the NVSHMEM whole levels at 2 GPUs, then 4 PEs on one GPU under MPS; Kronecker 24 on 1 rank and 2x2 under MPS
set -u
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
RESULTS=$R OUT= scripts/gpu_check.sh > /tmp/install.txt 2>&1 || { tail -20 /tmp/install.txt; exit 1; }
{ nvidia-smi; nvidia-smi topo -m; date -u; nproc; } > $R/machine.txt 2>&1
P=$PWD/.probe
T="tests/test_bfs.py tests/test_grid_loop.py"
echo "+ mpirun -n 2 python -m pytest --with-mpi -m gpu $T -k 'nvshmem or level_totals or launches'" >> $R/commands.txt
timeout -s KILL 150 mpirun -x PYTHONPATH -n 2 python3 -m pytest --with-mpi -q -m gpu -p no:cacheprovider $T -k "nvshmem or level_totals or launches" > $R/tests_2gpus.log 2>&1
echo "2 GPUs: $(strings $R/tests_2gpus.log | grep -E 'passed|failed' | tail -1)"
eval "$(scripts/mps.sh start)"
export CUDA_VISIBLE_DEVICES=0
echo "+ CUDA_VISIBLE_DEVICES=0 (MPS) mpirun -n 4 python -m pytest --with-mpi -m gpu tests/test_bfs.py -k 'nvshmem'" >> $R/commands.txt
timeout -s KILL 170 mpirun -x PYTHONPATH -x CUDA_MPS_PIPE_DIRECTORY -x CUDA_VISIBLE_DEVICES -n 4 python3 -m pytest --with-mpi -q -m gpu -p no:cacheprovider tests/test_bfs.py -k "nvshmem" > $R/tests_4pes.log 2>&1
echo "4 PEs: $(strings $R/tests_4pes.log | grep -E 'passed|failed' | tail -1)"
for spec in "1 s24_1" "4 s24_4"; do
  set -- $spec; n=$1; f=$2
  echo "+ (MPS) mpirun -n $n python -m dbfs --scale 24 --roots 16 --backend gpu --json $f.json" >> $R/commands.txt
  (cd $R && timeout -s KILL 60 mpirun -x CUDA_MPS_PIPE_DIRECTORY -x PYTHONPATH -x CUDA_VISIBLE_DEVICES -n $n python3 -P -m dbfs --scale 24 --roots 16 --backend gpu --json $f.json > $f.log 2>&1) || { echo "FAILED $f"; tail -3 $R/$f.log; }
  python3 $P/summ.py $R/$f.json | cut -c1-200
done
cd $R && for f in *.log *.json; do [ -f $f ] && xz -q $f; done; cd ..; tar cf $OUT/r.tar r && rm -rf r

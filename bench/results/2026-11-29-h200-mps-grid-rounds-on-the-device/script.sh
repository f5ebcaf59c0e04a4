#!/usr/bin/env bash
# one H200: the grid rounds' kernels and switch node (1 rank); 22 on 4x4 with the per-level log; NVSHMEM BFS
# GPU tests at 4 PEs under MPS; 22 on 4x4 against ae0ff9c (prev); 16x1; one rank
set -u
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
RESULTS=$R OUT= scripts/gpu_check.sh > $R/install.log 2>&1 || { tail -20 $R/install.log; exit 1; }
{ nvidia-smi; date -u; nproc; } > $R/machine.txt 2>&1
mkdir -p /tmp/oh && tar xJf .probe/hae0.tar.xz -C /tmp/oh
pack() { (cd $OUT && tar cf r.tar r); }
timeout 150 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_grid_rounds.py > $R/t_rounds.log 2>&1; echo "rounds tests: $(tail -n 1 $R/t_rounds.log)"; grep -m3 -A12 'Error\|error' $R/t_rounds.log | head -40
eval "$(scripts/mps.sh start)"
run() {  # tag pythonpath n args...
  local t=$1 pp=$2 n=$3; shift 3
  echo "+ [$t] mpirun -n $n python -m dbfs --scale 22 --roots 8 $* --backend gpu --json s22_$t.json" >> $R/commands.txt
  (cd $R && PYTHONPATH=$pp timeout -s KILL 110 mpirun -x PYTHONPATH -x CUDA_MPS_PIPE_DIRECTORY -n $n python3 -P -m dbfs --scale 22 --roots 8 "$@" --backend gpu --json s22_$t.json > s22_$t.log 2>&1)
  python3 -c "
import json; d=json.load(open('$R/s22_$t.json')); print('$t', 'mean %.3f median %.3f min %.3f valid %s' % (d['bfs_mean_time']*1e3, d['bfs_median_time']*1e3, d['bfs_min_time']*1e3, all(s['validated'] for s in d['searches'])))" || tail -5 $R/s22_$t.log
  xz -q $R/s22_$t.json $R/s22_$t.log; pack
}
run 4x4_log /tmp/site 16 --grid 4x4 --comm nvshmem --log-levels
xzcat $R/s22_4x4_log.log.xz | grep -v 'level ' | tail -4; xzcat $R/s22_4x4_log.log.xz | grep 'root .* level' | head -8
CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=25 timeout 170 mpirun -x PYTHONPATH -x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_ACTIVE_THREAD_PERCENTAGE -n 4 python3 -m pytest --with-mpi -q -m gpu -p no:cacheprovider tests/test_bfs.py -k nvshmem > $R/t_bfs4.log 2>&1; echo "tests 4 PEs: $(tail -n 1 $R/t_bfs4.log)"; grep -m2 -B2 -A20 'Error' $R/t_bfs4.log | head -50; pack
run 4x4_prev /tmp/oh/hae0:/tmp/site 16 --grid 4x4 --comm nvshmem
run 4x4 /tmp/site 16 --grid 4x4 --comm nvshmem
run 16 /tmp/site 16 --comm nvshmem
run 1 /tmp/site 1
scripts/mps.sh stop >/dev/null 2>&1
pack

#!/usr/bin/env bash
# one H200 under MPS: the own frontier's message read in place in two halves: NVSHMEM BFS GPU tests at 4 and 2
# PEs; 24 on 2x2 and on 4x4 --row-copy off (peak), 22 on 4x4 (time), each against ae0ff9c (prev)
set -u
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
RESULTS=$R OUT= scripts/gpu_check.sh > $R/install.log 2>&1 || { tail -20 $R/install.log; exit 1; }
{ nvidia-smi; date -u; nproc; } > $R/machine.txt 2>&1
mkdir -p /tmp/oh && tar xJf .probe/hae0.tar.xz -C /tmp/oh
pack() { (cd $OUT && tar cf r.tar r); }
eval "$(scripts/mps.sh start)"
for n in 4 2; do
  CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=$(( 100 / n )) timeout 170 mpirun -x PYTHONPATH -x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_ACTIVE_THREAD_PERCENTAGE -n $n python3 -m pytest --with-mpi -q -m gpu -p no:cacheprovider tests/test_bfs.py -k nvshmem > $R/t_bfs$n.log 2>&1; echo "tests $n PEs: $(tail -n 1 $R/t_bfs$n.log)"; grep -m2 -B2 -A25 'Error' $R/t_bfs$n.log | head -60; pack
done
run() {  # tag pythonpath n scale args...
  local t=$1 pp=$2 n=$3 sc=$4; shift 4
  echo "+ [$t] mpirun -n $n python -m dbfs --scale $sc $* --comm nvshmem --backend gpu --json s${sc}_$t.json" >> $R/commands.txt
  (cd $R && PYTHONPATH=$pp timeout -s KILL 110 mpirun -x PYTHONPATH -x CUDA_MPS_PIPE_DIRECTORY -n $n python3 -P -m dbfs --scale $sc "$@" --comm nvshmem --backend gpu --json s${sc}_$t.json > s${sc}_$t.log 2>&1)
  python3 -c "
import json; d=json.load(open('$R/s${sc}_$t.json')); print('$sc $t', 'mean %.3f median %.3f peak %.2f est %.2f valid %s' % (d['bfs_mean_time']*1e3, d['bfs_median_time']*1e3, d['memory_peak']/2**20, d['memory_estimate']/2**20, all(s['validated'] for s in d['searches'])))" || tail -5 $R/s${sc}_$t.log
  xz -q $R/s${sc}_$t.json $R/s${sc}_$t.log; pack
}
run 2x2 /tmp/site 4 24 --roots 16 --grid 2x2
run 2x2_prev /tmp/oh/hae0:/tmp/site 4 24 --roots 16 --grid 2x2
run 4x4_off /tmp/site 16 24 --roots 16 --grid 4x4 --row-copy off
run 4x4_off_prev /tmp/oh/hae0:/tmp/site 16 24 --roots 16 --grid 4x4 --row-copy off
run 4x4 /tmp/site 16 22 --roots 8 --grid 4x4
run 4x4_prev /tmp/oh/hae0:/tmp/site 16 22 --roots 8 --grid 4x4
scripts/mps.sh stop >/dev/null 2>&1
pack

#!/usr/bin/env bash
# one H200 under MPS: the fold read in place: NVSHMEM BFS GPU tests at 4 and 2 PEs; 24 on 2x2 against
# 6d4e1c9 (prev)
set -u
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
RESULTS=$R OUT= scripts/gpu_check.sh > $R/install.log 2>&1 || { tail -20 $R/install.log; exit 1; }
{ nvidia-smi; date -u; nproc; } > $R/machine.txt 2>&1
mkdir -p /tmp/oh && tar xJf .probe/h6d4.tar.xz -C /tmp/oh
pack() { (cd $OUT && tar cf r.tar r); }
eval "$(scripts/mps.sh start)"
for n in 4 2; do
  CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=$(( 100 / n )) timeout 120 mpirun -x PYTHONPATH -x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_ACTIVE_THREAD_PERCENTAGE -n $n python3 -m pytest --with-mpi -q -m gpu -p no:cacheprovider tests/test_bfs.py -k nvshmem > $R/t_bfs$n.log 2>&1; echo "tests $n PEs: $(tail -n 1 $R/t_bfs$n.log)"; pack
done
for t in new prev; do
  pp=/tmp/site; [ $t = prev ] && pp=/tmp/oh/h6d4:/tmp/site
  echo "+ [$t] mpirun -n 4 python -m dbfs --scale 24 --roots 16 --grid 2x2 --comm nvshmem --backend gpu --json s24_2x2_$t.json" >> $R/commands.txt
  (cd $R && PYTHONPATH=$pp timeout -s KILL 90 mpirun -x PYTHONPATH -x CUDA_MPS_PIPE_DIRECTORY -n 4 python3 -P -m dbfs --scale 24 --roots 16 --grid 2x2 --comm nvshmem --backend gpu --json s24_2x2_$t.json > s24_2x2_$t.log 2>&1)
  python3 -c "
import json; d=json.load(open('$R/s24_2x2_$t.json')); print('$t', 'mean %.3f median %.3f peak %.2f est %.2f valid %s' % (d['bfs_mean_time']*1e3, d['bfs_median_time']*1e3, d['memory_peak']/2**20, d['memory_estimate']/2**20, all(s['validated'] for s in d['searches'])))"
  xz -q $R/s24_2x2_$t.json $R/s24_2x2_$t.log; pack
done
scripts/mps.sh stop >/dev/null 2>&1
pack

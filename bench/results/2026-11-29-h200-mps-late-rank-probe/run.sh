#!/usr/bin/env bash
# one H200 under MPS: 22 on 4x4 with the turn checkpoints (59b1d90 installed from the working tree's copy), looking for
# a stalled search's late rank
set -u
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
RESULTS=$R OUT= scripts/gpu_check.sh > $R/install.log 2>&1 || { tail -20 $R/install.log; exit 1; }
{ nvidia-smi; date -u; nproc; } > $R/machine.txt 2>&1
pack() { (cd $OUT && tar cf r.tar r); }
mkdir -p /tmp/oh && tar xJf .probe/h59b.tar.xz -C /tmp/oh
NEW=/tmp/oh/h59b
eval "$(scripts/mps.sh start)"
P=$PWD/.probe/turns
for k in 1 2 3 4 5 6 7; do
  mkdir -p $R/p_$k
  echo "+ [$k] PROBE_CHECK=1 mpirun -n 16 python probe.py --scale 22 --roots 8 --grid 4x4 --comm nvshmem --backend gpu --json s22_$k.json" >> $R/commands.txt
  (cd $R && PYTHONPATH=$NEW:/tmp/site PROBE_CHECK=1 PROBE_DIR=$R/p_$k timeout -s KILL 60 mpirun -x PYTHONPATH -x CUDA_MPS_PIPE_DIRECTORY -x PROBE_DIR -x PROBE_CHECK -n 16 python3 -P $P/probe.py --scale 22 --roots 8 --grid 4x4 --comm nvshmem --backend gpu --json s22_$k.json > s22_$k.log 2>&1)
  python3 -c "
import json; d=json.load(open('$R/s22_$k.json'))
print('$k', 'mean %.3f median %.3f max %.3f valid %s' % (d['bfs_mean_time']*1e3, d['bfs_median_time']*1e3, max(s['time'] for s in d['searches'])*1e3, all(s['validated'] for s in d['searches'])))"
  python3 $P/stall.py $R/p_$k > $R/stall_$k.txt 2>&1; head -30 $R/stall_$k.txt
  (cd $R && tar cJf p_$k.tar.xz p_$k && rm -rf p_$k); xz -q $R/s22_$k.json $R/s22_$k.log; pack
done
scripts/mps.sh stop >/dev/null 2>&1
pack

#!/usr/bin/env bash
# one H200 under MPS: HEAD (branch scan-column-starts: the expansion from scan starts plus a Positions'
# starts one a group of four words), "scan" (the branch without the grouped starts, .probe/hscan.tar.xz)
# and main (.probe/hmain.tar.xz). Part A: the GPU tests of the Positions readers, the held validation and
# the NVSHMEM BFS at 4 PEs; 22 on 4x4 twice a tree. Part B: 24 on 4x4 --row-copy off once a tree, 24 on
# 4x1 twice a tree (orders rotated).
set -u
part=$1
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
RESULTS=$R OUT= scripts/gpu_check.sh > $R/install.log 2>&1 || { tail -20 $R/install.log; exit 1; }
{ nvidia-smi; date -u; nproc; } > $R/machine.txt 2>&1
mkdir -p /tmp/oh && tar xJf .probe/hmain.tar.xz -C /tmp/oh && tar xJf .probe/hscan.tar.xz -C /tmp/oh
pack() { (cd $OUT && tar cf r.tar r); }
eval "$(scripts/mps.sh start)"
if [ "$part" = A ]; then
  timeout 100 python3 -m pytest -q -m gpu -p no:cacheprovider -rf tests/test_ops_sparse.py tests/test_ops_bottom_up.py tests/test_ops_row_order.py tests/test_ops.py -k "held or sparse or resolve or matches or tiles or parts" > $R/t_readers.log 2>&1; echo "readers: $(tail -n 1 $R/t_readers.log)"; grep -E "^FAILED" $R/t_readers.log | head
  timeout 40 python3 -m pytest -q -m gpu -p no:cacheprovider -rf tests/test_ops_validate.py -k "held" > $R/t_validate.log 2>&1; echo "validate held: $(tail -n 1 $R/t_validate.log)"; grep -E "^FAILED" $R/t_validate.log | head
  timeout 90 mpirun -x PYTHONPATH -x CUDA_MPS_PIPE_DIRECTORY -n 4 python3 -m pytest -q -m gpu -p no:cacheprovider -rf tests/test_bfs.py -k nvshmem > $R/t_bfs4.log 2>&1; echo "bfs nvshmem 4 PEs: $(grep -E 'passed|failed' $R/t_bfs4.log | tail -n 1)"
  pack
fi
summary() { python3 -c "
import json, collections; d=json.load(open('$R/$1.json')); t=collections.Counter()
for s in d['searches']: t.update(s['phases'])
print('$1', 'mean %.3f median %.3f peak %.2f est %.2f valid %s' % (d['bfs_mean_time']*1e3, d['bfs_median_time']*1e3, d['memory_peak']/2**20, d['memory_estimate']/2**20, all(s['validated'] for s in d['searches'])), ' '.join('%s=%.3f' % (k, v / len(d['searches']) * 1e3) for k, v in sorted(t.items())))" || tail -5 $R/$1.log; xz -q $R/$1.json $R/$1.log; pack; }
run() {  # tag pythonpath n scale args...
  local t=$1 pp=$2 n=$3 sc=$4; shift 4
  echo "+ [$t] mpirun -n $n python -m dbfs --scale $sc $* --comm nvshmem --backend gpu --json s${sc}_$t.json" >> $R/commands.txt
  (cd $R && PYTHONPATH=$pp timeout -s KILL 100 mpirun -x PYTHONPATH -x CUDA_MPS_PIPE_DIRECTORY -n $n python3 -P -m dbfs --scale $sc "$@" --comm nvshmem --backend gpu --json s${sc}_$t.json > s${sc}_$t.log 2>&1)
  summary s${sc}_$t
}
head=/tmp/site scan=/tmp/oh/hscan:/tmp/site main=/tmp/oh/hmain:/tmp/site
if [ "$part" = A ]; then
  run 4x4_head_1 $head 16 22 --roots 8 --grid 4x4; run 4x4_scan_1 $scan 16 22 --roots 8 --grid 4x4; run 4x4_main_1 $main 16 22 --roots 8 --grid 4x4
  run 4x4_main_2 $main 16 22 --roots 8 --grid 4x4; run 4x4_scan_2 $scan 16 22 --roots 8 --grid 4x4; run 4x4_head_2 $head 16 22 --roots 8 --grid 4x4
else
  run 4x1_main_1 $main 4 24 --roots 16; run 4x1_head_1 $head 4 24 --roots 16; run 4x1_scan_1 $scan 4 24 --roots 16
  run 4x4_off_scan $scan 16 24 --roots 16 --grid 4x4 --row-copy off; run 4x4_off_head $head 16 24 --roots 16 --grid 4x4 --row-copy off; run 4x4_off_main $main 16 24 --roots 16 --grid 4x4 --row-copy off
  run 4x1_scan_2 $scan 4 24 --roots 16; run 4x1_main_2 $main 4 24 --roots 16; run 4x1_head_2 $head 4 24 --roots 16
fi
scripts/mps.sh stop >/dev/null 2>&1
pack

#!/usr/bin/env bash
# one H200 under MPS: the bottom-up sub-steps in one kernel (32-bit word index, no large variant) (.probe/hfused.tar.xz, branch fused-steps) against
# main (the working tree, installed): the fused tree's GPU tests (bottom-up kernels against their twins at
# one rank; the NVSHMEM BFS at 4 PEs), then 24 on 2x2 (16 roots) and 22 on 4x4 (8 roots), alternating
set -u
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
RESULTS=$R OUT= scripts/gpu_check.sh > $R/install.log 2>&1 || { tail -20 $R/install.log; exit 1; }
{ nvidia-smi; date -u; nproc; } > $R/machine.txt 2>&1
mkdir -p /tmp/oh && tar xJf .probe/hfused.tar.xz -C /tmp/oh
pack() { (cd $OUT && tar cf r.tar r); }
F=/tmp/oh/hfused
(cd $F && PYTHONPATH=$F:/tmp/site timeout 150 python3 -m pytest -q -m gpu -p no:cacheprovider -rf tests/test_ops_bottom_up.py > $R/t_bottom_up.log 2>&1); echo "bottom-up kernels: $(tail -n 1 $R/t_bottom_up.log)"; grep -E "^FAILED" $R/t_bottom_up.log | head
eval "$(scripts/mps.sh start)"
for n in 4; do
  (cd $F && PYTHONPATH=$F:/tmp/site CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=$((100 / n)) timeout 150 mpirun -x PYTHONPATH -x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_ACTIVE_THREAD_PERCENTAGE -n $n python3 -m pytest --with-mpi -q -m gpu -p no:cacheprovider tests/test_bfs.py -k nvshmem > $R/t_bfs$n.log 2>&1); echo "bfs nvshmem $n PEs: $(grep -aE "passed|failed" $R/t_bfs$n.log | tail -n 1)"; grep -a -m2 -B2 -A25 'Error' $R/t_bfs$n.log | head -30
done
pack
summary() { python3 -c "
import json, collections; d=json.load(open('$R/$1.json')); t=collections.Counter()
for s in d['searches']: t.update(s['phases'])
print('$1', 'mean %.3f median %.3f peak %.2f valid %s' % (d['bfs_mean_time']*1e3, d['bfs_median_time']*1e3, d['memory_peak']/2**20, all(s['validated'] for s in d['searches'])), ' '.join('%s=%.3f' % (k, v / len(d['searches']) * 1e3) for k, v in sorted(t.items())))" || tail -5 $R/$1.log; xz -q $R/$1.json $R/$1.log; pack; }
run() {  # tag pythonpath n scale args...
  local t=$1 pp=$2 n=$3 sc=$4; shift 4
  echo "+ [$t] mpirun -n $n python -m dbfs --scale $sc $* --comm nvshmem --backend gpu --json s${sc}_$t.json" >> $R/commands.txt
  (cd $R && PYTHONPATH=$pp timeout -s KILL 100 mpirun -x PYTHONPATH -x CUDA_MPS_PIPE_DIRECTORY -n $n python3 -P -m dbfs --scale $sc "$@" --comm nvshmem --backend gpu --json s${sc}_$t.json > s${sc}_$t.log 2>&1)
  summary s${sc}_$t
}
main=/tmp/site fused=$F:/tmp/site
run 2x2_main_1 $main 4 24 --roots 16 --grid 2x2; run 2x2_fused_1 $fused 4 24 --roots 16 --grid 2x2
run 4x4_fused_1 $fused 16 22 --roots 8 --grid 4x4; run 4x4_main_1 $main 16 22 --roots 8 --grid 4x4
run 2x2_fused_2 $fused 4 24 --roots 16 --grid 2x2; run 2x2_main_2 $main 4 24 --roots 16 --grid 2x2
run 4x4_main_2 $main 16 22 --roots 8 --grid 4x4; run 4x4_fused_2 $fused 16 22 --roots 8 --grid 4x4
scripts/mps.sh stop >/dev/null 2>&1
pack

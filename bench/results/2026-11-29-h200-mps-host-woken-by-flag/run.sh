#!/usr/bin/env bash
# one H200 under MPS: the host woken by the graph's flag (the working tree, installed) against fab1bbc (.probe/hfab.tar.xz
# first on PYTHONPATH): GPU tests of the flagged copy and of the NVSHMEM BFS (2, 3, 4 PEs); 22 on 4x4 (8 roots) in three
# pairs and 24 on 2x2 (16 roots) alternating, one rank before and after; the turns probe on the change
set -u
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
RESULTS=$R OUT= scripts/gpu_check.sh > $R/install.log 2>&1 || { tail -20 $R/install.log; exit 1; }
{ nvidia-smi; date -u; nproc; } > $R/machine.txt 2>&1
pack() { (cd $OUT && tar cf r.tar r); }
mkdir -p /tmp/oh && tar xJf .probe/hfab.tar.xz -C /tmp/oh
OLD=/tmp/oh/hfab
timeout 200 python3 -m pytest -q -m gpu -p no:cacheprovider -rf tests/test_ops.py -k "copy_words or copy_by_kernel" > $R/t_host_words.log 2>&1; echo "host words: $(tail -n 1 $R/t_host_words.log)"; grep -E "^FAILED" $R/t_host_words.log | head
(cd $OLD && PYTHONPATH=$OLD:/tmp/site timeout 200 python3 -P -m dbfs --scale 12 --roots 2 --backend gpu > $R/warm_old.log 2>&1); echo "old warm: $(tail -n 1 $R/warm_old.log)"
eval "$(scripts/mps.sh start)"
for n in 2 3 4; do
  CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=$((100 / n)) timeout 150 mpirun -x PYTHONPATH -x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_ACTIVE_THREAD_PERCENTAGE -n $n python3 -m pytest --with-mpi -q -m gpu -p no:cacheprovider tests/test_bfs.py -k nvshmem > $R/t_bfs$n.log 2>&1; echo "bfs nvshmem $n PEs: $(grep -aE "passed|failed" $R/t_bfs$n.log | tail -n 1)"; grep -a -m2 -B2 -A25 'Error' $R/t_bfs$n.log | head -30
done
pack
summary() { python3 -c "
import json, collections; d=json.load(open('$R/$1.json')); t=collections.Counter()
for s in d['searches']: t.update(s['phases'])
print('$1', 'mean %.3f median %.3f peak %.2f valid %s' % (d['bfs_mean_time']*1e3, d['bfs_median_time']*1e3, d['memory_peak']/2**20, all(s['validated'] for s in d['searches'])), ' '.join('%s=%.3f' % (k, v / len(d['searches']) * 1e3) for k, v in sorted(t.items())))" || tail -5 $R/$1.log; xz -q $R/$1.json $R/$1.log; pack; }
run() {  # tag pythonpath n scale args...
  local t=$1 pp=$2 n=$3 sc=$4; shift 4
  echo "+ [$t] mpirun -n $n python -m dbfs --scale $sc $* --backend gpu --json s${sc}_$t.json" >> $R/commands.txt
  (cd $R && PYTHONPATH=$pp timeout -s KILL 100 mpirun -x PYTHONPATH -x CUDA_MPS_PIPE_DIRECTORY -n $n python3 -P -m dbfs --scale $sc "$@" --backend gpu --json s${sc}_$t.json > s${sc}_$t.log 2>&1)
  summary s${sc}_$t
}
P=$PWD/.probe/timeline.py
new=/tmp/site old=$OLD:/tmp/site
run 1rank_1 $new 1 22 --roots 8
run 4x4_old_1 $old 16 22 --roots 8 --grid 4x4 --comm nvshmem; run 4x4_new_1 $new 16 22 --roots 8 --grid 4x4 --comm nvshmem
run 2x2_new_1 $new 4 24 --roots 16 --grid 2x2 --comm nvshmem; run 2x2_old_1 $old 4 24 --roots 16 --grid 2x2 --comm nvshmem
run 4x4_new_2 $new 16 22 --roots 8 --grid 4x4 --comm nvshmem; run 4x4_old_2 $old 16 22 --roots 8 --grid 4x4 --comm nvshmem
run 4x4_old_3 $old 16 22 --roots 8 --grid 4x4 --comm nvshmem; run 4x4_new_3 $new 16 22 --roots 8 --grid 4x4 --comm nvshmem
run 1rank_2 $new 1 22 --roots 8
mkdir -p $R/p_new
(cd $R && PROBE_NEW_WAIT=1 PROBE_DIR=$R/p_new timeout -s KILL 100 mpirun -x PYTHONPATH -x CUDA_MPS_PIPE_DIRECTORY -x PROBE_DIR -x PROBE_NEW_WAIT -n 16 python3 -P $P --scale 22 --roots 8 --grid 4x4 --comm nvshmem --backend gpu --json p_new.json > p_new.log 2>&1)
echo "probe: $(grep -aE "bfs_mean_time|bfs_median_time" $R/p_new.log | tr -s ' ' | paste -sd' ') files $(ls $R/p_new | wc -l)"
scripts/mps.sh stop >/dev/null 2>&1
(cd $R && tar cJf p_new.tar.xz p_new p_new.log p_new.json && rm -rf p_new p_new.log p_new.json)
xz -q $R/*.log 2>/dev/null
pack

#!/usr/bin/env bash
# one H200 under MPS: the turn's reads in one conversion (the working tree, installed) against 8e5721a (.probe/h8e5.tar.xz
# first on PYTHONPATH): GPU tests (timing marks, flagged copy; NVSHMEM BFS at 4 PEs); 22 on 4x4 (8 roots) in three pairs,
# one rank before and after; the turn-steps probe on the change
set -u
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
RESULTS=$R OUT= scripts/gpu_check.sh > $R/install.log 2>&1 || { tail -20 $R/install.log; exit 1; }
{ nvidia-smi; date -u; nproc; } > $R/machine.txt 2>&1
pack() { (cd $OUT && tar cf r.tar r); }
mkdir -p /tmp/oh && tar xJf .probe/h8e5.tar.xz -C /tmp/oh
OLD=/tmp/oh/h8e5
timeout 200 python3 -m pytest -q -m gpu -p no:cacheprovider -rf tests/test_ops.py tests/test_timing.py -k "copy_words or copy_by_kernel or marks or switch" > $R/t_host_words.log 2>&1; echo "host words, marks: $(tail -n 1 $R/t_host_words.log)"; grep -E "^FAILED" $R/t_host_words.log | head
(cd $OLD && PYTHONPATH=$OLD:/tmp/site timeout 200 python3 -P -m dbfs --scale 12 --roots 2 --backend gpu > $R/warm_old.log 2>&1); echo "old warm: $(tail -n 1 $R/warm_old.log)"
eval "$(scripts/mps.sh start)"
CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=25 timeout 150 mpirun -x PYTHONPATH -x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_ACTIVE_THREAD_PERCENTAGE -n 4 python3 -m pytest --with-mpi -q -m gpu -p no:cacheprovider tests/test_bfs.py -k nvshmem > $R/t_bfs4.log 2>&1; echo "bfs nvshmem 4 PEs: $(grep -aE "passed|failed" $R/t_bfs4.log | tail -n 1)"; grep -a -m2 -B2 -A25 'Error' $R/t_bfs4.log | head -30
pack
summary() { python3 -c "
import json, collections; d=json.load(open('$R/$1.json')); t=collections.Counter()
for s in d['searches']: t.update(s['phases'])
print('$1', 'mean %.3f median %.3f max %.3f valid %s' % (d['bfs_mean_time']*1e3, d['bfs_median_time']*1e3, max(s['time'] for s in d['searches'])*1e3, all(s['validated'] for s in d['searches'])), ' '.join('%s=%.3f' % (k, v / len(d['searches']) * 1e3) for k, v in sorted(t.items())))" || tail -5 $R/$1.log; xz -q $R/$1.json $R/$1.log; pack; }
run() {  # tag pythonpath n args...
  local t=$1 pp=$2 n=$3; shift 3
  echo "+ [$t] mpirun -n $n python -m dbfs --scale 22 --roots 8 $* --backend gpu --json s22_$t.json" >> $R/commands.txt
  (cd $R && PYTHONPATH=$pp timeout -s KILL 100 mpirun -x PYTHONPATH -x CUDA_MPS_PIPE_DIRECTORY -n $n python3 -P -m dbfs --scale 22 --roots 8 "$@" --backend gpu --json s22_$t.json > s22_$t.log 2>&1)
  summary s22_$t
}
new=/tmp/site old=$OLD:/tmp/site
G="--grid 4x4 --comm nvshmem"
run 1rank_1 $new 1
run 4x4_old_1 $old 16 $G; run 4x4_new_1 $new 16 $G
run 4x4_new_2 $new 16 $G; run 4x4_old_2 $old 16 $G
run 4x4_old_3 $old 16 $G; run 4x4_new_3 $new 16 $G
run 1rank_2 $new 1
P=$PWD/.probe/turns
mkdir -p $R/p_new
(cd $R && PROBE_CHECK=1 PROBE_DIR=$R/p_new timeout -s KILL 100 mpirun -x PYTHONPATH -x CUDA_MPS_PIPE_DIRECTORY -x PROBE_DIR -x PROBE_CHECK -n 16 python3 -P $P/probe.py --scale 22 --roots 8 --grid 4x4 --comm nvshmem --backend gpu --json p_new.json > p_new.log 2>&1)
python3 $P/analyse.py $R/p_new > $R/p_new.txt 2>&1; head -40 $R/p_new.txt
scripts/mps.sh stop >/dev/null 2>&1
(cd $R && tar cJf p_new.tar.xz p_new p_new.log p_new.json && rm -rf p_new p_new.log p_new.json)
xz -q $R/*.log 2>/dev/null
pack

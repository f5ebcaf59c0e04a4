#!/usr/bin/env bash
# one H200 under MPS: (a) GPU tests of the whole-level path after the launch/wait refactor; (b) a stalled search's
# cause: /proc/stat's steal and every CPU's counters around each 4x4 run, the busiest threads of the machine, the
# turn checkpoints (stall.py lists late ranks); plain, `--bind-to core` and `nice -n -5` in rotation
set -u
START=$(date +%s)
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
RESULTS=$R OUT= scripts/gpu_check.sh > $R/install.log 2>&1 || { tail -20 $R/install.log; exit 1; }
{ nvidia-smi; date -u; nproc; } > $R/machine.txt 2>&1
pack() { (cd $OUT && tar cf r.tar r); }
eval "$(scripts/mps.sh start)"
echo "+ pytest -m gpu tests/test_timing.py tests/test_ops.py -k 'marks or host_words or flag'" >> $R/commands.txt
timeout 120 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_timing.py tests/test_ops.py -k "marks or host_words or flag" > $R/tests_1.log 2>&1; tail -2 $R/tests_1.log
echo "+ mpirun -n 4 pytest --with-mpi -m gpu tests/test_bfs.py -k 'nvshmem or whole_levels'" >> $R/commands.txt
CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=25 timeout 240 mpirun -x PYTHONPATH -x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_ACTIVE_THREAD_PERCENTAGE -n 4 python3 -m pytest --with-mpi -q -m gpu -p no:cacheprovider tests/test_bfs.py -k "nvshmem or whole_levels" > $R/tests_4.log 2>&1; tail -2 $R/tests_4.log
echo "tests done at $(( $(date +%s) - START )) s"; pack
P=$PWD/.probe/turns
for k in 1 2 3 4 5 6 7 8 9 10 11 12; do
  [ $(( $(date +%s) - START )) -gt 520 ] && break
  pre=""; bind=""; [ $((k % 3)) = 1 ] && bind="--bind-to core"; [ $((k % 3)) = 2 ] && pre="nice -n -5"
  mkdir -p $R/p_$k; grep -E "^cpu" /proc/stat > $R/stat_before_$k.txt
  ps -eLo tid,comm,time= > $R/ps_before_$k.txt
  echo "+ [$k] $pre mpirun $bind -n 16 probe.py --scale 22 --roots 8 --grid 4x4 --comm nvshmem" >> $R/commands.txt
  (cd $R && PROBE_CHECK=1 PROBE_DIR=$R/p_$k timeout -s KILL 60 $pre mpirun $bind -x PYTHONPATH -x CUDA_MPS_PIPE_DIRECTORY -x PROBE_DIR -x PROBE_CHECK -n 16 python3 -P $P/probe.py --scale 22 --roots 8 --grid 4x4 --comm nvshmem --backend gpu --json s22_$k.json > s22_$k.log 2>&1)
  grep -E "^cpu" /proc/stat > $R/stat_after_$k.txt
  ps -eLo tid,comm,time= > $R/ps_after_$k.txt
  python3 -c "
import json; d=json.load(open('$R/s22_$k.json'))
print('$k $pre $bind', 'mean %.3f median %.3f max %.3f valid %s' % (d['bfs_mean_time']*1e3, d['bfs_median_time']*1e3, max(s['time'] for s in d['searches'])*1e3, all(s['validated'] for s in d['searches'])))"
  paste <(awk '{print $1, $9}' $R/stat_before_$k.txt) <(awk '{print $9}' $R/stat_after_$k.txt) | awk '$3 != $2 {print "  steal", $1, $3 - $2}' | head -5
  python3 $P/stall.py $R/p_$k 2.0 > $R/stall_$k.txt 2>&1; head -8 $R/stall_$k.txt
  (cd $R && tar cJf p_$k.tar.xz p_$k && rm -rf p_$k); xz -q $R/s22_$k.json $R/s22_$k.log; pack
done
scripts/mps.sh stop >/dev/null 2>&1; pack

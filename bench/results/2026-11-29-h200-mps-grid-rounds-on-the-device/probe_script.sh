#!/usr/bin/env bash
# one H200 under MPS, a probe: host durations of the grid rounds' launches and waits at 16 PEs (4x4, 16x1),
# against ae0ff9c's level replays and waits; the rounds with three queued; the switch-node test (1 rank)
set -u
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
RESULTS=$R OUT= scripts/gpu_check.sh > $R/install.log 2>&1 || { tail -20 $R/install.log; exit 1; }
mkdir -p /tmp/oh && tar xJf .probe/hae0.tar.xz -C /tmp/oh
mkdir -p /tmp/v3 && cp -rL dbfs graph500 /tmp/v3/ && sed -i 's/^ROUND_GRAPHS = 3/ROUND_GRAPHS = 4/; s/^ROUNDS_AHEAD = 2/ROUNDS_AHEAD = 3/' /tmp/v3/dbfs/grid_rounds.py && grep -n '^ROUND' /tmp/v3/dbfs/grid_rounds.py
pack() { (cd $OUT && tar cf r.tar r); }
timeout 150 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_grid_rounds.py > $R/t_rounds.log 2>&1; echo "rounds tests: $(tail -n 1 $R/t_rounds.log)"; grep -m3 -A12 'Error' $R/t_rounds.log | head -30
eval "$(scripts/mps.sh start)"
P=$PWD/.probe/p56
run() {  # tag pythonpath n args...
  local t=$1 pp=$2 n=$3; shift 3
  (cd $R && PYTHONPATH=$P:$pp timeout -s KILL 110 mpirun -x PYTHONPATH -x CUDA_MPS_PIPE_DIRECTORY -n $n python3 -P -m dbfs --scale 22 --roots 8 "$@" --backend gpu --json s22_$t.json > s22_$t.log 2>&1)
  python3 -c "
import json; d=json.load(open('$R/s22_$t.json')); print('$t', 'mean %.3f median %.3f min %.3f valid %s' % (d['bfs_mean_time']*1e3, d['bfs_median_time']*1e3, d['bfs_min_time']*1e3, all(s['validated'] for s in d['searches'])))" || tail -5 $R/s22_$t.log
  grep '^\[probe' $R/s22_$t.log | cut -c1-900
  xz -q $R/s22_$t.json $R/s22_$t.log; pack
}
run 4x4 /tmp/site 16 --grid 4x4 --comm nvshmem
run 4x4_prev /tmp/oh/hae0:/tmp/site 16 --grid 4x4 --comm nvshmem
run 4x4_ahead3 /tmp/v3:/tmp/site 16 --grid 4x4 --comm nvshmem
run 16 /tmp/site 16 --comm nvshmem
scripts/mps.sh stop >/dev/null 2>&1
pack

#!/usr/bin/env bash
# one H100 under MPS: the in-place stretch's edge limit at 16 PEs (old tree h8ac against the new one), GPU tests
set -u
T0=$(date +%s); late() { [ $(( $(date +%s) - T0 )) -gt ${1:-420} ]; }
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
RESULTS=$R OUT= scripts/gpu_check.sh > /tmp/install.txt 2>&1 || { tail -20 /tmp/install.txt; exit 1; }
{ nvidia-smi; date -u; nproc; } > $R/machine.txt 2>&1
P=$PWD/.probe
tar xJf $P/h8ac.tar.xz -C /tmp
pack() { (cd $OUT && tar cf r.tar r); }
run() { # n file env-prefix -- args
  local n=$1 f=$2 pre=$3; shift 3
  if late; then echo "skipped $f (time)"; return; fi
  echo "+ $pre mpirun -n $n python -m dbfs $* --backend gpu --json $f.json" >> $R/commands.txt
  (cd $R && env $pre timeout -s KILL 100 mpirun -x CUDA_MPS_PIPE_DIRECTORY -x PYTHONPATH -x PEER_IN_PLACE_EDGES -n $n python3 -P $MAIN "$@" --backend gpu --json $f.json > $f.log 2>&1) || { echo "FAILED $f"; tail -3 $R/$f.log; pkill -9 -f "dbfs"; sleep 3; }
  python3 $P/summ.py $R/$f.json | cut -c1-220
  xz -q $R/$f.json $R/$f.log; pack
}
t() { # name n pct files...
  local name=$1 n=$2 pct=$3; shift 3
  if late 480; then echo "skipped $name (time)"; return; fi
  echo "+ (MPS, CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=$pct) mpirun -n $n python -m pytest --with-mpi -m gpu $*" >> $R/commands.txt
  CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=$pct timeout -s KILL 110 mpirun -x PYTHONPATH -x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_ACTIVE_THREAD_PERCENTAGE -n $n python3 -m pytest --with-mpi -q -m gpu -p no:cacheprovider "$@" > $R/$name.log 2>&1
  echo "$name: $(grep -aE 'passed|failed|error' $R/$name.log | tail -1)"; xz -q $R/$name.log; pack
}
eval "$(scripts/mps.sh start)"
export PEER_IN_PLACE_EDGES=
NEW="$P/cap.py"; OLD="-m dbfs"
MAIN=$NEW run 1 s22_1 "" --scale 22 --roots 8
MAIN=$OLD run 16 s22_16_old "PYTHONPATH=/tmp/h8ac:/tmp/site" --scale 22 --roots 8 --comm nvshmem
MAIN=$NEW run 16 s22_16_4M "PEER_IN_PLACE_EDGES=4194304" --scale 22 --roots 8 --comm nvshmem
MAIN=$NEW run 16 s22_16_1M "PEER_IN_PLACE_EDGES=1048576" --scale 22 --roots 8 --comm nvshmem
MAIN=$NEW run 16 s22_16_16M "PEER_IN_PLACE_EDGES=16777216" --scale 22 --roots 8 --comm nvshmem
MAIN=$OLD run 16 s22_16_old2 "PYTHONPATH=/tmp/h8ac:/tmp/site" --scale 22 --roots 8 --comm nvshmem
MAIN=$NEW run 16 s22_16_4M2 "PEER_IN_PLACE_EDGES=4194304" --scale 22 --roots 8 --comm nvshmem
MAIN=$NEW run 16 s22_16_4M_log "PEER_IN_PLACE_EDGES=4194304" --scale 22 --roots 8 --comm nvshmem --log-levels
MAIN=$OLD run 16 s22_4x4_old "PYTHONPATH=/tmp/h8ac:/tmp/site" --scale 22 --roots 8 --comm nvshmem --grid 4x4
MAIN=$NEW run 16 s22_4x4_4M "PEER_IN_PLACE_EDGES=4194304" --scale 22 --roots 8 --comm nvshmem --grid 4x4
t tests_4pes 4 25 tests/test_bfs.py tests/test_grid_loop.py -k "nvshmem or levels_report or launches"
t tests_2pes 2 50 tests/test_bfs.py tests/test_grid_loop.py -k "nvshmem or levels_report or launches"

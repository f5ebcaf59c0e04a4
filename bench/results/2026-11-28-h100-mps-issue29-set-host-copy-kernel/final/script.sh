#!/usr/bin/env bash
# one H100 under MPS, HEAD: the host-copy kernel's tests (1 rank), the NVSHMEM GPU tests at 4, 3 and 2 PEs,
# then 22 on 1 and 16 PEs and 24 on 1 and 4 PEs with the final code
set -u
T0=$(date +%s); late() { [ $(( $(date +%s) - T0 )) -gt ${1:-420} ]; }
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
RESULTS=$R OUT= scripts/gpu_check.sh > /tmp/install.txt 2>&1 || { tail -20 /tmp/install.txt; exit 1; }
{ nvidia-smi; date -u; nproc; } > $R/machine.txt 2>&1
pack() { (cd $OUT && tar cf r.tar r); }
P=$PWD/.probe
echo "+ python -m pytest -m gpu tests/test_ops.py -k copy_words or backend_copy (1 rank, no MPS)" >> $R/commands.txt
timeout -s KILL 60 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_ops.py -k "copy_words or backend_copy" > $R/tests_1.log 2>&1
echo "1 rank: $(grep -aE 'passed|failed|error' $R/tests_1.log | tail -1)"
t() { # name n pct files...
  local name=$1 n=$2 pct=$3; shift 3
  if late 330; then echo "skipped $name (time)"; return; fi
  echo "+ (MPS, CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=$pct) mpirun -n $n python -m pytest --with-mpi -m gpu $*" >> $R/commands.txt
  mkdir -p /tmp/out_$name
  CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=$pct timeout -s KILL 130 mpirun --output-filename /tmp/out_$name -x PYTHONPATH -x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_ACTIVE_THREAD_PERCENTAGE -n $n python3 -m pytest --with-mpi -q -m gpu -p no:cacheprovider "$@" > $R/$name.log 2>&1
  local last=$(cat /tmp/out_$name/1/rank.0/stdout 2>/dev/null | grep -aE 'passed|failed|error' | tail -1)
  echo "$name: $last"
  case "$last" in *passed*) [[ "$last" == *failed* ]] || { xz -q $R/$name.log; pack; return; } ;; esac
  for f in /tmp/out_$name/1/rank.*/std*; do echo "== $f"; grep -aE "^E |Error|error|assert|FAILED|Traceback|File " $f | head -40; done > $R/${name}_ranks.txt; tail -60 $R/${name}_ranks.txt
  xz -q $R/$name.log; pack
}
eval "$(scripts/mps.sh start)"
t tests_4pes 4 25 tests/test_bfs.py tests/test_grid_loop.py -k "nvshmem or levels_report or launches"
t tests_3pes 3 33 tests/test_bfs.py tests/test_grid_loop.py -k "nvshmem or levels_report or launches"
t tests_2pes 2 50 tests/test_bfs.py tests/test_grid_loop.py -k "nvshmem or levels_report or launches"
run() { # n file args
  local n=$1 f=$2; shift 2
  if late; then echo "skipped $f (time)"; return; fi
  echo "+ mpirun -n $n python -m dbfs $* --backend gpu --json $f.json" >> $R/commands.txt
  (cd $R && timeout -s KILL 120 mpirun -x CUDA_MPS_PIPE_DIRECTORY -x PYTHONPATH -n $n python3 -P -m dbfs "$@" --backend gpu --json $f.json > $f.log 2>&1) || { echo "FAILED $f"; tail -3 $R/$f.log; pkill -9 -f "m dbfs"; sleep 3; }
  python3 $P/summ.py $R/$f.json | cut -c1-200
  xz -q $R/$f.json $R/$f.log; pack
}
run 1 s22_1 --scale 22 --roots 8
run 16 s22_16 --scale 22 --roots 8 --comm nvshmem
run 16 s22_16b --scale 22 --roots 8 --comm nvshmem
run 1 s24_1 --scale 24 --roots 16
run 4 s24_4 --scale 24 --roots 16
pack

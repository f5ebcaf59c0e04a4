#!/usr/bin/env bash
# four GPUs of one host: construction's chunks up to 2^26 (new) against b9f12f1 (old), alternating; GPU tests of the build and memory at 1 and 2 ranks; the pair's host profile; 4 GPUs 4x1 and 2x2
set -u
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
T0=$(date +%s); late() { [ $(( $(date +%s) - T0 )) -gt ${1:-530} ]; }
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
RESULTS=$R OUT= scripts/gpu_check.sh > /tmp/install.txt 2>&1 || { tail -20 /tmp/install.txt; exit 1; }
{ nvidia-smi; nvidia-smi topo -m; date -u; nproc; } > $R/machine.txt 2>&1
tar xJf .probe/b9.tar.xz -C /tmp
P=$PWD/.probe
pack() { (cd $OUT && tar czf r.tgz r); }
run() { # tag n file args
  local tag=$1 n=$2 f=$3 pp=/tmp/site; shift 3
  if late; then echo "skipped $f (time)"; return; fi
  if [ $tag = old ]; then pp=/tmp/oldhead:/tmp/site; fi
  echo "+ [$tag] mpirun -n $n python -m dbfs $* --backend gpu --json $f.json" >> $R/commands.txt
  (cd $R && PYTHONPATH=$pp timeout -s KILL 120 mpirun -x PYTHONPATH -x NVSHMEM_SYMMETRIC_SIZE -n $n python3 -P -m dbfs "$@" --backend gpu --json $f.json > $f.log 2>&1) || { echo "FAILED $f"; tail -3 $R/$f.log; pkill -9 -f "m dbfs"; sleep 3; }
  python3 $P/summ.py $R/$f.json | cut -c1-230
  python3 -c "import json; d=json.load(open('$R/$f.json')); print('   construction', round(d['construction_time'],3), {k: round(v,3) for k,v in d['construction_phases'].items()}, 'peak', round(d['memory_peak']/2**30,2), 'est', round(d['memory_estimate']/2**30,2))" 2>/dev/null
  grep -h "chunk\|construction over" $R/$f.log | head -2
  gzip -q $R/$f.json $R/$f.log; pack
}
echo "+ python -m pytest -m gpu tests/test_build.py tests/test_memory.py (1 rank, then 2)" >> $R/commands.txt
timeout -s KILL 120 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_build.py tests/test_memory.py > $R/tests_1.log 2>&1; echo "tests 1 rank: $(tail -1 $R/tests_1.log)"
timeout -s KILL 150 mpirun -x PYTHONPATH -n 2 python3 -m pytest --with-mpi -q -m gpu -p no:cacheprovider tests/test_build.py tests/test_memory.py > $R/tests_2.log 2>&1; echo "tests 2 ranks: $(grep -E 'passed|failed' $R/tests_2.log | tail -2 | tr '\n' ' ')"
run new 2 s28_2_first --scale 28 --roots 16
run new 2 s28_2a --scale 28 --roots 16
run old 2 s28_2_old1 --scale 28 --roots 16
run new 1 s27_1a --scale 27 --roots 16
run old 1 s27_1_old --scale 27 --roots 16
run new 2 s28_2b --scale 28 --roots 16
run old 2 s28_2_old2 --scale 28 --roots 16
run new 1 s27_1b --scale 27 --roots 16
if ! late; then
  echo "+ mpirun -n 2 python host_probe.py --scale 28 --roots 16" >> $R/commands.txt
  (cd $R && timeout -s KILL 100 mpirun -x PYTHONPATH -n 2 python3 -P $P/host_probe.py --scale 28 --roots 16 --backend gpu > host_probe_s28_2.log 2>&1) || echo "FAILED host probe"
  grep host_probe $R/host_probe_s28_2.log; gzip -q $R/host_probe_s28_2.log; pack
fi
run new 4 s29_4 --scale 29 --roots 16
run old 4 s29_4_old --scale 29 --roots 16
NVSHMEM_SYMMETRIC_SIZE=4G run new 4 s29_4_2x2 --scale 29 --roots 16 --grid 2x2 --comm nvshmem

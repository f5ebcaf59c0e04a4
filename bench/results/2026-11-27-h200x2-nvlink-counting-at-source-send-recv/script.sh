#!/usr/bin/env bash
# the counting at the source over the exchange's send/recv round: construction of scale 28 on two (new
# against 3e17e1e in one start) and 27 on one, then the build's GPU tests at 2 GPUs
set -u
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
RESULTS=$R OUT= scripts/gpu_check.sh > /tmp/install.txt 2>&1 || { tail -20 /tmp/install.txt; exit 1; }
{ nvidia-smi; nvidia-smi topo -m; date -u; nproc; python3 -c "import dbfs.build as b; print('p2p counting present:', not hasattr(b._NcclExchange, 'sum_counts') and hasattr(b._Passes, '_count_at_source'))"; } > $R/machine.txt 2>&1
tar xJf .probe/old3e1.tar.xz -C /tmp
pack() { (cd $OUT && tar cf r.tar r); }
run() { # tag n file args
  local tag=$1 n=$2 f=$3 pp=/tmp/site; shift 3
  if [ $tag = old ]; then pp=/tmp/oldhead:/tmp/site; fi
  echo "+ [$tag] mpirun -n $n python -m dbfs $* --backend gpu --json $f.json" >> $R/commands.txt
  (cd $R && PYTHONPATH=$pp timeout -s KILL 60 mpirun -x PYTHONPATH -n $n python3 -P -m dbfs "$@" --backend gpu --json $f.json > $f.log 2>&1) || { echo "FAILED $f"; tail -3 $R/$f.log; pkill -9 -f "m dbfs"; sleep 3; }
  python3 -c "import json; d=json.load(open('$R/$f.json')); print('$f', 'GTEPS', round(d['bfs_harmonic_mean_TEPS']/1e9,1), 'construction', round(d['construction_time'],3), {k: round(v,3) for k,v in d['construction_phases'].items()}, 'setup', round(d['construction_setup_time'],3), 'peak', round(d['memory_peak']/2**30,2), 'cpeak', round(d['memory_construction_peak']/2**30,3), 'valid', sum(bool(x['validated']) for x in d['searches']))" 2>/dev/null
  xz -q $R/$f.json $R/$f.log; pack
}
run old 2 s28_2_old --scale 28 --roots 4
run new 2 s28_2_new --scale 28 --roots 4
run new 1 s27_1_new --scale 27 --roots 4
run new 2 s28_2_new_b --scale 28 --roots 4
echo "+ mpirun -n 2 python -m pytest --with-mpi -m gpu tests/test_build.py" >> $R/commands.txt
timeout -s KILL 60 mpirun -x PYTHONPATH -n 2 python3 -m pytest --with-mpi -q -m gpu -p no:cacheprovider tests/test_build.py > $R/tests_2gpus.log 2>&1
echo "2 GPUs: $(strings $R/tests_2gpus.log | grep -E 'passed|failed' | tail -1)"
cd $R && for f in *.log; do [ -f $f ] && xz -q $f; done; pack

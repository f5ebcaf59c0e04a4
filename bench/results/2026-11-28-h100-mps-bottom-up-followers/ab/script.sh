#!/usr/bin/env bash
# one H100 under MPS: followers' GPU tests (1 rank; 2, 3, 4 PEs) and a first A/B against 26d14dd at 24 on 2x2
set -u
T0=$(date +%s); late() { [ $(( $(date +%s) - T0 )) -gt ${1:-520} ]; }
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
RESULTS=$R OUT= scripts/gpu_check.sh > /tmp/install.txt 2>&1 || { tail -20 /tmp/install.txt; exit 1; }
tar xJf .probe/old26d.tar.xz -C /tmp
{ nvidia-smi; date -u; nproc; python3 -c "import cuda.bindings, cupy; print('cuda.bindings', cuda.bindings.__version__, 'cupy', cupy.__version__)";
  ( cd /tmp; python3 -P -c "import dbfs.followers as f; print('new code:', f.__file__)";
  PYTHONPATH=/tmp/old26d:/tmp/site python3 -P -c "import dbfs.build as b, importlib.util as u; print('old code (no followers):', u.find_spec('dbfs.followers') is None, b.__file__)" ); } > $R/machine.txt 2>&1
tail -3 $R/machine.txt
P=$PWD/.probe
pack() { (cd $OUT && tar cf r.tar r); }
t() { # name n pct files...
  local name=$1 n=$2 pct=$3; shift 3
  if late 430; then echo "skipped $name (time)"; return; fi
  echo "+ (MPS, CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=$pct) mpirun -n $n python -m pytest --with-mpi -m gpu $*" >> $R/commands.txt
  CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=$pct timeout -s KILL 150 mpirun -x PYTHONPATH -x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_ACTIVE_THREAD_PERCENTAGE -n $n python3 -m pytest --with-mpi -q -m gpu -p no:cacheprovider "$@" > $R/$name.log 2>&1
  echo "$name: $(grep -aE 'passed|failed|error' $R/$name.log | tail -1)"; pack
}
run() { # code n file args
  local code=$1 n=$2 f=$3; shift 3
  if late; then echo "skipped $f (time)"; return; fi
  local pp=/tmp/site; [ $code = old ] && pp=/tmp/old26d:/tmp/site
  echo "+ ($code) mpirun -n $n python -m dbfs $* --backend gpu --json $f.json" >> $R/commands.txt
  (cd $R && PYTHONPATH=$pp timeout -s KILL 150 mpirun -x CUDA_MPS_PIPE_DIRECTORY -x PYTHONPATH -n $n python3 -P -m dbfs "$@" --backend gpu --json $f.json > $f.log 2>&1) || { echo "FAILED $f"; tail -3 $R/$f.log; pkill -9 -f "m dbfs"; sleep 3; }
  python3 $P/summ.py $R/$f.json | head -1 | cut -c1-200
  xz -q $R/$f.json $R/$f.log; pack
}
echo "+ python -m pytest -m gpu tests/test_followers.py (1 rank, no MPS)" >> $R/commands.txt
timeout -s KILL 100 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_followers.py > $R/tests_1.log 2>&1
echo "1 rank: $(grep -aE 'passed|failed|error' $R/tests_1.log | tail -1)"
eval "$(scripts/mps.sh start)"
t tests_4pes 4 25 tests/test_followers.py tests/test_bfs.py -k "followers or gate or nvshmem"
t tests_2pes 2 50 tests/test_followers.py
t tests_3pes 3 33 tests/test_followers.py
run new 4 s24_4_new1 --scale 24 --roots 16
run old 4 s24_4_old1 --scale 24 --roots 16
run new 4 s24_4_new2 --scale 24 --roots 16
run old 4 s24_4_old2 --scale 24 --roots 16
run new 1 s24_1_new --scale 24 --roots 16
run new 4 s24_4_new_log --scale 24 --roots 16 --log-levels
cd $R && for f in *.log; do [ -f $f ] && xz -q $f; done; pack

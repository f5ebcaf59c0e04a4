#!/usr/bin/env bash
# the waits polled with relaxed loads: the leader update (old) against the change (new), one H100 under MPS
set -u
T0=$(date +%s); late() { [ $(( $(date +%s) - T0 )) -gt ${1:-480} ]; }
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
tar xJf .probe/oldhead_leader.tar.xz -C /tmp
RESULTS=$R OUT= scripts/gpu_check.sh > /tmp/install.txt 2>&1 || { tail -20 /tmp/install.txt; exit 1; }
eval "$(scripts/mps.sh start)"
{ nvidia-smi; date -u; git log --oneline -1; } > $R/machine.txt 2>&1
python3 -m dbfs generate --lattice 2048x2048 --out /tmp/lat.h5 > $R/generate.log 2>&1 || echo "FAILED generate"
echo "+ python -m pytest -q -m gpu tests/test_ops.py -k peer_sums" >> $R/commands.txt
timeout -s KILL 60 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_ops.py -k peer_sums > $R/tests_peer_sums.log 2>&1; echo "peer_sums: $(tail -1 $R/tests_peer_sums.log)"
P=$PWD/.probe
cd $R
run() { # tag n file args
  local tag=$1 n=$2 f=$3; shift 3
  if late; then echo "skipped $f (time)"; return; fi
  if [ $tag = old ]; then pp=/tmp/oldhead:/tmp/site; else pp=/tmp/site; fi
  echo "+ [$tag] mpirun -n $n python -m dbfs $* --backend gpu --json $f.json" >> commands.txt
  timeout -s KILL 120 mpirun -x CUDA_MPS_PIPE_DIRECTORY -x PYTHONPATH=$pp -n $n python3 -P -m dbfs "$@" --backend gpu --json $f.json > $f.log 2>&1 || { echo "FAILED $f"; pkill -9 -f "m dbfs"; sleep 3; }
  python3 $P/summ.py $f.json | cut -c1-420
}
run new 4 lat2x2_new1 --graph /tmp/lat.h5 --roots 2 --log-levels
run old 4 lat2x2_old1 --graph /tmp/lat.h5 --roots 2 --log-levels
run new 4 lat2x2_new2 --graph /tmp/lat.h5 --roots 2 --log-levels
run old 4 lat2x2_old2 --graph /tmp/lat.h5 --roots 2 --log-levels
run new 4 lat2x2_new3 --graph /tmp/lat.h5 --roots 2
run new 2 lat2x1_new --graph /tmp/lat.h5 --roots 2 --log-levels
run old 2 lat2x1_old --graph /tmp/lat.h5 --roots 2 --log-levels
run new 4 lat4x1_new --graph /tmp/lat.h5 --roots 2 --log-levels --grid 4x1
cd $OLDPWD
for p in 2 3 4; do
  if late 400; then echo "skipped tests $p (time)"; continue; fi
  echo "+ (CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=$((100/p))) mpirun -n $p python -m pytest --with-mpi -q -m gpu tests/test_bfs.py tests/test_grid_loop.py" >> $R/commands.txt
  CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=$((100/p)) timeout -s KILL 110 mpirun -x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_ACTIVE_THREAD_PERCENTAGE -x PYTHONPATH -n $p python3 -m pytest --with-mpi -q -m gpu -p no:cacheprovider tests/test_bfs.py tests/test_grid_loop.py > $R/tests_${p}ranks.log 2>&1 || { pkill -9 -f "m pytest"; sleep 3; }; echo "tests $p ranks: $(tail -1 $R/tests_${p}ranks.log)"
done
cd $R
run new 1 s24_1 --scale 24 --roots 16
run new 4 s24_4_new --scale 24 --roots 16
run old 4 s24_4_old --scale 24 --roots 16
run new 16 s22_16 --scale 22 --roots 8
run new 1 s22_1 --scale 22 --roots 8
run new 1 s26_1 --scale 26 --roots 16
run new 4 s26_4 --scale 26 --roots 16
cd $R && for f in *.log *.json; do gzip -q $f; done; cd ..; tar czf $OUT/r.tgz r && rm -rf r

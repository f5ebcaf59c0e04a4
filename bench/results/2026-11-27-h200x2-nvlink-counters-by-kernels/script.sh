#!/usr/bin/env bash
# the level's counters handed over by its kernels: GPU tests; scale 28 on two and 27 on one, new (HEAD)
# against 163ddce alternating in one machine start
set -u
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
RESULTS=$R OUT= scripts/gpu_check.sh > /tmp/install.txt 2>&1 || { tail -20 /tmp/install.txt; exit 1; }
{ nvidia-smi; nvidia-smi topo -m; date -u; nproc; } > $R/machine.txt 2>&1
P=$PWD/.probe
tar xJf $P/old163.tar.xz -C /tmp
echo "+ python -m pytest -m gpu tests/test_ops.py -k 'publish or frontier_figures' tests/test_ops_peer_levels.py" >> $R/commands.txt
timeout -s KILL 60 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_ops.py -k "publish or frontier_figures" tests/test_ops_peer_levels.py > $R/tests_1gpu.log 2>&1
echo "1 GPU: $(strings $R/tests_1gpu.log | grep -E 'passed|failed' | tail -1)"
echo "+ mpirun -n 2 python -m pytest --with-mpi -m gpu tests/test_bfs.py -k 'level_totals or nvshmem or stream_transports'" >> $R/commands.txt
timeout -s KILL 150 mpirun -x PYTHONPATH -n 2 python3 -m pytest --with-mpi -q -m gpu -p no:cacheprovider tests/test_bfs.py -k "level_totals or nvshmem or stream_transports" > $R/tests_2gpus.log 2>&1
echo "2 GPUs: $(strings $R/tests_2gpus.log | grep -E 'passed|failed' | tail -1)"
run() {   # run <ranks> <name> <scale> <pythonpath> [extra]
  n=$1; f=$2; s=$3; pp=$4; shift 4
  echo "+ ($f: PYTHONPATH=$pp) mpirun -n $n python -m dbfs --scale $s --roots 16 --backend gpu $* --json $f.json" >> $R/commands.txt
  (cd $R && PYTHONPATH=$pp timeout -s KILL 90 mpirun -x PYTHONPATH -n $n python3 -P -m dbfs --scale $s --roots 16 --backend gpu "$@" --json $f.json > $f.log 2>&1) || { echo "FAILED $f"; tail -3 $R/$f.log; }
  python3 $P/summ.py $R/$f.json | cut -c1-170
}
NEW=/tmp/site OLD=/tmp/oldhead:/tmp/site
run 2 s28_2_new 28 $NEW
run 2 s28_2_old 28 $OLD
run 1 s27_1_new 27 $NEW
run 2 s28_2_new_b 28 $NEW
run 2 s28_2_old_b 28 $OLD
run 1 s27_1_old 27 $OLD
run 2 s28_2_new_log 28 $NEW --log-levels
cd $R && for f in *.log *.json; do [ -f $f ] && xz -q $f; done; cd ..; tar cf $OUT/r.tar r && rm -rf r

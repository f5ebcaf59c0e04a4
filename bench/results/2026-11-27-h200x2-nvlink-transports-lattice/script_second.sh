#!/usr/bin/env bash
# two GPUs (warm, same start): more weak samples alternating, 28 over mpi, the 2048^2 lattice on 1 and 2
set -u
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
export PYTHONPATH=/tmp/site
T0=$(date +%s); late() { [ $(( $(date +%s) - T0 )) -gt ${1:-300} ]; }
P=$PWD/.probe
run() { # n file args
  local n=$1 f=$2; shift 2
  if late; then echo "skipped $f (time)"; return; fi
  echo "+ mpirun -n $n python -m dbfs $* --backend gpu --json $f.json" >> $R/commands.txt
  (cd $R && timeout -s KILL 120 mpirun -x PYTHONPATH -n $n python3 -P -m dbfs "$@" --backend gpu --json $f.json > $f.log 2>&1) || { echo "FAILED $f"; tail -3 $R/$f.log; pkill -9 -f "m dbfs"; sleep 3; }
  python3 $P/summ.py $R/$f.json | cut -c1-200
}
run 2 s28_2c --scale 28 --roots 16
run 1 s27_1b --scale 27 --roots 16
run 2 s28_2d --scale 28 --roots 16
run 1 s27_1c --scale 27 --roots 16
run 2 s28_2e --scale 28 --roots 16
run 2 s28_2_mpi --scale 28 --roots 16 --comm mpi
python3 -m dbfs generate --lattice 2048x2048 --out /tmp/lat.h5 > $R/generate.log 2>&1 || echo "FAILED generate"
run 1 lat_1 --graph /tmp/lat.h5 --roots 4
run 2 lat_2 --graph /tmp/lat.h5 --roots 4
cd $R && for f in *.log *.json; do [ -f $f ] && gzip -q $f; done; cd ..; tar czf $OUT/r.tgz r && rm -rf r

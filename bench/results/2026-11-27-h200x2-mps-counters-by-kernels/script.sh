#!/usr/bin/env bash
# one GPU of the pair under MPS: Kronecker 24 on 2x2 (new against 163ddce, alternating), one rank, the
# 2048^2 lattice on 2x2 and one rank (new); then the conditional-node probe
set -u
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
RESULTS=$R OUT= scripts/gpu_check.sh > /tmp/install.txt 2>&1 || { tail -20 /tmp/install.txt; exit 1; }
export CUDA_VISIBLE_DEVICES=0
{ nvidia-smi; date -u; nproc; } > $R/machine.txt 2>&1
P=$PWD/.probe
[ -d /tmp/oldhead ] || tar xJf $P/old163.tar.xz -C /tmp
eval "$(scripts/mps.sh start)"
NEW=/tmp/site OLD=/tmp/oldhead:/tmp/site
run() {   # run <ranks> <name> <pythonpath> args...
  n=$1; f=$2; pp=$3; shift 3
  echo "+ ($f: PYTHONPATH=$pp) mpirun -n $n python -m dbfs $* --backend gpu --json $f.json" >> $R/commands.txt
  (cd $R && PYTHONPATH=$pp timeout -s KILL 80 mpirun -x CUDA_MPS_PIPE_DIRECTORY -x CUDA_VISIBLE_DEVICES -x PYTHONPATH -n $n python3 -P -m dbfs "$@" --backend gpu --json $f.json > $f.log 2>&1) || { echo "FAILED $f"; tail -3 $R/$f.log; }
  python3 $P/summ.py $R/$f.json | cut -c1-170
}
run 1 s24_1 $NEW --scale 24 --roots 16
run 4 s24_4_new $NEW --scale 24 --roots 16
run 4 s24_4_old $OLD --scale 24 --roots 16
run 4 s24_4_new_b $NEW --scale 24 --roots 16
run 4 s24_4_old_b $OLD --scale 24 --roots 16
python3 -m dbfs generate --lattice 2048x2048 --out /tmp/lat.h5 > $R/generate.log 2>&1 || echo "FAILED generate"
run 1 lat1 $NEW --graph /tmp/lat.h5 --roots 2
run 4 lat2x2 $NEW --graph /tmp/lat.h5 --roots 2
scripts/mps.sh stop > /dev/null 2>&1
mkdir -p $OUT/cond && OUT=$OUT/cond timeout -s KILL 150 bash .probe/cond_probe.sh > /dev/null 2>&1
tail -30 $OUT/cond/cond_probe.txt 2>/dev/null
cd $R && for f in *.log *.json; do [ -f $f ] && xz -q $f; done; cd ..; tar cf $OUT/r.tar r && rm -rf r
cd $OUT && tar cf cond.tar cond && rm -rf cond

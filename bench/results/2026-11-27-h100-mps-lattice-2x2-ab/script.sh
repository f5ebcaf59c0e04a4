#!/usr/bin/env bash
# one H100 under MPS: the 2x2 lattice level, the day's last code (cur) against 2956c5a (prev) and 99b8d01 (old), alternating
set -u
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
mkdir -p /tmp/prev /tmp/old && tar xJf .probe/prev.tar.xz -C /tmp/prev && tar xJf .probe/old99b.tar.xz -C /tmp/old
RESULTS=$R OUT= scripts/gpu_check.sh > /tmp/install.txt 2>&1 || { tail -20 /tmp/install.txt; exit 1; }
eval "$(scripts/mps.sh start)"
{ nvidia-smi; date -u; } > $R/machine.txt 2>&1
python3 -m dbfs generate --lattice 2048x2048 --out /tmp/lat.h5 > $R/generate.log 2>&1 || echo "FAILED generate"
P=$PWD/.probe
run() { # tag file args
  local tag=$1 f=$2; shift 2
  case $tag in cur) pp=/tmp/site;; prev) pp=/tmp/prev/oldhead:/tmp/site;; old) pp=/tmp/old/oldhead:/tmp/site;; esac
  echo "+ [$tag] mpirun -n 4 python -m dbfs $* --backend gpu --json $f.json" >> $R/commands.txt
  (cd $R && timeout -s KILL 100 mpirun -x CUDA_MPS_PIPE_DIRECTORY -x PYTHONPATH=$pp -n 4 python3 -P -m dbfs "$@" --backend gpu --json $f.json > $f.log 2>&1) || { echo "FAILED $f"; pkill -9 -f "m dbfs"; sleep 3; }
  python3 $P/summ.py $R/$f.json | cut -c1-330
}
for k in 1 2 3; do
  run cur lat2x2_cur$k --graph /tmp/lat.h5 --roots 2 --log-levels
  run prev lat2x2_prev$k --graph /tmp/lat.h5 --roots 2 --log-levels
  run old lat2x2_old$k --graph /tmp/lat.h5 --roots 2 --log-levels
done
cd $R && for f in *.log *.json; do [ -f $f ] && gzip -q $f; done; cd ..; tar czf $OUT/r.tgz r && rm -rf r

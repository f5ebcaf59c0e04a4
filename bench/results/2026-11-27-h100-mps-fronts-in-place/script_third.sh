#!/usr/bin/env bash
# one H100 under MPS: where the 2x2 peak rises (new, old)
set -u
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
RESULTS=$R OUT= scripts/gpu_check.sh > /tmp/install.txt 2>&1 || { tail -20 /tmp/install.txt; exit 1; }
tar xJf .probe/ce6.tar.xz -C /tmp    # commit ce6e2d0's dbfs package as /tmp/oldhead/dbfs
eval "$(scripts/mps.sh start)"
P=$PWD/.probe
for f in peak_new peak_old; do
  case $f in *old*) pp=/tmp/oldhead:/tmp/site;; *) pp=/tmp/site;; esac
  echo "+ mpirun -n 4 python peak_probe.py --scale 24 --roots 4 --backend gpu  ($f)" >> $R/commands.txt
  (cd $R && timeout -s KILL 60 mpirun -x CUDA_MPS_PIPE_DIRECTORY -x PYTHONPATH=$pp -n 4 python3 $P/peak_probe.py --scale 24 --roots 4 --backend gpu > $f.log 2>&1) || echo "FAILED $f"
  grep "probe:" $R/$f.log | tail -12 | cut -c1-420
done
cd $R && for f in *.log; do [ -f $f ] && gzip -q $f; done; cd ..; tar czf $OUT/r.tgz r && rm -rf r

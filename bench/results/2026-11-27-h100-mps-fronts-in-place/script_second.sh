#!/usr/bin/env bash
# one H100 under MPS: where the 2x2 peak rises (new, old), Kronecker 22 on 16 PEs new/old, 22 on 1
set -u
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
RESULTS=$R OUT= scripts/gpu_check.sh > /tmp/install.txt 2>&1 || { tail -20 /tmp/install.txt; exit 1; }
{ nvidia-smi; date -u; nproc; } > $R/machine.txt 2>&1
tar xJf .probe/ce6.tar.xz -C /tmp    # commit ce6e2d0's dbfs package as /tmp/oldhead/dbfs
eval "$(scripts/mps.sh start)"
P=$PWD/.probe
for f in peak_new peak_old; do
  case $f in *old*) pp=/tmp/oldhead:/tmp/site;; *) pp=/tmp/site;; esac
  echo "+ mpirun -n 4 python peak_probe.py --scale 24 --roots 4 --backend gpu  ($f)" >> $R/commands.txt
  (cd $R && timeout -s KILL 60 mpirun -x CUDA_MPS_PIPE_DIRECTORY -x PYTHONPATH=$pp -n 4 python3 $P/peak_probe.py --scale 24 --roots 4 --backend gpu > $f.log 2>&1) || echo "FAILED $f"
  grep "probe:\|peak" $R/$f.log | tail -14 | cut -c1-300
done
for f in s22_16_new1 s22_16_old1 s22_16_new2 s22_16_old2 s22_1; do
  case $f in *old*) pp=/tmp/oldhead:/tmp/site;; *) pp=/tmp/site;; esac
  n=16; case $f in *_1) n=1;; esac
  echo "+ mpirun -n $n python -m dbfs --scale 22 --roots 8 --comm nvshmem --backend gpu --json $f.json  (${f%?})" >> $R/commands.txt
  c=nvshmem; [ $n = 1 ] && c=auto
  (cd $R && timeout -s KILL 90 mpirun -x CUDA_MPS_PIPE_DIRECTORY -x PYTHONPATH=$pp -n $n python3 -P -m dbfs --scale 22 --roots 8 --comm $c --backend gpu --json $f.json > $f.log 2>&1) || { echo "FAILED $f"; tail -3 $R/$f.log; }
  python3 $P/summ.py $R/$f.json | cut -c1-200
done
cd $R && for f in *.log *.json; do [ -f $f ] && gzip -q $f; done; cd ..; tar czf $OUT/r.tgz r && rm -rf r

#!/usr/bin/env bash
# one H100 under MPS (warm machine): Kronecker 24 on 4 PEs, old/new alternating
set -u
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
export PYTHONPATH=/tmp/site
eval "$(scripts/mps.sh start)"
P=$PWD/.probe
for f in s24_4_old2 s24_4_new3 s24_4_old3 s24_4_new4; do
  case $f in *old*) pp=/tmp/oldhead:/tmp/site;; *) pp=/tmp/site;; esac
  echo "+ mpirun -n 4 python -m dbfs --scale 24 --roots 16 --backend gpu --json $f.json  (${f%?})" >> $R/commands.txt
  (cd $R && timeout -s KILL 60 mpirun -x CUDA_MPS_PIPE_DIRECTORY -x PYTHONPATH=$pp -n 4 python3 -P -m dbfs --scale 24 --roots 16 --backend gpu --json $f.json > $f.log 2>&1) || echo "FAILED $f"
  python3 $P/summ.py $R/$f.json | cut -c1-200
done
cd $R && for f in *.log *.json; do [ -f $f ] && gzip -q $f; done; cd ..; tar czf $OUT/r.tgz r && rm -rf r

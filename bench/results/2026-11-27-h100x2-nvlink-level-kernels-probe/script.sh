#!/usr/bin/env bash
# two GPUs: fine phase marks of the whole levels and the host gaps (probe, no code change)
set -u
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
RESULTS=$R OUT= scripts/gpu_check.sh > /tmp/install.txt 2>&1 || { tail -20 /tmp/install.txt; exit 1; }
P=$PWD/.probe
for s in 28; do
  (cd $R && timeout -s KILL 200 mpirun -x PYTHONPATH -n 2 python3 $P/level_probe.py --scale $s --roots 16 --backend gpu --json p$s.json > p$s.log 2>&1) || echo "FAILED $s"
  python3 $P/summ.py $R/p$s.json | cut -c1-250
  grep "probe experiment" $R/p$s.log; sed -n "/^probe: fine/,/^probe: host/p" $R/p$s.log | head -12
done
cd $R && for f in *.log *.json; do [ -f $f ] && gzip -q $f; done; cd ..; tar czf $OUT/r.tgz r && rm -rf r

#!/usr/bin/env bash
# two GPUs: to_list without its column filter (probe tree) against HEAD, fine phase marks
set -u
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
RESULTS=$R OUT= scripts/gpu_check.sh > /tmp/install.txt 2>&1 || { tail -20 /tmp/install.txt; exit 1; }
tar xJf .probe/nofilter.tar.xz -C /tmp
P=$PWD/.probe
for v in head; do
  if [ $v = nofilter ]; then pp=/tmp/nofilter:/tmp/site; else pp=/tmp/site; fi
  (cd $R && timeout -s KILL 200 mpirun -x PYTHONPATH=$pp -n 2 python3 $P/level_probe.py --scale 28 --roots 16 --backend gpu --json p_$v.json > p_$v.log 2>&1) || echo "FAILED $v"
  python3 $P/summ.py $R/p_$v.json | cut -c1-250
  grep -i "warn" $R/p_$v.log | head -2
  grep "probe synthetic" $R/p_$v.log | head -20; sed -n "/^probe: fine/,/^probe: host/p" $R/p_$v.log | grep "td., True" | head -2
done
cd $R && for f in *.log *.json; do [ -f $f ] && gzip -q $f; done; cd ..; tar czf $OUT/r.tgz r && rm -rf r

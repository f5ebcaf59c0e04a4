#!/usr/bin/env bash
# two GPUs: the gather's block-wide reservation (new) against the commit before (old), fine phase marks
set -u
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
RESULTS=$R OUT= scripts/gpu_check.sh > /tmp/install.txt 2>&1 || { tail -20 /tmp/install.txt; exit 1; }
{ nvidia-smi; nvidia-smi topo -m; date -u; nproc; } > $R/machine.txt 2>&1
tar xJf .probe/head.tar.xz -C /tmp
echo "+ python -m pytest -q -m gpu tests/test_message.py" >> $R/commands.txt
timeout -s KILL 100 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_message.py > $R/tests_message.log 2>&1
echo "tests message: $(tail -1 $R/tests_message.log)"
P=$PWD/.probe
run() { # tag file args
  local tag=$1 f=$2; shift 2
  if [ $tag = old ]; then pp=/tmp/oldhead:/tmp/site; else pp=/tmp/site; fi
  echo "+ [$tag] mpirun -n 2 python .probe/level_probe.py $* --backend gpu --json $f.json" >> $R/commands.txt
  (cd $R && timeout -s KILL 150 mpirun -x PYTHONPATH=$pp -n 2 python3 $P/level_probe.py "$@" --backend gpu --json $f.json > $f.log 2>&1) || { echo "FAILED $f"; pkill -9 -f "level_probe"; sleep 3; }
  python3 $P/summ.py $R/$f.json | cut -c1-200
  sed -n "/^probe: fine/,/^probe: host/p" $R/$f.log | grep "td', True" | head -1 | cut -c1-400
}
run new s28_new1 --scale 28 --roots 16
run old s28_old1 --scale 28 --roots 16
run new s28_new2 --scale 28 --roots 16
run old s28_old2 --scale 28 --roots 16
cd $R && for f in *.log *.json; do [ -f $f ] && gzip -q $f; done; cd ..; tar czf $OUT/r.tgz r && rm -rf r

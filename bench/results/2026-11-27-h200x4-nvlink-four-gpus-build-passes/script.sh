#!/usr/bin/env bash
# four GPUs of one host: Kronecker 27 on 1, 28 on 2, 29 on 4 (issue 33's four-GPU item); construction probe per pass; NCCL bandwidth
set -u
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
T0=$(date +%s); late() { [ $(( $(date +%s) - T0 )) -gt ${1:-520} ]; }
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
RESULTS=$R OUT= scripts/gpu_check.sh > /tmp/install.txt 2>&1 || { tail -20 /tmp/install.txt; exit 1; }
{ nvidia-smi; nvidia-smi topo -m; date -u; nproc; } > $R/machine.txt 2>&1
P=$PWD/.probe
pack() { (cd $OUT && tar czf r.tgz r); }
run() { # n file args
  local n=$1 f=$2; shift 2
  if late; then echo "skipped $f (time)"; return; fi
  echo "+ mpirun -n $n python -m dbfs $* --backend gpu --json $f.json" >> $R/commands.txt
  (cd $R && timeout -s KILL 150 mpirun -x PYTHONPATH -n $n python3 -P -m dbfs "$@" --backend gpu --json $f.json > $f.log 2>&1) || { echo "FAILED $f"; tail -3 $R/$f.log; pkill -9 -f "m dbfs"; sleep 3; }
  python3 $P/summ.py $R/$f.json | cut -c1-300
  python3 -c "import json; d=json.load(open('$R/$f.json')); print('   construction', round(d['construction_time'],3), {k: round(v,3) for k,v in d['construction_phases'].items()})" 2>/dev/null
  gzip -q $R/$f.json $R/$f.log; pack
}
probe() { # n file args
  local n=$1 f=$2; shift 2
  if late; then echo "skipped $f (time)"; return; fi
  (cd $R && timeout -s KILL 120 mpirun -x PYTHONPATH -n $n python3 -P $P/build_probe.py "$@" --backend gpu --json $f.json > $f.log 2>&1) || { echo "FAILED $f"; tail -3 $R/$f.log; pkill -9 -f "build_probe"; sleep 3; }
  grep -E "probe|construction:" $R/$f.log; gzip -q $R/$f.json $R/$f.log; pack
}
run 1 s27_1 --scale 27 --roots 16
run 2 s28_2 --scale 28 --roots 16
run 4 s29_4 --scale 29 --roots 16 --log-levels
probe 2 probe_s28_2 --scale 28 --roots 2
probe 1 probe_s27_1 --scale 27 --roots 2
for n in 2 4; do timeout 60 mpirun -x PYTHONPATH -n $n python3 $P/nccl_bw.py 2>&1 | tail -6; done
run 4 s29_4_2x2 --scale 29 --roots 16 --grid 2x2
run 1 s27_1b --scale 27 --roots 16
run 4 s29_4b --scale 29 --roots 16
run 2 s28_2b --scale 28 --roots 16

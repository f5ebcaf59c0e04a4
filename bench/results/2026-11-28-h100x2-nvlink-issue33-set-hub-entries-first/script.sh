#!/usr/bin/env bash
# GPUs of one host: issue 33's set with the rows' hub entries first (27 on 1, 28 on 2 over every transport with
# per-level logs, 27 on 2, 29 on 4, the 2048^2 lattice on 1 and 2)
set -u
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
T0=$(date +%s); late() { [ $(( $(date +%s) - T0 )) -gt ${1:-470} ]; }
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
RESULTS=$R OUT= scripts/gpu_check.sh > /tmp/install.txt 2>&1 || { tail -20 /tmp/install.txt; exit 1; }
{ nvidia-smi; nvidia-smi topo -m; date -u; nproc; ( cd /tmp; python3 -P -c "import dbfs.build as c; print('row order present:', hasattr(c, 'longest_columns_first'))" ); } > $R/machine.txt 2>&1
GPUS=$(nvidia-smi -L | wc -l)
P=$PWD/.probe
pack() { (cd $OUT && tar cf r.tar r); }
run() { # n file args
  local n=$1 f=$2; shift 2
  if late; then echo "skipped $f (time)"; return; fi
  echo "+ mpirun -n $n python -m dbfs $* --backend gpu --json $f.json" >> $R/commands.txt
  (cd $R && timeout -s KILL 100 mpirun -x PYTHONPATH -n $n python3 -P -m dbfs "$@" --backend gpu --json $f.json > $f.log 2>&1) || { echo "FAILED $f"; tail -3 $R/$f.log; pkill -9 -f "m dbfs"; sleep 3; }
  python3 $P/summ.py $R/$f.json | cut -c1-150
  python3 -c "import json; d=json.load(open('$R/$f.json')); print('   construction', round(d['construction_time'],3), {k: round(v,3) for k,v in d['construction_phases'].items()}, 'peak', round(d['memory_peak']/2**30,2), 'est', round(d['memory_estimate']/2**30,2))" 2>/dev/null
  xz -q $R/$f.json $R/$f.log; pack
}
run 2 warm_2 --scale 22 --roots 1
run 1 s27_1a --scale 27 --roots 16
run 2 s28_2a --scale 28 --roots 16
run 2 s28_2b --scale 28 --roots 16 --log-levels
run 1 s27_1b --scale 27 --roots 16
run 2 s28_2c --scale 28 --roots 16
[ "$GPUS" -ge 4 ] && run 4 s29_4a --scale 29 --roots 16
run 2 s28_2_nccl --scale 28 --roots 16 --comm nccl --log-levels
run 2 s27_2 --scale 27 --roots 16
run 1 s27_1c --scale 27 --roots 16
[ "$GPUS" -ge 4 ] && run 4 s29_4b --scale 29 --roots 16
if ! late 380; then
  python3 -m dbfs generate --lattice 2048x2048 --out /tmp/lat.h5 > $R/generate.log 2>&1 || echo "FAILED generate"
  run 1 lat_1 --graph /tmp/lat.h5 --roots 4
  run 2 lat_2 --graph /tmp/lat.h5 --roots 4
fi
run 2 s28_2_mpi --scale 28 --roots 16 --comm mpi --log-levels
cd $R && for f in *.log; do [ -f $f ] && xz -q $f; done; pack

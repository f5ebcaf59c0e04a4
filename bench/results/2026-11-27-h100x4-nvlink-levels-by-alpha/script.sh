#!/usr/bin/env bash
# probe: per-level logs of Kronecker 27 on 1 GPU and 29 on 4, and the direction rule's alpha
set -u
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
T0=$(date +%s); late() { [ $(( $(date +%s) - T0 )) -gt ${1:-500} ]; }
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
RESULTS=$R OUT= scripts/gpu_check.sh > /tmp/install.txt 2>&1 || { tail -20 /tmp/install.txt; exit 1; }
{ nvidia-smi; nvidia-smi topo -m; date -u; nproc; git log -1 --format=%H 2>/dev/null; } > $R/machine.txt 2>&1
GPUS=$(nvidia-smi -L | wc -l)
P=$PWD/.probe
pack() { (cd $OUT && tar cf r.tar r); }
run() { # n file args
  local n=$1 f=$2; shift 2
  if late; then echo "skipped $f (time)"; return; fi
  echo "+ mpirun -n $n python -m dbfs $* --backend gpu --json $f.json" >> $R/commands.txt
  (cd $R && timeout -s KILL 120 mpirun -x PYTHONPATH -n $n python3 -P -m dbfs "$@" --backend gpu --json $f.json > $f.log 2>&1) || { echo "FAILED $f"; tail -3 $R/$f.log; pkill -9 -f "m dbfs"; sleep 3; }
  python3 $P/summ.py $R/$f.json | cut -c1-200
  xz -q $R/$f.json $R/$f.log; pack
}
run 1 s27_1 --scale 27 --roots 16 --log-levels
[ "$GPUS" -ge 4 ] && run 4 s29_4 --scale 29 --roots 16 --log-levels
run 1 s27_1_a4 --scale 27 --roots 16 --alpha 4
[ "$GPUS" -ge 4 ] && run 4 s29_4_a4 --scale 29 --roots 16 --alpha 4 --log-levels
[ "$GPUS" -ge 4 ] && run 4 s29_4_a40 --scale 29 --roots 16 --alpha 40
run 2 s28_2 --scale 28 --roots 16 --log-levels
pack

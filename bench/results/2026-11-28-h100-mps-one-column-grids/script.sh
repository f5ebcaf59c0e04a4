#!/usr/bin/env bash
# one H100 under MPS, HEAD: issue 29's runs on the grid of one column (Px1) beside the default squarest grid
set -u
T0=$(date +%s); late() { [ $(( $(date +%s) - T0 )) -gt ${1:-540} ]; }
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
RESULTS=$R OUT= scripts/gpu_check.sh > /tmp/install.txt 2>&1 || { tail -20 /tmp/install.txt; exit 1; }
{ nvidia-smi; date -u; nproc; (cd /tmp && python3 -P -c "import dbfs, importlib.util as u; print('code:', dbfs.__file__, 'followers absent:', u.find_spec('dbfs.followers') is None)"); } > $R/machine.txt 2>&1
tail -1 $R/machine.txt
P=$PWD/.probe
pack() { (cd $OUT && tar cf r.tar r); }
run() { # n file args
  local n=$1 f=$2; shift 2
  if late; then echo "skipped $f (time)"; return; fi
  echo "+ mpirun -n $n python -m dbfs $* --backend gpu --json $f.json" >> $R/commands.txt
  (cd $R && timeout -s KILL 120 mpirun -x CUDA_MPS_PIPE_DIRECTORY -x PYTHONPATH -n $n python3 -P -m dbfs "$@" --backend gpu --json $f.json > $f.log 2>&1) || { echo "FAILED $f"; tail -3 $R/$f.log; pkill -9 -f "m dbfs"; sleep 3; }
  python3 $P/summ.py $R/$f.json | head -1 | cut -c1-200
  xz -q $R/$f.json $R/$f.log; pack
}
eval "$(scripts/mps.sh start)"
python3 -m dbfs generate --lattice 2048x2048 --out /tmp/lat.h5 > $R/generate.log 2>&1 || echo "FAILED generate"
run 1 s24_1 --scale 24 --roots 16
run 4 s24_4x1 --scale 24 --roots 16 --grid 4x1
run 4 s24_2x2 --scale 24 --roots 16
run 2 s24_2x1 --scale 24 --roots 16
run 4 s24_4x1b --scale 24 --roots 16 --grid 4x1
run 1 s26_1 --scale 26 --roots 16
run 4 s26_4x1 --scale 26 --roots 16 --grid 4x1
run 4 lat_4x1 --graph /tmp/lat.h5 --roots 2 --grid 4x1
run 1 lat_1 --graph /tmp/lat.h5 --roots 2
run 1 s22_1 --scale 22 --roots 8
run 16 s22_16x1 --scale 22 --roots 8 --comm nvshmem --grid 16x1
run 4 s26_2x2 --scale 26 --roots 16
cd $R && for f in *.log; do [ -f $f ] && xz -q $f; done; pack

#!/usr/bin/env bash
# one H200 under MPS, HEAD, one start: issue 29's rows with the default level launch (the device's, where every
# exchange is on the device; each JSON's level_launch says which ran): Kronecker 24 at 1, 2, 4 PEs; 26 at 1, 4;
# the 2048x2048 lattice at 4 PEs; 22 on 4x4 (16 PEs) and one rank in turn, four rounds; the per-level log
set -u
T0=$(date +%s); late() { [ $(( $(date +%s) - T0 )) -gt ${1:-560} ]; }
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
python3 -m pip install -q --no-index --no-build-isolation --no-deps . > /tmp/install.txt 2>&1 || { tail -5 /tmp/install.txt; exit 1; }
{ nvidia-smi; date -u; nproc; git log -1 --format=%H 2>/dev/null; } > $R/machine.txt 2>&1
P=$PWD/.probe
pack() { (cd $OUT && tar cf r.tar r); }
run() { # n file args
  local n=$1 f=$2; shift 2
  if late; then echo "skipped $f (time)"; return; fi
  echo "+ mpirun -n $n python -m dbfs $* --backend gpu --json $f.json" >> $R/commands.txt
  (cd $R && timeout -s KILL 120 mpirun -x CUDA_MPS_PIPE_DIRECTORY -x PYTHONPATH -n $n python3 -P -m dbfs "$@" --backend gpu --json $f.json > $f.log 2>&1) || { echo "FAILED $f"; tail -3 $R/$f.log; pkill -9 -f "m dbfs"; sleep 3; }
  python3 $P/summ.py $R/$f.json 2>&1 | tail -1 | cut -c1-260
  pack
}
eval "$(scripts/mps.sh start)"
python3 -m dbfs generate --lattice 2048x2048 --out /tmp/lat.h5 > $R/generate.log 2>&1 || echo "FAILED generate"
run 4 lat_4 --graph /tmp/lat.h5 --roots 2
run 1 s24_1 --scale 24 --roots 16
run 2 s24_2 --scale 24 --roots 16
run 4 s24_4 --scale 24 --roots 16
run 1 s26_1 --scale 26 --roots 16
run 4 s26_4 --scale 26 --roots 16
for k in 1 2 3 4; do
  run 16 s22_16_$k --scale 22 --roots 8 --comm nvshmem
  run 1 s22_1_$k --scale 22 --roots 8
done
run 4 s24_4_log --scale 24 --roots 2 --log-levels
scripts/mps.sh stop >/dev/null 2>&1
cd $R && for f in *.log *.json; do [ -f $f ] && xz -q $f; done; pack

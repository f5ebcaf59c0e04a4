#!/usr/bin/env bash
# a fresh two-H100 machine: does the first build at 28 on two pay its extra time when each GPU has first built 28 alone (as much memory)?
set -u
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
RESULTS=$R OUT= scripts/gpu_check.sh > /tmp/install.txt 2>&1 || { tail -20 /tmp/install.txt; exit 1; }
{ nvidia-smi; nvidia-smi topo -m; date -u; nproc; } > $R/machine.txt 2>&1
pack() { (cd $OUT && tar cf r.tar r); }
run() { # n file args
  local n=$1 f=$2; shift 2
  echo "+ ${CUDA_VISIBLE_DEVICES:+CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES }mpirun -n $n python -m dbfs $* --backend gpu --json $f.json" >> $R/commands.txt
  (cd $R && timeout -s KILL 100 mpirun -x PYTHONPATH ${CUDA_VISIBLE_DEVICES:+-x CUDA_VISIBLE_DEVICES} -n $n python3 -P -m dbfs "$@" --backend gpu --json $f.json > $f.log 2>&1) || { echo "FAILED $f"; tail -3 $R/$f.log; }
  grep -h "construction:" $R/$f.log | cut -c16-150
  xz -q $R/$f.json $R/$f.log; pack
}
CUDA_VISIBLE_DEVICES=1 run 1 s28_gpu1 --scale 28 --roots 2
CUDA_VISIBLE_DEVICES=0 run 1 s28_gpu0 --scale 28 --roots 2
run 2 s28_2_first --scale 28 --roots 2
run 2 s28_2_second --scale 28 --roots 2
run 2 s28_2_third --scale 28 --roots 2

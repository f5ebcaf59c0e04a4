#!/usr/bin/env bash
# one H200 under MPS: where a device-driven stretch's time outside its kernel's levels goes; host
# time.time_ns() around a stretch's graph launch and wait against the kernel's START_NS (%globaltimer),
# a probe tree of main (.probe/hstretch.tar.xz); Kronecker 22, 2 roots, --log-levels, 16x1 and 4x4
set -u
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
RESULTS=$R OUT= scripts/gpu_check.sh > $R/install.log 2>&1 || { tail -20 $R/install.log; exit 1; }
{ nvidia-smi; date -u; nproc; } > $R/machine.txt 2>&1
mkdir -p /tmp/oh && tar xJf .probe/hstretch.tar.xz -C /tmp/oh
pack() { (cd $OUT && tar cf r.tar r); }
eval "$(scripts/mps.sh start)"
run() {  # tag n args...
  local t=$1 n=$2; shift 2
  echo "+ [$t] mpirun -n $n python -m dbfs --scale 22 --roots 2 $* --comm nvshmem --backend gpu --log-levels --json s22_$t.json" >> $R/commands.txt
  (cd $R && PYTHONPATH=/tmp/oh/hstretch:/tmp/site timeout -s KILL 150 mpirun -x PYTHONPATH -x CUDA_MPS_PIPE_DIRECTORY -n $n python3 -P -m dbfs --scale 22 --roots 2 "$@" --comm nvshmem --backend gpu --log-levels --json s22_$t.json > s22_$t.log 2>&1)
  pack
}
run 4x4 16 --grid 4x4; run 16x1 16; run 2x2 4 --grid 2x2
scripts/mps.sh stop >/dev/null 2>&1
for f in $R/*.log; do echo "== $f"; grep -E "\[probe\] rank (0|5|15) " $f | tail -6; grep -E "level +[0-9]+ " $f | tail -7 | cut -c1-60,150-; done
xz -q $R/*.json $R/*.log
pack

#!/usr/bin/env bash
# one H200 under MPS: per-level logs at Kronecker 22, 2 roots: one rank, 16x1 and 4x4 with --comm nvshmem
# (4x4's bottom-up segments searched in place), 4x4 with --comm mpi (the rotation, host-staged)
set -u
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
RESULTS=$R OUT= scripts/gpu_check.sh > $R/install.log 2>&1 || { tail -20 $R/install.log; exit 1; }
{ nvidia-smi; date -u; nproc; } > $R/machine.txt 2>&1
pack() { (cd $OUT && tar cf r.tar r); }
(cd $R && python3 -P -m dbfs --scale 22 --roots 2 --backend gpu --log-levels --json s22_1.json > s22_1.log 2>&1)
echo "+ python -m dbfs --scale 22 --roots 2 --backend gpu --log-levels --json s22_1.json" >> $R/commands.txt
eval "$(scripts/mps.sh start)"
run() {  # tag n args...
  local t=$1 n=$2; shift 2
  echo "+ [$t] mpirun -n $n python -m dbfs --scale 22 --roots 2 $* --backend gpu --log-levels --json s22_$t.json" >> $R/commands.txt
  (cd $R && timeout -s KILL 150 mpirun -x PYTHONPATH -x CUDA_MPS_PIPE_DIRECTORY -n $n python3 -P -m dbfs --scale 22 --roots 2 "$@" --backend gpu --log-levels --json s22_$t.json > s22_$t.log 2>&1)
  pack
}
run 16x1 16 --comm nvshmem; run 4x4 16 --grid 4x4 --comm nvshmem; run 4x4_off 16 --grid 4x4 --row-copy off --comm nvshmem; run 4x4_mpi 16 --grid 4x4 --comm mpi
scripts/mps.sh stop >/dev/null 2>&1
for f in $R/*.log; do echo "== $f"; grep -E "level +[0-9]+ |search [0-9]/" $f; done
xz -q $R/*.json $R/*.log
pack

#!/usr/bin/env bash
# one H200 under MPS, the levels launched by the device where every exchange is on it: a sweep of the main command on small graphs at 2-16 PEs (--comm nvshmem and mpi, odd
# grids, forced directions, encodings, the row copy off), every search validated, --root runs against a plain BFS
set -u
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
RESULTS=$R OUT= scripts/gpu_check.sh > $R/install.log 2>&1 || { tail -20 $R/install.log; exit 1; }
{ nvidia-smi; date -u; nproc; git log -1 --format=%H 2>/dev/null; } > $R/machine.txt 2>&1
G=.probe/gsweep/g
for a in "kron12 --scale 12 --edgefactor 16" "kron14e4 --scale 14 --edgefactor 4" "lat64r --lattice 64x64 --remove-fraction 0.3" "lat3d --lattice 12x12x12 --no-scramble"; do
  set -- $a; n=$1; shift; python3 -P -m dbfs generate "$@" --out $G/$n.h5 --force --backend cpu >> $R/generate.log 2>&1
done
eval "$(scripts/mps.sh start)"
timeout -s KILL 530 python3 .probe/gsweep/run.py  # (sweep.py here) $R ${SWEEP_SECONDS:-470} > $R/sweep.out 2>&1
scripts/mps.sh stop >/dev/null 2>&1
tail -30 $R/sweep.out
(cd $OUT && tar cf r.tar r)

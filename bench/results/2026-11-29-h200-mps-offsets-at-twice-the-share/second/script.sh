#!/usr/bin/env bash
# one H200 under MPS (the base tree with its kernels this time): offsets built at twice a block's share (the working tree, "new") against a6f387f ("base",
# .probe/base) in turn: 26 on 4 ranks (4x1) and 16 ranks (16x1), peaks and times; the build's GPU tests
set -u
T0=$(date +%s); late() { [ $(( $(date +%s) - T0 )) -gt ${1:-330} ]; }
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl >/dev/null 2>&1
python3 -m pip install -q --no-index --no-build-isolation --no-deps . > /tmp/install.txt 2>&1 || { tail -5 /tmp/install.txt; exit 1; }
{ nvidia-smi; date -u; nproc; } > $R/machine.txt 2>&1
P=$PWD/.probe
pack() { (cd $OUT && tar cf r.tar r); }
run() { # tree n file args
  local tree=$1 n=$2 f=$3; shift 3
  if late; then echo "skipped $f (time)"; return; fi
  local pp=/tmp/site; [ $tree = base ] && pp=$P/base:/tmp/site
  echo "+ [$tree] mpirun -n $n python -m dbfs $* --backend gpu --json $f.json" >> $R/commands.txt
  (cd $R && PYTHONPATH=$pp timeout -s KILL 170 mpirun -x CUDA_MPS_PIPE_DIRECTORY -x PYTHONPATH -n $n python3 -P -m dbfs "$@" --backend gpu --json $f.json > $f.log 2>&1) || { echo "FAILED $f"; tail -3 $R/$f.log; pkill -9 -f "m dbfs"; sleep 3; }
  python3 $P/summ.py $R/$f.json 2>&1 | tail -1 | cut -c1-200
  grep -a "memory peak\|construction:" $R/$f.log | cut -c1-150
  pack
}
eval "$(scripts/mps.sh start)"
run base 4 s26_4_base --scale 26 --roots 8
run new 4 s26_4_new3 --scale 26 --roots 8
run base 16 s26_16_base --scale 26 --roots 4
run new 16 s26_16_new2 --scale 26 --roots 4
run base 4 s26_4_base2 --scale 26 --roots 8
scripts/mps.sh stop >/dev/null 2>&1
cd $R && for f in *.log *.json; do [ -f $f ] && xz -q $f; done; pack

#!/usr/bin/env bash
# one H100 under MPS: followers 0 / 1 / 2 against 26d14dd at 24 on 2x2 and 22 on 4x4, launches timed
set -u
T0=$(date +%s); late() { [ $(( $(date +%s) - T0 )) -gt ${1:-540} ]; }
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
(cd /tmp && python3 -P -c "import dbfs.followers" 2>/dev/null) || { RESULTS=$R OUT= scripts/gpu_check.sh > /tmp/install.txt 2>&1 || { tail -20 /tmp/install.txt; exit 1; }; }
[ -d /tmp/old26d ] || tar xJf .probe/old26d.tar.xz -C /tmp
P=$PWD/.probe
pack() { (cd $OUT && tar cf r.tar r); }
run() { # fol n file args   (fol: 0 1 2 or old)
  local fol=$1 n=$2 f=$3; shift 3
  if late; then echo "skipped $f (time)"; return; fi
  local pp=/tmp/site mod="$P/folprobe.py"; [ $fol = old ] && { pp=/tmp/old26d:/tmp/site; mod="-m dbfs"; }
  echo "+ (FOL=$fol) mpirun -n $n python $mod $* --backend gpu --json $f.json" >> $R/commands.txt
  (cd $R && FOL=$fol PYTHONPATH=$pp timeout -s KILL 150 mpirun -x FOL -x CUDA_MPS_PIPE_DIRECTORY -x PYTHONPATH -n $n python3 -P $mod "$@" --backend gpu --json $f.json > $f.log 2>&1) || { echo "FAILED $f"; tail -3 $R/$f.log; pkill -9 -f "dbfs"; sleep 3; }
  python3 $P/summ.py $R/$f.json | head -1 | cut -c1-200; grep -a "probe" $R/$f.log | cut -c1-160
  xz -q $R/$f.json $R/$f.log; pack
}
eval "$(scripts/mps.sh start)"
for k in 1 2; do
  run 0 4 s24_4_f0_$k --scale 24 --roots 16
  run 2 4 s24_4_f2_$k --scale 24 --roots 16
  run 1 4 s24_4_f1_$k --scale 24 --roots 16
  run old 4 s24_4_old_$k --scale 24 --roots 16
done
run 0 16 s22_16_f0 --scale 22 --roots 8 --comm nvshmem
run 2 16 s22_16_f2 --scale 22 --roots 8 --comm nvshmem
cd $R && for f in *.log; do [ -f $f ] && xz -q $f; done; pack

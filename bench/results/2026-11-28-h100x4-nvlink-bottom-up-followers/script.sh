#!/usr/bin/env bash
# four H100 (NVLink): followers (de5643f, FOL=2) against the same code without them (FOL=0), 28 on 2 GPUs and 29 on 4
set -u
T0=$(date +%s); late() { [ $(( $(date +%s) - T0 )) -gt ${1:-520} ]; }
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
RESULTS=$R OUT= scripts/gpu_check.sh > /tmp/install.txt 2>&1 || { tail -20 /tmp/install.txt; exit 1; }
tar xJf .probe/fol5643.tar.xz -C /tmp
{ nvidia-smi; date -u; nproc; (cd /tmp && PYTHONPATH=/tmp/fol5643:/tmp/site python3 -P -c "import dbfs.followers as f; print('code:', f.__file__)"); } > $R/machine.txt 2>&1
tail -1 $R/machine.txt; nvidia-smi -L
P=$PWD/.probe
pack() { (cd $OUT && tar cf r.tar r); }
run() { # fol n file args
  local fol=$1 n=$2 f=$3; shift 3
  if late; then echo "skipped $f (time)"; return; fi
  echo "+ (FOL=$fol, de5643f) mpirun -n $n python folprobe.py $* --backend gpu --json $f.json" >> $R/commands.txt
  (cd $R && FOL=$fol PYTHONPATH=/tmp/fol5643:/tmp/site timeout -s KILL 170 mpirun -x FOL -x PYTHONPATH -n $n python3 -P $P/folprobe.py "$@" --backend gpu --json $f.json > $f.log 2>&1) || { echo "FAILED $f"; tail -3 $R/$f.log; pkill -9 -f "dbfs"; sleep 3; }
  python3 $P/summ.py $R/$f.json | head -1 | cut -c1-200; grep -a "probe" $R/$f.log | cut -c1-160
  xz -q $R/$f.json $R/$f.log; pack
}
for k in 1 2; do
  run 0 2 s28_2_f0_$k --scale 28 --roots 16
  run 2 2 s28_2_f2_$k --scale 28 --roots 16
done
for k in 1 2; do
  run 0 4 s29_4_f0_$k --scale 29 --roots 16
  run 2 4 s29_4_f2_$k --scale 29 --roots 16
done
run 2 2 s28_2_f2_log --scale 28 --roots 4 --log-levels
cd $R && for f in *.log; do [ -f $f ] && xz -q $f; done; pack

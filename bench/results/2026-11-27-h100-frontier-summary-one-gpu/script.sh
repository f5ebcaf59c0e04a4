#!/usr/bin/env bash
# one H100: the frontier summary against 0a418b4 at scales 28 and 29 (bitmaps of 32 and 64 MiB)
set -u
R=$OUT/r; mkdir -p $R
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
T0=$(date +%s); late() { [ $(( $(date +%s) - T0 )) -gt ${1:-330} ]; }
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/pytest_mpi*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
RESULTS=$R OUT= scripts/gpu_check.sh > /tmp/install.txt 2>&1 || { tail -20 /tmp/install.txt; exit 1; }
tar xJf .probe/old0a41.tar.xz -C /tmp
{ nvidia-smi; date -u; nproc
  ( cd /tmp; python3 -P -c "import dbfs.ops.bottom_up as b; print('new: summary_for present:', hasattr(b, 'summary_for'), b.__file__)" )
  ( cd /tmp; PYTHONPATH=/tmp/oldhead:/tmp/site python3 -P -c "import dbfs.ops.bottom_up as b; print('old: summarize present:', hasattr(b, 'summarize'), b.__file__)" ); } > $R/machine.txt 2>&1
tail -2 $R/machine.txt
P=$PWD/.probe
run() { local which=$1 f=$2; shift 2
  if late; then echo "skipped $f (time)"; return; fi
  local pp=/tmp/site; [ $which = old ] && pp=/tmp/oldhead:/tmp/site
  echo "+ ($which) python -m dbfs $* --backend gpu --json $f.json" >> $R/commands.txt
  (cd $R && PYTHONPATH=$pp timeout -s KILL 100 python3 -P -m dbfs "$@" --backend gpu --json $f.json > $f.log 2>&1) || { echo "FAILED $f"; tail -3 $R/$f.log; }
  python3 $P/summ.py $R/$f.json | cut -c1-220; xz -q $R/$f.json $R/$f.log; (cd $OUT && tar cf r.tar r); }
run new s28_new1 --scale 28 --roots 16
run old s28_old1 --scale 28 --roots 16
run new s29_new1 --scale 29 --roots 16
run old s29_old1 --scale 29 --roots 16
run new s28_new2 --scale 28 --roots 16
run old s28_old2 --scale 28 --roots 16
(cd $OUT && tar cf r.tar r)

#!/usr/bin/env bash
# one H100 under MPS: issue 29's set with the in-place stretch edges and the kernel-made host copies (HEAD),
# h8ac's tree beside it for 16 and 4 PEs in the same start; the new kernel's GPU tests
set -u
T0=$(date +%s); late() { [ $(( $(date +%s) - T0 )) -gt ${1:-530} ]; }
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
RESULTS=$R OUT= scripts/gpu_check.sh > /tmp/install.txt 2>&1 || { tail -20 /tmp/install.txt; exit 1; }
{ nvidia-smi; date -u; nproc; (cd /tmp && python3 -P -c "import dbfs.ops.host_words as h; print('code:', h.__file__)"); } > $R/machine.txt 2>&1
tail -1 $R/machine.txt
P=$PWD/.probe
tar xJf $P/h8ac.tar.xz -C /tmp
pack() { (cd $OUT && tar cf r.tar r); }
run() { # n file pythonpath-prefix args
  local n=$1 f=$2 pp=$3; shift 3
  if late; then echo "skipped $f (time)"; return; fi
  echo "+ mpirun -n $n python -m dbfs $* --backend gpu --json $f.json${pp:+   (PYTHONPATH=$pp, the h8ac tree)}" >> $R/commands.txt
  (cd $R && PYTHONPATH=${pp:+$pp:}/tmp/site timeout -s KILL 120 mpirun -x CUDA_MPS_PIPE_DIRECTORY -x PYTHONPATH -n $n python3 -P -m dbfs "$@" --backend gpu --json $f.json > $f.log 2>&1) || { echo "FAILED $f"; tail -3 $R/$f.log; pkill -9 -f "m dbfs"; sleep 3; }
  python3 $P/summ.py $R/$f.json | head -1 | cut -c1-200
  xz -q $R/$f.json $R/$f.log; pack
}
echo "+ python -m pytest -m gpu tests/test_ops.py -k copy_words or backend_copy (1 rank, no MPS)" >> $R/commands.txt
timeout -s KILL 60 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_ops.py -k "copy_words or backend_copy" > $R/tests_1.log 2>&1
echo "1 rank: $(grep -aE 'passed|failed|error' $R/tests_1.log | tail -1)"
eval "$(scripts/mps.sh start)"
python3 -m dbfs generate --lattice 2048x2048 --out /tmp/lat.h5 > $R/generate.log 2>&1 || echo "FAILED generate"
O=/tmp/h8ac
run 1 s22_1 "" --scale 22 --roots 8
run 16 s22_16 "" --scale 22 --roots 8 --comm nvshmem
run 16 s22_16_h8ac $O --scale 22 --roots 8 --comm nvshmem
run 16 s22_16b "" --scale 22 --roots 8 --comm nvshmem
run 1 s24_1 "" --scale 24 --roots 16
run 2 s24_2 "" --scale 24 --roots 16
run 4 s24_4 "" --scale 24 --roots 16
run 4 s24_4_h8ac $O --scale 24 --roots 16
run 4 lat_4 "" --graph /tmp/lat.h5 --roots 2
run 1 s26_1 "" --scale 26 --roots 16
run 4 s26_4 "" --scale 26 --roots 16
run 16 s22_16_log "" --scale 22 --roots 4 --comm nvshmem --log-levels
run 4 s24_4_log "" --scale 24 --roots 4 --log-levels
cd $R && for f in *.log; do [ -f $f ] && xz -q $f; done; pack

#!/usr/bin/env bash
# one H100 under MPS: the bottom-up frontier in place on 2x2 and 3x1 (GPU tests), Kronecker 24 on 4 PEs new/old
set -u
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
T0=$(date +%s)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
RESULTS=$R OUT= scripts/gpu_check.sh > /tmp/install.txt 2>&1 || { tail -20 /tmp/install.txt; exit 1; }
{ nvidia-smi; date -u; nproc; } > $R/machine.txt 2>&1
tar xJf .probe/ce6.tar.xz -C /tmp    # commit ce6e2d0's dbfs package as /tmp/oldhead/dbfs
eval "$(scripts/mps.sh start)"
P=$PWD/.probe
for f in s24_4_new1 s24_4_old1 s24_4_new2 s24_4_old2 s24_1; do
  case $f in *old*) pp=/tmp/oldhead:/tmp/site;; *) pp=/tmp/site;; esac
  n=4; case $f in *_1) n=1;; esac
  echo "+ mpirun -n $n python -m dbfs --scale 24 --roots 16 --backend gpu --json $f.json  (${f%?})" >> $R/commands.txt
  (cd $R && timeout -s KILL 60 mpirun -x CUDA_MPS_PIPE_DIRECTORY -x PYTHONPATH=$pp -n $n python3 -P -m dbfs --scale 24 --roots 16 --backend gpu --json $f.json > $f.log 2>&1) || { echo "FAILED $f"; tail -3 $R/$f.log; }
  python3 $P/summ.py $R/$f.json | cut -c1-200
done
for n in 4 3; do
  left=$(( 570 - ($(date +%s) - T0) )); [ $left -lt 30 ] && break
  echo "+ mpirun -n $n python -m pytest --with-mpi -q -m gpu tests/test_grid_loop.py tests/test_bfs.py" >> $R/commands.txt
  timeout -s KILL $left mpirun -x CUDA_MPS_PIPE_DIRECTORY -x PYTHONPATH -n $n python3 -m pytest --with-mpi -q -m gpu -p no:cacheprovider tests/test_grid_loop.py tests/test_bfs.py > $R/tests_${n}pes.log 2>&1 || { pkill -9 -f "m pytest"; sleep 2; }
  echo "tests $n PEs ($left s): $(tail -1 $R/tests_${n}pes.log)"
done
cd $R && for f in *.log *.json; do [ -f $f ] && gzip -q $f; done; cd ..; tar czf $OUT/r.tgz r && rm -rf r

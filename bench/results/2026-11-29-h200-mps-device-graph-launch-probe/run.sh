#!/usr/bin/env bash
# one H200: a chain of 2,000 level graphs the device launches itself (tail launches; plain and cooperative level
# kernels) and a search as one graph (a WHILE conditional node over a SWITCH of level kinds), each against the
# host launching every level's graph and waiting on its flag; one process, then 16 under MPS side by side
set -u
P=$(dirname "$0")
R=$OUT/r; mkdir -p $R
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
{ nvidia-smi; nvcc --version; python3 -c "import cupy; print(cupy.__version__)"; } > $R/machine.txt 2>&1
for p in chain cond; do
  echo "+ python3 $P/$p.py (one process)" >> $R/commands.txt
  timeout 120 python3 $P/$p.py > $R/${p}_one.txt 2>&1
done
eval "$(scripts/mps.sh start)"
for p in chain cond; do
  echo "+ mpirun -n 16 python3 $P/$p.py (MPS)" >> $R/commands.txt
  timeout 180 mpirun -x CUDA_MPS_PIPE_DIRECTORY -n 16 python3 $P/$p.py > $R/${p}_sixteen.txt 2>&1
done
scripts/mps.sh stop >/dev/null 2>&1

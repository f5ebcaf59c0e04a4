#!/usr/bin/env bash
# issue 33 baseline on a 2-GPU machine: stages of scripts/gpu_check.sh, results tarred to $OUT
export NVSHMEM_SYMMETRIC_SIZE=4G PYTHONUNBUFFERED=1 NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0
export RESULTS=/tmp/r GPU_TESTS="tests/test_message.py tests/test_grid_loop.py tests/test_exchange.py tests/test_ops.py"
mkdir -p $RESULTS; nvidia-smi topo -m > $RESULTS/topo.txt 2>&1
PC="--partition-cache /tmp/pc"
L="--roots 16 --log-levels"
timeout 560 scripts/gpu_check.sh tests \
  main 1 s27_1gpu "--scale 27 $L" \
  main 2 s28_nccl_1x2 "--scale 28 $L --comm nccl --grid 1x2 $PC" \
  main 2 s28_nccl_2x1 "--scale 28 $L --comm nccl --grid 2x1 $PC" \
  main 2 s28_mpi_1x2 "--scale 28 $L --comm mpi --grid 1x2 $PC" \
  main 2 s28_mpi_2x1 "--scale 28 $L --comm mpi --grid 2x1 $PC" \
  main 2 s28_nvshmem_1x2 "--scale 28 $L --comm nvshmem --grid 1x2 $PC" \
  main 2 s28_nvshmem_2x1 "--scale 28 $L --comm nvshmem --grid 2x1 $PC" \
  main 2 s28_auto "--scale 28 $L $PC" \
  lattice-file 2048x2048 /tmp/lat.h5 \
  main 1 lat_1gpu "--graph /tmp/lat.h5 --roots 2 --log-levels" \
  main 2 lat_nccl_1x2 "--graph /tmp/lat.h5 --roots 2 --log-levels --comm nccl --grid 1x2" \
  main 2 lat_nccl_2x1 "--graph /tmp/lat.h5 --roots 2 --log-levels --comm nccl --grid 2x1" \
  main 2 lat_nvshmem_2x1 "--graph /tmp/lat.h5 --roots 2 --log-levels --comm nvshmem --grid 2x1" \
  main 2 lat_mpi_2x1 "--graph /tmp/lat.h5 --roots 2 --log-levels --comm mpi --grid 2x1" \
  main 2 s27_nccl_1x2 "--scale 27 $L --comm nccl --grid 1x2" \
  main 2 s27_nccl_2x1 "--scale 27 $L --comm nccl --grid 2x1"
echo "gpu_check rc=$?"
du -sh /tmp/pc 2>/dev/null
tar czf $OUT/all.tgz -C /tmp r

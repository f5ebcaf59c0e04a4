#!/usr/bin/env bash
# two H100: weak 27 -> 28 per transport, strong 27, the lattice, then ranks sharing GPU 0 under MPS,
# then the multi-rank GPU tests with one rank per GPU; results tarred to $OUT
export NVSHMEM_SYMMETRIC_SIZE=4G PYTHONUNBUFFERED=1 NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0
export RESULTS=/tmp/r
mkdir -p $RESULTS; nvidia-smi topo -m > $RESULTS/topo.txt 2>&1
L="--roots 16"
G="--graph /tmp/lat.h5 --roots 2 --log-levels"
GPU_TESTS="tests/test_ops_owner_groups.py tests/test_ops_build.py tests/test_collectives.py tests/test_message.py" \
OUT= timeout 350 scripts/gpu_check.sh tests \
  main 1 s27_1gpu "--scale 27 $L" \
  main 2 s28_nccl "--scale 28 $L --comm nccl" \
  main 2 s28_nccl_levels "--scale 28 $L --comm nccl --log-levels" \
  main 2 s28_mpi_levels "--scale 28 $L --comm mpi --log-levels" \
  main 2 s28_auto "--scale 28 $L" \
  main 2 s27_nccl_strong "--scale 27 $L --comm nccl" \
  lattice-file 2048x2048 /tmp/lat.h5 \
  main 1 lat_1gpu "$G" \
  main 2 lat_nccl "$G --comm nccl" \
  main 2 lat_mpi "$G --comm mpi" \
  main 2 s28_nvshmem_levels "--scale 28 $L --comm nvshmem --log-levels" \
  main 2 lat_nvshmem "$G --comm nvshmem"
echo "pair runs rc=$?"
( export CUDA_VISIBLE_DEVICES=0 RESULTS=/tmp/m DBFS_INSTALLED=1; mkdir -p /tmp/m
  OUT= timeout 80 scripts/gpu_check.sh mps-start \
    main 1 mps_s24_1rank "--scale 24 $L" main 2 mps_s24_2ranks "--scale 24 $L" main 4 mps_s24_4ranks "--scale 24 $L" mps-stop
  echo "mps runs rc=$?" )
( export RESULTS=/tmp/t DBFS_INSTALLED=1; mkdir -p /tmp/t
  OUT= timeout 100 scripts/gpu_check.sh multi 2; echo "multi rc=$?" )
mkdir -p /tmp/all; cp -r /tmp/r /tmp/m /tmp/t /tmp/all/ 2>/dev/null
tar czf $OUT/all.tgz -C /tmp/all .

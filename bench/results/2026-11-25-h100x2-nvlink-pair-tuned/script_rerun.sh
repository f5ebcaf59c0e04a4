#!/usr/bin/env bash
export NVSHMEM_SYMMETRIC_SIZE=4G PYTHONUNBUFFERED=1 NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0
export RESULTS=/tmp/r
mkdir -p $RESULTS
L="--roots 16"
G="--graph /tmp/lat.h5 --roots 2 --log-levels"
OUT= timeout 300 scripts/gpu_check.sh \
  main 2 s28_nccl "--scale 28 $L --comm nccl" \
  main 2 s28_nccl_levels "--scale 28 $L --comm nccl --log-levels" \
  main 2 s28_mpi_levels "--scale 28 $L --comm mpi --log-levels" \
  main 2 s28_auto "--scale 28 $L" \
  main 2 s27_nccl_strong "--scale 27 $L --comm nccl" \
  lattice-file 2048x2048 /tmp/lat.h5 \
  main 2 lat_nccl "$G --comm nccl" \
  main 2 lat_mpi "$G --comm mpi" \
  main 2 s28_nvshmem_levels "--scale 28 $L --comm nvshmem --log-levels" \
  main 2 lat_nvshmem "$G --comm nvshmem"
echo "pair runs rc=$?"
( export RESULTS=/tmp/t DBFS_INSTALLED=1; mkdir -p /tmp/t
  OUT= timeout 50 scripts/gpu_check.sh multi 2; echo "multi rc=$?" )
mkdir -p /tmp/all; cp -r /tmp/r /tmp/t /tmp/all/ 2>/dev/null
tar czf $OUT/all.tgz -C /tmp/all .

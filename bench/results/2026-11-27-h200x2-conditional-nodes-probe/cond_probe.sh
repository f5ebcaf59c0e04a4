#!/bin/bash
# Run from the repository root: bash .probe/cond_probe.sh   (writes into $OUT, default ./cond_out)
set -x
export OUT="${OUT:-./cond_out}"
mkdir -p "$OUT"
nvidia-smi -L
nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv
which nvcc && nvcc --version
# the script has its own 30 s hang guard per GPU wait; this outer limit keeps the whole run under 9 minutes
timeout -k 15 -s INT 540 python3 .probe/cond_probe.py 2>&1 | tee "$OUT/cond_probe_stdout.txt"

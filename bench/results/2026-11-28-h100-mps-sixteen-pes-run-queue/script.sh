#!/usr/bin/env bash
# one H100 under MPS, HEAD: 22 on 16 PEs, 64 roots; per search and rank the main thread's CPU, run-queue
# delay and preemptions, /proc/stat steal, and a sampler of every thread on the machine
set -u
T0=$(date +%s); late() { [ $(( $(date +%s) - T0 )) -gt ${1:-300} ]; }
R=$OUT/r; mkdir -p $R
export NVSHMEM_SYMMETRIC_SIZE=1G NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
RESULTS=$R OUT= scripts/gpu_check.sh > /tmp/install.txt 2>&1 || { tail -20 /tmp/install.txt; exit 1; }
{ nvidia-smi; date -u; nproc; lscpu; uname -a; cat /proc/cmdline; dmesg 2>/dev/null | grep -i -E "steal|kvm|clocksource|hypervisor" | head -20;
  for f in /proc/sys/kernel/sched_*; do echo "$f $(cat $f 2>/dev/null)"; done; ls /sys/kernel/debug/sched 2>/dev/null; cat /proc/stat | head -20; } > $R/machine.txt 2>&1
P=$PWD/.probe
eval "$(scripts/mps.sh start)"
run() { # name sampler(0/1) args
  local f=$1 s=$2; shift 2
  if late; then echo "skipped $f (time)"; return; fi
  mkdir -p $R/$f; rm -f $R/$f/searching $R/$f/stop
  [ $s = 1 ] && (cd $R/$f && python3 $P/sampler.py 0.004 > sampler.log 2>&1 &)
  head -1 /proc/stat > $R/$f/stat_before.txt
  (cd $R/$f && timeout -s KILL 120 mpirun -x CUDA_MPS_PIPE_DIRECTORY -x PYTHONPATH -n 16 python3 -P $P/ss.py "$@" --backend gpu --json $f.json > $f.log 2>&1) || echo "FAILED $f"
  head -1 /proc/stat > $R/$f/stat_after.txt
  touch $R/$f/stop; sleep 2
  python3 $P/summ.py $R/$f/$f.json | head -1
  python3 - $R/$f <<'PY'
import json, sys, glob
d = sys.argv[1]
rows = {json.load(open(f))["rank"]: json.load(open(f))["rows"] for f in glob.glob(d + "/ss_*.json")}
n = len(rows["0"])
for i in range(n):
    t = rows["0"][i]["time"] * 1e3
    if t < 1.6: continue
    print(f"search {i} root {rows['0'][i]['root']} {t:.2f} ms")
    for r in sorted(rows, key=int):
        a, b = rows[r][i]["a"], rows[r][i]["b"]
        print(f"  rank {r:>2} wall {(b['t']-a['t'])/1e6:6.2f} cpu {(b['cpu']-a['cpu'])/1e6:6.2f} delay {(b['delay']-a['delay'])/1e6:6.2f} slices {b['slices']-a['slices']} nivcsw {b['nivcsw']-a['nivcsw']} nvcsw {b['nvcsw']-a['nvcsw']} cpu# {a['cpu_now']}->{b['cpu_now']}")
    s0, s1 = rows["0"][i]["steal0"], rows["0"][i]["steal1"]
    print("  steal ticks", {k: s1[k] - s0[k] for k in s0 if s1[k] != s0[k]})
PY
  paste $R/$f/stat_before.txt $R/$f/stat_after.txt
}
run samp1 1 --scale 22 --roots 64 --comm nvshmem
run plain1 0 --scale 22 --roots 64 --comm nvshmem
run samp2 1 --scale 22 --roots 64 --comm nvshmem
(cd $OUT && tar cJf r.tar.xz r)

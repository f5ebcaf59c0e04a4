"""Probe: every PERIOD s, every thread's schedstat (CPU ns, run-queue delay ns) and each CPU's /proc/stat
steal, from when ./searching appears until ./stop appears (or 90 s). Writes sampler.npz and threads.json."""
import json, os, sys, time
import numpy as np
PERIOD = float(sys.argv[1]) if len(sys.argv) > 1 else 0.004
MAXT = 4096
while not os.path.exists("searching"):
    if os.path.exists("stop"):
        sys.exit(0)
    time.sleep(0.01)
fds, names, cols = [], [], {}
stat = os.open("/proc/stat", os.O_RDONLY)
def scan():
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            comm = open(f"/proc/{pid}/comm").read().strip()
            cmd = open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ")[:120].decode(errors="replace")
            for tid in os.listdir(f"/proc/{pid}/task"):
                if tid in cols or len(fds) >= MAXT:
                    continue
                fd = os.open(f"/proc/{pid}/task/{tid}/schedstat", os.O_RDONLY)
                tcomm = open(f"/proc/{pid}/task/{tid}/comm").read().strip()
                cols[tid] = len(fds); fds.append(fd); names.append([int(pid), int(tid), comm, tcomm, cmd])
        except OSError:
            pass
scan()
rows_t, rows_v, rows_s = [], [], []
t_end = time.monotonic() + 90; last_scan = time.monotonic()
while not os.path.exists("stop") and time.monotonic() < t_end:
    t = time.monotonic_ns()
    v = np.zeros((MAXT, 2), np.int64)
    for k, fd in enumerate(fds):
        try:
            f = os.pread(fd, 128, 0).split()
            v[k, 0] = int(f[0]); v[k, 1] = int(f[1])
        except (OSError, IndexError, ValueError):
            v[k] = -1
    st = [int(l.split()[8]) for l in os.pread(stat, 1 << 16, 0).decode().splitlines() if l.startswith("cpu")]
    rows_t.append(t); rows_v.append(v[:len(fds)].copy()); rows_s.append(st)
    if time.monotonic() - last_scan > 0.2:
        scan(); last_scan = time.monotonic()
    time.sleep(PERIOD)
n = len(fds)
V = np.full((len(rows_v), n, 2), -1, np.int64)
for i, v in enumerate(rows_v):
    V[i, :v.shape[0]] = v
np.savez_compressed("sampler.npz", t=np.array(rows_t), v=V, steal=np.array(rows_s))
json.dump(names, open("threads.json", "w"))

"""Probe (not part of dbfs): per search and rank, the main thread's CPU time, its run-queue delay
(schedstat), its involuntary context switches, and /proc/stat's steal (rank 0), around GridLoop.run.
Writes ss_<rank>.json in the cwd; rank 0 touches ./searching at its first search for the sampler."""
import json, os, resource, runpy, sys, time
import dbfs.grid_loop as gl

RANK = os.environ.get("OMPI_COMM_WORLD_RANK", os.environ.get("PMI_RANK", "0"))
SCHED = os.open(f"/proc/self/task/{os.getpid()}/schedstat", os.O_RDONLY)
STAT = os.open("/proc/stat", os.O_RDONLY)
ROWS = []

def steal():
    text = os.pread(STAT, 1 << 16, 0).decode().splitlines()
    out = {}
    for line in text:
        if line.startswith("cpu"):
            f = line.split()
            out[f[0]] = int(f[8])   # steal, in USER_HZ ticks
    return out

def stamp():
    cpu_ns, delay_ns, slices = map(int, os.pread(SCHED, 256, 0).split())
    ru = resource.getrusage(resource.RUSAGE_THREAD)
    return {"t": time.monotonic_ns(), "cpu": cpu_ns, "delay": delay_ns, "slices": slices,
            "nivcsw": ru.ru_nivcsw, "nvcsw": ru.ru_nvcsw, "cpu_now": os.sched_getcpu() if hasattr(os, "sched_getcpu") else -1}

orig_run = gl.GridLoop.run
def run(self, root, clock, traffic, log_levels):
    if not ROWS and RANK == "0":
        open("searching", "w").close()
    a = stamp(); s0 = steal() if RANK == "0" else None
    r = orig_run(self, root, clock, traffic, log_levels)
    b = stamp(); s1 = steal() if RANK == "0" else None
    ROWS.append({"root": int(root), "time": r["time"], "a": a, "b": b, "steal0": s0, "steal1": s1})
    return r
gl.GridLoop.run = run

import atexit
atexit.register(lambda: json.dump({"rank": RANK, "rows": ROWS}, open(f"ss_{RANK}.json", "w")))
sys.argv = ["dbfs"] + sys.argv[1:]
runpy.run_module("dbfs", run_name="__main__", alter_sys=True)

"""Probe runner: python -m dbfs with followers patched (FOL=0: none; 1 or 2: that many), and the host time
of the follower launches and the whole levels' replays timed."""
import atexit, os, runpy, sys, time
import dbfs.conditional as C, dbfs.followers as F, dbfs.grid_loop as G
mode = os.environ.get("FOL", "2")
if mode == "0":
    C.available = lambda: False
else:
    F.FOLLOWERS = int(mode)
spent = {"follower launches": [], "level replays": [], "waits": []}
def timed(cls, name, key):
    orig = getattr(cls, name)
    def wrapper(self, *a, **k):
        t = time.perf_counter(); r = orig(self, *a, **k); spent[key].append(time.perf_counter() - t); return r
    setattr(cls, name, wrapper)
timed(F.Followers, "launch", "follower launches")
timed(G.GridLoop, "_replay_level", "level replays")
timed(G.GridLoop, "_wait", "waits")
def report():
    from mpi4py import MPI
    if MPI.COMM_WORLD.Get_rank() == 0:
        for k, v in spent.items():
            if v:
                sys.stderr.write(f"[probe FOL={mode}] {k}: {len(v)}, mean {1e6 * sum(v) / len(v):.1f} us, median {1e6 * sorted(v)[len(v) // 2]:.1f}, max {1e6 * max(v):.1f}\n")
atexit.register(report)
sys.argv = ["dbfs"] + sys.argv[1:]
runpy.run_module("dbfs", run_name="__main__", alter_sys=True)

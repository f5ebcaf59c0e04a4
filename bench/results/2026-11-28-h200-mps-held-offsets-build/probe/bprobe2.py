"""Probe: the build's per-kernel times on each rank (synchronised around each call), then the main command."""
import atexit, runpy, sys, time
from collections import defaultdict
import dbfs.build as B
from mpi4py import MPI
totals = defaultdict(float)
counts = defaultdict(int)
def timed(name, f):
    def g(backend, *a, **k):
        backend.sync(); t = time.perf_counter()
        r = f(backend, *a, **k)
        backend.sync(); totals[name] += time.perf_counter() - t; counts[name] += 1
        return r
    return g
for name in ("keep_keys", "count_keys", "scatter_values", "longest_columns_first", "inclusive_scan", "pack_by_owner"):
    if hasattr(B, name):
        setattr(B, name, timed(name, getattr(B, name)))
for name in ("count_kept", "_held_column_sums", "_column_sums", "_owned_degree"):
    if hasattr(B._Passes, name):
        f = getattr(B._Passes, name)
        def h(self, *a, _f=f, _n=name, **k):
            self.backend.sync(); t = time.perf_counter(); r = _f(self, *a, **k); self.backend.sync()
            totals[_n] += time.perf_counter() - t; counts[_n] += 1; return r
        setattr(B._Passes, name, h)
    elif hasattr(B, name):
        f = getattr(B, name)
        def h2(comms, backend, *a, _f=f, _n=name, **k):
            backend.sync(); t = time.perf_counter(); r = _f(comms, backend, *a, **k); backend.sync()
            totals[_n] += time.perf_counter() - t; counts[_n] += 1; return r
        setattr(B, name, h2)
def report():
    rows = MPI.COMM_WORLD.gather(dict(totals), root=0)
    if MPI.COMM_WORLD.rank == 0:
        keys = sorted({k for r in rows for k in r})
        for k in keys:
            v = [r.get(k, 0.0) * 1e3 for r in rows]
            print(f"[probe] {k:24s} max {max(v):8.2f} ms  mean {sum(v)/len(v):8.2f} ms  calls {counts[k]}", file=sys.stderr)
atexit.register(report)
sys.argv = ["dbfs"] + sys.argv[1:]
runpy.run_module("dbfs", run_name="__main__")

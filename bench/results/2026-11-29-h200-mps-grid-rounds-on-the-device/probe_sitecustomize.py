# probe: host-side durations of the grid rounds' launches and waits (new tree) or the whole levels' replays
# and waits (old tree), per search, rank 0 and the last rank; printed at exit
import atexit, os, time
from mpi4py import MPI
rank = MPI.COMM_WORLD.Get_rank()
events = []
def wrap(cls, name, tag):
    f = getattr(cls, name)
    def g(*a, **k):
        t0 = time.perf_counter(); r = f(*a, **k); events.append((tag, t0, time.perf_counter())); return r
    setattr(cls, name, g)
try:
    import dbfs.grid_loop as gl
    wrap(gl.GridLoop, "_run", "search")
    wrap(gl.GridLoop, "_wait", "wait")
    wrap(gl.Replays, "run", "replay")
    try:
        import dbfs.grid_rounds as gr
        wrap(gr.Rounds, "launch", "launch")
        wrap(gr.Rounds, "wait", "rwait")
    except ImportError:
        pass
except Exception as e:
    print("probe failed", e)
def report():
    if rank not in (0, MPI.COMM_WORLD.Get_size() - 1):
        return
    searches = [e for e in events if e[0] == "search"]
    lines = []
    for s in searches[-3:]:
        inside = [e for e in events if e[1] >= s[1] and e[2] <= s[2] and e[0] != "search"]
        tl = " ".join(f"{t}:{(a - s[1]) * 1e3:.3f}+{(b - a) * 1e3:.3f}" for t, a, b in inside)
        lines.append(f"[probe r{rank}] search {(s[2] - s[1]) * 1e3:.3f} ms: {tl}")
    import collections
    tot = collections.defaultdict(list)
    for s in searches[1:]:
        for t, a, b in events:
            if a >= s[1] and b <= s[2] and t != "search":
                tot[t].append(b - a)
    lines.append(f"[probe r{rank}] means: " + " ".join(f"{t} n={len(v)} {1e3 * sum(v) / len(v):.3f}ms" for t, v in tot.items()))
    print("\n".join(lines), flush=True)
atexit.register(report)

"""Host profile of the grid loop: per search, the host's time between a wait's end and the next graph
launch, the launches themselves, the time before the first launch and after the last wait. Wraps
Replays.run, Backend.sync and GridLoop._run, then runs the main command; rank 0 prints means on stderr."""
import atexit, sys, time, collections
from mpi4py import MPI
from dbfs import grid_loop, backend as backend_mod

EV = []
SEARCHES = []
orig_run = grid_loop.Replays.run
def run(self, key, enqueue):
    EV.append(("ls", time.perf_counter(), key[0] if isinstance(key, tuple) else key))
    r = orig_run(self, key, enqueue)
    EV.append(("le", time.perf_counter(), None))
    return r
grid_loop.Replays.run = run
orig_sync = backend_mod.Backend.sync
def sync(self, *a, **k):
    EV.append(("ss", time.perf_counter(), None))
    r = orig_sync(self, *a, **k)
    EV.append(("se", time.perf_counter(), None))
    return r
backend_mod.Backend.sync = sync
orig_grun = grid_loop.GridLoop._run
def grun(self, *a, **k):
    EV.clear()
    EV.append(("start", time.perf_counter(), None))
    r = orig_grun(self, *a, **k)
    EV.append(("end", time.perf_counter(), None))
    SEARCHES.append(list(EV))
    return r
grid_loop.GridLoop._run = grun

def report():
    if MPI.COMM_WORLD.Get_rank() != 0 or not SEARCHES:
        return
    tot = collections.defaultdict(float)
    gaps_by_next = collections.defaultdict(float)
    n = 0
    for ev in SEARCHES[1:]:                 # the warm-up search left out
        n += 1
        # the events inside the timed part: from the first 'start' to 'end'
        t0 = ev[0][1]; tend = ev[-1][1]
        tot["search wall"] += tend - t0
        last_se = None; first_launch = None
        for i, (kind, t, key) in enumerate(ev):
            if kind == "ls":
                tot["launch call"] += ev[i + 1][1] - t
                if first_launch is None:
                    first_launch = t; tot["before first launch"] += t - t0
                if last_se is not None:
                    tot["wait end -> next launch"] += t - last_se
                    gaps_by_next[key] += t - last_se
                    last_se = None
            elif kind == "ss":
                tot["waits"] += ev[i + 1][1] - t
            elif kind == "se":
                last_se = t
        if last_se is not None:
            tot["last wait end -> search end"] += tend - last_se
        tot["launches"] += sum(1 for e in ev if e[0] == "ls")
        tot["syncs"] += sum(1 for e in ev if e[0] == "ss")
    print(f"[host_probe] {n} searches, means a search:", file=sys.stderr)
    for k, v in tot.items():
        count = k in ("launches", "syncs")
        print(f"[host_probe]   {k:32s} {v / n * (1 if count else 1e3):9.4f}" + ("" if count else " ms"), file=sys.stderr)
    for k, v in gaps_by_next.items():
        print(f"[host_probe]   gap before a {str(k):20s} {v / n * 1e3:9.4f} ms", file=sys.stderr)
from dbfs.cli import main
try:
    main(sys.argv[1:])
finally:
    report()

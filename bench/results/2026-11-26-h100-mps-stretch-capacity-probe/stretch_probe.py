"""Probe (not part of dbfs): where a device-driven stretch's time outside its kernel's levels goes, per
rank, on the GPU's clock; PROBE_WHOLE=1 gives every kernel but the stretch's cooperative one the whole
GPU's grid. python -P .probe/stretch_probe.py <dbfs args>; prints on rank 0 at exit."""
import os, sys, time
from dbfs import runtime
from dbfs.grid_loop import GridLoop
from dbfs.backend import Backend

if os.environ.get("PROBE_WHOLE") == "1":
    _orig_rb = Backend.resident_blocks
    def resident_blocks(self, kernel, threads):
        if kernel is self.kernel("peer_levels", "peer_levels"):
            return _orig_rb(self, kernel, threads)
        return self._gpu_holds(kernel, threads)
    Backend.resident_blocks = resident_blocks

if os.environ.get("PROBE_PEER_EDGES"):
    import dbfs.bfs, dbfs.grid_loop
    dbfs.bfs.DEFAULT_PEER_EDGES = dbfs.grid_loop.DEFAULT_PEER_EDGES = 1 << int(os.environ["PROBE_PEER_EDGES"])

searches, current = [], []


def around(name, after):
    """GridLoop.<name> wrapped: after(self, result, started_ns, args, kwargs) once it returns."""
    original = getattr(GridLoop, name)

    def wrapped(self, *args, **kwargs):
        started = time.time_ns()
        result = original(self, *args, **kwargs)
        after(self, result, started, args, kwargs)
        return result
    setattr(GridLoop, name, wrapped)


def replayed(self, marks, started, args, kwargs):
    if not kwargs.get("capture_only", args[2] if args[2:] else False):     # captures are not levels
        current.append([args[0][0], started, time.time_ns(), marks])


def waited(self, _result, started, _args, _kwargs):
    if current and len(current[-1]) == 4:
        current[-1] += [started, time.time_ns()]
        current[-1][3] = current[-1][3].taken()


def stretched(self, result, _started, _args, _kwargs):
    if current:
        current[-1].append(result[0]["START_NS"])


def searched(self, _result, _started, _args, _kwargs):
    rows = []
    for entry in current:
        kind, t_launch, t_launched, taken = entry[:4]
        rows.append((kind, t_launch, t_launched, entry[4] if len(entry) > 4 else 0, entry[5] if len(entry) > 5 else 0,
                     list(taken.phases), taken.stamps.tolist(), entry[6] if len(entry) > 6 else 0))
    searches.append(rows)
    current.clear()


around("_replay_level", replayed)
around("_wait", waited)
around("_peer_stretch", stretched)
around("_run", searched)

def report():
    comm = runtime.WORLD
    every = comm.gather(searches, root=0)
    if comm.Get_rank() != 0:
        return
    out = []
    for s in (2, 3):
        if s >= len(searches):
            continue
        out.append(f"== search {s}")
        for k in range(len(every[0][s])):
            kind = every[0][s][k][0]
            t0 = min(every[r][s][k][1] for r in range(len(every)))
            out.append(f"-- {kind} {every[0][s][k][5]}")
            for r in range(len(every)):
                _, tl, tld, tw, twe, ph, st, start_ns = every[r][s][k]
                g0 = st[0]
                cells = " ".join(f"{(p or '-')[:6]}:{(st[i+1]-st[i])/1e3:.1f}" for i, p in enumerate(ph[:-1]))
                extra = f" kstart@{(start_ns - g0)/1e3:.1f}" if start_ns else ""
                out.append(f"  r{r:2d} launch@{(tl-t0)/1e3:6.1f} call {(tld-tl)/1e3:5.1f} wait@{(tw-t0)/1e3:6.1f}-{(twe-t0)/1e3:6.1f}"
                           f" gpu0@{(g0-t0)/1e3:8.1f} gpuend@{(st[-1]-t0)/1e3:8.1f}{extra} | {cells}")
    sys.stderr.write("\n".join("[probe] " + l for l in out) + "\n")

from dbfs.cli import main
try:
    main(sys.argv[1:])
finally:
    report()

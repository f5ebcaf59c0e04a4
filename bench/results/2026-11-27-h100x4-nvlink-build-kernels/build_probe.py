"""Where a build's device time goes, kernel by kernel (a probe, not part of dbfs): every kernel launched
through dbfs's backend timed by events around it, the entries' split copies likewise; run under mpirun
(a GPU a rank, NCCL) for a Graph500 scale."""
import sys
import time
from collections import defaultdict

import cupy as cp
from mpi4py import MPI

import dbfs.backend as bk
import dbfs.build as build_mod
from dbfs.graph import GridComms
from dbfs.grid import Grid
from dbfs.source import GraphSource

scale = int(sys.argv[1])
world = MPI.COMM_WORLD
P, rank = world.Get_size(), world.Get_rank()
backend = bk.Backend("gpu", rank)
cp.cuda.Device(rank).use()
marks = []


def timed_call(name, f, *a, **k):
    s, e = cp.cuda.Event(), cp.cuda.Event()
    s.record()
    r = f(*a, **k)
    e.record()
    marks.append((name, s, e))
    return r


class Timed:
    def __init__(self, kernel, name):
        self.kernel, self.name = kernel, name

    def __call__(self, *a, **k):
        return timed_call(self.name, self.kernel, *a, **k)

    def __getattr__(self, attr):
        return getattr(self.kernel, attr)


original_kernel = bk.Backend.kernel
bk.Backend.kernel = lambda self, module, function: Timed(original_kernel(self, module, function), function)
original_split = build_mod.split_pairs
build_mod.split_pairs = lambda *a, **k: timed_call("split_pairs", original_split, *a, **k)
n = 1 << scale
comms = GridComms.create(Grid(P, 1, n))
source = GraphSource(n, 16 << scale, scale, 16, True, None, (2, 3))
for attempt in range(2):
    marks.clear()
    started = time.perf_counter()
    graph, report = build_mod.build(comms, backend, source, row_major=True, transport="nccl" if P > 1 else "mpi")
    cp.cuda.Device().synchronize()
    wall = time.perf_counter() - started
    totals, counts = defaultdict(float), defaultdict(int)
    for name, s, e in marks:
        totals[name] += cp.cuda.get_elapsed_time(s, e)
        counts[name] += 1
    busy = sum(totals.values())
    lines = [f"rank {rank} scale {scale} on {P}, build {attempt}: construction {report.construction_time:.3f} s, "
             f"phases {({k: round(v, 3) for k, v in report.phases.items()})}, producer {report.producer_time:.3f}, "
             f"wall {wall:.3f}, kernels {busy / 1e3:.3f} s"]
    for name in sorted(totals, key=totals.get, reverse=True):
        lines.append(f"  {name:28s} {counts[name]:6d} launches {totals[name]:9.2f} ms")
    for k in range(P):
        world.Barrier()
        if k == rank:
            print("\n".join(lines), flush=True)
    del graph

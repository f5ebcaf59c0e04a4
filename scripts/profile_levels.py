"""Device measurement of the main mode on one GPU: host overhead per BFS level, the expansion kernel's
achieved bandwidth against the measured device-copy ceiling, and the edges-per-thread sweep.

Every RawKernel launch is bracketed by CUDA events; a level's host overhead is its wall time minus the
summed kernel times of that level (the small count copies are charged to the overhead, so the figure
is an upper bound). Writes one JSON document (machine, date, command, figures).

    python scripts/profile_levels.py --scale 24 --roots 8 --out result.json
"""

from __future__ import annotations

import argparse
import datetime
import json
import socket
import sys
import time

import cupy
import numpy as np

import dbfs.bfs as bfs_module
from dbfs.backend import Backend
from dbfs.build import build_from_edges
from dbfs.graph import GridComms
from dbfs.grid import Grid
from graph500.generator import generate_edges
from graph500.roots import sample_roots


def copy_ceiling(nbytes: int = 4 << 30) -> float:
    """Bytes/s of a large device-to-device copy, counting bytes read plus bytes written."""
    a = cupy.ones(nbytes // 4, cupy.float32)
    b = cupy.empty_like(a)
    for _ in range(2):
        b[...] = a
    start, stop = cupy.cuda.Event(), cupy.cuda.Event()
    start.record()
    reps = 10
    for _ in range(reps):
        b[...] = a
    stop.record()
    stop.synchronize()
    seconds = cupy.cuda.get_elapsed_time(start, stop) / 1e3 / reps
    del a, b
    return 2 * nbytes / seconds


class KernelClock:
    """Wraps the backend's compiled modules so that every kernel launch is timed with events."""

    def __init__(self, backend):
        self.levels = []          # per level: list of (kernel name, start event, stop event)
        original = backend.module

        def module(name):
            return _TimedModule(original(name), self)
        backend.module = module

    def new_level(self):
        self.levels.append([])

    def record(self, name, launch):
        start, stop = cupy.cuda.Event(), cupy.cuda.Event()
        start.record()
        launch()
        stop.record()
        if self.levels and name != "resolve_parents":   # launched once after the last level
            self.levels[-1].append((name, start, stop))

    def level_kernel_ms(self):
        for events in self.levels:
            for _, _, stop in events:
                stop.synchronize()
        return [{name: sum(cupy.cuda.get_elapsed_time(a, b) for n, a, b in events if n == name)
                 for name in {n for n, _, _ in events}} for events in self.levels]


class _TimedModule:
    def __init__(self, module, clock):
        self.module, self.clock = module, clock

    def get_function(self, name):
        fn = self.module.get_function(name)
        clock = self.clock
        return lambda grid, block, args, **kw: clock.record(name, lambda: fn(grid, block, args, **kw))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=int, default=24)
    ap.add_argument("--edgefactor", type=int, default=16)
    ap.add_argument("--roots", type=int, default=8)
    ap.add_argument("--edges-per-thread", default="1,2,4,8")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()

    backend = Backend("gpu", 0)
    ceiling = copy_ceiling()
    n = 1 << args.scale
    src, dst = generate_edges(args.scale, args.edgefactor, 0, args.edgefactor << args.scale, xp=cupy)
    comms = GridComms.create(Grid(1, 1, n))
    graph = build_from_edges(comms, backend, src, dst, n)
    del src, dst
    has_edge = backend.asnumpy(graph.has_edge)
    roots = sample_roots(n, args.roots, lambda c: has_edge[c])

    sweep = {}
    for ept in (int(x) for x in args.edges_per_thread.split(",")):
        bfs = bfs_module.BFS(graph, edges_per_thread=ept)
        bfs.search(int(roots[0]))
        times, nedges = [], []
        for root in roots:
            result = bfs.search(int(root))
            times.append(result.time)
            nedges.append(result.nedge)
        bfs.close()
        sweep[ept] = {"harmonic_mean_TEPS": len(times) / sum(t / m for t, m in zip(times, nedges)),
                      "mean_time": float(np.mean(times))}
        print(f"edges/thread {ept}: {sweep[ept]['harmonic_mean_TEPS'] / 1e9:.2f} GTEPS", file=sys.stderr)
    best = max(sweep, key=lambda k: sweep[k]["harmonic_mean_TEPS"])

    clock = KernelClock(backend)
    original_expand = bfs_module.expand

    def expand_marking_levels(*a, **kw):
        clock.new_level()
        return original_expand(*a, **kw)
    bfs_module.expand = expand_marking_levels
    import dbfs.ops.expand as expand_module
    expand_module._functions.clear()
    bfs = bfs_module.BFS(graph, edges_per_thread=best)
    bfs.search(int(roots[0]))
    levels_out = []
    for root in roots:
        clock.levels = []
        result = bfs.search(int(root), log_levels=True)
        kernel_ms = clock.level_kernel_ms()
        for row, kms in zip(result.levels, kernel_ms):
            expand_kernels = sum(v for k, v in kms.items() if k.startswith("expand_frontier"))
            useful_bytes = 4 * row["edges"] + 20 * row["frontier"]
            levels_out.append({
                "root": int(root), "level": row["level"], "frontier": row["frontier"],
                "edges": row["edges"], "wall_ms": 1e3 * row["time"], "kernel_ms": sum(kms.values()),
                "host_overhead_us": 1e3 * (1e3 * row["time"] - sum(kms.values())),
                "expand_kernel_ms": expand_kernels,
                "expand_GBps": useful_bytes / (expand_kernels / 1e3) / 1e9 if expand_kernels else None})
    bfs.close()
    overhead = [x["host_overhead_us"] for x in levels_out]
    heavy = max(levels_out, key=lambda x: x["edges"])
    doc = {"machine": socket.gethostname(), "device": backend.describe(),
           "date": datetime.datetime.now().isoformat(timespec="seconds"), "command": " ".join(sys.argv),
           "scale": args.scale, "edgefactor": args.edgefactor, "roots": [int(r) for r in roots],
           "copy_ceiling_GBps": ceiling / 1e9, "edges_per_thread_sweep": sweep, "best_edges_per_thread": best,
           "host_overhead_us": {"median": float(np.median(overhead)), "max": float(np.max(overhead)),
                                "mean": float(np.mean(overhead))},
           "heaviest_level": heavy, "levels": levels_out}
    with open(args.out, "w") as f:
        json.dump(doc, f, indent=1)
    print(f"copy ceiling {ceiling / 1e9:.0f} GB/s; best edges/thread {best}; host overhead per level "
          f"median {doc['host_overhead_us']['median']:.0f} us max {doc['host_overhead_us']['max']:.0f} us; "
          f"heaviest level expand {heavy['expand_GBps']:.0f} GB/s useful", file=sys.stderr)


if __name__ == "__main__":
    t0 = time.time()
    main()
    print(f"profile done in {time.time() - t0:.1f} s", file=sys.stderr)

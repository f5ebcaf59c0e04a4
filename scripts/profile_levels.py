"""Device profile of the main mode's level loop on one GPU: per search and per level, for several loop
variants on the same graph and roots.

For each variant (direction x small-level edge limit x one-block work limit x edges per thread x rounds
replayed as CUDA graphs or enqueued kernel by kernel) it runs one untimed warm-up and then every root
with the per-level log, and reports: the mean search time and harmonic-mean TEPS, the
levels and host synchronisations per search, the time of the levels whose frontier is under
--small-frontier vertices (median, 90th percentile, sum), the host overhead per level (search wall
time minus the summed device times of its levels, divided by the levels), and the heaviest level. The
per-level times come from the GPU's global timer (written by the kernels), so nothing in the loop is
synchronised to measure it. With --kernel-times every kernel launch is also bracketed by CUDA events
(which adds a little to the search times; rounds are then enqueued kernel by kernel) and the device
time per kernel and search is reported.
Every variant must give each root the same visited count, depth and edge count. Writes one JSON
document (machine, date, command, figures, and the first search's per-level log of each variant).

    python scripts/profile_levels.py --scale 26 --roots 16 --small-edges default,0 --out p.json
    python scripts/profile_levels.py --graph lattice.h5 --roots 16 --direction auto --out q.json
"""

from __future__ import annotations

import argparse
import datetime
import itertools
import socket
import sys
import time

import numpy as np

from dbfs import outputs
from dbfs.backend import Backend, gpu_count
from dbfs.bfs import BFS
from dbfs.build import build_from_edges
from dbfs.device_loop import DEFAULT_SMALL_EDGES, DEFAULT_SOLO_WORK
from dbfs.edgelist import graph_info, read_edge_slice
from dbfs.graph import GridComms
from dbfs.grid import Grid
from dbfs.json_output import write_json_atomically
from graph500.generator import generate_edges
from graph500.roots import sample_roots


def copy_ceiling(cupy, nbytes: int = 4 << 30) -> float:
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


def load_graph(args, backend):
    """The 1x1 graph (CSC and, for bottom-up, its row-major copy) from the generator or a file."""
    xp = backend.xp
    if args.graph:
        info = graph_info(args.graph)
        n, directed = info.n_vertices, info.directed
        src, dst = read_edge_slice(args.graph, 0, info.n_edges)[:2]
    else:
        n, directed = 1 << args.scale, False
        src, dst = generate_edges(args.scale, args.edgefactor, 0, args.edgefactor << args.scale, xp=xp)[:2]
    comms = GridComms.create(Grid(1, 1, n))
    graph = build_from_edges(comms, backend, src, dst, n, symmetric=not directed, row_major=True)
    return graph, n


class KernelTimes:
    """Wraps backend.kernel so that every launch is bracketed by CUDA events; `per_search()` sums the
    device time per kernel since the last call (after the search has synchronised)."""

    def __init__(self, backend, cupy):
        self.cupy, self.launches = cupy, []
        original = backend.kernel

        def kernel(module, name, offsets=None):
            return _TimedKernel(original(module, name, offsets), name, self)
        backend.kernel = kernel

    def per_search(self) -> dict:
        totals: dict = {}
        for name, start, stop in self.launches:
            stop.synchronize()
            totals[name] = totals.get(name, 0.0) + self.cupy.cuda.get_elapsed_time(start, stop) / 1e3
        self.launches = []
        return totals


class _TimedKernel:
    def __init__(self, kernel, name, clock):
        self.kernel, self.name, self.clock = kernel, name, clock

    def __getattr__(self, attribute):          # num_regs etc. of the compiled kernel
        return getattr(self.kernel, attribute)

    def __call__(self, *args, **kwargs):
        start, stop = self.clock.cupy.cuda.Event(), self.clock.cupy.cuda.Event()
        start.record()
        self.kernel(*args, **kwargs)
        stop.record()
        self.clock.launches.append((self.name, start, stop))


def profile(bfs, roots, small_frontier: int, kernel_times=None) -> dict:
    bfs.search(int(roots[0]))
    if kernel_times:
        kernel_times.per_search()
    searches, small, overhead, first_levels = [], [], [], None
    for root in roots:
        result = bfs.search(int(root), log_levels=True)
        first_levels = first_levels or result.levels
        device = sum(row["time"] for row in result.levels)
        overhead.append((result.time - device) / max(1, len(result.levels)))
        small += [row["time"] for row in result.levels if row["frontier"] < small_frontier]
        heaviest = max(result.levels, key=lambda row: row["edges"], default=None)
        searches.append({"root": int(root), "time": result.time, "nedge": result.nedge, "depth": result.depth,
                         "visited": result.visited, "levels": len(result.levels),
                         "host_syncs": result.host_syncs, "phases": result.phases, "heaviest_level": heaviest,
                         "kernels": kernel_times.per_search() if kernel_times else None})
    times = np.array([s["time"] for s in searches])
    nedges = np.array([s["nedge"] for s in searches])
    small = np.array(small) if small else np.zeros(1)
    return {"mean_time": float(times.mean()),
            "harmonic_mean_TEPS": float(len(times) / np.sum(times / np.maximum(nedges, 1))),
            "levels_per_search": float(np.mean([s["levels"] for s in searches])),
            "host_syncs_per_search": float(np.mean([s["host_syncs"] for s in searches])),
            "host_overhead_per_level_us": 1e6 * float(np.median(overhead)),
            "small_levels": {"frontier_below": small_frontier, "count": int(small.size),
                             "median_us": 1e6 * float(np.median(small)),
                             "p90_us": 1e6 * float(np.percentile(small, 90)),
                             "sum_ms_per_search": 1e3 * float(small.sum()) / len(searches)},
            "searches": searches, "first_search_levels": first_levels}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0].replace("\n", " "),
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    source = ap.add_mutually_exclusive_group(required=True)
    source.add_argument("--scale", type=int, help="Graph500 Kronecker scale")
    source.add_argument("--graph", help="graph-store file (dbfs generate / convert)")
    ap.add_argument("--edgefactor", type=int, default=16)
    ap.add_argument("--roots", type=int, default=8)
    ap.add_argument("--direction", default="auto,topdown", help="comma-separated directions")
    ap.add_argument("--small-edges", default="default,0",
                    help=f"comma-separated small-level edge limits ('default' = {DEFAULT_SMALL_EDGES}; "
                         "0: every level a bulk level)")
    ap.add_argument("--solo-work", default="default",
                    help=f"comma-separated work limits of the levels run in one block ('default' = "
                         f"{DEFAULT_SOLO_WORK}; 0: none)")
    ap.add_argument("--edges-per-thread", default="4")
    ap.add_argument("--small-frontier", type=int, default=10_000,
                    help="levels with a frontier under this many vertices count as small levels")
    ap.add_argument("--rounds", default="graph",
                    help="comma-separated: graph (rounds replayed as CUDA graphs), eager (kernel by kernel)")
    ap.add_argument("--kernel-times", action="store_true",
                    help="time every kernel launch with events (implies --rounds eager)")
    ap.add_argument("--grid-waves", default="1",
                    help="comma-separated multiples of the resident blocks for the grid-stride launches")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    if gpu_count() == 0:
        sys.exit("profile_levels.py: error: it profiles the level loop on a GPU, and CuPy sees none "
                 "(pip install \".[gpu]\" on a machine with a CUDA GPU)")
    outputs.check_or_exit("profile_levels.py", [outputs.Target("--out", args.out)], [("--graph", args.graph)])

    import cupy
    backend = Backend("gpu", 0)
    ceiling = copy_ceiling(cupy)
    t0 = time.perf_counter()
    graph, n = load_graph(args, backend)
    backend.sync()
    print(f"graph: {n} vertices, {graph.nnz} CSC entries, built in {time.perf_counter() - t0:.1f} s",
          file=sys.stderr)
    kernel_times = KernelTimes(backend, cupy) if args.kernel_times else None
    has_edge = backend.asnumpy(graph.degree) > 0
    roots = sample_roots(n, args.roots, lambda c: has_edge[c])
    variants, reference = {}, {}
    resident_blocks = backend.resident_blocks
    rounds = ["eager"] if args.kernel_times else args.rounds.split(",")
    for direction, small, solo, ept, waves, round_kind in itertools.product(
            args.direction.split(","), args.small_edges.split(","), args.solo_work.split(","),
            [int(x) for x in args.edges_per_thread.split(",")], [int(x) for x in args.grid_waves.split(",")],
            rounds):
        backend.resident_blocks = lambda kernel, threads, w=waves: w * resident_blocks(kernel, threads)
        small_edges = DEFAULT_SMALL_EDGES if small == "default" else int(small)
        solo_work = DEFAULT_SOLO_WORK if solo == "default" else int(solo)
        name = (f"{direction} small_edges={small_edges} solo_work={solo_work} edges_per_thread={ept} "
                f"grid_waves={waves} rounds={round_kind}")
        bfs = BFS(graph, edges_per_thread=ept, direction=direction, small_edges=small_edges,
                  round_graphs=round_kind == "graph", solo_work=solo_work)
        figures = profile(bfs, roots, args.small_frontier, kernel_times)
        for s in figures["searches"]:
            key = (s["visited"], s["depth"], s["nedge"])
            if reference.setdefault(s["root"], key) != key:
                raise SystemExit(f"{name}: root {s['root']} gives {key}, another variant "
                                 f"{reference[s['root']]}")
        variants[name] = figures
        print(f"{name}: {1e3 * figures['mean_time']:.3f} ms, "
              f"{figures['harmonic_mean_TEPS'] / 1e9:.2f} GTEPS, "
              f"{figures['levels_per_search']:.0f} levels, "
              f"{figures['host_syncs_per_search']:.1f} host syncs per search, small levels median "
              f"{figures['small_levels']['median_us']:.1f} us, overhead per level "
              f"{figures['host_overhead_per_level_us']:.2f} us", file=sys.stderr)
    doc = {"machine": socket.gethostname(), "device": backend.describe(),
           "date": datetime.datetime.now().isoformat(timespec="seconds"), "command": " ".join(sys.argv),
           "graph": args.graph or f"kronecker scale {args.scale} edgefactor {args.edgefactor}",
           "n_vertices": n, "csc_entries": graph.nnz, "roots": [int(r) for r in roots],
           "copy_ceiling_GBps": ceiling / 1e9, "variants": variants}
    write_json_atomically(args.out, doc)


if __name__ == "__main__":
    main()

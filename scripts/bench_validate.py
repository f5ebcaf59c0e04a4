"""Time the per-search BFS validation (graph500/validate.py, kernels/validate.cu) on one GPU, one process
(1x1 grid): a Graph500 Kronecker graph of --scale and a --lattice side x side 4-neighbour lattice.

    python scripts/bench_validate.py --scale 26 --lattice 4096 [--roots 4] [--json FILE]
    python scripts/bench_validate.py --cpu --scale 16 --lattice 256      # NumPy, wall clock only

Per graph: build on the GPU, one search and validation as warm-up (kernel compilation), then per root:
the search, validate_bfs timed with CUDA events on the current stream (and by the wall clock: the
call synchronises to read its verdict), and the entry pass (check_entries, the one pass over the CSC)
alone for every entries-per-lane variant. Prints one row per graph and root and, with --json, writes
them. Targets (issue 16, H100): validation <= 25 ms per search at scale 26, <= 5 ms on the 4096 x 4096
lattice.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
from mpi4py import MPI

from dbfs import outputs
from dbfs.backend import Backend, gpu_count
from dbfs.bfs import BFS
from dbfs.build import build_from_edges
from dbfs.graph import GridComms
from dbfs.grid import Grid
from dbfs.json_output import write_json_atomically
from dbfs.ops import validate as ops
from graph500.generator import generate_edges
from graph500.validate import validate_bfs


def kronecker(xp, scale: int, edgefactor: int):
    n = 1 << scale
    src, dst = generate_edges(scale, edgefactor, 0, edgefactor * n, xp=xp)[:2]
    return n, src, dst


def lattice(xp, side: int):
    n = side * side
    v = xp.arange(n, dtype=xp.int64)
    right, down = v[v % side < side - 1], v[v < n - side]
    return n, xp.concatenate((right, down)), xp.concatenate((right + 1, down + side))


def timed(backend, work):
    """(result of work(), its time in ms on the device's stream by CUDA events (CPU: wall), its wall
    time in ms)."""
    t0 = time.perf_counter()
    if not backend.is_gpu:
        result = work()
        wall = 1e3 * (time.perf_counter() - t0)
        return result, wall, wall
    cuda = backend.xp.cuda
    start, end = cuda.Event(), cuda.Event()
    start.record()
    result = work()
    end.record()
    end.synchronize()
    return result, cuda.get_elapsed_time(start, end), 1e3 * (time.perf_counter() - t0)


def entry_pass_ms(backend, graph, result, directed):
    """check_entries alone per entries-per-lane variant and form (undirected: full, and half on a GPU),
    with the search's compact levels and parents."""
    grid, xp = graph.grid, backend.xp
    lo, hi = grid.owned_range(0, 0)
    stats = ops.new_stats(backend)
    ops.check_vertices(backend, result.parent, result.level, hi - lo, grid.to_global_owned(0, 0, 0),
                       grid.n_vertices, result.root, stats)
    deepest = int(backend.asnumpy(stats)[ops.SLOT["deepest"]])
    compact = xp.empty(grid.block, ops.level_dtype(deepest))
    ops.compact_levels(backend, result.parent, result.level, compact)
    layout = ops.EntryLayout.of(grid, 0, 0, backend)
    marks = xp.zeros(grid.block // 32, xp.uint32)
    times = {}
    forms = (False, True) if backend.is_gpu and not directed else (False,)
    for variant in ops.ENTRIES_PER_LANE if backend.is_gpu else (ops.DEFAULT_ENTRIES_PER_LANE,):
        for half in forms:
            for _ in range(2):   # the first launch of a variant loads it
                fresh = ops.new_stats(backend)
                _, ms, _ = timed(backend, lambda: ops.check_entries(
                    backend, graph.col_ptr, graph.row_idx, compact, compact, result.parent, directed, layout,
                    marks, fresh, entries_per_lane=variant, half=half))
            times[f"e{variant}{'-half' if half else ''}"] = round(ms, 3)
    return compact.dtype.name, times


def bench_graph(backend, name, make, roots, seed, directed, row_major):
    n, src, dst = make()
    comms = GridComms.create(Grid(1, 1, n), MPI.COMM_SELF)
    t0 = time.perf_counter()
    graph = build_from_edges(comms, backend, src, dst, n, symmetric=not directed, row_major=row_major)
    backend.sync()
    print(f"{name}: built in {time.perf_counter() - t0:.1f} s, {graph.nnz} entries", file=sys.stderr)
    del src, dst
    free_pool(backend)
    bfs = BFS(graph, direction="auto" if row_major else "topdown")
    has_edge = np.flatnonzero(backend.asnumpy(graph.degree) > 0)
    chosen = np.random.default_rng(seed).choice(has_edge, roots + 1, replace=False)
    warm = bfs.search(int(chosen[0]))
    assert validate_bfs(graph, int(chosen[0]), warm.parent, warm.nedge, level=warm.level).ok
    rows = []
    for root in chosen[1:].tolist():
        result = bfs.search(root)
        check, event, wall = timed(backend, lambda: validate_bfs(graph, root, result.parent, result.nedge,
                                                                 level=result.level))
        if not check.ok:
            raise SystemExit(f"{name} root {root}: validation failed: {check.message}")
        level_type, entry_times = entry_pass_ms(backend, graph, result, directed)
        rows.append({"graph": name, "n_vertices": n, "entries": graph.nnz, "root": root,
                     "depth": result.depth, "visited": check.visited, "nedge": check.nedge,
                     "parent_dtype": str(result.parent.dtype), "level_type": level_type,
                     "search_ms": round(1e3 * result.time, 3), "validate_ms": round(event, 3),
                     "validate_wall_ms": round(wall, 3), "entry_pass_ms": entry_times})
    bfs.close()
    comms.free()
    return rows


def free_pool(backend) -> None:
    if backend.is_gpu:
        backend.xp.get_default_memory_pool().free_all_blocks()


def device_name(backend) -> str:
    if not backend.is_gpu:
        return "cpu (numpy)"
    props = backend.xp.cuda.runtime.getDeviceProperties(backend.device)
    return props["name"].decode() if isinstance(props["name"], bytes) else props["name"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", type=int, default=26, help="Kronecker scale, 0 to skip (default 26)")
    parser.add_argument("--edgefactor", type=int, default=16, help="default 16")
    parser.add_argument("--lattice", type=int, default=4096, help="lattice side, 0 to skip (default 4096)")
    parser.add_argument("--roots", type=int, default=4, help="timed roots per graph (default 4)")
    parser.add_argument("--seed", type=int, default=1, help="root sampling seed (default 1)")
    parser.add_argument("--directed", action="store_true", help="also the Kronecker graph stored one way")
    parser.add_argument("--topdown", action="store_true",
                        help="search top-down only (no row-major copy: less memory)")
    parser.add_argument("--json", help="write the rows to this file")
    parser.add_argument("--cpu", action="store_true", help="NumPy backend (a smoke run at small sizes)")
    args = parser.parse_args()
    outputs.check_or_exit("bench_validate.py", [outputs.Target("--json", args.json)])
    if not args.cpu and gpu_count() == 0:
        raise SystemExit("bench_validate: no GPU visible (--cpu runs the NumPy backend)")
    backend = Backend("cpu") if args.cpu else Backend("gpu", 0)
    xp = backend.xp
    graphs = []
    if args.scale:
        graphs.append((f"kronecker-s{args.scale}", lambda: kronecker(xp, args.scale, args.edgefactor), False))
        if args.directed:
            graphs.append((f"kronecker-s{args.scale}-directed",
                           lambda: kronecker(xp, args.scale, args.edgefactor), True))
    if args.lattice:
        graphs.append((f"lattice-{args.lattice}", lambda: lattice(xp, args.lattice), False))
    rows = []
    for name, make, directed in graphs:
        rows += bench_graph(backend, name, make, args.roots, args.seed, directed,
                            row_major=not (args.topdown or directed))
        free_pool(backend)

    device = device_name(backend)
    print(f"device: {device}")
    header = ("graph", "root", "depth", "levels", "search ms", "validate ms", "wall ms", "entry pass ms")
    print(" | ".join(header))
    for row in rows:
        passes = " ".join(f"{k}={v:.2f}" for k, v in row["entry_pass_ms"].items())
        print(f"{row['graph']} | {row['root']} | {row['depth']} | {row['level_type']} | {row['search_ms']:.2f} | "
              f"{row['validate_ms']:.2f} | {row['validate_wall_ms']:.2f} | {passes}")
    if args.json:
        write_json_atomically(args.json, {"device": device, "rows": rows})


if __name__ == "__main__":
    main()

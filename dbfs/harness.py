"""The benchmark harness of the main mode: a Graph500 run from edge list to report.

Generate (or read) the tuple list -> build the CSC blocks (kernel 1, timed as construction_time) ->
sample the roots (Graph500 reference stream) -> one untimed warm-up search + validation -> for each
root: timed search (kernel 2), untimed validation -> Graph500 statistics block on stdout, a per-phase
breakdown after it, and optionally everything as JSON. Shared by every BFS variant: a search is any
object with `search(root, log_levels) -> SearchResult`.
"""

from __future__ import annotations

import datetime
import os
import socket
import sys
import time

import numpy as np
from mpi4py import MPI

from dbfs import __version__, exchange, runtime
from dbfs.backend import select
from dbfs.bfs import BFS, PHASES, print_levels
from dbfs.build import build_from_edges, memory_estimate, transpose_csc
from dbfs.errors import DbfsError
from dbfs.graph import GridComms
from dbfs.grid import Grid, default_grid, parse_grid
from dbfs.json_output import write_json_atomically
from dbfs.options import parse_seed
from dbfs.partition_cache import PartitionCache
from dbfs.result import check_save_request, save_result
from dbfs.source import GraphSource, rank_io_threads
from graph500 import stats
from graph500.roots import sample_roots
from graph500.validate import validate_bfs


def _check_args(args) -> None:
    world = runtime.WORLD
    if (args.scale is None) == (args.graph is None):
        raise DbfsError("give exactly one of --scale S or --graph FILE.h5", collective=True)
    if args.scale is not None and not 1 <= args.scale <= 42:
        raise DbfsError(f"--scale must be in 1..42, got {args.scale}", collective=True)
    if args.edgefactor < 1:
        raise DbfsError(f"--edgefactor must be >= 1, got {args.edgefactor}", collective=True)
    if args.roots is not None and args.root is None and args.roots < 1:
        raise DbfsError(f"--roots must be >= 1, got {args.roots}", collective=True)
    if args.edges_per_thread < 1:
        raise DbfsError("--edges-per-thread must be >= 1", collective=True)
    if args.alpha <= 0 or args.beta <= 0:
        raise DbfsError("--alpha and --beta must be > 0", collective=True)
    try:
        shape = parse_grid(args.grid) if args.grid else default_grid(world.Get_size())
    except ValueError as e:
        raise DbfsError(str(e), collective=True) from None
    if shape[0] * shape[1] != world.Get_size():
        raise DbfsError(f"grid {shape[0]}x{shape[1]} needs {shape[0] * shape[1]} ranks, the job has "
                        f"{world.Get_size()}", collective=True)
    args.grid_shape = shape
    if args.json:
        directory = os.path.dirname(os.path.abspath(args.json))
        if not os.path.isdir(directory) or not os.access(directory, os.W_OK):
            raise DbfsError(f"cannot write --json {args.json}: directory {directory} is not writable",
                            collective=True)


def _max_time(t: float) -> float:
    return runtime.WORLD.allreduce(t, op=MPI.MAX)


def _load_edges(backend, source, comms):
    """This rank's share of the tuple list, the slowest rank's load time and the slowest rank's rate
    (edges it read per second)."""
    src, dst, seconds = source.read_edges(backend, comms.world, threads=rank_io_threads())
    rate = comms.world.allreduce(len(src) / seconds if seconds > 0 else float("inf"), op=MPI.MIN)
    return src, dst, _max_time(seconds), rate


def _construct(args, backend, source, comms, row_major: bool, transport: str):
    """Kernel 1: this rank's CSC block (and with row_major its CSR copy) from the partition cache when
    it holds a valid entry, else from the tuples (read or generated, then built over the search's
    transport, then cached). Returns the graph, the construction time, the load time and the figures
    for the JSON report."""
    world = comms.world
    cache = PartitionCache(args.partition_cache, source, comms.grid) if args.partition_cache else None
    figures = {"construction_source": "built"}
    if cache:
        world.Barrier()
        t0 = time.perf_counter()
        graph = cache.load(comms, backend)
        if graph is not None:
            if row_major and graph.row_ptr is None:
                graph.row_ptr, graph.col_idx = transpose_csc(backend, graph.col_ptr, graph.row_idx,
                                                             comms.grid.rows_per_rank)
            backend.sync()
            construction_time = _max_time(time.perf_counter() - t0)
            runtime.log(f"construction: {construction_time:.3f} s (loaded from the partition cache "
                        f"{cache.path}), {world.allreduce(graph.nnz)} CSC entries")
            return graph, construction_time, 0.0, {"construction_source": "partition cache"}
    src, dst, load_time, rate = _load_edges(backend, source, comms)
    if source.info is not None:
        figures.update(graph_load=load_time, load_edges_per_s_per_rank=rate)
    runtime.log(f"tuples {'generated' if source.info is None else 'read'}: {load_time:.3f} s, "
                f"{rate / 1e6:.1f} M edges/s per rank (slowest rank)")
    world.Barrier()
    t0 = time.perf_counter()
    graph = build_from_edges(comms, backend, src, dst, source.n_vertices, symmetric=source.symmetric,
                             row_major=row_major, transport=transport)
    del src, dst
    backend.sync()
    construction_time = _max_time(time.perf_counter() - t0)
    runtime.log(f"construction: {construction_time:.3f} s (built), {world.allreduce(graph.nnz)} CSC entries")
    if cache:
        cache.store(graph)
        runtime.log(f"stored in the partition cache {cache.path}")
    return graph, construction_time, load_time, figures


def _check_memory(grid: Grid, n_edges: int, backend, row_major: bool) -> dict:
    estimate = memory_estimate(grid, n_edges, row_major=row_major)
    limit = backend.memory_limit()
    runtime.log(f"memory estimate per rank: {estimate['peak'] / 2**30:.2f} GiB "
                f"(limit {limit / 2**30:.2f} GiB on {backend.describe()})")
    error = None
    if estimate["peak"] > limit:
        error = (f"the graph does not fit: estimated {estimate['peak'] / 2**30:.2f} GiB per rank, "
                 f"{limit / 2**30:.2f} GiB available on rank {runtime.rank()} ({backend.describe()}); "
                 f"use more ranks or a smaller scale")
    runtime.agree(error)
    return estimate


def _has_edge_callback(graph):
    """Collective has_edge(candidates) for the root sampler from the owners' has_edge flags."""
    grid, comms, backend = graph.grid, graph.comms, graph.backend
    owned_has_edge = backend.asnumpy(graph.has_edge)
    lo = grid.to_global_owned(comms.i, comms.j, 0)

    def has_edge(candidates: np.ndarray) -> np.ndarray:
        candidates = np.asarray(candidates, np.int64)
        mine = np.asarray(grid.owner_rank(candidates)) == comms.world.Get_rank()
        flags = np.zeros(candidates.shape, np.int8)
        flags[mine] = owned_has_edge[candidates[mine] - lo]
        comms.world.Allreduce(MPI.IN_PLACE, flags, op=MPI.MAX)
        return flags.astype(bool)
    return has_edge


def _search_and_validate(bfs, graph, root: int, log_levels: bool):
    result = bfs.search(root, log_levels=log_levels)
    t0 = time.perf_counter()
    check = validate_bfs(graph, root, result.parent, result.nedge, level=result.level)
    validate_time = _max_time(time.perf_counter() - t0)
    if not check.ok:
        raise DbfsError(f"validation failed for root {root}: {check.message}", collective=True)
    return result, validate_time


def main(args) -> None:
    runtime.check_slurm()
    args.seed_pair = parse_seed(args.seed)
    _check_args(args)
    backend = select(args.backend)
    world = runtime.WORLD
    R, C = args.grid_shape
    transport = choose_transport(args.comm, backend, world.Get_size())
    row_major = args.direction == "auto"
    runtime.log(f"dbfs {__version__}: {world.Get_size()} ranks, grid {R}x{C}, backend {backend.name}, "
                f"direction {args.direction}, encoding {args.encoding}, comm {transport}")

    check_save_request(args)
    source = GraphSource.from_args(args)
    n_vertices, n_edges = source.n_vertices, source.n_edges
    scale, edgefactor = source.scale, source.edgefactor
    grid = Grid(R, C, n_vertices)
    _check_memory(grid, n_edges, backend, row_major)
    runtime.log(f"graph: {source.describe}: {n_vertices} vertices, {n_edges} tuples")
    comms = GridComms.create(grid)
    graph, construction_time, gen_time, load_figures = _construct(args, backend, source, comms, row_major,
                                                                  transport)

    if args.root is not None:
        roots = np.array([source.dense_root(args.root)], np.int64)
    else:
        roots = sample_roots(n_vertices, args.roots, _has_edge_callback(graph), seed=args.seed_pair)
        if len(roots) == 0:
            raise DbfsError("no vertex has an edge: nothing to search", collective=True)
        if len(roots) < args.roots:
            runtime.log(f"only {len(roots)} vertices qualify as roots (asked for {args.roots})")

    bfs = BFS(graph, edges_per_thread=args.edges_per_thread, encoding=args.encoding, comm=transport,
              direction=args.direction, alpha=args.alpha, beta=args.beta)
    _search_and_validate(bfs, graph, int(roots[0]), False)
    runtime.log("warm-up search validated; timing searches")
    searches = []
    for n, root in enumerate(roots):
        result, validate_time = _search_and_validate(bfs, graph, int(root), args.log_levels)
        if args.log_levels:
            print_levels(result)
        searches.append({
            "root": int(root), "time": result.time, "nedge": result.nedge,
            "teps": result.nedge / result.time if result.time > 0 else 0.0,
            "visited": result.visited, "depth": result.depth, "validated": True,
            "validate_time": validate_time, "phases": result.phases, "bytes": result.bytes,
            "bytes_raw": result.bytes_raw})
        if args.log_levels:
            searches[-1]["levels"] = result.levels
        runtime.log(f"search {n + 1}/{len(roots)} root {root}: {result.time * 1e3:.2f} ms, "
                    f"{searches[-1]['teps'] / 1e9:.3f} GTEPS, depth {result.depth}, "
                    f"visited {result.visited}")
    bfs.close()
    if args.save_result:
        save_result(args.save_result, graph, source, int(roots[0]), result, world)
        runtime.log(f"search tree written to {args.save_result}")

    figure_args = dict(
        scale=scale, edgefactor=edgefactor, graph_generation=gen_time,
        num_mpi_processes=world.Get_size(), construction_time=construction_time,
        bfs_times=[s["time"] for s in searches], nedges=[s["nedge"] for s in searches],
        validate_times=[s["validate_time"] for s in searches])
    figures = stats.summary_dict(**figure_args)
    runtime.out(stats.report(**figure_args))
    runtime.out(breakdown_table(searches))
    if args.partition_cache:
        runtime.out(f"construction_source: {load_figures['construction_source']}")
    devices = world.gather(backend.describe(), root=0)
    if args.json and world.Get_rank() == 0:
        doc = {"dbfs_version": __version__, "date": datetime.datetime.now().isoformat(timespec="seconds"),
               "host": socket.gethostname(), "command": " ".join(sys.argv),
               "mpi_library": runtime.mpi_library(),
               "scale": scale, "edgefactor": edgefactor, "n_vertices": n_vertices, "n_edges": n_edges,
               "grid": [R, C], "backend": backend.name, "devices": devices,
               "graph_generation": gen_time, "construction_time": construction_time,
               "edges_per_thread": args.edges_per_thread, "direction": args.direction,
               "alpha": args.alpha, "beta": args.beta, "encoding": args.encoding, "comm": transport,
               "roots": [int(r) for r in roots],
               "graph_file": args.graph, "directed": not source.symmetric,
               "roots_original": source.original_ids(roots), **load_figures,
               **figures, "searches": searches}
        write_json_atomically(args.json, doc)


def choose_transport(choice: str, backend, ranks: int) -> str:
    """--comm auto: NCCL between GPUs when CuPy has it and no two ranks share a GPU, then CUDA-aware
    MPI, else host-staged MPI."""
    if choice != "auto":
        return choice
    if backend.is_gpu and ranks > 1:
        if (runtime.WORLD.allreduce(int(exchange.nccl_available()), op=MPI.MIN)
                and not exchange.shares_a_gpu(runtime.WORLD, backend)):
            return "nccl"
        if runtime.mpi_cuda_aware():
            return "mpi-cuda"
    return "mpi"


def breakdown_table(searches) -> str:
    """Mean per-search time of each phase (paper Figure 7) and bytes sent per search."""
    n = max(1, len(searches))
    total = sum(s["time"] for s in searches) / n
    lines = ["", "phase breakdown (mean per search, slowest rank):",
             f"  {'phase':<14}{'ms':>12}{'% of search':>14}"]
    for phase in PHASES:
        ms = 1e3 * sum(s["phases"][phase] for s in searches) / n
        lines.append(f"  {phase:<14}{ms:12.3f}{100 * ms / (1e3 * total) if total else 0:13.1f}%")
    lines.append(f"  {'search':<14}{1e3 * total:12.3f}")
    lines.append(f"  {'bytes':<14}{'sent':>16}{'as lists':>16}")
    for kind in ("expand", "fold"):
        lines.append(f"  {kind:<14}{sum(s['bytes'][kind] for s in searches) / n:16.0f}"
                     f"{sum(s['bytes_raw'][kind] for s in searches) / n:16.0f}")
    return "\n".join(lines)

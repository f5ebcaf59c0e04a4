"""The main mode: the distributed BFS (dbfs.bfs, paper 004) run as a Graph500 benchmark by the harness.

Pre-flight (every check agreed by all ranks, so that no rank acts on an answer another rank did not
get; all before anything expensive): the options (finite --alpha and --beta, the --json and
--save-result targets), the backend and the transport (--comm), the graph's sizes (generator
parameters or the file's attributes) and a file's id table (strictly ascending), the grid (32-bit
local ids, else the grid or rank count that works), --root (a vertex, in the file's ids), the memory
estimate (dbfs.memory); check_command makes those that need no MPI, GPU or graph file, which slurm/lib.sh
also makes for each planned run. Without --grid the grid is the squarest, or one column where the ranks
are on one node with a GPU each (their own, or shared under CUDA MPS) and that grid holds the graph (the
faster search there). Then the harness (dbfs.harness) drives the hooks:
  build     compile and warm every kernel first (compile_time, outside every clock), then stream the
            tuples, generated or read, into this rank's CSC block (Graph500 kernel 1, dbfs.build; timed
            as construction_time without the tuple production, which is graph_generation for the
            generator and graph_load for a file), or load the block from the partition cache
  certify   the construction certificate (dbfs.certificate): the blocks hold exactly the input tuples
            (skipped with --validate none)
  trials    the Graph500-sampled roots (graph500.roots), or the one --root
  search    BFS.search(root): the timed search (kernel 2)
  validate  graph500.validate.validate_bfs on the search's parents, levels and TEPS edge count, for
            every search (--validate all, which an official run needs), the first, or none
  report    the Graph500 statistics block on stdout (graph500.stats; --report spec or reference), the
            per-phase breakdown after it, and everything as JSON (--json); with --save-result the tree
            of the one search.
Vertex ids in messages and progress lines are the ones the user gives and sees: a file's original ids.
"""

from __future__ import annotations

import dataclasses
import math
import time

import numpy as np
from mpi4py import MPI

from dbfs import __version__, memory, outputs, runtime
from dbfs.backend import Backend, select
from dbfs.bfs import BFS, PHASES, print_levels
from dbfs.build import add_row_major, build
from dbfs.certificate import certify
from dbfs.errors import DbfsError
from dbfs.graph import GridComms, csc_is_row_major
from dbfs.grid import Grid, default_grid, grid_advice, parse_grid
from dbfs.harness import Benchmark, Run, drive
from dbfs.json_output import provenance, write_json_atomically
from dbfs.kernels import DEFAULT_EDGES_PER_THREAD
from dbfs.options import ROW_COPY_APPLIES, parse_seed, refuse_inapplicable
from dbfs.partition_cache import PartitionCache
from dbfs.result import check_save_request, check_save_room, save_result
from dbfs.source import GraphSource, rank_io_threads
from dbfs.transport import bulk_transport, gpus_on_one_node, resolve_transport
from dbfs.transport import problem as transport_problem
from dbfs.warmup import warm_up
from graph500 import stats
from graph500.generator import edge_range
from graph500.roots import sample_roots, shortfall
from graph500.validate import validate_bfs

VALIDATE_CHOICES = ("all", "first", "none")


def check_command(args, ranks: int) -> None:
    """The checks of the main command's options that need neither MPI, nor a GPU, nor a graph file, as a
    run on `ranks` ranks makes them (slurm/lib.sh makes them before it launches anything): --seed, the
    values and the options given where they do not apply, the grid (--grid, else the squarest) with its
    32-bit local ids for a --scale graph, --save-result's --root, and a --comm that --backend cpu
    cannot carry. Sets args.seed_pair and args.grid_shape; DbfsError for the first that fails."""
    args.seed_pair = parse_seed(args.seed)
    if (args.scale is None) == (args.graph is None):
        raise DbfsError("give exactly one of --scale S or --graph FILE.h5", collective=True)
    if args.scale is not None and not 1 <= args.scale <= 42:
        raise DbfsError(f"--scale must be in 1..42, got {args.scale}", collective=True)
    if args.edgefactor < 1:
        raise DbfsError(f"--edgefactor must be >= 1, got {args.edgefactor}", collective=True)
    if args.roots is not None and args.root is None and args.roots < 1:
        raise DbfsError(f"--roots must be >= 1, got {args.roots}", collective=True)
    for name in ("alpha", "beta"):
        value = getattr(args, name)
        if not (math.isfinite(value) and value > 0):
            raise DbfsError(f"--{name} must be a finite number > 0, got {value}", collective=True)
    refuse_inapplicable(args, [("--edgefactor", args.graph is None, "to --scale graphs: a --graph file has its own sizes"),
                               ("--alpha", args.direction == "auto", "to --direction auto (the switch to bottom-up)"),
                               ("--beta", args.direction == "auto", "to --direction auto (the switch back to top-down)"),
                               ("--row-copy", args.direction == "auto", ROW_COPY_APPLIES)])
    if args.undirected and args.graph is None:
        raise DbfsError("--undirected applies to a directed --graph file; the --scale graph is undirected "
                        "already", collective=True)
    try:
        shape = parse_grid(args.grid) if args.grid else default_grid(ranks)
    except ValueError as e:
        raise DbfsError(str(e), collective=True) from None
    if shape[0] * shape[1] != ranks:
        raise DbfsError(f"grid {shape[0]}x{shape[1]} needs {shape[0] * shape[1]} ranks, the job has "
                        f"{ranks}", collective=True)
    if args.scale is not None:
        # the one-column grid main may take instead holds no more vertices than the squarest
        _make_grid(*shape, 1 << args.scale)
    args.grid_shape = shape
    if args.partition_cache == "":
        raise DbfsError("--partition-cache needs a directory name, got ''", collective=True)
    check_save_request(args)
    if args.backend == "cpu" and args.comm != "auto":
        # on the CPU backend, problem() answers before it asks any other rank
        failure = transport_problem(args.comm, Backend("cpu"), runtime.WORLD)
        if failure:
            raise DbfsError(failure, collective=True)


def _check_args(args) -> None:
    check_command(args, runtime.WORLD.Get_size())
    runtime.agree(None if args.graph is None else outputs.check_input("--graph", args.graph))
    outputs.check([outputs.Target("--json", args.json), outputs.Target("--save-result", args.save_result)],
                  inputs=[("--graph", args.graph)])
    if args.json == outputs.STDOUT:
        runtime.take_stdout()


def _one_column_fits(source: GraphSource, backend, args, transport: str) -> bool:
    """Collective: whether a grid of one column holds the graph on every rank: its local ids (all N
    columns) within 32 bits and its estimate over `transport`, with or without the row copy as
    --row-copy allows, within the rank's share of the GPU's memory. On one node such a grid searches faster
    than the squarest: no bottom-up rotation, no fold, almost no predecessor round (four H200 at scale 29:
    812 against 586 GTEPS, bench/NOTES.md, 2026-11-26, tall grids on one node; four ranks sharing an H100
    under MPS at scale 24: 1.43-1.50 against 2.09 ms, 2026-11-28, one column by default where ranks share
    a GPU)."""
    world = runtime.WORLD
    try:
        grid = Grid(world.Get_size(), 1, source.n_vertices)
    except ValueError:
        return False
    fits = memory.fits_some_layout(grid, source.n_edges, source.symmetric, args.direction, transport,
                                   backend.name, backend.memory_limit(), args.row_copy)
    return bool(world.allreduce(fits, op=MPI.LAND))


def _make_grid(R: int, C: int, n_vertices: int) -> Grid:
    """The run's grid; DbfsError naming a grid or rank count that works when the local index ranges of
    this one would pass 32 bits."""
    try:
        return Grid(R, C, n_vertices)
    except ValueError:
        raise DbfsError(grid_advice(n_vertices, R, C), collective=True) from None


def _check_ids(source: GraphSource) -> None:
    """Collective: a graph file's id table (original ids of the dense vertices) must be strictly
    ascending, or --root and the reported ids would name the wrong vertices. Each rank checks a slice."""
    info, world = source.info, runtime.WORLD
    problem = None
    if info is not None and info.has_ids:
        lo, hi = edge_range(info.n_vertices, world.Get_rank(), world.Get_size())
        bad = info.unordered_id(lo, hi, rank_io_threads())
        if bad is not None:
            problem = (f"{info.path} is not a dbfs graph: its 'ids' are not strictly ascending (dense vertex "
                       f"{bad} and the next); convert the file again")
    runtime.agree(problem)


def breakdown_table(searches) -> str:
    """Mean per-search time of each phase (paper Figure 7) and bytes sent per search."""
    n = max(1, len(searches))
    total = sum(s["time"] for s in searches) / n
    lines = ["", "phase breakdown (mean per search, slowest rank):",
             f"  {'phase':<14}{'ms':>12}{'% of search':>14}"]
    for phase in PHASES:
        ms = 1e3 * sum(s["phases"][phase] for s in searches) / n
        lines.append(f"  {phase:<14}{ms:12.3f}{100 * ms / (1e3 * total) if total else 0:13.1f}%")
    summed = sum(sum(s["phases"].values()) for s in searches) / n
    lines.append(f"  {'sum of phases':<14}{1e3 * summed:12.3f}{100 * summed / total if total else 0:13.1f}%")
    lines.append(f"  {'search':<14}{1e3 * total:12.3f}")
    if summed > total:
        lines.append("  each phase is its slowest rank's: a rank waiting in an exchange overlaps another rank's "
                     "expansion or update, so the shares add up past 100%")
    lines.append(f"  {'bytes':<14}{'sent':>16}{'as lists':>16}")
    for kind in ("expand", "fold"):
        lines.append(f"  {kind:<14}{sum(s['bytes'][kind] for s in searches) / n:16.0f}"
                     f"{sum(s['bytes_raw'][kind] for s in searches) / n:16.0f}")
    return "\n".join(lines)


class Graph500BFS(Benchmark):
    """The hooks of the main mode (see the module docstring); constructed after the pre-flight."""

    def __init__(self, args, backend, transport: str, bulk: tuple[str, str], source: GraphSource, grid: Grid,
                 root: int | None, plan: memory.Estimate):
        """bulk: the transport of the run's bulk rounds and why (dbfs.transport.bulk_transport); root: the
        dense id of --root (None: sampled roots); plan: the run's memory estimate."""
        self.args, self.backend, self.transport, self.source, self.grid = args, backend, transport, source, grid
        self.root, self.plan = root, plan
        self.bulk, self.bulk_reason = bulk
        self.device_peak = memory.DevicePeak(backend)
        self.comm = runtime.WORLD
        self.row_major = args.direction == "auto" and plan.inputs["row_copy"]
        self.comms = GridComms.create(grid)
        self.graph = self.bfs = self.last = self.cache = None
        self.graph_from_cache = False
        self.original: dict = {}          # dense root -> the id the user sees (the file's original id)

    # -- build: kernel 1 ---------------------------------------------------------------------------
    def build(self) -> dict:
        """Compile and warm every kernel (outside every clock), then this rank's CSC block (and with
        row_major its row-major copy) from the partition cache when it holds a valid entry, else
        streamed from the tuples (generated or read, built over the run's bulk transport -- NCCL where it
        can run, else staged through the host: dbfs.transport.bulk_transport -- then cached)."""
        backend, comms = self.backend, self.comms
        compile_time = self.slowest(warm_up(backend))
        runtime.log(f"kernels compiled and warmed: {compile_time:.3f} s (outside every timing)" if backend.is_gpu
                    else "no kernels to compile: the CPU backend runs their NumPy twins")
        figures = {"compile_time": compile_time, "memory_estimate": self.plan.peak, "graph_generation": 0.0}
        comms.bulk = self.bulk
        self.device_peak.restart()
        if self.args.partition_cache:
            self.cache = PartitionCache(self.args.partition_cache, self.source, comms.grid)
            loaded = self._load_cached()
            if loaded is not None:
                return {**figures, **loaded}
        return {**figures, **self._build_streamed()}

    def _load_cached(self) -> dict | None:
        """This rank's block from the partition cache (None on every rank when any rank misses), with its
        construction figures."""
        world, source = self.comms.world, self.source
        world.Barrier()
        t0 = time.perf_counter()
        graph = self.cache.load(self.comms, self.backend)
        if graph is None:
            return None
        if self.row_major and graph.row_ptr is None:
            add_row_major(graph)
        elif not self.row_major and not graph.row_major_shared:     # --row-copy off: not kept
            graph.row_ptr = graph.col_idx = None
        self.backend.sync()
        construction_time = self.slowest(time.perf_counter() - t0)
        runtime.log(f"construction: {construction_time:.3f} s (loaded from the partition cache "
                    f"{self.cache.path}), {world.allreduce(graph.nnz)} CSC entries")
        self.graph, self.graph_from_cache = graph, True
        figures = {"construction_time": construction_time, "construction_source": "partition cache",
                   "memory_construction_peak": self.device_peak.largest()}
        if source.info is not None:        # nothing was read: no reading time, no reading rate
            figures.update(graph_load=0.0, load_edges_per_s_per_rank=None)
        return figures

    def _build_streamed(self) -> dict:
        """This rank's block built from the tuples (then stored in the partition cache, if any), with its
        construction figures."""
        comms, source = self.comms, self.source
        world, bulk = comms.world, comms.bulk
        if world.Get_size() > 1:
            runtime.log(f"construction over {bulk} ({self.bulk_reason})")
        graph, report = build(comms, self.backend, source, row_major=self.row_major, transport=bulk, plan=self.plan)
        figures = {"construction_comm": bulk, "memory_estimate": report.memory.peak}
        if source.info is None:
            figures["graph_generation"] = report.producer_time
        else:
            figures.update(graph_load=report.producer_time, load_edges_per_s_per_rank=report.producer_rate)
        runtime.log(f"tuples {'generated' if source.info is None else 'read'} in both passes: "
                    f"{report.producer_time:.3f} s, {report.producer_rate / 1e6:.1f} M edges/s per rank "
                    "(slowest rank)")
        steps = ", ".join(f"{k} {v:.3f} s" for k, v in report.phases.items())
        setup = (f"; the exchange set up and closed outside it in {report.setup_time:.3f} s"
                 if world.Get_size() > 1 else "")
        runtime.log(f"construction: {report.construction_time:.3f} s (built, tuple production excluded; {steps}, "
                    f"slowest rank each{setup}), {world.allreduce(graph.nnz)} CSC entries")
        if self.cache and self.cache.store(graph):
            runtime.log(f"stored in the partition cache {self.cache.path}")
        self.graph, self.graph_from_cache = graph, False
        return {**figures, "construction_time": report.construction_time, "construction_source": "built",
                "construction_phases": report.phases, "construction_setup_time": report.setup_time,
                "memory_construction_peak": self.device_peak.largest()}

    def certify(self) -> dict:
        """The construction certificate, once per run (not with --validate none); then the search's
        state is allocated (after the certificate, whose id tables it would otherwise sit beside). A
        block loaded from the partition cache that fails it is stale (a graph file changed with its size
        and modification time kept): it is built again from the file, stored, and certified again."""
        figures = {"certificate": None}
        if self.args.validate == "none":
            runtime.log("certificate skipped (--validate none)")
        else:
            certificate = certify(self.graph, self.source)
            if not certificate.passed and self.graph_from_cache:
                runtime.warn(f"the partition cache entry {self.cache.path} does not hold the graph's tuples (its "
                             "file changed, keeping its size and modification time?): rebuilding it")
                self.graph = None
                self.device_peak.restart()
                figures.update(self._build_streamed())
                certificate = certify(self.graph, self.source)
            if not certificate.passed:
                raise DbfsError(f"construction certificate failed: {certificate.message}", collective=True)
            runtime.log(f"certificate: the CSC holds exactly the input tuples ({certificate.time:.3f} s)")
            figures["certificate"] = certificate.as_json()
        self._ready()
        return figures

    def _ready(self) -> None:
        """Allocate the search's state on the built graph (untimed)."""
        args = self.args
        self.bfs = BFS(self.graph, edges_per_thread=args.edges_per_thread, encoding=args.encoding,
                       comm=self.transport, direction=args.direction, alpha=args.alpha, beta=args.beta,
                       level_launch=args.level_launch)
        if self.graph.columns is not None:
            runtime.log(f"hypersparse blocks: the column offsets held by the non-empty columns (at most "
                        f"{self.graph.most_nonempty_columns} of {self.grid.cols_per_rank} a block)")

    # -- roots -------------------------------------------------------------------------------------
    def _has_edge_callback(self):
        """Collective has_edge(candidates) for the root sampler from the owners' degrees (read on the host:
        a mask on the device would take a byte an owned vertex beside the search state)."""
        grid, comms, backend = self.grid, self.comms, self.backend
        owned_degree = backend.asnumpy(self.graph.degree)
        lo = grid.to_global_owned(comms.i, comms.j, 0)

        def has_edge(candidates: np.ndarray) -> np.ndarray:
            candidates = np.asarray(candidates, np.int64)
            mine = np.asarray(grid.owner_rank(candidates)) == comms.world.Get_rank()
            flags = np.zeros(candidates.shape, np.int8)
            flags[mine] = owned_degree[candidates[mine] - lo] > 0
            comms.world.Allreduce(MPI.IN_PLACE, flags, op=MPI.MAX)
            return flags.astype(bool)
        return has_edge

    def trials(self) -> list[int]:
        args, n = self.args, self.source.n_vertices
        if self.root is not None:
            roots = np.array([self.root], np.int64)
        else:
            roots = sample_roots(n, args.roots, self._has_edge_callback(), seed=self.source.seed)
            if len(roots) == 0:
                raise DbfsError(shortfall(n, 0, args.roots, "--root V"), collective=True)
            if len(roots) < args.roots:
                runtime.log(shortfall(n, len(roots), args.roots, "--root V"))
        self.original = dict(zip(roots.tolist(), self.source.original_ids(roots)))
        return [int(r) for r in roots]

    # -- search and validation ---------------------------------------------------------------------
    def warm_up(self, root: int) -> None:
        if self.args.validate == "none":
            self.search(root)
            runtime.log("warm-up search done; timing searches")
            return
        super().warm_up(root)
        runtime.log("warm-up search validated; timing searches")

    def validates(self, index: int) -> bool:
        return self.args.validate == "all" or (self.args.validate == "first" and index == 0)

    def search(self, root: int):
        self.last = self.bfs.search(root, log_levels=self.args.log_levels)
        return self.last

    def validate(self, root: int, result) -> str | None:
        check = validate_bfs(self.graph, root, result.parent, result.nedge, level=result.level,
                             workspace=self.bfs.idle_memory())
        return None if check.ok else check.message

    def label(self, root: int) -> str:
        return f"root {self.original[root]}"

    def record(self, root: int, result) -> dict:
        if self.args.log_levels:
            print_levels(dataclasses.replace(result, root=self.original[root]))
        record = {"root": root, "time": result.time, "nedge": result.nedge,
                  "teps": result.nedge / result.time if result.time > 0 else 0.0,
                  "visited": result.visited, "depth": result.depth, "phases": result.phases,
                  "bytes": result.bytes, "bytes_raw": result.bytes_raw, "host_syncs": result.host_syncs,
                  "launches": result.launches}
        if self.args.log_levels:
            record["levels"] = result.levels
        return record

    def progress(self, index: int, count: int, root: int, record: dict) -> str:
        return (f"search {index + 1}/{count} root {self.original[root]}: {record['time'] * 1e3:.2f} ms, "
                f"{record['teps'] / 1e9:.3f} GTEPS, depth {record['depth']}, visited {record['visited']}")

    # -- report ------------------------------------------------------------------------------------
    def report(self, run: Run) -> None:
        args, source, world = self.args, self.source, self.comm
        if args.save_result:
            save_result(args.save_result, self.graph, source, run.trials[0], self.last, world)
            runtime.log(f"search tree written to {args.save_result}")
        searches = run.records
        validated = [s for s in searches if s["validated"]]
        # the block's validation statistics need every search's time; with --validate first or none
        # the line after the block gives the validated searches' mean instead
        figure_args = dict(
            scale=source.scale, edgefactor=source.edgefactor, graph_generation=run.figures["graph_generation"],
            num_mpi_processes=world.Get_size(), construction_time=run.figures["construction_time"],
            bfs_times=[s["time"] for s in searches], nedges=[s["nedge"] for s in searches],
            validate_times=[s["validate_time"] for s in searches] if len(validated) == len(searches) else None)
        figures = stats.summary_dict(**figure_args)
        runtime.out(stats.report(**figure_args, style=args.report))
        extras = [breakdown_table(searches)]
        if args.partition_cache:
            extras.append(f"construction_source: {run.figures['construction_source']}")
        certificate = run.figures["certificate"]
        extras.append(f"certificate: passed ({certificate['time']:.6f} s, {certificate['tuples']} tuples)"
                      if certificate else "certificate: not run (--validate none)")
        if len(validated) < len(searches):
            unchecked = [f"{i + 1}" for i, s in enumerate(searches) if not s["validated"]]
            mean = (f", validation {1e3 * sum(s['validate_time'] for s in validated) / len(validated):.3f} ms "
                    "per validated search" if validated else "")
            extras.append(f"validation: {len(validated)} of {len(searches)} searches validated (--validate "
                          f"{args.validate}{mean}); NOT validated: searches {_ranges(unchecked)}; not an "
                          "official Graph500 result")
        if source.sizes_derived:
            extras.append(f"SCALE and edgefactor above are derived from the graph file's {source.n_vertices} "
                          f"vertices and {source.n_edges} tuples (SCALE = ceil(log2 vertices), edgefactor = "
                          "tuples / vertices, rounded): it is not a Graph500 graph")
        # --report reference: stdout holds exactly the reference's block; the rest goes to stderr
        for text in extras:
            if args.report == "spec":
                runtime.out(text)
            else:
                runtime.log(text.strip("\n"))
        excluded = stats.zero_edge_searches([s["nedge"] for s in searches])
        if excluded:
            runtime.log(f"{excluded} of {len(searches)} searches traversed no edge (their root has none): "
                        "left out of the TEPS statistics")
        note = small_component_note(searches)
        if note:
            runtime.log(note)
        memory_peak = self.device_peak.largest()
        if memory_peak is not None:
            where = "device" if self.backend.is_gpu else "host"
            runtime.log(f"{where} memory peak {memory.readable(memory_peak)} (largest rank; estimate "
                        f"{memory.readable(run.figures['memory_estimate'])})")
        devices = world.gather(self.backend.describe(), root=0)
        if args.json is not None and world.Get_rank() == 0:
            file_figures = {k: run.figures[k] for k in ("construction_source", "construction_comm",
                                                         "construction_phases", "construction_setup_time",
                                                         "graph_load",
                                                         "load_edges_per_s_per_rank", "compile_time",
                                                         "memory_estimate", "memory_construction_peak",
                                                         "certificate") if k in run.figures}
            doc = {**provenance(), "mpi_library": runtime.mpi_library(),
                   "scale": source.scale, "edgefactor": source.edgefactor, "n_vertices": source.n_vertices,
                   "n_edges": source.n_edges, "grid": [self.grid.R, self.grid.C], "backend": self.backend.name,
                   "devices": devices, "graph_generation": run.figures["graph_generation"],
                   "construction_time": run.figures["construction_time"],
                   "edges_per_thread": args.edges_per_thread, "direction": args.direction,
                   "row_copy": self.row_major,
                   "alpha": args.alpha, "beta": args.beta, "encoding": args.encoding, "comm": self.transport,
                   "level_launch": self.bfs.level_launch,
                   "scale_derived": source.sizes_derived,
                   "roots": run.trials, "graph_file": args.graph, "directed": not source.symmetric,
                   "validate": args.validate, "memory_peak": memory_peak,
                   "roots_original": [self.original[r] for r in run.trials], **file_figures,
                   **figures, "searches": searches}
            write_json_atomically(args.json, doc)

    def close(self) -> None:
        self.bfs.close()
        self.comms.free()
        self.device_peak.close()


def main(args) -> None:
    """Collective: the pre-flight (module docstring), then the harness drives the run."""
    runtime.check_slurm()
    _check_args(args)
    backend = select(args.backend, share_multiprocessors=args.comm in ("nvshmem", "auto"))
    world = runtime.WORLD
    R, C = args.grid_shape
    source = GraphSource.from_args(args)
    _check_ids(source)
    if source.n_edges == 0 and args.root is None:
        raise DbfsError(f"{source.describe} has no edges, so the Graph500 root sampler has no vertex to draw: "
                        "name one with --root V", collective=True)
    check_save_room(args, source.n_vertices, world)
    # the transport the grid and the row copy are sized for, before `auto` is resolved (that needs them)
    sized_for = memory.sized_transport(args.comm)
    grid_choice = ""
    if (not args.grid and gpus_on_one_node(backend, world)
            and _one_column_fits(source, backend, args, sized_for)):
        R, C = args.grid_shape = (world.Get_size(), 1)
        grid_choice = " (one column: the ranks' GPUs on one node; --grid for another)"
    grid = _make_grid(R, C, source.n_vertices)
    row_copy = memory.resolve_row_copy(args.row_copy, grid, source.n_edges, source.symmetric, args.direction,
                                       sized_for, backend.name, backend.memory_limit())
    # where the search may run over NVSHMEM: the heap it needs, which holds construction's landing only where
    # the build would go over NVSHMEM too (the collectives that decide it are left out of other runs)
    nvshmem_bulk = heap_need = None
    if args.comm in ("auto", "nvshmem"):
        nvshmem_bulk = bulk_transport("nvshmem", backend, world)
        heap_need = memory.symmetric_heap_bytes(grid, source.n_edges, source.symmetric, args.direction,
                                                args.encoding, backend.name, row_copy, nvshmem_bulk[0],
                                                memory.EXPECTED_COLUMNS if source.info is None else None)
    transport = resolve_transport(args.comm, backend, heap_need=heap_need)
    bulk = nvshmem_bulk if transport == "nvshmem" else bulk_transport(transport, backend, world)
    runtime.log(f"dbfs {__version__}: {runtime.count(world.Get_size(), 'rank')}, grid {R}x{C}{grid_choice}, backend "
                f"{backend.name}, direction {args.direction}, encoding {args.encoding}, comm {transport}"
                + (f", row copy {'on' if row_copy else 'off'} (--row-copy {args.row_copy})"
                   if args.direction == "auto" and world.Get_size() > 1 else ""))
    if args.row_copy != "auto" and args.direction == "auto" and csc_is_row_major(grid, source.symmetric):
        runtime.log(f"--row-copy {args.row_copy} has no effect here: one rank's undirected CSC is its own "
                    "row-major form")
    if args.edges_per_thread != DEFAULT_EDGES_PER_THREAD and not backend.is_gpu:
        runtime.log(f"--edges-per-thread {args.edges_per_thread} has no effect here: the CPU backend has no GPU "
                    "threads")
    root = None if args.root is None else source.dense_root(args.root)
    plan = memory.plan_run(grid, source, args.direction, transport, backend, heap_need, row_copy,
                           certified=args.validate != "none", build_transport=bulk[0], log_levels=args.log_levels)
    runtime.log(f"graph: {source.describe}: {runtime.count(source.n_vertices, 'vertex', 'vertices')}, "
                f"{runtime.count(source.n_edges, 'tuple')}")
    drive(Graph500BFS(args, backend, transport, bulk, source, grid, root, plan))


# A search reached a small component when it traversed fewer edges than this fraction of the most any
# search traversed.
SMALL_COMPONENT_FRACTION = 1e-3


def small_component_note(searches: list[dict]) -> str | None:
    """A line for stderr when some roots lie in components that are tiny next to the largest one
    traversed: a search of a few edges takes the loop's fixed cost (tens of microseconds), so its TEPS,
    and with them the Graph500 harmonic mean, are orders of magnitude below the others'. The official
    figures stay as they are; the line gives the harmonic mean of the other searches beside them."""
    nedges = [s["nedge"] for s in searches]
    floor = SMALL_COMPONENT_FRACTION * max(nedges, default=0)
    small = [i for i, m in enumerate(nedges) if 0 < m < floor]
    if not small:
        return None
    rest = [s for s in searches if s["nedge"] >= floor]
    others = stats.teps_statistics([s["time"] for s in rest], [s["nedge"] for s in rest])
    edges = max(nedges[i] for i in small)
    which = ("search " if len(small) == 1 else "searches ") + _ranges([str(i + 1) for i in small])
    return (f"{len(small)} of {len(searches)} searches ({which}) reached components of at most {edges} "
            f"edge{'s' if edges > 1 else ''}: their TEPS set bfs_harmonic_mean_TEPS (the other {len(rest)}: "
            f"harmonic mean {others['harmonic_mean']:.6g} TEPS)")


def _ranges(numbers: list[str]) -> str:
    """'2, 3, 4, 7' -> '2-4, 7' (consecutive search numbers joined)."""
    values, parts = [int(x) for x in numbers], []
    start = prev = values[0]
    for v in values[1:] + [None]:
        if v is not None and v == prev + 1:
            prev = v
            continue
        parts.append(f"{start}" if start == prev else f"{start}-{prev}")
        if v is not None:
            start = prev = v
    return ", ".join(parts)

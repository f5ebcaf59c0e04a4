"""The main-mode BFS of one rank: a search state, a level loop, and the search's result.

`BFS(graph, ...).search(root)` runs one Graph500 kernel-2 search (paper 004, Algorithm 2; top-down or
direction-optimizing after Beamer et al.) and returns a SearchResult. The per-search arrays live in a
dbfs.search_state.SearchState; the loop that drives the levels depends on the grid:
  - one rank (1x1 grid): dbfs.device_loop -- the GPU drives itself; the host replays rounds of
    kernels captured as CUDA graphs and reads one status word per round;
  - a grid of ranks: dbfs.grid_loop -- the host drives the bulk levels, because their exchanges go
    through MPI or NCCL; with NVSHMEM the small top-down levels are driven by the GPUs
    (dbfs.peer_levels).
Both take their phase times from dbfs.timing (CUDA events) and report the host waits per level.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

import numpy as np
from mpi4py import MPI

from dbfs.device_loop import DEFAULT_SMALL_EDGES, DEFAULT_SOLO_WORK, DeviceLoop
from dbfs.direction import DEFAULT_ALPHA, DEFAULT_BETA
from dbfs.errors import DbfsError
from dbfs.grid_loop import GridLoop, Traffic, finds_read_in_place, scan_lent_bytes
from dbfs.kernels import DEFAULT_EDGES_PER_THREAD
from dbfs.peer_levels import default_capacity
from dbfs.search_state import SearchState, graph_held_segments
from dbfs.timing import PhaseClock
from dbfs.workspace import Workspace

PHASES = ("expand_comm", "expansion", "fold_comm", "update", "pred_resolve")
DIRECTIONS = ("auto", "topdown")
# Per-level records kept by the one-GPU loop (levels beyond are searched but not logged).
LOG_CAPACITY = 1 << 16


@dataclass
class SearchResult:
    """One search on one rank: owned parents/levels (device arrays, views into the search state: valid
    until the next search) and the global figures."""

    root: int
    time: float
    parent: object                 # xp int32 or int64 [block], global parent ids of owned vertices, -1
    level: object                  # xp int32 [block], -1 unreached
    nedge: int                     # TEPS edge count: degrees of the visited vertices (/ 2 when both
                                   # directions of every tuple are stored)
    visited: int
    depth: int
    phases: dict
    bytes: dict                    # bytes sent per phase, as encoded
    bytes_raw: dict                # bytes the same messages take as plain lists
    host_syncs: int = 0            # host waits on the device during the search (this rank)
    launches: int = 0              # kernels, memsets and copies the host enqueued (this rank)
    levels: list = field(default_factory=list)


class BFS:
    """2D BFS over one rank's LocalGraph; call `search(root)` once per root (collective)."""

    def __init__(self, graph, edges_per_thread: int = DEFAULT_EDGES_PER_THREAD, encoding: str = "adaptive",
                 comm: str = "mpi", direction: str = "topdown", alpha: float = DEFAULT_ALPHA,
                 beta: float = DEFAULT_BETA, small_edges: int = DEFAULT_SMALL_EDGES, round_graphs: bool = True,
                 solo_work: int = DEFAULT_SOLO_WORK, peer_edges: int | None = None, level_launch: str = "device"):
        """peer_edges: global frontier edges up to which a grid's top-down levels run in the device-driven
        kernel of dbfs.peer_levels (0: never; None: default_capacity with --comm nvshmem on GPUs, else
        never; on the CPU backend any value runs its NumPy twin); level_launch: who launches a grid
        search's graphs where every exchange is on the device (dbfs.grid_loop.GridLoop)."""
        if direction not in DIRECTIONS:
            raise DbfsError(f"unknown direction {direction!r} ({', '.join(DIRECTIONS)})", collective=True)
        if direction == "auto" and not graph.bottom_up_ready:
            raise ValueError("direction auto needs the row-major copy on one rank or for a directed graph "
                             "(build with row_major=True)")
        self.graph, self.backend = graph, graph.backend
        grid = graph.grid
        self.one_rank = grid.size == 1
        cpu = not self.backend.is_gpu
        by_columns = graph.searches_columns(direction)
        scan_lent = scan_lent_bytes(grid, comm, cpu, by_columns, graph_held_segments(graph, by_columns))
        self.state = SearchState(graph, direction, LOG_CAPACITY if self.one_rank else 0, scan_lent,
                                 finds_read_in_place(comm, cpu))
        self.clock = PhaseClock(self.backend, PHASES)
        if self.one_rank:
            self.loop = DeviceLoop(graph, self.state, direction, alpha, beta, edges_per_thread, small_edges,
                                   round_graphs, solo_work)
        else:
            if peer_edges is None:
                peer_edges = default_capacity(grid) if comm == "nvshmem" and self.backend.is_gpu else 0
            self.loop = GridLoop(graph, self.state, direction, alpha, beta, edges_per_thread, encoding, comm,
                                 peer_edges, level_launch)

    @property
    def level_launch(self) -> str:
        """Who launched the last search's levels: "device" (one rank's GPU loop; a grid search's graphs launching
        each other) or "host"."""
        if self.one_rank:
            return "device" if self.backend.is_gpu else "host"
        return self.loop.level_launch

    def close(self) -> None:
        if not self.one_rank:
            self.loop.close()

    def idle_memory(self) -> Workspace:
        """The search state's arrays that hold nothing of the last search's result
        (SearchState.idle_arrays), lent until the next search: the validation's room."""
        return Workspace(self.backend, self.state.idle_arrays())

    def search(self, root: int, log_levels: bool = False) -> SearchResult:
        backend, state = self.backend, self.state
        state.reset()
        backend.sync()
        syncs, launches = backend.host_syncs, backend.launches
        if self.one_rank:
            return self._search_one_rank(root, log_levels, syncs)
        traffic = Traffic()
        figures = self.loop.run(root, self.clock, traffic, log_levels)
        world = self.graph.comms.world
        totals = np.array([traffic.sent["expand"], traffic.sent["fold"], traffic.raw["expand"],
                           traffic.raw["fold"]], np.int64)
        world.Allreduce(MPI.IN_PLACE, totals)
        totals = totals.tolist()
        levels = figures["levels"]
        if levels:
            level_bytes = np.array([[row["bytes"], row["bytes_raw"]] for row in levels], np.int64)
            world.Allreduce(MPI.IN_PLACE, level_bytes)
            for row, (sent, raw) in zip(levels, level_bytes.tolist()):
                row["bytes"], row["bytes_raw"] = sent, raw
        phase_times = np.array([self.clock.totals()[k] for k in PHASES])
        world.Allreduce(MPI.IN_PLACE, phase_times, op=MPI.MAX)
        phases = dict(zip(PHASES, phase_times.tolist()))
        return SearchResult(root=root, time=figures["time"], parent=state.parent, level=state.level,
                            nedge=self._nedge(figures["reached_degrees"]), visited=figures["visited"],
                            depth=figures["depth"], phases=phases,
                            bytes={"expand": totals[0], "fold": totals[1]},
                            bytes_raw={"expand": totals[2], "fold": totals[3]},
                            host_syncs=backend.host_syncs - syncs, launches=backend.launches - launches,
                            levels=levels)

    def _search_one_rank(self, root: int, log_levels: bool, syncs: int) -> SearchResult:
        self.clock.start()
        figures = self.loop.run(root, self.clock)
        no_bytes = {"expand": 0, "fold": 0}
        return SearchResult(root=root, time=figures["time"], parent=self.state.parent, level=self.state.level,
                            nedge=self._nedge(self.loop.total_degree - figures["unvisited_edges"]),
                            visited=figures["visited"], depth=figures["levels"] - 2,
                            phases=self.clock.totals(), bytes=no_bytes, bytes_raw=dict(no_bytes),
                            host_syncs=self.backend.host_syncs - syncs,
                            levels=self.loop.level_records(figures) if log_levels else [])

    def _nedge(self, reached_degrees: int) -> int:
        return reached_degrees // (1 if self.graph.info.get("directed") else 2)


def print_levels(result: SearchResult) -> None:
    """Per-level direction, frontier size, entries examined, bytes sent (all ranks; as lists), host
    waits and, on a grid of ranks, launches, messages, host time and device time (rank 0's), and the
    level's time to stderr (rank 0); then the search's totals."""
    if MPI.COMM_WORLD.Get_rank() != 0:
        return
    for row in result.levels:
        grid_figures = ""
        if "launches" in row:
            grid_figures = (f" launches {row['launches']:>3d} messages {sum(row['messages'].values()):>2d} "
                            f"host {1e3 * row['host_time']:8.3f} ms device {1e3 * row['device_time']:8.3f} ms")
        print(f"[dbfs] root {result.root} level {row['level']:3d} {row['direction']:>9}: frontier "
              f"{row['frontier']:>12d} edges(rank 0) {row['edges']:>14d} bytes {row['bytes']:>12d} "
              f"(lists {row['bytes_raw']:>12d}) host syncs {row['host_syncs']:>2d}{grid_figures} "
              f"{1e3 * row['time']:9.3f} ms", file=sys.stderr)
    print(f"[dbfs] root {result.root}: {len(result.levels)} levels, host syncs {result.host_syncs}, launches "
          f"{result.launches} (rank 0), {1e3 * result.time:.3f} ms", file=sys.stderr)

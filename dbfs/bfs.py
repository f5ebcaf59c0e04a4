"""The main-mode BFS level loop on one rank of the 2D grid (paper 004, Algorithm 2, sections 3.2-3.5).

Each level: expand (gather the frontier along the grid column, as local column ids) -> frontier
expansion (dbfs.ops.expand: atomic bitmap, discoveries grouped by owner grid column) -> fold (send each
group to its owner along the grid row) -> frontier update (dbfs.ops.update) -> one allreduce of the
next frontier size. Predecessors are delayed: the owner of a vertex discovered by another rank records
the discoverer's grid column, and one row exchange after the search turns those into global parent
ids (section 3.5). State lives on the backend's device and is allocated once per run.

Timing follows Graph500 kernel 2: from just before the root is visited until the parent array is
complete on every rank (device synchronized; the slowest rank's time), state reset excluded.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field

import numpy as np
from mpi4py import MPI

from dbfs.exchange import PeerExchange
from dbfs.graph import LocalGraph
from dbfs.ops.expand import expand
from dbfs.ops.predecessors import resolve_parents
from dbfs.ops.update import update

PHASES = ("expand_comm", "expansion", "fold_comm", "update", "pred_resolve")
TAG_EXPAND, TAG_FOLD = 11, 12


@dataclass
class SearchResult:
    """One search on one rank: owned parents/levels (device arrays) and the global figures."""

    root: int
    time: float
    parent: object                 # xp int64 [block], global parent ids of owned vertices, -1 unreached
    level: object                  # xp int32 [block], -1 unreached
    nedge: int                     # TEPS edge count from the traversal (directed entries scanned / 2)
    visited: int
    depth: int
    phases: dict
    bytes: dict
    levels: list = field(default_factory=list)


class _PhaseClock:
    """Accumulates wall time per phase; synchronizes the device at each boundary so work is charged
    to the phase that launched it."""

    def __init__(self, sync):
        self.sync = sync
        self.totals = dict.fromkeys(PHASES, 0.0)
        self._phase = None
        self._t = 0.0

    def switch(self, phase: str | None) -> None:
        self.sync()
        now = time.perf_counter()
        if self._phase:
            self.totals[self._phase] += now - self._t
        self._phase, self._t = phase, now


class BFS:
    """Top-down 2D BFS over one rank's LocalGraph; call `search(root)` once per root (collective)."""

    def __init__(self, graph: LocalGraph, edges_per_thread: int = 4):
        self.graph, self.backend = graph, graph.backend
        self.edges_per_thread = edges_per_thread
        grid, xp, comms = graph.grid, graph.backend.xp, graph.comms
        b = grid.block
        self.bitmap = xp.zeros((grid.rows_per_rank + 31) // 32, xp.uint32)
        self.level = xp.empty(b, xp.int32)
        self.pred_col = xp.empty(b, xp.int32)
        self.pred_row = xp.empty(grid.rows_per_rank, xp.int32)
        # Two discovery buffers, swapped every level: group j of the last one is the next frontier,
        # read in place by the expansion when the grid has one row (no copy).
        self.dst_pair = (xp.empty(grid.C * b, xp.int32), xp.empty(grid.C * b, xp.int32))
        self.dst_cnt = xp.zeros(grid.C, xp.int32)
        self.counts = self.backend.pinned_empty(grid.C, np.int32)
        self.front = xp.empty(grid.cols_per_rank, xp.int32) if grid.R > 1 else None
        self.recv = xp.empty(max(1, (grid.C - 1) * b), xp.int32)
        self.parent = xp.empty(b, xp.int64)
        self.expand_x = PeerExchange(comms.col, self.backend, b, TAG_EXPAND)
        self.fold_x = PeerExchange(comms.row, self.backend, b, TAG_FOLD)
        if grid.C > 1:
            self.pred_send = self.backend.pinned_empty(grid.rows_per_rank, np.int32)
            self.pred_recv = self.backend.pinned_empty(grid.rows_per_rank, np.int32)
            self.pred_gathered = xp.empty(grid.rows_per_rank, xp.int32)

    def close(self) -> None:
        self.expand_x.close()
        self.fold_x.close()

    def _reset(self) -> None:
        self.bitmap.fill(0)
        self.level.fill(-1)
        self.pred_col.fill(-1)
        self.pred_row.fill(-1)
        self.dst_cnt.fill(0)

    def search(self, root: int, log_levels: bool = False) -> SearchResult:
        graph, backend, xp = self.graph, self.backend, self.backend.xp
        grid, comms = graph.grid, graph.comms
        i, j, b, R, C = comms.i, comms.j, grid.block, grid.R, grid.C
        self._reset()
        backend.sync()
        comms.world.Barrier()
        expand_bytes0, fold_bytes0 = self.expand_x.bytes_sent, self.fold_x.bytes_sent
        clock = _PhaseClock(backend.sync)
        t_start = time.perf_counter()

        own_root = tuple(int(x) for x in grid.owner(root)) == (i, j)
        root_offset = root - grid.to_global_owned(i, j, 0)
        nf, last, current = 0, self.dst_pair[1], self.dst_pair[0]
        if own_root:
            row = grid.owned_row_start(j) + root_offset
            self.bitmap[row // 32] = np.uint32(1 << (row % 32))
            self.level[root_offset] = 0
            last[j * b] = root_offset
            nf = 1
        lvl, scanned, levels, frontier_total = 0, 0, [], 1
        single = comms.world.Get_size() == 1
        while True:
            t_level = time.perf_counter()
            clock.switch("expand_comm")
            own_frontier = last[j * b:j * b + nf]
            if R > 1:
                xp.add(own_frontier, np.int32(grid.owned_col_start(i)), out=self.front[:nf])
                seg = self.expand_x.exchange({p: self.front[:nf] for p in self.expand_x.peers},
                                             into=self.front, start=nf)
                frontier = self.front[:int(seg[-1])]
            else:
                frontier = own_frontier
            lvl += 1
            clock.switch("expansion")
            self.dst_cnt.fill(0)
            level_edges = expand(backend, graph.col_ptr, graph.row_idx, frontier, self.bitmap,
                                 self.level, self.pred_row, self.pred_col, lvl, j, b, current,
                                 self.dst_cnt, edges_per_thread=self.edges_per_thread)
            scanned += level_edges
            counts = self._read_counts()
            nf = int(counts[j])
            if C > 1:
                clock.switch("fold_comm")
                seg = self.fold_x.exchange(
                    {m: current[m * b:m * b + int(counts[m])] for m in self.fold_x.peers},
                    into=self.recv)
                clock.switch("update")
                if seg[-1]:
                    update(backend, self.recv[:int(seg[-1])], seg.astype(np.int32), self.bitmap,
                           self.level, self.pred_col, lvl, j, b, current, self.dst_cnt)
                    nf = int(self._read_counts()[j])
            clock.switch("fold_comm")
            level_frontier = frontier_total
            frontier_total = nf if single else comms.world.allreduce(nf)
            if log_levels:
                levels.append({"level": lvl - 1, "frontier": level_frontier, "edges": level_edges,
                               "time": time.perf_counter() - t_level})
            last, current = current, last
            if frontier_total == 0:
                break

        clock.switch("pred_resolve")
        self._resolve_parents(own_root, root, root_offset)
        clock.switch(None)
        elapsed = comms.world.allreduce(time.perf_counter() - t_start, op=MPI.MAX)

        nedge_twice = comms.world.allreduce(scanned)
        visited = comms.world.allreduce(int((self.level >= 0).sum()))
        phases = {k: comms.world.allreduce(v, op=MPI.MAX) for k, v in clock.totals.items()}
        sent = {"expand": self.expand_x.bytes_sent - expand_bytes0, "fold": self.fold_x.bytes_sent - fold_bytes0}
        sent = {k: comms.world.allreduce(v) for k, v in sent.items()}
        return SearchResult(root=root, time=elapsed, parent=self.parent.copy(), level=self.level.copy(),
                            nedge=nedge_twice // 2, visited=visited, depth=lvl - 1,
                            phases=phases, bytes=sent, levels=levels)

    def _read_counts(self) -> np.ndarray:
        """The group counters on the host (a small copy through pinned memory)."""
        if self.backend.is_gpu:
            self.dst_cnt.get(out=self.counts)
            return self.counts
        return self.dst_cnt

    def _resolve_parents(self, own_root: bool, root: int, root_offset: int) -> None:
        """Delayed predecessors -> global parent ids of the owned vertices (one row exchange)."""
        backend, grid, comms = self.backend, self.graph.grid, self.graph.comms
        if grid.C > 1:
            # block m of this rank's pred_row goes to the owner in grid column m; from column c we
            # receive its discoverers of our block, so gathered[c*b + o] is column c's answer.
            if backend.is_gpu:
                self.pred_row.get(out=self.pred_send)
            else:
                self.pred_send[:] = self.pred_row
            comms.row.Alltoall([self.pred_send, MPI.INT32_T], [self.pred_recv, MPI.INT32_T])
            if backend.is_gpu:
                self.pred_gathered.set(self.pred_recv)
                gathered = self.pred_gathered
            else:
                gathered = self.pred_recv
        else:
            gathered = self.pred_row
        resolve_parents(backend, self.pred_col, gathered, grid.block, grid.cols_per_rank, self.parent)
        if own_root:
            self.parent[root_offset] = root


def print_levels(result: SearchResult) -> None:
    """Per-level frontier sizes and times to stderr (rank 0)."""
    if MPI.COMM_WORLD.Get_rank() != 0:
        return
    for row in result.levels:
        print(f"[dbfs] root {result.root} level {row['level']:3d}: frontier {row['frontier']:>12d} "
              f"edges(rank 0) {row['edges']:>14d}  {1e3 * row['time']:9.3f} ms", file=sys.stderr)

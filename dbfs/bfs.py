"""The main-mode BFS level loop on one rank of the 2D grid (paper 004, Algorithm 2, sections 3.2-3.5),
top-down or direction-optimizing.

Top-down level: expand (gather the frontier along the grid column, as local column ids) -> frontier
expansion (dbfs.ops.expand: atomic bitmap, discoveries grouped by owner grid column) -> fold (send each
group to its owner along the grid row) -> frontier update (dbfs.ops.update). Predecessors are delayed:
the owner of a vertex discovered by another rank records the discoverer's grid column, and one row
exchange after the search (each rank's discoverers of the others' blocks, sent sparse) turns those into
global parent ids (section 3.5).

Bottom-up level (direction-optimizing BFS, Beamer et al.; in 2D after Ueno et al. and Checconi and
Petrini): the frontier is gathered along the grid column as bitmaps; the C segments of a rank's rows
(one per owner in the grid row) then rotate along the row: in sub-step s rank (i, j) searches segment
(j - s) mod C for parents (dbfs.ops.bottom_up, through the row-major copy of its block) and passes the
segment's visited bits to (i, j + 1), so a vertex found by one rank is not searched again by the others
and after C sub-steps every segment is back with its owner, who commits the new vertices.

Direction (`auto`): Beamer's rule, decided from global sums after every level, identically on every
rank: switch to bottom-up when the frontier's edges m_f exceed the unvisited edges m_u / alpha, back to
top-down when the frontier holds fewer than N / beta vertices and shrinks. Every level ends with one
allreduce of [frontier size, frontier degree sum]; the search ends when the frontier is empty.

Timing follows Graph500 kernel 2: from just before the root is visited until the parent array is
complete on every rank (device synchronized; the slowest rank's time), state reset excluded.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field

import numpy as np
from mpi4py import MPI

from dbfs.errors import DbfsError
from dbfs.exchange import Exchange, OffsetSet
from dbfs.graph import LocalGraph
from dbfs.ops import bitmap, bottom_up
from dbfs.ops.expand import ExpandScratch, expand
from dbfs.ops.predecessors import resolve_parents
from dbfs.ops.sparse import pack_present, unpack_present
from dbfs.ops.update import update

PHASES = ("expand_comm", "expansion", "fold_comm", "update", "pred_resolve")
DIRECTIONS = ("auto", "topdown")
DEFAULT_ALPHA, DEFAULT_BETA = 14.0, 24.0


@dataclass
class SearchResult:
    """One search on one rank: owned parents/levels (device arrays) and the global figures."""

    root: int
    time: float
    parent: object                 # xp int64 [block], global parent ids of owned vertices, -1 unreached
    level: object                  # xp int32 [block], -1 unreached
    nedge: int                     # TEPS edge count: out-degrees of the visited vertices (/ 2 when
                                   # both directions of every tuple are stored)
    visited: int
    depth: int
    phases: dict
    bytes: dict                    # bytes sent per phase, as encoded
    bytes_raw: dict                # bytes the same messages take as plain lists
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


class _Traffic:
    """Bytes sent per phase in one search, as encoded and as lists."""

    def __init__(self):
        self.sent = {"expand": 0, "fold": 0}
        self.raw = {"expand": 0, "fold": 0}

    def add(self, phase: str, sent: int, raw: int) -> None:
        self.sent[phase] += sent
        self.raw[phase] += raw

    def totals(self) -> tuple[int, int]:
        return sum(self.sent.values()), sum(self.raw.values())


class BFS:
    """2D BFS over one rank's LocalGraph; call `search(root)` once per root (collective)."""

    def __init__(self, graph: LocalGraph, edges_per_thread: int = 4, encoding: str = "adaptive",
                 comm: str = "mpi", direction: str = "topdown", alpha: float = DEFAULT_ALPHA,
                 beta: float = DEFAULT_BETA):
        if direction not in DIRECTIONS:
            raise DbfsError(f"unknown direction {direction!r} ({', '.join(DIRECTIONS)})", collective=True)
        if direction == "auto" and graph.row_ptr is None:
            raise ValueError("direction auto needs the row-major copy (build with row_major=True)")
        self.graph, self.backend = graph, graph.backend
        self.edges_per_thread, self.direction, self.alpha, self.beta = edges_per_thread, direction, alpha, beta
        grid, xp, comms = graph.grid, graph.backend.xp, graph.comms
        b, R, C = grid.block, grid.R, grid.C
        self.words = b // 32
        self.bitmap = xp.zeros(grid.rows_per_rank // 32, xp.uint32)
        self.level = xp.empty(b, xp.int32)
        self.pred_col = xp.empty(b, xp.int32)
        self.pred_row = xp.empty(grid.rows_per_rank, xp.int32)
        # Two discovery buffers, swapped every top-down level: group j of the last one is the frontier.
        self.dst_pair = (xp.empty(C * b, xp.int32), xp.empty(C * b, xp.int32))
        self.dst_cnt = xp.zeros(C, xp.int32)
        self.counts = self.backend.pinned_empty(C, np.int32)
        self.front = xp.empty(grid.cols_per_rank, xp.int32) if R > 1 else None
        self.recv = xp.empty(max(1, (C - 1) * b), xp.int32)
        self.counter = xp.zeros(1, xp.int32)
        self.parent = xp.empty(b, xp.int64)
        # sized for the largest possible frontier: nothing is allocated inside the level loop
        self.scratch = ExpandScratch(self.backend, grid.cols_per_rank) if self.backend.is_gpu else None
        self.col_x = Exchange(comms.col, self.backend, b, encoding, comm) if R > 1 else None
        self.row_x = Exchange(comms.row, self.backend, b, encoding, comm) if C > 1 else None
        self.degree = graph.degree
        self.total_degree = comms.world.allreduce(int(graph.degree.sum()))
        if direction == "auto":
            # column frontier bitmap; this rank's own frontier is its segment i
            self.col_front = xp.zeros(grid.cols_per_rank // 32, xp.uint32)
            self.own_front = self.col_front[comms.i * self.words:(comms.i + 1) * self.words]
            self.state = xp.empty(self.words, xp.uint32)
            self.stats = xp.zeros(3, xp.int64)
            self.stats_host = self.backend.pinned_empty(3, np.int64)
        if C > 1:
            self.pred_gathered = xp.empty(grid.rows_per_rank, xp.int32)
            self.sent_presence = xp.empty((C - 1) * self.words, xp.uint32)
            self.recv_presence = xp.empty((C - 1) * self.words, xp.uint32)
            self.presence_starts = xp.empty(self.words + 1, xp.int32)

    def close(self) -> None:
        for x in (self.col_x, self.row_x):
            if x is not None:
                x.close()

    def _reset(self) -> None:
        self.bitmap.fill(0)
        self.level.fill(-1)
        self.pred_col.fill(-1)
        self.pred_row.fill(-1)
        self.dst_cnt.fill(0)

    def search(self, root: int, log_levels: bool = False) -> SearchResult:
        graph, backend = self.graph, self.backend
        grid, comms = graph.grid, graph.comms
        i, j, b = comms.i, comms.j, grid.block
        self._reset()
        own_root = tuple(int(x) for x in grid.owner(root)) == (i, j)
        root_offset = root - grid.to_global_owned(i, j, 0)
        root_degree = comms.world.allreduce(int(self.degree[root_offset]) if own_root else 0)
        backend.sync()
        comms.world.Barrier()
        clock, traffic = _PhaseClock(backend.sync), _Traffic()
        t_start = time.perf_counter()

        nf, frontier_list, spare = 0, self.dst_pair[1], self.dst_pair[0]
        if own_root:
            row = grid.owned_row_start(j) + root_offset
            self.bitmap[row // 32] = np.uint32(1 << (row % 32))
            self.level[root_offset] = 0
            frontier_list[j * b] = root_offset
            nf = 1
        lvl, levels, frontier_total = 0, [], 1
        unvisited_edges = self.total_degree - root_degree
        direction, form = "topdown", "list"
        while True:
            t_level = time.perf_counter()
            traffic_before = traffic.totals()
            lvl += 1
            if direction == "topdown":
                if form == "bits":
                    self._bits_to_list(clock, traffic, frontier_list, nf)
                nf, level_edges = self._top_down_level(clock, traffic, frontier_list, spare, nf, lvl)
                frontier_list, spare = spare, frontier_list
                form = "list"
                frontier_degrees = self._list_degrees(frontier_list, nf) if self.direction == "auto" else 0
            else:
                if form == "list":
                    clock.switch("update")
                    bitmap.pack(backend, frontier_list[j * b:j * b + nf], self.own_front)
                nf, frontier_degrees, level_edges = self._bottom_up_level(clock, traffic, nf, lvl)
                form = "bits"
            clock.switch("fold_comm")
            level_frontier = frontier_total
            if self.direction == "auto":
                totals = np.array([nf, frontier_degrees], np.int64)
                comms.world.Allreduce(MPI.IN_PLACE, totals)
                frontier_total, frontier_degrees = int(totals[0]), int(totals[1])
            else:
                frontier_total = comms.world.allreduce(nf)
            if log_levels:
                sent, raw = (a - b for a, b in zip(traffic.totals(), traffic_before))
                levels.append({"level": lvl - 1, "direction": direction, "frontier": level_frontier,
                               "edges": level_edges, "time": time.perf_counter() - t_level,
                               "bytes": sent, "bytes_raw": raw})
            if frontier_total == 0:
                break
            unvisited_edges -= frontier_degrees
            direction = self._next_direction(direction, frontier_total, level_frontier, frontier_degrees,
                                             unvisited_edges)

        clock.switch("pred_resolve")
        self._resolve_parents(own_root, root, root_offset)
        clock.switch(None)
        elapsed = comms.world.allreduce(time.perf_counter() - t_start, op=MPI.MAX)

        visited_mask = self.level >= 0
        figures = np.array([int(visited_mask.sum()), int(self.degree[visited_mask].sum()),
                            traffic.sent["expand"], traffic.sent["fold"],
                            traffic.raw["expand"], traffic.raw["fold"]], np.int64)
        comms.world.Allreduce(MPI.IN_PLACE, figures)
        if levels:
            level_bytes = np.array([[row["bytes"], row["bytes_raw"]] for row in levels], np.int64)
            comms.world.Allreduce(MPI.IN_PLACE, level_bytes)
            for row, (sent, raw) in zip(levels, level_bytes.tolist()):
                row["bytes"], row["bytes_raw"] = sent, raw
        phase_times = np.array([clock.totals[k] for k in PHASES])
        comms.world.Allreduce(MPI.IN_PLACE, phase_times, op=MPI.MAX)
        phases = dict(zip(PHASES, phase_times.tolist()))
        return SearchResult(root=root, time=elapsed, parent=self.parent.copy(), level=self.level.copy(),
                            nedge=int(figures[1]) // (1 if graph.info.get("directed") else 2),
                            visited=int(figures[0]), depth=lvl - 1,
                            phases=phases, bytes={"expand": int(figures[2]), "fold": int(figures[3])},
                            bytes_raw={"expand": int(figures[4]), "fold": int(figures[5])}, levels=levels)

    def _next_direction(self, direction, frontier, previous_frontier, frontier_edges, unvisited_edges):
        if self.direction == "topdown":
            return "topdown"
        if direction == "topdown":
            return "bottomup" if frontier_edges * self.alpha > unvisited_edges else "topdown"
        shrinking = frontier < previous_frontier
        return "topdown" if shrinking and frontier * self.beta < self.graph.grid.n_vertices else "bottomup"

    # top-down --------------------------------------------------------------------------------------
    def _top_down_level(self, clock, traffic, frontier_list, dst, nf: int, lvl: int):
        """Expand, expansion, fold, update; returns (new owned frontier size, edges scanned here).
        The new frontier is group j of dst."""
        backend, grid, comms = self.backend, self.graph.grid, self.graph.comms
        i, j, b, C = comms.i, comms.j, grid.block, grid.C
        xp = backend.xp
        clock.switch("expand_comm")
        own = frontier_list[j * b:j * b + nf]
        if self.col_x is not None:
            received, sent, raw = self.col_x.round({p: OffsetSet(nf, list=own) for p in self.col_x.peers},
                                                   self.col_x.peers)
            traffic.add("expand", sent, raw)
            at = 0
            for p in range(grid.R):
                part = received[p] if p != i else None
                n = part.count if part else nf
                piece = self.front[at:at + n]
                if part:
                    part.to_list(backend, piece, self.counter)
                    xp.add(piece, np.int32(grid.owned_col_start(p)), out=piece)
                else:
                    xp.add(own, np.int32(grid.owned_col_start(i)), out=piece)
                at += n
            frontier = self.front[:at]
        else:
            frontier = own
        clock.switch("expansion")
        self.dst_cnt.fill(0)
        level_edges = expand(backend, self.graph.col_ptr, self.graph.row_idx, frontier, self.bitmap,
                             self.level, self.pred_row, self.pred_col, lvl, j, b, dst, self.dst_cnt,
                             edges_per_thread=self.edges_per_thread, scratch=self.scratch)
        counts = self._read_counts()
        nf = int(counts[j])
        if C > 1:
            clock.switch("fold_comm")
            peers = self.row_x.peers
            received, sent, raw = self.row_x.round(
                {m: OffsetSet(int(counts[m]), list=dst[m * b:m * b + int(counts[m])]) for m in peers}, peers)
            traffic.add("fold", sent, raw)
            seg = np.zeros(C + 1, np.int64)
            for m in range(C):
                n = received[m].count if m in received else 0
                if n:
                    received[m].to_list(backend, self.recv[seg[m]:seg[m] + n], self.counter)
                seg[m + 1] = seg[m] + n
            clock.switch("update")
            if seg[-1]:
                update(backend, self.recv[:int(seg[-1])], seg.astype(np.int32), self.bitmap, self.level,
                       self.pred_col, lvl, j, b, dst, self.dst_cnt)
                nf = int(self._read_counts()[j])
        return nf, level_edges

    def _read_counts(self) -> np.ndarray:
        """The group counters on the host (a small copy through pinned memory)."""
        if self.backend.is_gpu:
            self.dst_cnt.get(out=self.counts)
            return self.counts
        return self.dst_cnt

    def _list_degrees(self, frontier_list, nf: int) -> int:
        b, j = self.graph.grid.block, self.graph.comms.j
        self.stats.fill(0)
        bottom_up.list_degrees(self.backend, frontier_list[j * b:j * b + nf], self.degree, self.stats)
        return int(self._read_stats()[1])

    # bottom-up ------------------------------------------------------------------------------------
    def _bottom_up_level(self, clock, traffic, nf: int, lvl: int):
        """Column gather of the frontier bitmaps, C search sub-steps with the row rotation, commit.
        Returns (new owned frontier size, its degree sum, entries examined here); the new frontier
        is self.own_front."""
        backend, grid, comms = self.backend, self.graph.grid, self.graph.comms
        j, b, C, w = comms.j, grid.block, grid.C, self.words
        clock.switch("expand_comm")
        if self.col_x is not None:
            received, sent, raw = self.col_x.round(
                {p: OffsetSet(nf, bitmap=self.own_front) for p in self.col_x.peers}, self.col_x.peers)
            traffic.add("expand", sent, raw)
            for p, message in received.items():
                message.to_bitmap(backend, self.col_front[p * w:(p + 1) * w])
        clock.switch("expansion")
        self.stats.fill(0)
        self.state[:] = self.bitmap[j * w:(j + 1) * w]
        succ, pred = (j + 1) % C, (j - 1) % C
        for s in range(C):
            bottom_up.search_segment(backend, self.graph.row_ptr, self.graph.col_idx, ((j - s) % C) * b,
                                     self.col_front, self.state, self.pred_row, self.stats)
            if C > 1:
                clock.switch("fold_comm")
                received, sent, raw = self.row_x.round({succ: OffsetSet(None, bitmap=self.state)}, [pred])
                traffic.add("fold", sent, raw)
                self.state[:] = received[pred].payload
                clock.switch("expansion")
        clock.switch("update")
        bottom_up.commit(backend, self.state, self.bitmap[j * w:(j + 1) * w], self.own_front, self.level,
                         self.pred_col, self.degree, lvl, self.stats)
        stats = self._read_stats()
        return int(stats[0]), int(stats[1]), int(stats[2])

    def _read_stats(self) -> np.ndarray:
        if self.backend.is_gpu:
            self.stats.get(out=self.stats_host)
            return self.stats_host
        return self.stats

    def _bits_to_list(self, clock, traffic, frontier_list, nf: int) -> None:
        """Bottom-up -> top-down: the own frontier as a list in group j of frontier_list, and every
        rank's row bitmap brought up to the owners' visited bits, so a top-down expansion never
        rediscovers a vertex found bottom-up (whose predecessor only its finder holds)."""
        backend, grid, comms = self.backend, self.graph.grid, self.graph.comms
        j, b, w = comms.j, grid.block, self.words
        clock.switch("update")
        bitmap.unpack(backend, self.own_front, frontier_list[j * b:j * b + nf], self.counter)
        if self.row_x is not None:
            clock.switch("fold_comm")
            own_bits = self.bitmap[j * w:(j + 1) * w]
            peers = self.row_x.peers
            received, sent, raw = self.row_x.round({m: OffsetSet(None, bitmap=own_bits) for m in peers},
                                                   peers)
            traffic.add("fold", sent, raw)
            for m, message in received.items():
                self.bitmap[m * w:(m + 1) * w] = message.payload

    # predecessors ---------------------------------------------------------------------------------
    def _resolve_parents(self, own_root: bool, root: int, root_offset: int) -> None:
        """Delayed predecessors -> global parent ids of the owned vertices. Block m of this rank's
        pred_row (its discoverers of the vertices owned by grid column m) goes to that owner as a
        presence bitmap and the present ids in offset order (dbfs.ops.sparse), two rounds through the
        search's transport; from column c we receive its discoverers of our block, so gathered[c*b + o]
        is column c's answer (-1: none)."""
        backend, grid, comms = self.backend, self.graph.grid, self.graph.comms
        b, j, w = grid.block, comms.j, self.words
        if grid.C > 1:
            peers = self.row_x.peers
            sent_bits = {m: self.sent_presence[k * w:(k + 1) * w] for k, m in enumerate(peers)}
            recv_bits = {m: self.recv_presence[k * w:(k + 1) * w] for k, m in enumerate(peers)}
            packed = {m: self.recv[k * b:(k + 1) * b] for k, m in enumerate(peers)}
            present = {m: pack_present(backend, self.pred_row[m * b:(m + 1) * b], sent_bits[m],
                                       self.presence_starts, packed[m]) for m in peers}
            for m, words in self.row_x.transfer(sent_bits, peers).items():
                recv_bits[m][:] = words
            received = self.row_x.transfer({m: packed[m][:present[m]].view(np.uint32) for m in peers},
                                           peers)
            gathered = self.pred_gathered
            gathered[j * b:(j + 1) * b] = self.pred_row[j * b:(j + 1) * b]
            for m, values in received.items():
                unpack_present(backend, recv_bits[m], values.view(np.int32), self.presence_starts,
                               gathered[m * b:(m + 1) * b])
        else:
            gathered = self.pred_row
        resolve_parents(backend, self.pred_col, gathered, b, grid.cols_per_rank, self.parent)
        if own_root:
            self.parent[root_offset] = root


def print_levels(result: SearchResult) -> None:
    """Per-level direction, frontier size, entries examined, bytes sent (all ranks; as lists) and time
    to stderr (rank 0)."""
    if MPI.COMM_WORLD.Get_rank() != 0:
        return
    for row in result.levels:
        print(f"[dbfs] root {result.root} level {row['level']:3d} {row['direction']:>9}: frontier "
              f"{row['frontier']:>12d} edges(rank 0) {row['edges']:>14d} bytes {row['bytes']:>12d} "
              f"(lists {row['bytes_raw']:>12d}) {1e3 * row['time']:9.3f} ms", file=sys.stderr)

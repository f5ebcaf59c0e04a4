"""The level loop on a grid of ranks (paper 004, Algorithm 2, sections 3.2-3.5), top-down or
direction-optimizing, driven by the host because every level exchanges messages whose sizes the host
MPI (or NCCL's header round) must know.

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

Host synchronisations: the kernels take their sizes from the device or from message headers the host
already holds, and phases are timed with CUDA events, so a level waits on the device once beyond what
its exchanges need -- the level read of the new frontier's size, degree sum and entries examined (the
discovery kernels accumulate them), whose global sums (one MPI allreduce) decide termination and the
direction (dbfs.direction). The fold needs the discovery counts per group: that read belongs to the
exchange. Every wait is counted per level (backend.host_syncs) for the per-level log.

Timing follows Graph500 kernel 2: from just before the root is visited until the parent array is
complete on every rank (the slowest rank's time), state reset excluded.
"""

from __future__ import annotations

import time

import numpy as np
from mpi4py import MPI

from dbfs.direction import next_bottom_up
from dbfs.exchange import Exchange, OffsetSet
from dbfs.kernels import STAT, STAT_WORDS
from dbfs.ops import bitmap, bottom_up
from dbfs.ops.expand import ExpandScratch, expand
from dbfs.ops.frontier import frontier_figures
from dbfs.ops.predecessors import resolve_parents
from dbfs.ops.sparse import pack_present, unpack_present
from dbfs.ops.update import update


def host_buffer_bytes(grid) -> int:
    """The loop's pinned host buffers (the level read and the fold's group counts)."""
    return 8 * STAT_WORDS + 4 * grid.C


class Traffic:
    """Bytes sent per phase in one search, as encoded and as lists."""

    def __init__(self):
        self.sent = {"expand": 0, "fold": 0}
        self.raw = {"expand": 0, "fold": 0}

    def add(self, phase: str, sent: int, raw: int) -> None:
        self.sent[phase] += sent
        self.raw[phase] += raw

    def totals(self) -> tuple[int, int]:
        return sum(self.sent.values()), sum(self.raw.values())


class GridLoop:
    """Runs searches on one rank of an R x C grid (R*C > 1) with a SearchState (collective)."""

    def __init__(self, graph, state, direction: str, alpha: float, beta: float, edges_per_thread: int,
                 encoding: str, comm: str):
        self.graph, self.state, self.backend = graph, state, graph.backend
        grid, comms = graph.grid, graph.comms
        self.bottom_up_allowed = direction == "auto"
        self.alpha, self.beta, self.edges_per_thread = alpha, beta, edges_per_thread
        b = grid.block
        self.col_x = Exchange(comms.col, self.backend, b, encoding, comm) if grid.R > 1 else None
        self.row_x = Exchange(comms.row, self.backend, b, encoding, comm) if grid.C > 1 else None
        self.total_degree = comms.world.allreduce(int(graph.degree.sum()))
        self.scratch = ExpandScratch(state.cumul, state.tile_sums, state.columns, state.chunks)
        self.level_host = self.backend.pinned_empty(STAT_WORDS, np.int64)
        self.counts_host = self.backend.pinned_empty(grid.C, np.int32)
        self.own_visited = state.own_visited()
        self.own_front = state.front_segment(comms.i) if direction == "auto" else None

    def close(self) -> None:
        for x in (self.col_x, self.row_x):
            if x is not None:
                x.close()

    def run(self, root: int, clock, traffic: Traffic, log_levels: bool) -> dict:
        """One search from global vertex `root` (the state reset); returns the global figures."""
        backend, s, g = self.backend, self.state, self.graph
        grid, comms = g.grid, g.comms
        i, j = comms.i, comms.j
        own_root = grid.owns(i, j, root)
        root_offset = int(grid.owned_offset(root))
        root_degree = comms.world.allreduce(int(g.degree[root_offset]) if own_root else 0)
        backend.sync()
        comms.world.Barrier()
        t_start = time.perf_counter()
        clock.start()
        queue, spare = s.queue0, s.queue1
        counts, spare_counts = s.counts0, s.counts1
        nf = 0
        if own_root:
            row = grid.owned_row(j, root_offset)
            s.visited[row // 32:row // 32 + 1] |= np.uint32(1 << (row % 32))   # beside the no-edge marks
            s.level[root_offset] = 0
            queue[grid.owned_row(j, 0)] = root_offset
            nf = 1
        lvl, levels, frontier_total, visited, reached_degrees = 0, [], 1, 1, root_degree
        unvisited_edges = self.total_degree - root_degree
        bottom_up_level, form = False, "list"
        while True:
            t_level, syncs_before = time.perf_counter(), backend.host_syncs
            traffic_before = traffic.totals()
            lvl += 1
            if not bottom_up_level:
                if form == "bits":
                    self._bits_to_list(clock, traffic, queue, counts)
                self._top_down_level(clock, traffic, queue, nf, spare, spare_counts, lvl)
                queue, spare, counts, spare_counts = spare, queue, spare_counts, counts
                form = "list"
            else:
                if form == "list":
                    clock.switch("update")
                    bitmap.pack(backend, queue[grid.owned_row(j, 0):], nf, self.own_front)
                self._bottom_up_level(clock, traffic, nf, lvl)
                form = "bits"
            nf, frontier_degrees, checked = self._level_read()
            clock.switch("fold_comm")
            totals = np.array([nf, frontier_degrees], np.int64)
            comms.world.Allreduce(MPI.IN_PLACE, totals)
            level_frontier, (frontier_total, frontier_degrees) = frontier_total, (int(x) for x in totals)
            if log_levels:
                sent, raw = (a - b for a, b in zip(traffic.totals(), traffic_before))
                levels.append({"level": lvl - 1, "direction": "bottomup" if bottom_up_level else "topdown",
                               "frontier": level_frontier, "edges": checked,
                               "time": time.perf_counter() - t_level, "bytes": sent, "bytes_raw": raw,
                               "host_syncs": backend.host_syncs - syncs_before})
            if frontier_total == 0:
                break
            visited += frontier_total
            reached_degrees += frontier_degrees
            unvisited_edges -= frontier_degrees
            bottom_up_level = self.bottom_up_allowed and next_bottom_up(
                bottom_up_level, frontier_total, level_frontier, frontier_degrees, unvisited_edges,
                self.alpha, self.beta, grid.n_vertices)

        clock.switch("pred_resolve")
        self._resolve_parents(own_root, root, root_offset)
        clock.switch(None)
        backend.sync()
        elapsed = comms.world.allreduce(time.perf_counter() - t_start, op=MPI.MAX)
        return {"time": elapsed, "depth": lvl - 1, "visited": visited, "reached_degrees": reached_degrees,
                "levels": levels}

    def _level_read(self):
        """The new owned frontier's size and degree sum and the entries examined here (the discovery
        kernels count them): one wait."""
        stats = self.backend.read(self.state.stats, self.level_host).copy()
        self.state.stats.fill(0)
        return int(stats[STAT.COUNT]), int(stats[STAT.DEGREES]), int(stats[STAT.CHECKED])

    # top-down --------------------------------------------------------------------------------------
    def _top_down_level(self, clock, traffic, queue, nf: int, dst, dst_cnt, lvl: int) -> None:
        """Expand, expansion, fold, update: the new frontier becomes group j of dst."""
        backend, s, g = self.backend, self.state, self.graph
        grid, comms = g.grid, g.comms
        i, j = comms.i, comms.j
        xp = backend.xp
        clock.switch("expand_comm")
        own = queue[grid.owned_row(j, 0):grid.owned_row(j, nf)]
        if self.col_x is not None:
            received, sent, raw = self.col_x.round({p: OffsetSet(nf, list=own) for p in self.col_x.peers},
                                                   self.col_x.peers)
            traffic.add("expand", sent, raw)
            at = 0
            for p in range(grid.R):
                part = received[p] if p != i else None
                n = part.count if part else nf
                piece = s.front[at:at + n]
                if part:
                    part.to_list(backend, piece, s.count)
                    xp.add(piece, np.int32(grid.owned_col(p, 0)), out=piece)
                else:
                    xp.add(own, np.int32(grid.owned_col(i, 0)), out=piece)
                at += n
            frontier, length = s.front, at
        else:
            frontier, length = own, nf
        clock.switch("expansion")
        dst_cnt.fill(0)
        expand(backend, grid, j, g.col_ptr, g.row_idx, frontier, length, s.visited, s.level, s.pred_row,
               s.pred_col, dst, dst_cnt, s.stats, self.scratch, lvl=lvl, edges_per_thread=self.edges_per_thread)
        own_new = dst[grid.owned_row(j, 0):]
        if grid.C == 1:
            frontier_figures(backend, own_new, dst_cnt[j:j + 1], g.degree, s.stats)
            return
        counts = backend.read(dst_cnt, self.counts_host).copy()
        clock.switch("fold_comm")
        peers = self.row_x.peers
        received, sent, raw = self.row_x.round(
            {m: OffsetSet(int(counts[m]), list=dst[grid.owned_row(m, 0):grid.owned_row(m, int(counts[m]))])
             for m in peers}, peers)
        traffic.add("fold", sent, raw)
        seg = np.zeros(grid.C + 1, np.int64)
        for m in range(grid.C):
            n = received[m].count if m in received else 0
            if n:
                received[m].to_list(backend, s.recv[seg[m]:seg[m] + n], s.count)
            seg[m + 1] = seg[m] + n
        clock.switch("update")
        if seg[-1]:
            update(backend, grid, j, s.recv[:int(seg[-1])], seg.astype(np.int32), s.visited, s.level, s.pred_col,
                   lvl, dst, dst_cnt)
        frontier_figures(backend, own_new, dst_cnt[j:j + 1], g.degree, s.stats)

    # bottom-up ------------------------------------------------------------------------------------
    def _bottom_up_level(self, clock, traffic, nf: int, lvl: int) -> None:
        """Column gather of the frontier bitmaps, C search sub-steps with the row rotation, commit; the
        new frontier is the own frontier bitmap."""
        backend, s, g = self.backend, self.state, self.graph
        grid, comms = g.grid, g.comms
        j, C = comms.j, grid.C
        clock.switch("expand_comm")
        if self.col_x is not None:
            received, sent, raw = self.col_x.round(
                {p: OffsetSet(nf, bitmap=self.own_front) for p in self.col_x.peers}, self.col_x.peers)
            traffic.add("expand", sent, raw)
            for p, message in received.items():
                message.to_bitmap(backend, s.front_segment(p))
        clock.switch("expansion")
        succ, pred = (j + 1) % C, (j - 1) % C
        state_in = self.own_visited
        for step in range(C):
            bottom_up.search_segment(backend, g.row_ptr, g.col_idx, grid.owned_row((j - step) % C, 0),
                                     s.col_front, state_in, s.segment, s.pred_row, s.stats)
            state_in = s.segment
            if C > 1:
                clock.switch("fold_comm")
                received, sent, raw = self.row_x.round({succ: OffsetSet(None, bitmap=s.segment)}, [pred])
                traffic.add("fold", sent, raw)
                s.segment[:] = received[pred].payload
                clock.switch("expansion")
        clock.switch("update")
        bottom_up.commit(backend, s.segment, self.own_visited, self.own_front, s.level, s.pred_col, g.degree,
                         lvl, s.stats)

    def _bits_to_list(self, clock, traffic, queue, counts) -> None:
        """Bottom-up -> top-down: the own frontier as a list in group j of `queue`, and every rank's
        row bitmap brought up to the owners' visited bits, so a top-down expansion never rediscovers a
        vertex found bottom-up (whose predecessor only its finder holds)."""
        backend, s, g = self.backend, self.state, self.graph
        grid, j, w = g.grid, g.comms.j, s.words
        clock.switch("update")
        bitmap.unpack(backend, self.own_front, queue[grid.owned_row(j, 0):], counts[j:j + 1])
        if self.row_x is not None:
            clock.switch("fold_comm")
            peers = self.row_x.peers
            received, sent, raw = self.row_x.round({m: OffsetSet(None, bitmap=self.own_visited) for m in peers},
                                                   peers)
            traffic.add("fold", sent, raw)
            for m, message in received.items():
                s.visited[m * w:(m + 1) * w] = message.payload

    # predecessors ---------------------------------------------------------------------------------
    def _resolve_parents(self, own_root: bool, root: int, root_offset: int) -> None:
        """Delayed predecessors -> global parent ids of the owned vertices. Block m of this rank's
        pred_row (its discoverers of the vertices owned by grid column m) goes to that owner as a
        presence bitmap and the present ids in offset order (dbfs.ops.sparse), two rounds through the
        search's transport; from column c we receive its discoverers of our block, so gathered[c*b + o]
        is column c's answer (-1: none)."""
        backend, s, g = self.backend, self.state, self.graph
        grid, comms = g.grid, g.comms
        b, j, w = grid.block, comms.j, s.words
        if grid.C > 1:
            peers = self.row_x.peers
            sent_bits = {m: s.sent_presence[k * w:(k + 1) * w] for k, m in enumerate(peers)}
            recv_bits = {m: s.recv_presence[k * w:(k + 1) * w] for k, m in enumerate(peers)}
            packed = {m: s.recv[k * b:(k + 1) * b] for k, m in enumerate(peers)}
            present = {m: pack_present(backend, s.pred_row[grid.owned_row(m, 0):grid.owned_row(m, b)],
                                       sent_bits[m], s.presence_starts, packed[m]) for m in peers}
            for m, words in self.row_x.transfer(sent_bits, peers).items():
                recv_bits[m][:] = words
            received = self.row_x.transfer({m: packed[m][:present[m]].view(np.uint32) for m in peers},
                                           peers)
            gathered = s.pred_gathered
            gathered[grid.owned_row(j, 0):grid.owned_row(j, b)] = s.pred_row[grid.owned_row(j, 0):
                                                                            grid.owned_row(j, b)]
            for m, values in received.items():
                unpack_present(backend, recv_bits[m], values.view(np.int32), s.presence_starts,
                               gathered[grid.owned_row(m, 0):grid.owned_row(m, b)])
        else:
            gathered = s.pred_row
        resolve_parents(backend, grid, s.pred_col, gathered, s.parent)
        if own_root:
            s.parent[root_offset] = root
